"""Sweeps: the model over a grid of scenarios, one DataFrame row per scenario.

Tables need pandas (and pyarrow for Parquet), the package's ``tables`` extra
(``pip install 'specmodel[tables]'``); the model, ``point`` and ``advise`` do not.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model.drafters import drafter_names
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.layout import allowed_tensor_parallel
from specmodel.model.scenario import AXES, DEFAULTS, GRID_AXIS_VALUES
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture
from specmodel.readouts import readout_arrays

if TYPE_CHECKING:
    import pandas as pd

#: The modules a table needs, by output format, and the extra that installs them.
TABLE_MODULES = {".csv": ("pandas",), ".parquet": ("pandas", "pyarrow")}
TABLES_EXTRA = "specmodel[tables]"


def require_table_modules(suffix: str = ".csv") -> None:
    """Raise a one-line :class:`~specmodel.errors.SpecModelError` naming the extra to install
    unless the modules a ``suffix`` table needs (:data:`TABLE_MODULES`) can be imported."""
    for name in TABLE_MODULES.get(suffix, ("pandas",)):
        try:
            import_module(name)
        except ImportError:
            raise SpecModelError(
                f"writing a {suffix.lstrip('.')} table needs {name}, which is not installed; "
                f"install it with: pip install '{TABLES_EXTRA}'"
            ) from None


#: The default grid: 11 x 8 x 10 x (drafters) x 2 x 10 x 2 x 4 scenarios; the drafter axis
#: (None here) is every drafter that can serve the target (8 for Qwen3-8B: 1,126,400 scenarios).
DEFAULT_GRID: dict[str, tuple[Any, ...] | None] = {**GRID_AXIS_VALUES, "drafter": None}


def grid_mesh(
    target: str | None = None,
    settings: Settings | None = None,
    skip: tuple[str, ...] = (),
    hardware: str | None = None,
    **axes: Any,
) -> dict[str, np.ndarray]:
    """The Cartesian product of the axes but those in ``skip`` (defaults from DEFAULT_GRID;
    drafters: every one that can serve ``target``; contexts: those the target's
    ``max_position_embeddings`` holds with the generated tokens; tensor-parallel degrees: those
    the card's interconnect and the target's attention heads allow): one axis of an N-d array per
    scenario axis, each field a broadcast view of its axis values, so that :func:`evaluate`
    does the work of each quantity once per distinct value of the axes it depends on."""
    settings = settings or Settings()
    target = target or settings.deployment.target
    arch = get_architecture(target)
    longest = arch.max_position_embeddings - settings.constants.GENERATED_TOKENS
    default = {
        **GRID_AXIS_VALUES,
        "drafter": drafter_names(target),
        "context": tuple(t for t in GRID_AXIS_VALUES["context"] if t <= longest),
        "tensor_parallel": allowed_tensor_parallel(
            hardware or settings.deployment.hardware, target, GRID_AXIS_VALUES["tensor_parallel"]
        ),
    }
    names = [a for a in AXES if a not in skip]
    values = [np.asarray(axes.get(name, default[name])) for name in names]
    mesh = np.broadcast_arrays(*np.meshgrid(*values, indexing="ij", sparse=True))
    return dict(zip(names, mesh, strict=True))


def _tree_fields(tree_topk: int | None, verify_tokens: int | None, mesh: dict[str, np.ndarray]) -> dict[str, Any]:
    """A tree for every scenario of a sweep: ``tree_topk`` K, and ``verify_tokens`` V cut at
    each gamma to the K gamma + 1 positions its tree holds; n-gram lookup (a chain) leaves
    the drafter axis, which must then be given without it."""
    if tree_topk is None and verify_tokens is None:
        return {}
    k = 1 if tree_topk is None else tree_topk
    fields: dict[str, Any] = {"tree_topk": k}
    if verify_tokens is not None:
        gamma = mesh.get("gamma", np.asarray(DEFAULTS["gamma"]))
        fields["verify_tokens"] = np.minimum(verify_tokens, k * gamma + 1)
    return fields


def sweep(
    hardware: str | None = None,
    target: str | None = None,
    settings: Settings | None = None,
    per_position: Any = None,
    mean_acceptance_length: float | None = None,
    batching: str | None = None,
    generated_tokens: int | None = None,
    draft_tensor_parallel: int | None = None,
    tree_topk: int | None = None,
    verify_tokens: int | None = None,
    **axes: Any,
) -> pd.DataFrame:
    """Evaluate every scenario of a grid; one row per scenario.

    Columns: the axes, every readout of :data:`specmodel.readouts.READOUTS` in display
    units, ``fits``, and ``per_position_1 .. per_position_<max gamma>``. A measured
    ``per_position`` or ``mean_acceptance_length`` applies to every scenario and replaces the
    acceptance and alpha axes; an ``engine`` or ``tensor_parallel`` given as one value, not a
    list, fixes that axis. ``draft_tensor_parallel`` and a tree (``tree_topk``,
    ``verify_tokens``, cut at each gamma to what its tree holds) apply to every scenario;
    with a tree the default drafters leave out the n-gram lookup, which drafts a chain.

    >>> df = sweep(concurrency=[1, 64], gamma=[4], context=[2048], drafter=["qwen3-0.6b"],
    ...            acceptance=["falling"], alpha=[0.75], engine=["ideal"], tensor_parallel=[1])
    >>> df["speedup"].round(2).tolist()
    [1.93, 0.89]
    """
    unknown = set(axes) - set(AXES)
    if unknown:
        raise TypeError(f"unknown axes {sorted(unknown)}; axes are {', '.join(AXES)}")
    settings = settings or Settings()
    for name in ("engine", "tensor_parallel"):
        if name in axes and np.ndim(axes[name]) == 0:
            axes[name] = [axes[name]]
    if (tree_topk or 1) > 1 and "drafter" not in axes:
        axes["drafter"] = [d for d in drafter_names(target or settings.deployment.target) if d != "ngram"]
    measured = {k: v for k, v in (("per_position", per_position), ("mean_acceptance_length", mean_acceptance_length))
                if v is not None}  # fmt: skip
    skip: tuple[str, ...] = ("acceptance", "alpha") if measured else ()
    skip += ("gamma",) if per_position is not None else ()
    mesh = grid_mesh(target, settings, skip, hardware, **axes)
    layout = _tree_fields(tree_topk, verify_tokens, mesh)
    if draft_tensor_parallel is not None:
        layout["draft_tensor_parallel"] = draft_tensor_parallel
    evaluation = evaluate(
        **mesh,
        **measured,
        **layout,
        hardware=hardware,
        target=target,
        batching=batching,
        generated_tokens=generated_tokens,
        settings=settings,
    )
    return _frame(mesh, evaluation)


def _frame(mesh: dict[str, np.ndarray], evaluation: Evaluation) -> pd.DataFrame:
    """One row per scenario: the axes, the readouts, ``fits`` and the per-position acceptance."""
    require_table_modules()
    import pandas as pd

    frame = pd.DataFrame({name: m.ravel() for name, m in mesh.items()})
    for key, values in readout_arrays(evaluation).items():
        frame[key] = np.ravel(values)
    frame["fits"] = np.ravel(evaluation.fits)
    for j in range(evaluation.per_position.shape[-1]):
        frame[f"per_position_{j + 1}"] = np.ravel(evaluation.per_position[..., j])
    return frame
