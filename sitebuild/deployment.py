"""The article's deployment, resolved for a build: on how many GPUs the target runs.

A configuration file may name a target that one card cannot hold (a 32B model on one L40S).
Unless it says ``tensor_parallel`` itself, the article then runs every scenario on the fewest
GPUs, of the tensor-parallel degrees the grid compares, that hold the article's scenario (one
sequence, with its draft) and that the card and the model allow; if none does, on one GPU,
and the article says the deployment does not fit.

Its scenarios also fix how long a prompt can be: a ``GENERATED_TOKENS`` that leaves no room
for the longest of them in a target's context window is refused before anything is computed.
"""

from __future__ import annotations

from dataclasses import replace

from sitebuild.config import SiteSettings
from sitebuild.figures import beyond as multi
from specmodel.errors import SpecModelError
from specmodel.model.evaluate import evaluate
from specmodel.model.layout import allowed_tensor_parallel
from specmodel.model.scenario import DEFAULTS, GRID_CONTEXTS, TENSOR_PARALLEL
from specmodel.model.specs import get_architecture

#: Targets the page "Beyond one GPU" runs whatever the configuration, at the default prompt.
FIXED_TARGETS = (multi.BIG_TARGET, multi.MOE_TARGET, multi.DENSE_TARGET, "qwen3-235b-a22b")


def fewest_gpus(settings: SiteSettings) -> int:
    """The fewest GPUs of :data:`TENSOR_PARALLEL` on which the article's scenario fits (1 if none)."""
    dep = settings.deployment
    for gpus in allowed_tensor_parallel(dep.hardware, dep.target, TENSOR_PARALLEL):
        try:
            ev = evaluate(settings=settings, tensor_parallel=gpus)
        except SpecModelError:  # a draft model whose heads do not divide into this many GPUs
            continue
        if bool(ev.fits):
            return gpus
    return 1


def longest_prompts(settings: SiteSettings) -> dict[str, int]:
    """Target -> the longest prompt the article gives it: the simulator's and the figures' grid
    of prompts on the deployment's target, the default prompt on the fixed targets."""
    prompts = {target: int(DEFAULTS["context"]) for target in FIXED_TARGETS}
    prompts[settings.deployment.target] = max(GRID_CONTEXTS)
    return prompts


def check_generated_tokens(settings: SiteSettings) -> None:
    """:class:`SpecModelError` (one line) if ``GENERATED_TOKENS`` plus the longest prompt the
    article gives a target is more than that target's context window."""
    generated, prompts = settings.constants.GENERATED_TOKENS, longest_prompts(settings)
    window = {t: get_architecture(t).max_position_embeddings for t in prompts}
    target = min(prompts, key=lambda t: window[t] - prompts[t])
    room = window[target] - prompts[target]
    if generated > room:
        raise SpecModelError(
            f"GENERATED_TOKENS {generated:,} is more than the article can use: its {prompts[target]:,}-token prompts "
            f"on {target} (max_position_embeddings {window[target]:,}) leave room for {room:,} generated tokens; "
            f"GENERATED_TOKENS must be at most {room:,} for this deployment"
        )


def resolved(settings: SiteSettings) -> SiteSettings:
    """``settings`` with the deployment's GPUs fixed (:func:`fewest_gpus` unless given), after
    :func:`check_generated_tokens`."""
    check_generated_tokens(settings)
    if settings.deployment.tensor_parallel is not None:
        return settings
    deployment = replace(settings.deployment, tensor_parallel=fewest_gpus(settings))
    return replace(settings, deployment=deployment)
