"""Mixture-of-experts targets: the records, their parameter counts against the model cards,
and the expected number of distinct experts a pass reads against a Monte Carlo of routing."""

from __future__ import annotations

from dataclasses import asdict, replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from specmodel import evaluate
from specmodel.model import architecture as a
from specmodel.model.experts import expected_distinct_experts, routed_expert_bytes
from specmodel.model.passes import PassCoefficients
from specmodel.model.specs import Architecture, architecture_catalog, get_architecture
from specmodel.records import validate

MOE = ("qwen3-30b-a3b", "qwen3-235b-a22b")


def expected_expert_bytes_read(m: Architecture, tokens):
    """The routed expert bytes a pass of model ``m`` over ``tokens`` positions reads, as the
    model prices it (its pass coefficients, then :func:`routed_expert_bytes`)."""
    c = PassCoefficients.of_model(m, 2.0)
    return routed_expert_bytes(c.expert_bytes, tokens, c.experts, c.experts_per_token)


DENSE = tuple(k for k in architecture_catalog() if k not in MOE)

# --------------------------------------------------------------------------- Monte Carlo

#: Trials per Monte Carlo case, and how many standard errors of its mean the formula may be off.
TRIALS = 20_000
Z = 4.0


def _uniform_routes(rng: np.random.Generator, shape: tuple[int, ...], experts: int, k: int) -> np.ndarray:
    """A uniformly random k-subset of range(experts) for every index of ``shape`` (Floyd's
    algorithm, vectorised: Bentley & Floyd, "A sample of brilliance", CACM 30(9), 1987)."""
    chosen = np.empty((*shape, k), dtype=np.int16)
    for i, j in enumerate(range(experts - k, experts)):
        t = rng.integers(0, j + 1, size=shape, dtype=np.int16)
        seen = (chosen[..., :i] == t[..., None]).any(axis=-1)
        chosen[..., i] = np.where(seen, j, t)
    return chosen


def _simulated_distinct(rng: np.random.Generator, tokens: int, experts: int, k: int) -> np.ndarray:
    """Distinct experts touched by ``tokens`` tokens routed independently, one count per trial."""
    chosen = _uniform_routes(rng, (TRIALS, tokens), experts, k).reshape(TRIALS, -1)
    touched = np.zeros((TRIALS, experts), dtype=bool)
    touched[np.arange(TRIALS)[:, None], chosen] = True
    return touched.sum(axis=1)


def _variance_of_distinct(tokens: int, experts: int, k: int) -> float:
    """Exact variance of the count under the same model: with q1 = P(an expert untouched) =
    (1 - k/E)^n and q2 = P(two given experts untouched) = ((E-k)(E-k-1) / (E(E-1)))^n,
    Var = E q1 (1 - q1) + E (E-1) (q2 - q1^2)."""
    if experts == 1:
        return 0.0
    q1 = (1 - k / experts) ** tokens
    q2 = ((experts - k) * (experts - k - 1) / (experts * (experts - 1))) ** tokens
    return max(0.0, experts * q1 * (1 - q1) + experts * (experts - 1) * (q2 - q1**2))


def test_the_sampler_draws_every_k_subset_equally_often():
    # 5 choose 2 = 10 subsets, 100,000 draws: each count is Binomial(100000, 1/10), sd 94.9
    rng = np.random.default_rng(0)
    subsets = np.sort(_uniform_routes(rng, (100_000,), 5, 2), axis=1)
    _, counts = np.unique(subsets, axis=0, return_counts=True)
    assert len(counts) == 10
    assert np.all(np.abs(counts - 10_000) <= Z * np.sqrt(100_000 * 0.1 * 0.9))


@pytest.mark.parametrize(
    ("tokens", "experts", "k"),
    [(1, 128, 8), (5, 128, 8), (64, 128, 8), (320, 128, 8), (3, 8, 2), (10, 16, 1), (7, 64, 6), (4, 5, 5)],
)
def test_distinct_experts_match_a_monte_carlo_of_uniform_top_k_routing(tokens, experts, k):
    rng = np.random.default_rng(14)
    counts = _simulated_distinct(rng, tokens, experts, k)
    formula = float(expected_distinct_experts(tokens, experts, k))
    # the mean of TRIALS counts is within Z of its standard errors, from the count's exact
    # variance under the same model; 1e-12 E covers the formula's floating-point rounding only
    standard_error = np.sqrt(_variance_of_distinct(tokens, experts, k) / TRIALS)
    assert abs(counts.mean() - formula) <= Z * standard_error + 1e-12 * experts, (
        f"n={tokens}, E={experts}, k={k}: simulated {counts.mean():.4f}, formula {formula:.4f}, "
        f"standard error {standard_error:.2g}"
    )


# --------------------------------------------------------------------------- limits


def test_distinct_experts_limits():
    assert float(expected_distinct_experts(0, 128, 8)) == 0.0
    assert float(expected_distinct_experts(1, 128, 8)) == 8.0
    assert float(expected_distinct_experts(1e6, 128, 8)) == 128.0
    assert float(expected_distinct_experts(3, 8, 8)) == 8.0  # k = E: every expert, every time
    assert float(expected_distinct_experts(0, 8, 8)) == 0.0


def test_distinct_experts_broadcast_over_arrays():
    n = np.array([[0.0], [1.0], [5.0], [2.5]])
    e = np.array([64, 128])
    got = expected_distinct_experts(n, e, 8)
    assert got.shape == (4, 2)
    assert got[1].tolist() == [8.0, 8.0]
    assert np.all(np.diff(got[:3], axis=0) > 0)
    assert got[1, 1] < got[3, 1] < got[2, 1]  # a mean of 2.5 tokens lies between 1 and 5


experts_and_k = st.integers(1, 512).flatmap(lambda e: st.tuples(st.just(e), st.integers(1, e)))
token_counts = st.floats(0, 1e4, allow_nan=False)


@given(experts_and_k, token_counts, token_counts)
def test_distinct_experts_grow_with_tokens_up_to_every_expert(ek, n1, n2):
    e, k = ek
    lo, hi = sorted((n1, n2))
    f_lo, f_hi = (float(expected_distinct_experts(n, e, k)) for n in (lo, hi))
    assert 0.0 <= f_lo <= f_hi <= e * (1 + 1e-12)


@given(experts_and_k, st.integers(1, 10_000))
def test_distinct_experts_never_exceed_the_routes_taken(ek, n):
    e, k = ek
    f = float(expected_distinct_experts(n, e, k))
    assert f <= min(n * k, e) * (1 + 1e-12)
    assert f >= k * (1 - 1e-12)  # at least one token's k


# --------------------------------------------------------------------------- the records


#: Model-card anchors: (total, activated). The cards' own wording is in models.toml.
CARDS = {
    "qwen3-30b-a3b": (30.5e9, 3.3e9),
    "qwen3-235b-a22b": (235e9, 22e9),
    "llama-3-70b": (70e9, 70e9),
    "llama-3.1-70b": (70e9, 70e9),
    "llama-3.3-70b": (70e9, 70e9),
    "llama-3.1-405b": (405e9, 405e9),
}
#: The tolerance for these anchors: the cards round to 0.1B (3.3B) or to whole billions.
CARD_TOLERANCE = 0.02


@pytest.mark.parametrize("key", CARDS)
def test_total_and_active_parameters_match_the_model_cards(key):
    m = get_architecture(key)
    total, active = CARDS[key]
    assert m.published_parameters.value == total
    if a.is_moe(m):
        assert m.published_active_parameters is not None
        assert m.published_active_parameters.value == active
    assert a.parameter_count(m) == pytest.approx(total, rel=CARD_TOLERANCE)
    assert a.active_parameter_count(m) == pytest.approx(active, rel=CARD_TOLERANCE)


def test_qwen3_30b_a3b_counts_by_hand():
    m = get_architecture("qwen3-30b-a3b")
    d, layers, experts, k, f_moe, v = 2048, 48, 128, 8, 768, 151936
    attention = 2 * d * 32 * 128 + 2 * d * 4 * 128
    norms = 2 * d + 2 * 128  # input and post-attention RMSNorms, q and k norms
    router, expert = d * experts, 3 * d * f_moe
    shared = 2 * v * d + layers * (attention + norms + router) + d
    assert a.moe_layer_count(m) == layers  # decoder_sparse_step 1, mlp_only_layers []
    assert a.expert_parameters(m) == expert
    assert a.router_parameters(m) == router
    assert a.parameter_count(m) == shared + layers * experts * expert == 30_532_122_624
    assert a.active_parameter_count(m) == shared + layers * k * expert == 3_353_032_704
    assert a.expert_bytes(m) == 2 * expert
    assert a.shared_weight_bytes(m) == 2 * shared
    assert a.weight_bytes(m) == 2 * a.parameter_count(m)
    assert a.dense_flops_per_position(m, 2) == 2 * a.active_parameter_count(m)


def test_moe_layers_follow_transformers_rule():
    m = get_architecture("qwen3-30b-a3b")
    for step, dense in [(1, ()), (2, ()), (3, (2, 5, 7)), (1, tuple(range(48))), (48, ())]:
        changed = replace(m, decoder_sparse_step=step, mlp_only_layers=dense)
        by_hand = sum(1 for i in range(48) if i not in dense and (i + 1) % step == 0)
        assert a.moe_layer_count(changed) == by_hand


def test_dense_layers_of_a_moe_model_keep_the_dense_mlp():
    m = get_architecture("qwen3-30b-a3b")
    one_dense = replace(m, mlp_only_layers=(0,))
    expected = 3 * 2048 * 6144 - (2048 * 128 + 128 * 3 * 2048 * 768)
    assert a.parameter_count(one_dense) - a.parameter_count(m) == expected
    assert a.active_parameter_count(one_dense) - a.active_parameter_count(m) == 3 * 2048 * 6144 - (
        2048 * 128 + 8 * 3 * 2048 * 768
    )
    # with every layer MoE, intermediate_size is read by nothing
    assert a.parameter_count(replace(m, intermediate_size=1)) == a.parameter_count(m)


@pytest.mark.parametrize("key", DENSE)
def test_dense_models_use_every_weight_and_have_no_experts(key):
    m = get_architecture(key)
    assert not a.is_moe(m)
    assert a.moe_layer_count(m) == a.expert_parameters(m) == a.router_parameters(m) == a.expert_bytes(m) == 0
    assert a.active_parameter_count(m) == a.parameter_count(m)
    assert a.shared_weight_bytes(m) == a.weight_bytes(m)
    assert a.dense_flops_per_position(m, 2) == 2 * a.parameter_count(m)
    assert np.all(expected_expert_bytes_read(m, np.array([1.0, 5.0, 64.0])) == 0)


# --------------------------------------------------------------------------- bytes a pass reads


def test_a_verify_pass_reads_more_expert_bytes_than_a_plain_step():
    m = get_architecture("qwen3-30b-a3b")
    plain = float(expected_expert_bytes_read(m, 1))  # batch 1, one position
    verify = float(expected_expert_bytes_read(m, 5))  # batch 1, gamma = 4: five positions
    assert plain == 48 * 8 * a.expert_bytes(m)  # k experts per layer
    assert verify > plain
    assert verify == pytest.approx(48 * 35.3 * a.expert_bytes(m), rel=1e-3)
    # never more than every expert: the whole checkpoint
    everything = float(expected_expert_bytes_read(m, 1e6))
    assert a.shared_weight_bytes(m) + everything == pytest.approx(a.weight_bytes(m), rel=1e-12)


def test_expert_bytes_read_are_vectorised():
    m = get_architecture("qwen3-235b-a22b")
    n = np.array([0.0, 1.0, 5.0, 320.0])
    got = expected_expert_bytes_read(m, n)
    assert got.shape == (4,)
    assert got[0] == 0
    assert np.all(np.diff(got) > 0)
    assert got[1] == 94 * 8 * 3 * 4096 * 1536 * 2


# --------------------------------------------------------------------------- validation


def _raw(key: str) -> dict:
    m = get_architecture(key)
    return asdict(m)


def test_moe_fields_come_together_for_qwen3_moe_only():
    raw = _raw("qwen3-30b-a3b")
    validate(Architecture, raw)  # as in the catalogue
    for field in ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step"):
        with pytest.raises(ValidationError, match=field):
            validate(Architecture, {**raw, field: None})
    with pytest.raises(ValidationError, match="mlp_only_layers"):
        validate(Architecture, {k: v for k, v in raw.items() if k != "mlp_only_layers"})
    with pytest.raises(ValidationError, match="norm_topk_prob"):
        validate(Architecture, {k: v for k, v in raw.items() if k != "norm_topk_prob"})
    dense = _raw("qwen3-8b")
    with pytest.raises(ValidationError, match="num_experts"):
        validate(Architecture, {**dense, "num_experts": 8})
    with pytest.raises(ValidationError, match="only apply"):
        validate(Architecture, {**raw, "model_type": "qwen3"})


def test_moe_fields_are_validated():
    raw = _raw("qwen3-30b-a3b")
    with pytest.raises(ValidationError, match="cannot exceed"):
        validate(Architecture, {**raw, "num_experts_per_tok": 129})
    with pytest.raises(ValidationError):
        validate(Architecture, {**raw, "num_experts": 0})
    with pytest.raises(ValidationError, match="mlp_only_layers"):
        validate(Architecture, {**raw, "mlp_only_layers": [48]})
    with pytest.raises(ValidationError, match="mlp_only_layers"):
        validate(Architecture, {**raw, "mlp_only_layers": [3, 3]})
    with pytest.raises(ValidationError):
        validate(Architecture, {**raw, "router_aux_loss_coef": 0.001})  # extra="forbid"
    with pytest.raises(ValidationError, match="published_active_parameters"):
        validate(Architecture, {**_raw("qwen3-8b"), "published_active_parameters": {"value": 8e9, "source": "x"}})
    assert validate(Architecture, {**raw, "mlp_only_layers": [0, 47]}).mlp_only_layers == (0, 47)


def test_a_moe_verify_pass_reads_more_weights_than_a_plain_step_even_for_one_sequence():
    """The evaluation's own readouts: gamma + 1 positions route to more experts than one."""
    ev = evaluate(target="qwen3-30b-a3b", drafter="ngram", concurrency=1, gamma=4)
    assert float(ev.verify_weights_read_bytes) > 2 * float(ev.plain_weights_read_bytes)
    dense = evaluate(target="qwen3-32b", drafter="ngram", concurrency=1, gamma=4)
    assert float(dense.verify_weights_read_bytes) == float(dense.plain_weights_read_bytes)


def test_speculation_gains_less_on_a_moe_target_at_one_sequence():
    """At batch 1 the verify pass of a MoE model costs several plain steps' bytes, so the same
    acceptance buys less than on a dense model; with many sequences every expert is read
    anyway and the extra positions ride along."""
    moe = evaluate(target="qwen3-30b-a3b", drafter="ngram", concurrency=[1, 64])
    dense = evaluate(target="qwen3-32b", drafter="ngram", concurrency=[1, 64])
    assert moe.speedup[0] < dense.speedup[0]
    assert moe.speedup[1] > moe.speedup[0]
