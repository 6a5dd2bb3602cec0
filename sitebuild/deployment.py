"""The article's deployment, resolved for a build: on how many GPUs the target runs.

A configuration file may name a target that one card cannot hold (a 32B model on one L40S).
Unless it says ``tensor_parallel`` itself, the article then runs every scenario on the fewest
GPUs, of the tensor-parallel degrees the grid compares, that hold the article's scenario (one
sequence, with its draft) and that the card and the model allow; if none does, on one GPU,
and the article says the deployment does not fit.
"""

from __future__ import annotations

from specmodel.errors import SpecModelError
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import TENSOR_PARALLEL
from specmodel.model.settings import Settings


def fewest_gpus(settings: Settings) -> int:
    """The fewest GPUs of :data:`TENSOR_PARALLEL` on which the article's scenario fits (1 if none)."""
    for gpus in TENSOR_PARALLEL:
        try:
            ev = evaluate(settings=settings, tensor_parallel=gpus)
        except SpecModelError:  # more GPUs than the card links, or than the model's heads divide into
            continue
        if bool(ev.fits):
            return gpus
    return 1


def resolved(settings: Settings) -> Settings:
    """``settings`` with the deployment's GPUs fixed (:func:`fewest_gpus` unless given)."""
    if settings.deployment.tensor_parallel is not None:
        return settings
    deployment = settings.deployment.model_copy(update={"tensor_parallel": fewest_gpus(settings)})
    return settings.model_copy(update={"deployment": deployment})
