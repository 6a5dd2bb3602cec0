"""The article's deployment, resolved for a build: on how many GPUs the target runs.

A configuration file may name a target that one card cannot hold (a 32B model on one L40S).
Unless it says ``tensor_parallel`` itself, the article then runs every scenario on the fewest
GPUs, of the tensor-parallel degrees the grid compares, that hold the article's scenario (one
sequence, with its draft) and that the card and the model allow; if none does, on one GPU,
and the article says the deployment does not fit.
"""

from __future__ import annotations

from sitebuild.config import SiteSettings
from specmodel.errors import SpecModelError
from specmodel.model.evaluate import evaluate
from specmodel.model.layout import allowed_tensor_parallel
from specmodel.model.scenario import TENSOR_PARALLEL


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


def resolved(settings: SiteSettings) -> SiteSettings:
    """``settings`` with the deployment's GPUs fixed (:func:`fewest_gpus` unless given)."""
    if settings.deployment.tensor_parallel is not None:
        return settings
    deployment = settings.deployment.model_copy(update={"tensor_parallel": fewest_gpus(settings)})
    return settings.model_copy(update={"deployment": deployment})
