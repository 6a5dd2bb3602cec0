"""Sweeps: the model over a grid of scenarios, one DataFrame row per scenario.

Tables need pandas (and pyarrow for Parquet), the package's ``tables`` extra
(``pip install 'specmodel[tables]'``); the model, ``point`` and ``advise`` do not.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model.drafters import drafter_names
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.evaluation import Evaluation
from specmodel.model.layout import allowed_tensor_parallel
from specmodel.model.scenario import AXES, DEFAULTS, GRID_AXIS_VALUES
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture
from specmodel.model.trees import max_verify_tokens
from specmodel.progress import progress
from specmodel.readouts import readout_arrays

if TYPE_CHECKING:
    import pandas as pd

#: The modules a table needs, as a DataFrame (``frame``) or a file of each format (pyarrow
#: writes both; a Parquet file's schema holds pandas' metadata), and the extra that installs them.
TABLE_MODULES = {"frame": ("pandas",), ".csv": ("pyarrow",), ".parquet": ("pandas", "pyarrow")}
TABLES_EXTRA = "specmodel[tables]"


def require_table_modules(suffix: str = "frame") -> None:
    """Raise a one-line :class:`~specmodel.errors.SpecModelError` naming the extra to install
    unless the modules a ``suffix`` table needs (:data:`TABLE_MODULES`) can be imported."""
    what = "a table" if suffix == "frame" else f"writing a {suffix.lstrip('.')} table"
    for name in TABLE_MODULES.get(suffix, ("pandas",)):
        try:
            import_module(name)
        except ImportError:
            raise SpecModelError(
                f"{what} needs {name}, which is not installed; install it with: pip install '{TABLES_EXTRA}'"
            ) from None


#: The default grid: 11 x 8 x 10 x (drafters) x 2 x 10 x 2 x 4 scenarios; the drafter axis
#: (None here) is every drafter that can serve the target (8 for Qwen3-8B: 1,126,400 scenarios).
DEFAULT_GRID: dict[str, tuple[Any, ...] | None] = {**GRID_AXIS_VALUES, "drafter": None}


def grid_axes(
    target: str | None = None,
    settings: Settings | None = None,
    skip: tuple[str, ...] = (),
    hardware: str | None = None,
    **axes: Any,
) -> dict[str, np.ndarray]:
    """The values of each scenario axis but those in ``skip`` (defaults from DEFAULT_GRID;
    drafters: every one that can serve ``target``; contexts: those the target's
    ``max_position_embeddings`` holds with the generated tokens; tensor-parallel degrees: those
    the card's interconnect and the target's attention heads allow), one 1-d array each."""
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
    return {name: np.atleast_1d(np.asarray(axes.get(name, default[name]))) for name in AXES if name not in skip}


def mesh_of(axes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The Cartesian product of ``axes``: one axis of an N-d array per scenario axis, each
    field a broadcast view of its axis values, so that :func:`evaluate` does the work of each
    quantity once per distinct value of the axes it depends on."""
    mesh = np.broadcast_arrays(*np.meshgrid(*axes.values(), indexing="ij", sparse=True))
    return dict(zip(axes, mesh, strict=True))


def grid_mesh(
    target: str | None = None,
    settings: Settings | None = None,
    skip: tuple[str, ...] = (),
    hardware: str | None = None,
    **axes: Any,
) -> dict[str, np.ndarray]:
    """The Cartesian product (:func:`mesh_of`) of the :func:`grid_axes`."""
    return mesh_of(grid_axes(target, settings, skip, hardware, **axes))


def _tree_fields(tree_topk: int | None, verify_tokens: int | None, mesh: dict[str, np.ndarray]) -> dict[str, Any]:
    """A tree for every scenario of a sweep: ``tree_topk`` w, and ``verify_tokens`` Q_v cut at
    each gamma to the ``w + (gamma - 1) w^2 + 1`` positions SGLang can draft
    (:func:`specmodel.model.trees.max_verify_tokens`; gamma + 1 for a chain, as SGLang sets
    it); n-gram lookup (a chain) leaves the drafter axis, which must then be given without it."""
    if tree_topk is None and verify_tokens is None:
        return {}
    k = 1 if tree_topk is None else tree_topk
    fields: dict[str, Any] = {"tree_topk": k}
    if verify_tokens is not None:
        gamma = mesh.get("gamma", np.asarray(DEFAULTS["gamma"]))
        top = max_verify_tokens(k, gamma)
        fields["verify_tokens"] = gamma + 1 if k == 1 else np.minimum(verify_tokens, top)
    return fields


def reachable_gammas(gammas: np.ndarray, mean_acceptance_length: float) -> tuple[np.ndarray, str | None]:
    """The gammas of a sweep that can reach a measured mean acceptance length M (a chain of
    gamma drafts yields at most gamma + 1 tokens per iteration, so M < gamma + 1), and a
    note naming those left out (None if none is). Raises a one-line
    :class:`~specmodel.errors.SpecModelError` if none can."""
    gammas = np.atleast_1d(np.asarray(gammas))
    m = float(mean_acceptance_length)
    ok = gammas + 1 > m
    if ok.all():
        return gammas, None
    largest = int(gammas.max(initial=0))
    if not ok.any():
        raise SpecModelError(
            f"no gamma of the sweep ({_listed([int(g) for g in gammas])}) can reach a mean acceptance "
            f"length of {m:g}: a chain of gamma drafts yields at most gamma + 1 = {largest + 1} tokens per iteration"
        )
    left, kept = [int(g) for g in gammas[~ok]], [int(g) for g in gammas[ok]]
    bound = ", ".join(str(g + 1) for g in left)
    return gammas[ok], (
        f"gamma {_listed(left)} cannot reach a mean acceptance length of {m:g} (at most gamma + 1 = "
        f"{bound}); swept gamma {_listed(kept)}"
    )


def _listed(values: list[int]) -> str:
    """``1..4`` for consecutive values, else ``1, 3, 7``."""
    if len(values) > 2 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}..{values[-1]}"
    return ", ".join(str(v) for v in values)


def sweep(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """Evaluate every scenario of a grid at once; one row per scenario (the arguments of
    :func:`plan_sweep`; :meth:`SweepPlan.frames` gives the same rows in chunks).

    Columns: the axes, every readout of :data:`specmodel.readouts.READOUTS` in display
    units, ``fits``, and ``per_position_1 .. per_position_<max gamma>``.

    >>> df = sweep(concurrency=[1, 64], gamma=[4], context=[2048], drafter=["qwen3-0.6b"],
    ...            acceptance=["falling"], alpha=[0.75], engine=["ideal"], tensor_parallel=[1])
    >>> df["speedup"].round(2).tolist()
    [1.93, 0.89]
    """
    plan = plan_sweep(*args, **kwargs)
    return plan.frame(plan.axes)


#: Scenarios evaluated at once by :meth:`SweepPlan.frames`: peak memory follows this, not
#: the grid's size.
CHUNK_ROWS = 65_536


@dataclass(frozen=True)
class SweepPlan:
    """A sweep, checked but not computed: the values of each axis (in :data:`AXES` order)
    and the fields every scenario shares."""

    axes: dict[str, np.ndarray]
    fields: dict[str, Any]  #: :func:`evaluate`'s other keywords
    tree: tuple[int | None, int | None]  #: (tree_topk, verify_tokens)
    notes: tuple[str, ...] = ()  #: what the sweep left out, and why

    @property
    def size(self) -> int:
        """Number of scenarios."""
        return int(np.prod([len(v) for v in self.axes.values()], dtype=np.int64))

    def frame(self, axes: dict[str, np.ndarray]) -> pd.DataFrame:
        """The rows of the scenarios of ``axes`` (a sub-grid of :attr:`axes`), in C order."""
        require_table_modules()
        import pandas as pd

        return pd.DataFrame(self.columns(axes))

    def columns(self, axes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The columns of :meth:`frame`, one 1-d array each (no pandas needed)."""
        mesh = mesh_of(axes)
        layout = _tree_fields(*self.tree, mesh)
        positions = int(self.axes["gamma"].max()) if "gamma" in self.axes else None
        fields: dict[str, Any] = {**mesh, **layout, **self.fields}
        return _columns(mesh, evaluate(**fields), positions)

    def chunks(self, rows: int = CHUNK_ROWS) -> list[dict[str, np.ndarray]]:
        """Sub-grids of at most ``rows`` scenarios (but one value of every axis), whose
        rows, one after another, are the grid's in C order (:func:`chunk_axes`)."""
        return chunk_axes(self.axes, rows)

    def frames(self, rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
        """The grid's rows, a chunk at a time (with a progress bar on a terminal)."""
        require_table_modules()
        import pandas as pd

        for columns in self.column_chunks(rows):
            yield pd.DataFrame(columns)

    def column_chunks(self, rows: int = CHUNK_ROWS) -> Iterator[dict[str, np.ndarray]]:
        """The columns of :meth:`frames`, a chunk at a time (with a progress bar on a terminal)."""
        chunks = self.chunks(rows)
        for axes in progress(chunks, "sweep", total=len(chunks), unit="chunk"):
            yield self.columns(axes)


def chunk_axes(axes: dict[str, np.ndarray], rows: int) -> list[dict[str, np.ndarray]]:
    """Slices of the outermost axes: the first axis k whose inner axes hold at most ``rows``
    scenarios is cut in runs of ``rows // inner`` values, for every value of the axes before
    it; concatenated in order, the chunks' C-order rows are the whole grid's."""
    names, sizes = list(axes), [len(v) for v in axes.values()]
    k = 0
    while k < len(sizes) - 1 and int(np.prod(sizes[k + 1 :], dtype=np.int64)) > rows:
        k += 1
    step = max(1, rows // max(int(np.prod(sizes[k + 1 :], dtype=np.int64)), 1))
    out = []
    for lead in itertools.product(*(range(n) for n in sizes[:k])):
        for lo in range(0, max(sizes[k], 1), step) if names else [0]:
            part = {name: axes[name][i : i + 1] for name, i in zip(names, lead)}
            part.update({name: axes[name][lo : lo + step] for name in names[k : k + 1]})
            out.append({name: part.get(name, axes[name]) for name in names})
    return out


def plan_sweep(
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
) -> SweepPlan:
    """A grid of scenarios, checked (every value, before anything is computed) but not evaluated.

    A measured ``per_position`` or ``mean_acceptance_length`` applies to every scenario and
    replaces the acceptance and alpha axes; with a mean acceptance length M the gammas that
    cannot reach it (M >= gamma + 1) are left out, with a note (:func:`reachable_gammas`).
    An ``engine`` or ``tensor_parallel`` given as one value, not a list, fixes that axis.
    ``draft_tensor_parallel`` and a tree (``tree_topk``, ``verify_tokens``, cut at each gamma
    to what its tree holds) apply to every scenario; with a tree the default drafters leave
    out the n-gram lookup, which drafts a chain.
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
    values = grid_axes(target, settings, skip, hardware, **axes)
    notes: tuple[str, ...] = ()
    if mean_acceptance_length is not None and np.ndim(mean_acceptance_length) == 0 and "gamma" in values:
        values["gamma"], note = reachable_gammas(values["gamma"], float(mean_acceptance_length))
        notes += (note,) if note else ()
    fields = {**measured, "hardware": hardware, "target": target, "batching": batching}
    fields.update(generated_tokens=generated_tokens, settings=settings)
    if draft_tensor_parallel is not None:
        fields["draft_tensor_parallel"] = draft_tensor_parallel
    mesh = mesh_of(values)
    everything: dict[str, Any] = {**mesh, **_tree_fields(tree_topk, verify_tokens, mesh), **fields}
    scenario_grid(**everything)  # refuses a bad value now, before anything is computed
    return SweepPlan(values, fields, (tree_topk, verify_tokens), notes)


def _columns(
    mesh: dict[str, np.ndarray], evaluation: Evaluation, positions: int | None = None
) -> dict[str, np.ndarray]:
    """One row per scenario: the axes, the readouts, ``fits`` and the per-position acceptance
    (``positions`` columns, those past the evaluation's gammas 0, as for a smaller gamma)."""
    columns = {name: m.ravel() for name, m in mesh.items()}
    for key, values in readout_arrays(evaluation).items():
        columns[key] = np.ravel(values)
    columns["fits"] = np.ravel(evaluation.fits)
    rows = len(columns["fits"])
    width = evaluation.per_position.shape[-1]
    for j in range(max(width, positions or 0)):
        columns[f"per_position_{j + 1}"] = np.ravel(evaluation.per_position[..., j]) if j < width else np.zeros(rows)
    return columns
