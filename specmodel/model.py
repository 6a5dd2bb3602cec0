"""One speculative-decoding scenario, or a whole grid of them, evaluated at once.

A scenario is: B concurrent sequences (``concurrency``), T prompt tokens each
(``context``), gamma draft tokens per iteration, a drafter, an acceptance profile and
its alpha, on one accelerator serving the target model.
Drafters are draft models, heads or n-gram lookup (:mod:`specmodel.drafters`); memory
capacity is checked by :mod:`specmodel.memory`. Inputs broadcast like numpy
arrays; every output has the broadcast shape (``per_position`` adds a trailing axis).

One speculative iteration is gamma draft passes (Q = 1 each; none for the n-gram drafter,
which has no weights, no cache and no FLOPs) and one verify pass of the target over
gamma + 1 positions (Leviathan et al. 2023, arXiv:2211.17192, Algorithm 1). Plain
decoding is one target pass (Q = 1) per token. Every pass reads the cache at length
``n = T + KV_READ_FRACTION x G`` and is costed by the roofline (:mod:`specmodel.roofline`); the
cohort of B sequences generating G tokens each is timed by :mod:`specmodel.cohort`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specmodel import acceptance as acc
from specmodel import cohort, memory, roofline
from specmodel.drafters import PassCoefficients, check_drafter, drafter_coefficients
from specmodel.errors import SpecModelError
from specmodel.settings import constants, deployment
from specmodel.specs import get_architecture, get_hardware
from specmodel.validation import MAX_GAMMA, check_choice, check_integer, check_open_unit

#: Acceptance profiles, in the order the article presents them.
PROFILES = acc.PROFILES

#: The article's scenario, apart from the deployment (see :func:`defaults`).
SCENARIO_DEFAULTS = {"concurrency": 1, "context": 2048, "gamma": 4, "acceptance": "falling", "alpha": 0.75}


def defaults() -> dict:
    """The article's scenario with the deployment in force: its draft model, hardware and target.

    >>> defaults()["drafter"], defaults()["hardware"], defaults()["target"]
    ('qwen3-0.6b', 'h100-sxm', 'qwen3-8b')
    """
    d = deployment()
    return {**SCENARIO_DEFAULTS, "drafter": d.draft, "hardware": d.hardware, "target": d.target}


@dataclass(frozen=True)
class Evaluation:
    """Everything the model says about a scenario, in SI units (see module docstring)."""

    speedup: np.ndarray  #: speculative over plain output tokens/s
    spec_tokens_per_s: np.ndarray  #: output tokens/s over all sequences, speculative
    base_tokens_per_s: np.ndarray  #: output tokens/s over all sequences, plain decoding
    mean_acceptance_length: np.ndarray  #: expected tokens per target pass, E[X]
    per_position: np.ndarray  #: unconditional acceptance of positions 1..gamma_max
    draft_share: np.ndarray  #: share of wall clock spent in draft passes
    arithmetic_ratio: np.ndarray  #: FLOPs per output token, speculative / plain
    expected_iterations: np.ndarray  #: iterations per sequence for its G tokens, E[N]
    verify_idle: np.ndarray  #: idle share of the tensor cores in the (full-batch) verify pass
    verify_bytes: np.ndarray
    verify_flops: np.ndarray
    verify_memory_time: np.ndarray  #: seconds
    verify_compute_time: np.ndarray  #: seconds
    draft_step_bytes: np.ndarray  #: bytes one full-batch draft pass moves (0 for n-gram)
    target_weight_bytes: np.ndarray
    draft_weight_bytes: np.ndarray  #: weights one draft pass reads
    draft_weight_fraction: np.ndarray  #: draft weights read per pass / target weights
    target_kv_bytes_per_token: np.ndarray
    draft_kv_bytes_per_token: np.ndarray
    accepted_throughput: np.ndarray  #: accepted draft tokens/s over all sequences
    drafted_throughput: np.ndarray  #: draft tokens/s over all sequences
    memory_required_bytes: np.ndarray  #: weights + both caches at the end of generation + workspace
    usable_memory_bytes: np.ndarray  #: capacity x GPU_MEMORY_UTILIZATION
    fits: np.ndarray  #: memory_required_bytes <= usable_memory_bytes
    max_concurrency: np.ndarray  #: most sequences that fit at this context, with the drafter
    max_concurrency_without_draft: np.ndarray  #: the same for plain decoding (target alone)


def _coefficient_arrays(drafter: np.ndarray, target: str) -> dict[str, np.ndarray]:
    names, index = np.unique(drafter, return_inverse=True)
    coeffs = [drafter_coefficients(str(n), target) for n in names]
    index = index.reshape(drafter.shape)
    return {
        field: np.array([getattr(c, field) for c in coeffs])[index]
        for field in PassCoefficients.__dataclass_fields__
    }


def _survival_per_scenario(gamma, ratio, alpha, gamma_max):
    """Survival rows S_i for each distinct (gamma, ratio, alpha) and each scenario's row index."""
    code = np.zeros(gamma.size, dtype=np.int64)
    for values in (gamma, ratio, alpha):
        levels, index = np.unique(values.ravel(), return_inverse=True)
        code = code * len(levels) + index
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    g, r, a = (v.ravel()[first] for v in (gamma, ratio, alpha))
    per_position = acc.per_position_acceptance(a, g, r, gamma_max)
    survival = cohort.iteration_survival(acc.tokens_per_iteration_pmf(per_position))
    return survival, inverse.reshape(gamma.shape)


def _cohort_table(survival, rows, batch):
    """Cohort table over the distinct (acceptance, batch) pairs and each scenario's row."""
    codes = rows.ravel() * (int(batch.max(initial=1)) + 1) + batch.ravel().astype(np.int64)
    unique, inverse = np.unique(codes, return_inverse=True)
    width = int(batch.max(initial=1)) + 1
    table = cohort.CohortTable(survival[unique // width], unique % width)
    return table, inverse.reshape(batch.shape)


def _deployment_names(drafter, hardware, target):
    """Fill in the deployment's defaults and check the names; drafters must suit the target."""
    d = deployment()
    hardware = d.hardware if hardware is None else hardware
    target = d.target if target is None else target
    get_hardware(hardware)
    get_architecture(target)
    drafter = d.draft if drafter is None else drafter
    names = np.asarray(drafter, dtype=object)
    for name in set(names.flat):
        check_drafter(name, target)
    return names.astype(str), hardware, target


def evaluate(
    concurrency=SCENARIO_DEFAULTS["concurrency"],
    context=SCENARIO_DEFAULTS["context"],
    gamma=SCENARIO_DEFAULTS["gamma"],
    drafter=None,
    acceptance=SCENARIO_DEFAULTS["acceptance"],
    alpha=SCENARIO_DEFAULTS["alpha"],
    hardware: str | None = None,
    target: str | None = None,
) -> Evaluation:
    """Evaluate one scenario or a broadcast grid of them.

    ``drafter``, ``hardware`` and ``target`` default to the deployment in force
    (:func:`defaults`). Unknown names (hardware, target, drafter, profile), drafters that
    cannot serve the target, and out-of-range values raise :class:`specmodel.SpecModelError`
    before anything is computed.

    >>> ev = evaluate()
    >>> round(float(ev.speedup), 2), round(float(ev.mean_acceptance_length), 2)
    (1.93, 2.61)
    >>> evaluate(concurrency=[1, 64]).speedup.round(2).tolist()
    [1.93, 0.89]
    """
    b = check_integer("concurrency", concurrency, 1)
    t = check_integer("context", context, 0)
    g = check_integer("gamma", gamma, 1, MAX_GAMMA)
    a = check_open_unit("alpha", alpha)
    d, hardware, target = _deployment_names(drafter, hardware, target)
    p = check_choice("acceptance", acceptance, PROFILES)
    b, t, g, a, d, p = np.broadcast_arrays(b, t, g, a, d, p)
    ratio = np.vectorize(acc.profile_ratio, otypes=[float])(p) if p.size else p.astype(float)
    gamma_max = int(g.max()) if g.size else 1
    per_position = acc.per_position_acceptance(a, g, ratio, gamma_max)
    survival, rows = _survival_per_scenario(g, ratio, a, gamma_max)
    return _evaluate(b, t, g, d, per_position, survival, rows, hardware, target)


def evaluate_per_position(
    per_position,
    concurrency=SCENARIO_DEFAULTS["concurrency"],
    context=SCENARIO_DEFAULTS["context"],
    drafter=None,
    hardware: str | None = None,
    target: str | None = None,
) -> Evaluation:
    """Evaluate scenarios whose acceptance is given position by position, e.g. measured.

    ``per_position[..., j - 1]`` is the unconditional acceptance of draft position j (the
    share of iterations in which guess j reaches the output, as vLLM's per-position
    counters report it); gamma is the length of the trailing axis. Values must lie in
    [0, 1] and must not rise with position (a guess survives only if all before it did).

    >>> ev = evaluate_per_position([0.75, 0.478125, 0.25908398, 0.11933246])
    >>> round(float(ev.speedup), 2)
    1.93
    """
    u = np.asarray(per_position, dtype=float)
    if u.ndim == 0 or u.shape[-1] < 1 or u.shape[-1] > MAX_GAMMA:
        raise SpecModelError(f"per_position needs 1 to {MAX_GAMMA} positions on its last axis; got shape {u.shape}")
    if not np.all(np.isfinite(u)) or np.any((u < 0) | (u > 1)):
        raise SpecModelError("per-position acceptance must lie between 0 and 1")
    if np.any(np.diff(u, axis=-1) > 1e-12):
        raise SpecModelError("per-position acceptance must not rise with position (guess j needs guesses 1..j-1)")
    b = check_integer("concurrency", concurrency, 1)
    t = check_integer("context", context, 0)
    d, hardware, target = _deployment_names(drafter, hardware, target)
    b, t, d, _ = np.broadcast_arrays(b, t, d, np.empty(u.shape[:-1]))
    shape = b.shape
    u = np.broadcast_to(u, shape + u.shape[-1:])
    g = np.full(shape, u.shape[-1])
    distinct, inverse = np.unique(u.reshape(-1, u.shape[-1]), axis=0, return_inverse=True)
    survival = cohort.iteration_survival(acc.tokens_per_iteration_pmf(distinct))
    return _evaluate(b, t, g, d, u, survival, inverse.reshape(shape), hardware, target)


def arithmetic_ratio(iterations, gamma, target_flops_per_position, draft_flops_per_position,
                     generated_tokens: int | None = None):
    """FLOPs per output token, speculative over plain:
    ``E[N] ((gamma + 1) f_t + gamma f_d) / (G f_t)``, where a sequence needs E[N] iterations
    of one verify pass over gamma + 1 positions and gamma draft passes for its G tokens, and
    plain decoding spends f_t per token. Compare Leviathan et al. 2023 (arXiv:2211.17192),
    Theorem 3.11, which is the i.i.d., no-overshoot case.

    >>> float(arithmetic_ratio(iterations=64, gamma=4, target_flops_per_position=1.0,
    ...                        draft_flops_per_position=0.0, generated_tokens=256))
    1.25
    """
    g = constants().GENERATED_TOKENS if generated_tokens is None else generated_tokens
    spec = iterations * ((gamma + 1) * target_flops_per_position + gamma * draft_flops_per_position)
    return spec / (g * target_flops_per_position)


def kv_read_length(context):
    """KV length the average pass reads: ``n = T + KV_READ_FRACTION x G``.

    >>> float(kv_read_length(2048))
    2176.0
    """
    c = constants()
    return np.asarray(context, dtype=float) + c.KV_READ_FRACTION * c.GENERATED_TOKENS


def _evaluate(b, t, g, d, per_position, survival, rows, hardware, target) -> Evaluation:
    """The model proper, on validated, broadcast inputs (see :func:`evaluate`)."""
    hw = get_hardware(hardware)
    tgt = PassCoefficients.of_model(get_architecture(target))
    b, t, g = b.astype(float), t.astype(float), g.astype(float)
    dc = _coefficient_arrays(d, target)
    bw, peak = hw.memory_bandwidth.value, hw.peak_flops.value
    generated = constants().GENERATED_TOKENS
    n = kv_read_length(t)
    tokens_per_iteration = acc.expected_tokens_per_iteration(per_position)
    iterations = cohort.expected_iterations(survival)[rows]

    # Cohort time: each pass costs max(m0 + m1 A, c1 A) for a batch of A sequences.
    table, row = _cohort_table(survival, rows, b)
    t_flops_pos = tgt.flops_per_position(n)
    d_flops_pos = dc["dense_flops_per_position"] + dc["attention_flops_per_token"] * n
    verify_time = cohort.expected_pass_time_sum(
        table,
        row,
        roofline.memory_time(tgt.weight_bytes, bw),
        roofline.memory_time(n * tgt.kv_bytes_per_token, bw),
        roofline.compute_time((g + 1) * t_flops_pos, peak),
    )
    draft_time = g * cohort.expected_pass_time_sum(
        table,
        row,
        roofline.memory_time(dc["weight_bytes"], bw),
        roofline.memory_time(n * dc["kv_bytes_per_token"], bw),
        roofline.compute_time(d_flops_pos, peak),
    )
    spec_time = verify_time + draft_time

    # Full-batch passes: plain decoding (one position) and the first verify pass (gamma + 1).
    v_bytes = roofline.pass_bytes(tgt.weight_bytes, tgt.kv_bytes_per_token, b, n)
    v_mem = roofline.memory_time(v_bytes, bw)
    base_flops = roofline.pass_flops(tgt.dense_flops_per_position, tgt.attention_flops_per_token, b, 1, n)
    base_time = generated * roofline.pass_time(v_mem, roofline.compute_time(base_flops, peak))
    v_flops = (g + 1) * base_flops
    v_comp = roofline.compute_time(v_flops, peak)

    output_tokens = b * generated
    drafts_per_s = b * iterations / spec_time

    # Memory capacity: both models' resident weights and caches, and the workspace.
    usable = memory.usable_memory(hw.memory_capacity.value)
    weights, kv = tgt.resident_bytes + dc["resident_bytes"], tgt.kv_bytes_per_token + dc["kv_bytes_per_token"]
    hbm = memory.memory_required(weights, kv, b, t)
    full = lambda x: np.broadcast_to(np.asarray(x, dtype=float), b.shape)  # noqa: E731
    return Evaluation(
        speedup=base_time / spec_time,
        spec_tokens_per_s=output_tokens / spec_time,
        base_tokens_per_s=output_tokens / base_time,
        mean_acceptance_length=tokens_per_iteration,
        per_position=per_position,
        draft_share=draft_time / spec_time,
        arithmetic_ratio=arithmetic_ratio(iterations, g, t_flops_pos, d_flops_pos),
        expected_iterations=iterations,
        verify_idle=roofline.idle_share(v_mem, v_comp),
        verify_bytes=v_bytes,
        verify_flops=v_flops,
        verify_memory_time=v_mem,
        verify_compute_time=v_comp,
        draft_step_bytes=roofline.pass_bytes(dc["weight_bytes"], dc["kv_bytes_per_token"], b, n),
        target_weight_bytes=full(tgt.weight_bytes),
        draft_weight_bytes=dc["weight_bytes"],
        draft_weight_fraction=dc["weight_bytes"] / tgt.weight_bytes,
        target_kv_bytes_per_token=full(tgt.kv_bytes_per_token),
        draft_kv_bytes_per_token=dc["kv_bytes_per_token"],
        accepted_throughput=drafts_per_s * (tokens_per_iteration - 1.0),
        drafted_throughput=drafts_per_s * g,
        memory_required_bytes=hbm,
        usable_memory_bytes=full(usable),
        fits=hbm <= usable,
        max_concurrency=memory.max_concurrency(usable, weights, kv, t),
        max_concurrency_without_draft=full(memory.max_concurrency(usable, tgt.resident_bytes, tgt.kv_bytes_per_token, t)),
    )
