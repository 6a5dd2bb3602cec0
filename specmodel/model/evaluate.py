"""One speculative-decoding scenario, or a whole grid of them, evaluated at once.

A scenario (:class:`specmodel.model.scenario.Scenario`) is: B concurrent sequences, T prompt
tokens each, gamma draft tokens per iteration, a drafter, the acceptance (a profile and its
alpha, or measured per position), on one accelerator serving the target model. Drafters are
draft models, heads or n-gram lookup (:mod:`specmodel.model.drafters`); memory capacity is
checked by :mod:`specmodel.model.memory`. Inputs broadcast like numpy arrays; every output
has the broadcast shape (``per_position`` adds a trailing axis).

One speculative iteration is gamma draft passes (Q = 1 each for a chain, a tree's as its
engine builds it, :mod:`specmodel.model.trees`; none for the n-gram drafter, which has no
weights, no cache and no FLOPs) and one verify pass of the target over
gamma + 1 positions (Leviathan et al. 2023, arXiv:2211.17192, Algorithm 1). Plain
decoding is one target pass (Q = 1) per token. Every pass reads the cache at length
``n = T + KV_READ_FRACTION x G`` and is priced once by :mod:`specmodel.model.passes`; the
cohort of B sequences generating G tokens each is timed by :mod:`specmodel.model.cohort`.

The settings (constants, deployment, engine profiles) are given by the caller (default:
``Settings()``) and passed down.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model import acceptance as acc
from specmodel.model import cohort, memory, trees
from specmodel.model.drafters import Drafter, drafter_of
from specmodel.model.engines import EngineProfile, out_of_range
from specmodel.model.evaluation import Evaluation, arithmetic_ratio, concatenate, draft_share, first_non_finite
from specmodel.model.passes import PassCoefficients, PassPrice, kv_read_length, price_pass
from specmodel.model.roofline import arithmetic_intensity
from specmodel.model.scenario import Scenario, ScenarioGrid
from specmodel.model.settings import Constants, Settings
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.model.timing import TIME_PARTS, EngineTerms, Passes, Timing, cohort_timing, steady_timing
from specmodel.model.types import BoolArray, FloatArray, IntArray
from specmodel.model.validation import compact, factorize, map_names
from specmodel.records import as_mapping


def scenario_grid(
    scenario: Scenario | ScenarioGrid | None = None, settings: Settings | None = None, **fields: Any
) -> ScenarioGrid:
    """The broadcasting form of ``scenario`` (a record), or of ``fields`` (scalars or arrays)."""
    settings = settings or Settings()
    if isinstance(scenario, ScenarioGrid):
        if fields:
            raise TypeError("give a ScenarioGrid or fields, not both")
        return scenario
    if isinstance(scenario, Scenario):
        fields = {**as_mapping(scenario, omit_none=True), **fields}
    elif scenario is not None:
        raise TypeError(f"evaluate takes a Scenario or a ScenarioGrid, not {type(scenario).__name__}")
    return ScenarioGrid.build(settings, **fields)


def evaluate(
    scenario: Scenario | ScenarioGrid | None = None, /, *, settings: Settings | None = None, **fields: Any
) -> Evaluation:
    """Evaluate one scenario or a broadcast grid of them.

    Give a :class:`~specmodel.model.scenario.Scenario`, a
    :class:`~specmodel.model.scenario.ScenarioGrid`, or the scenario's fields as keywords
    (scalars or arrays that broadcast: ``concurrency``, ``context``, ``gamma``, ``drafter``,
    ``acceptance``, ``alpha``, ``per_position``, ``generated_tokens``, ``hardware``,
    ``target``). ``settings`` (constants, deployment, engine profiles) default to
    ``Settings()``; names left out take the deployment's. Unknown names, drafters that cannot serve the target and
    out-of-range values raise :class:`specmodel.SpecModelError` before anything is computed.

    >>> ev = evaluate()
    >>> round(float(ev.speedup), 2), round(float(ev.mean_acceptance_length), 2)
    (1.93, 2.61)
    >>> evaluate(concurrency=[1, 64]).speedup.round(2).tolist()
    [1.93, 0.89]
    """
    settings = settings or Settings()
    grid = scenario_grid(scenario, settings, **fields)
    split = grid.split_by_batching()
    if split is None:
        evaluation = _evaluate_grid(grid, settings)
    else:
        axis, parts = split
        evaluation = concatenate([_evaluate_grid(part, settings) for part in parts], axis)
    check_finite(evaluation, grid, settings)
    return evaluation


def check_finite(evaluation: Evaluation, grid: ScenarioGrid, settings: Settings) -> None:
    """Refuse an evaluation with a NaN or an infinity in it: the one place every prediction
    leaves the model, so that none becomes a verdict, a table row or a figure. Validated
    inputs never give one; a profile built directly in Python, unvalidated, or a
    catalogue entry out of range can. One line: the quantity, its value, the scenario, and
    the input responsible (the engine constant out of its range, if one is)."""
    found = first_non_finite(evaluation)
    if found is None:
        return
    name, index, value = found
    engine = settings.engine(str(grid.engine[index]))
    problem = out_of_range(engine)
    cause = (
        f"engine {engine.key!r} has {problem}"
        if problem
        else f"no engine constant is out of range, so the data of {grid.hardware} or {grid.target} must be"
    )
    raise SpecModelError(f"the model gives {name} = {value} for the scenario {_scenario_text(grid, index)}: {cause}")


def _scenario_text(grid: ScenarioGrid, index: tuple[int, ...]) -> str:
    """The scenario at ``index`` of ``grid`` in words, for an error message."""
    at = {name: getattr(grid, name)[index] for name in ("concurrency", "context", "gamma", "drafter", "engine")}
    return (
        f"(concurrency {at['concurrency']}, context {at['context']}, gamma {at['gamma']}, drafter {at['drafter']}, "
        f"engine {at['engine']} with {grid.batching[index]} batching, {grid.target} on "
        f"{grid.tensor_parallel[index]} x {grid.hardware})"
    )


def _evaluate_grid(grid: ScenarioGrid, settings: Settings) -> Evaluation:
    """:func:`evaluate` on a validated grid: the acceptance of each scenario, then the model."""
    if grid.measured_per_position is not None:
        per_position = grid.measured_per_position
    else:
        ratio = map_names(grid.acceptance, lambda x: acc.profile_ratio(x, settings.constants.FALLING_RATIO))
        gamma_max = int(compact(grid.gamma).max()) if grid.gamma.size else 1
        alpha, gamma, r = np.broadcast_arrays(compact(grid.alpha), compact(grid.gamma), compact(ratio))
        per_position = acc.per_position_acceptance(alpha, gamma, r, gamma_max)
        if grid.profile_acceptance:
            per_position = _tree_acceptance(per_position, grid)
        per_position = np.broadcast_to(per_position, grid.shape + per_position.shape[-1:])
    small_u = compact(per_position)
    distinct, inverse = np.unique(small_u.reshape(-1, small_u.shape[-1]), axis=0, return_inverse=True)
    rows = np.broadcast_to(inverse.reshape(small_u.shape[:-1]), grid.shape)
    return _evaluate(grid, per_position, acc.tokens_per_iteration_pmf(distinct), rows, settings)


def _tree_acceptance(per_position: FloatArray, grid: ScenarioGrid) -> FloatArray:
    """The chain's ``per_position`` acceptance reshaped for the scenarios that draft a tree
    (w > 1, or fewer than Q_v = gamma + 1 positions verified) by :func:`acc.tree_per_position`;
    on the compact forms of the grid's fields."""
    k, v, g = (compact(x) for x in (grid.tree_topk, grid.verify_tokens, grid.gamma))
    tree = (k > 1) | (v < g + 1)
    if not np.any(tree):
        return per_position
    lead = np.broadcast_shapes(per_position.shape[:-1], tree.shape)
    u = np.broadcast_to(per_position, lead + per_position.shape[-1:])
    shaped = acc.tree_per_position(u, *(np.broadcast_to(x, lead) for x in (k, v, g)))
    return np.where(np.broadcast_to(tree, lead)[..., None], shaped, u)


def evaluate_per_position(
    per_position: Any,
    concurrency: Any = 1,
    context: Any = 2048,
    drafter: Any = None,
    hardware: str | None = None,
    target: str | None = None,
    *,
    settings: Settings | None = None,
    **fields: Any,
) -> Evaluation:
    """Evaluate scenarios whose acceptance is given position by position, e.g. measured.

    ``per_position[..., j - 1]`` is the unconditional acceptance of draft position j (the
    share of iterations in which guess j reaches the output, as vLLM's per-position
    counters report it); gamma is the length of the trailing axis. Values must lie in
    [0, 1] and must not rise with position (a guess survives only if all before it did).
    The same as ``evaluate(per_position=...)``.

    >>> ev = evaluate_per_position([0.75, 0.478125, 0.25908398, 0.11933246])
    >>> round(float(ev.speedup), 2)
    1.93
    """
    return evaluate(
        per_position=per_position,
        concurrency=concurrency,
        context=context,
        drafter=drafter,
        hardware=hardware,
        target=target,
        settings=settings,
        **fields,
    )


def _cohort_table(survival: cohort.Survival, rows: IntArray, batch: FloatArray) -> tuple[cohort.CohortTable, IntArray]:
    """Cohort table over the distinct (acceptance, batch) pairs and each scenario's row."""
    codes = rows.ravel() * (int(batch.max(initial=1)) + 1) + batch.ravel().astype(np.int64)
    unique, inverse = np.unique(codes, return_inverse=True)
    width = int(batch.max(initial=1)) + 1
    table = cohort.CohortTable(survival.take(unique // width), unique % width)
    return table, inverse.reshape(batch.shape)


@dataclass(frozen=True)
class _Pairs:
    """The grid's distinct (engine, drafter) pairs and each scenario's pair (flat), so that
    every drafter prices its own passes and every engine states its own terms once per pair."""

    engines: list[EngineProfile]
    drafters: list[Drafter]
    index: IntArray  #: each scenario's pair

    @classmethod
    def of(cls, grid: ScenarioGrid, settings: Settings) -> _Pairs:
        engine, drafter = np.broadcast_arrays(compact(grid.engine), compact(grid.drafter))
        engines, engine_codes = factorize(engine.astype(str))
        drafters, drafter_codes = factorize(drafter.astype(str))
        pair, codes = factorize(engine_codes * len(drafters) + drafter_codes)  # (engine, drafter) in order
        pairs = [(str(engines[p // len(drafters)]), str(drafters[p % len(drafters)])) for p in pair.tolist()]
        index = np.broadcast_to(codes.reshape(engine.shape), grid.shape).ravel()
        return cls([settings.engine(e) for e, _ in pairs], [drafter_of(d) for _, d in pairs], index)

    def column(self, value: Callable[[EngineProfile, Drafter], float]) -> FloatArray:
        """``value(engine, drafter)`` of each scenario's pair (flat)."""
        return np.array([value(e, d) for e, d in zip(self.engines, self.drafters)], dtype=float)[self.index]

    def coefficients(self, value: Callable[[Drafter], PassCoefficients[float]]) -> PassCoefficients[FloatArray]:
        """Pass coefficients of each scenario's drafter (flat)."""
        return PassCoefficients.gathered([value(d) for d in self.drafters], self.index)

    def draft_terms(self, first_acceptance: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Each scenario's (step time, lookup time, drafting share), as its drafter says its
        engine charges it (:meth:`specmodel.model.drafters.Drafter.engine_terms`; flat)."""
        step, lookup, share = np.zeros(self.index.shape), np.zeros(self.index.shape), np.ones(self.index.shape)
        for i, (engine, drafter) in enumerate(zip(self.engines, self.drafters)):
            mine = self.index == i
            terms = drafter.engine_terms(engine, first_acceptance[mine])
            step[mine], lookup[mine], share[mine] = terms.step_s, terms.lookup_s, terms.drafting_share
        return step, lookup, share


def _evaluate(
    grid: ScenarioGrid, per_position: FloatArray, pmf: FloatArray, rows: IntArray, settings: Settings
) -> Evaluation:
    """The model proper, on a validated grid (see :func:`evaluate`); computed on flat arrays."""
    shape, c = grid.shape, settings.constants
    hw, target = get_hardware(grid.hardware), get_architecture(grid.target)
    fpp = c.FLOPS_PER_PARAMETER
    pairs = _Pairs.of(grid, settings)
    tgt = PassCoefficients.of_model(target, fpp)
    step = pairs.coefficients(lambda d: d.step(target, fpp))
    once = pairs.coefficients(lambda d: d.once_per_iteration(target, fpp))
    batch, t, g = (x.ravel().astype(float) for x in (grid.concurrency, grid.context, grid.gamma))
    small_u = compact(per_position)
    first = np.broadcast_to(small_u[..., 0], shape).ravel()
    generated = grid.generated_tokens
    draft_step, lookup, match = pairs.draft_terms(first)
    terms = EngineTerms(
        target_pass=pairs.column(lambda e, d: e.target_pass_s),
        sequence_pass=pairs.column(lambda e, d: e.sequence_pass_s),
        draft_pass=draft_step,
        lookup=lookup,
        iteration=pairs.column(lambda e, d: e.iteration_s),
        overlap=pairs.column(lambda e, d: e.overlap),
        token_budget=pairs.column(lambda e, d: np.nan if e.token_budget is None else float(e.token_budget)),
    )
    eta = pairs.column(lambda e, d: e.compute_efficiency_or(c.COMPUTE_EFFICIENCY))
    kernel = np.array([e.moe_kernel or "" for e in pairs.engines])[pairs.index]  # grouped-GEMM curves
    gather = pairs.column(lambda e, d: float(e.gathers_embedding))  # untied input table read by rows
    gpus, draft_gpus, topk, verified = (
        x.ravel().astype(float)
        for x in (grid.tensor_parallel, grid.draft_tensor_parallel, grid.tree_topk, grid.verify_tokens)
    )
    positions = 1 + match * (verified - 1)
    n = kv_read_length(t, generated, c.KV_READ_FRACTION)
    me = pairs.column(lambda e, d: e.memory_efficiency_or(c.MEMORY_EFFICIENCY))
    tokens_per_iteration = np.broadcast_to(acc.expected_tokens_per_iteration(small_u), shape).ravel()
    # gamma draft passes of Q_d positions on average, as the tree's engine builds it (trees.draft_positions)
    draft_q, drafted = trees.draft_positions(topk, g, grid.tree_draft_positions.ravel(), tokens_per_iteration)
    passes = Passes(
        verify=price_pass(tgt, n, positions, hw, me, eta, gpus, kernel, gather),
        draft=price_pass(step, n, draft_q, hw, me, eta, draft_gpus, kernel, gather),
        plain=price_pass(tgt, n, 1, hw, me, eta, gpus, kernel, gather),
        once=price_pass(once, n, 1, hw, me, eta, draft_gpus, kernel, gather),
    )
    timing = _timing(grid, passes, terms, pmf, rows.ravel(), batch, g, t, tokens_per_iteration, tgt)
    # The readouts' verify pass scores all Q_v positions (gamma + 1 for a chain); timing uses the mean Q.
    verify = price_pass(tgt, n, verified, hw, me, eta, gpus, kernel, gather)
    flat = {
        **_throughputs(timing, batch, generated, tokens_per_iteration, positions),
        "arithmetic_ratio": arithmetic_ratio(
            timing.iterations, positions, drafted, verify.position_flops, passes.draft.position_flops, generated
        ),
        **_pass_readouts(verify, passes, batch, tgt, step),
        "alpha": grid.alpha.ravel().astype(float),
        "ngram_match_rate": match,
        **_capacity(tgt, step, batch, t, generated, hw.memory_capacity.value, c, gpus, draft_gpus),
    }
    out = {k: np.reshape(v, shape + np.shape(v)[1:]) for k, v in flat.items()}
    return Evaluation(**out, per_position=per_position, generated_tokens=generated)


def _throughputs(
    timing: Timing, batch: FloatArray, generated: int, tokens_per_iteration: FloatArray, positions: FloatArray
) -> dict[str, Any]:
    """Both speedups (end to end with prefill, and decode alone: :class:`Evaluation`), throughputs,
    draft share and vLLM's throughput counters (flat)."""
    spec_time, base_time = timing.spec_seconds, timing.base_seconds
    output_tokens = batch * generated
    drafts_per_s = batch * timing.iterations / spec_time
    return {
        "speedup": base_time / spec_time,
        "decode_speedup": timing.base_decode_seconds / timing.spec_decode_seconds,
        "spec_tokens_per_s": output_tokens / spec_time,
        "base_tokens_per_s": output_tokens / base_time,
        "spec_tokens_per_s_per_sequence": generated / spec_time,
        "base_tokens_per_s_per_sequence": generated / base_time,
        "spec_time_parts": timing.spec_parts / output_tokens[:, None],
        "base_time_parts": timing.base_parts / output_tokens[:, None],
        "mean_acceptance_length": tokens_per_iteration,
        "draft_share": draft_share(timing.draft_seconds, spec_time),
        "expected_iterations": timing.iterations,
        "accepted_throughput": drafts_per_s * (tokens_per_iteration - 1.0),
        "drafted_throughput": drafts_per_s * (positions - 1),
    }


def _pass_readouts(
    verify: PassPrice, passes: Passes, batch: FloatArray, tgt: PassCoefficients[float], dc: PassCoefficients[FloatArray]
) -> dict[str, Any]:
    """The full-batch verify, plain and draft passes, and the models' weights and caches (flat)."""
    return {
        "verify_idle": verify.idle(batch),
        "verify_bytes": verify.bytes(batch),
        "verify_flops": verify.flops(batch),
        "verify_memory_time": verify.memory_time(batch),
        "verify_compute_time": verify.compute_time(batch),
        "verify_allreduce_time": np.broadcast_to(verify.comm_time(batch), batch.shape),
        "verify_weights_read_bytes": np.broadcast_to(verify.weights_read(batch), batch.shape),
        "plain_weights_read_bytes": np.broadcast_to(passes.plain.weights_read(batch), batch.shape),
        "verify_communication_share": verify.comm_time(batch) / verify.time(batch),
        "plain_compute_time": passes.plain.compute_time(batch),
        "plain_intensity": arithmetic_intensity(passes.plain.flops(batch), passes.plain.bytes(batch)),
        "draft_step_bytes": passes.draft.bytes(batch),
        "verify_time": verify.time(batch),
        **_step_readouts(passes, batch),
        "target_weight_bytes": np.full(batch.shape, tgt.resident_bytes),
        "target_weight_bytes_per_gpu": tgt.resident_bytes / verify.shards,
        "target_kv_bytes_per_token_per_gpu": tgt.kv_bytes_per_token_per_gpu(verify.shards),
        "draft_weight_bytes": dc.weight_bytes,
        "draft_weight_fraction": dc.weight_bytes / tgt.resident_bytes,
        "target_kv_bytes_per_token": np.full(batch.shape, tgt.kv_bytes_per_token),
        "draft_kv_bytes_per_token": dc.kv_bytes_per_token,
        "draft_kv_fraction": dc.kv_bytes_per_token / tgt.kv_bytes_per_token,
    }


def _step_readouts(passes: Passes, batch: FloatArray) -> dict[str, Any]:
    """One full-batch draft pass and the full-batch plain decode pass: FLOPs, bytes, memory,
    arithmetic and roofline time (:meth:`specmodel.model.passes.PassPrice.time`; flat)."""
    draft, plain = passes.draft, passes.plain
    return {
        "draft_step_flops": draft.flops(batch),
        "draft_step_memory_time": draft.memory_time(batch),
        "draft_step_compute_time": draft.compute_time(batch),
        "draft_step_time": draft.time(batch),
        "plain_bytes": plain.bytes(batch),
        "plain_flops": plain.flops(batch),
        "plain_memory_time": plain.memory_time(batch),
        "plain_time": plain.time(batch),
    }


def _timing(
    grid: ScenarioGrid,
    passes: Passes,
    terms: EngineTerms,
    pmf: FloatArray,
    rows: IntArray,
    batch: FloatArray,
    g: FloatArray,
    t: FloatArray,
    tokens_per_iteration: FloatArray,
    tgt: PassCoefficients[float],
) -> Timing:
    """Cohort timing where the batching is ``cohort``, steady where it is ``steady`` (flat)."""
    generated = grid.generated_tokens
    steady = grid.batching.ravel() == "steady"
    out = {name: np.empty(batch.shape) for name in Timing.TOTALS}
    out.update({name: np.empty(batch.shape + (len(TIME_PARTS),)) for name in ("spec_parts", "base_parts")})
    if steady.any():
        rows_ = _selected(steady)
        prefill = tgt.flops_per_position(t[rows_] / 2)
        done = steady_timing(
            passes.take(rows_),
            terms.take(rows_),
            g[rows_],
            batch[rows_],
            generated,
            tokens_per_iteration[rows_],
            np.asarray(prefill, dtype=float),
            t[rows_] / generated,
        )
        for name in out:
            out[name][rows_] = getattr(done, name)
    if (~steady).any():
        rows_ = _selected(~steady)
        needed, local = np.unique(rows[rows_], return_inverse=True)
        survival = cohort.survival_window(pmf[needed], generated)  # only the cohort's acceptance rows
        iterations = survival.expected_iterations()[local]
        table, row = _cohort_table(survival, local, batch[rows_])
        done = cohort_timing(
            table, row, passes.take(rows_), terms.take(rows_), g[rows_], batch[rows_], generated, iterations
        )
        for name in out:
            out[name][rows_] = getattr(done, name)
    return Timing(**out)


def _selected(mask: BoolArray) -> BoolArray | slice:
    """``mask`` as an index of the flat arrays: every row as a slice (views, no copies) when the
    mask selects them all, as it does when a grid's batching is one value."""
    return slice(None) if mask.all() else mask


def _capacity(
    tgt: PassCoefficients[float],
    dc: PassCoefficients[FloatArray],
    batch: FloatArray,
    t: FloatArray,
    generated: int,
    capacity: float,
    c: Constants,
    gpus: FloatArray,
    draft_gpus: FloatArray,
) -> dict[str, Any]:
    """Memory capacity of one GPU, the busiest: the target's share of the weights and cache
    (1/N_g; cache by KV heads), the drafter's (1/N_d: on one GPU, all of it), and the
    workspace, against the card's usable memory (:mod:`specmodel.model.memory`), a share of
    the ``capacity`` the card reports (B)."""
    usable = memory.usable_memory(capacity, c.GPU_MEMORY_UTILIZATION)
    target_kv = tgt.kv_bytes_per_token_per_gpu(gpus)
    draft_kv = dc.kv_bytes_per_token_per_gpu(draft_gpus)
    target_weights = tgt.resident_bytes / gpus
    weights, kv = target_weights + dc.resident_bytes / draft_gpus, target_kv + draft_kv
    hbm = memory.memory_required(weights, kv, batch, t, generated, c.WORKSPACE_BYTES)
    plain = memory.max_concurrency(usable, target_weights, target_kv, t, generated, c.WORKSPACE_BYTES)
    return {
        "memory_required_bytes": hbm,
        "memory_capacity_bytes": np.full(batch.shape, float(capacity)),
        "usable_memory_bytes": np.broadcast_to(np.asarray(usable, dtype=float), batch.shape),
        "fits": hbm <= usable,
        "max_concurrency": memory.max_concurrency(usable, weights, kv, t, generated, c.WORKSPACE_BYTES),
        "max_concurrency_without_draft": np.broadcast_to(np.asarray(plain, dtype=float), batch.shape),
        "tensor_parallel": gpus,
    }
