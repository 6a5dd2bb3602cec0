"""Trees of guesses as SGLang and vLLM build them: every configuration
the engines accept is accepted, the bound is SGLang's candidate pool, and the draft passes
run the positions the engines run (:mod:`specmodel.model.trees`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from specmodel import evaluate
from specmodel.errors import SpecModelError
from specmodel.model import trees
from specmodel.model.drafters import drafter_of
from specmodel.model.passes import PassCoefficients, kv_read_length
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture
from specmodel.vllm.advise import predictions
from specmodel.vllm.speculative_config import served_drafter_from_config, token_tree
from tests.cli_runner import cli

#: SGLang's own examples, (speculative_num_steps, speculative_eagle_topk, speculative_num_draft_tokens):
#: docs/advanced_features/speculative_decoding.md and docs/backend/speculative_decoding.ipynb.
SGLANG = [(3, 4, 16), (5, 8, 64), (5, 8, 32), (1, 1, 2), (4, 2, 7), (3, 1, 4), (5, 4, 8), (4, 1, 5)]
#: vLLM's test trees (tests/v1/spec_decode/test_eagle.py::test_propose_tree) and their level widths.
VLLM = {
    "[(0,)]": (1,),
    "[(0,), (0, 0), (0, 0, 0)]": (1, 1, 1),
    "[(0,), (1,), (2,)]": (3,),
    "[(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]": (3, 6),
}


def _sglang(steps: int, topk: int, tokens: int) -> tuple[str, ...]:
    return ("--drafter", "eagle", "--gamma", str(steps), "--tree-topk", str(topk), "--verify-tokens", str(tokens))


@pytest.mark.parametrize(("steps", "topk", "tokens"), SGLANG)
def test_every_sglang_example_is_accepted_by_point_and_evaluate(steps, topk, tokens):
    status, out, err = cli("point", *_sglang(steps, topk, tokens), "--json")
    assert status == 0, err
    values = json.loads(out)
    assert (values["tree_topk"], values["verify_tokens"]) == (topk, tokens)
    ev = evaluate(drafter="eagle", gamma=steps, tree_topk=topk, verify_tokens=tokens)
    assert float(ev.speedup) == pytest.approx(values["speedup"], rel=1e-3)
    assert float(ev.speedup) > 0


def test_the_issue_tree_is_accepted():
    status, _, err = cli("point", *_sglang(5, 4, 22))
    assert status == 0, err


@pytest.mark.parametrize(("steps", "topk"), [(3, 4), (5, 8), (4, 2), (2, 3)])
def test_the_bound_is_sglangs_candidate_pool(steps, topk):
    top = topk + (steps - 1) * topk**2 + 1
    assert int(trees.max_verify_tokens(topk, steps)) == top
    assert np.isfinite(float(evaluate(drafter="eagle", gamma=steps, tree_topk=topk, verify_tokens=top).speedup))
    status, out, err = cli("point", *_sglang(steps, topk, top + 1))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and f"at most tree_topk + (gamma - 1) tree_topk^2 + 1 = {top}" in err


@pytest.mark.parametrize("tokens", [2, 3, 6])
def test_a_chain_verifies_gamma_plus_one_and_says_sglang_adjusts_it(tokens):
    status, _, err = cli("point", *_sglang(4, 1, tokens))
    assert status == 2 and err.count("\n") == 1
    assert "gamma + 1 = 5" in err and "SGLang adjusts speculative_num_draft_tokens" in err
    with pytest.raises(SpecModelError, match="a chain verifies gamma"):
        evaluate(drafter="eagle", gamma=4, tree_topk=1, verify_tokens=tokens)


def test_help_names_the_engines_options():
    _, out, _ = cli("point", "--help")
    flat = " ".join(out.split())
    for name in ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"):
        assert name in flat


# --- costs ------------------------------------------------------------------------------------

#: Chains of a head, a draft model, n-gram lookup and a fused head, and their (speedup,
#: arithmetic ratio, draft share) as the model gave them before trees were built as the
#: engines build them (HEAD acf6cac; test_model's golden values pin the article's default chain).
CHAINS = [
    ({"drafter": "eagle", "gamma": 5}, (1.7478809424640505, 2.457781927644425, 0.33813469040778676)),
    ({"drafter": "qwen3-0.6b", "gamma": 4, "concurrency": 64},
     (0.8855768054704871, 2.0743353800026525, 0.6400870988065347)),
    ({"drafter": "ngram", "gamma": 3, "concurrency": 16}, (2.3340723485995856, 1.6145011284254371, 0.0)),
    ({"drafter": "eagle3", "gamma": 2, "concurrency": 256},
     (2.056634708418367, 1.387861638805886, 0.05839725135507386)),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "before"), CHAINS)
def test_a_chain_is_priced_exactly_as_before(fields, before):
    implicit = evaluate(**fields)
    explicit = evaluate(**fields, tree_topk=1, verify_tokens=fields["gamma"] + 1)
    for ev in (implicit, explicit):
        now = (float(ev.speedup), float(ev.arithmetic_ratio), float(ev.draft_share))
        assert now == pytest.approx(before, rel=1e-12, abs=0.0)
    draft_q, drafted = trees.draft_positions(1, fields["gamma"], fields["gamma"] - 1, 2.7)
    assert float(draft_q) == 1.0 and float(drafted) == fields["gamma"]


def test_cost_rises_with_verify_tokens_and_topk():
    common = {"drafter": "eagle", "gamma": 3, "concurrency": 64, "mean_acceptance_length": 2.5, "engine": "ideal"}
    by_v = [float(evaluate(**common, tree_topk=4, verify_tokens=v).speedup) for v in (8, 16, 24, 37)]
    assert by_v == sorted(by_v, reverse=True)
    by_k = [float(evaluate(**common, tree_topk=k, verify_tokens=8).speedup) for k in (2, 3, 4, 8)]
    assert by_k == sorted(by_k, reverse=True) and by_k[0] > by_k[-1]


def _draft_positions_per_iteration(ev, verify_tokens: int, target: str = "qwen3-8b", drafter: str = "eagle") -> float:
    """P, the draft positions per sequence per iteration, read back from the arithmetic ratio
    ``E[N] (V f_t + P f_d) / (G f_t)`` (one sequence, every guess drafted)."""
    settings = Settings()
    t = get_architecture(target)
    fpp = settings.constants.FLOPS_PER_PARAMETER
    n = kv_read_length(2048, settings.constants.GENERATED_TOKENS, settings.constants.KV_READ_FRACTION)
    f_t = float(PassCoefficients.of_model(t, fpp).flops_per_position(n))
    f_d = float(drafter_of(drafter).step(t, fpp).flops_per_position(n))
    g = settings.constants.GENERATED_TOKENS
    per_iteration = float(ev.arithmetic_ratio) * g * f_t / float(ev.expected_iterations)
    return (per_iteration - verify_tokens * f_t) / f_d


@pytest.mark.parametrize(("steps", "topk", "tokens"), [(3, 4, 16), (5, 8, 64), (4, 2, 7)])
def test_sglang_draft_passes_run_topk_positions(steps, topk, tokens):
    ev = evaluate(drafter="eagle", gamma=steps, tree_topk=topk, verify_tokens=tokens, mean_acceptance_length=2.5)
    # the extend pass over the accepted tokens + 1 (E[X] = 2.5), then S - 1 passes of K positions
    assert _draft_positions_per_iteration(ev, tokens) == pytest.approx(2.5 + (steps - 1) * topk, rel=1e-9)
    chain = evaluate(drafter="eagle", gamma=steps, mean_acceptance_length=2.5)
    assert _draft_positions_per_iteration(chain, steps + 1) == pytest.approx(steps, rel=1e-9)
    # a dense head's bytes do not depend on its positions; only its arithmetic does
    assert float(ev.draft_step_bytes) == pytest.approx(float(chain.draft_step_bytes))


# --- acceptance -------------------------------------------------------------------------------


@pytest.mark.parametrize("mean", [1.8, 3.2, 4.9])
def test_a_measured_mean_acceptance_length_is_a_trees_tokens_per_iteration(mean):
    ev = evaluate(drafter="eagle", gamma=5, tree_topk=4, verify_tokens=22, mean_acceptance_length=mean)
    assert float(ev.mean_acceptance_length) == pytest.approx(mean, rel=1e-9)
    status, out, err = cli("point", *_sglang(5, 4, 22), "--mean-acceptance-length", str(mean), "--json")
    assert status == 0, err
    assert json.loads(out)["mean_acceptance_length"] == pytest.approx(mean, rel=1e-3)


# --- vLLM's speculative_token_tree -------------------------------------------------------------


@pytest.mark.parametrize("tree", list(VLLM))
def test_vllms_test_trees_are_accepted(tree):
    widths = token_tree(tree)
    assert widths == VLLM[tree]
    served = served_drafter_from_config(json.dumps({"method": "eagle", "speculative_token_tree": tree}))
    assert served.gamma == len(widths)
    ev = evaluate(drafter="eagle", gamma=served.gamma, **served.layout())
    assert np.isfinite(float(ev.speedup))


def test_vllm_tree_passes_rerun_every_token_drafted_so_far():
    assert trees.vllm_pass_positions((3, 6)) == (3,)
    assert trees.vllm_pass_positions((2, 4, 8)) == (2, 6)
    tree = "[(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1), (0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0)]"
    assert token_tree(tree) == (2, 4, 4)
    served = served_drafter_from_config(json.dumps({"method": "eagle", "speculative_token_tree": tree}))
    assert served.layout() == {"tree_topk": 4, "verify_tokens": 11, "tree_draft_positions": 2 + 6}
    ev = evaluate(drafter="eagle", gamma=3, mean_acceptance_length=2.5, **served.layout())
    assert _draft_positions_per_iteration(ev, 11) == pytest.approx(2.5 + 2 + 6, rel=1e-9)


@pytest.mark.parametrize(
    "tree", ["[(0,), (1,), (0, 0)]", "[(0,), (1,), (0, 0), (0, 1), (1, 0)]", "[(0,), (0, 1)]", "[(1,)]"]
)
def test_a_ragged_tree_is_refused_saying_vllm_would_draft_other_children(tree):
    with pytest.raises(SpecModelError, match="vLLM drafts the top .* so it would draft other children"):
        token_tree(tree)


def test_advise_cuts_a_tree_to_each_depth_by_the_new_bound():
    sglang = {"tree_topk": 4, "verify_tokens": 16}
    assert [trees.cut_tree(sglang, g)["verify_tokens"] for g in (1, 2, 3)] == [5, 16, 16]  # the pool: 5, 21, 37
    widths = (2, 4, 4)
    assert [trees.cut_tree({}, g, widths) for g in (1, 2, 3)] == [
        {"tree_topk": 2, "verify_tokens": 3, "tree_draft_positions": 0},
        {"tree_topk": 4, "verify_tokens": 7, "tree_draft_positions": 2},
        {"tree_topk": 4, "verify_tokens": 11, "tree_draft_positions": 8},
    ]
    chain = {"tree_topk": 1, "verify_tokens": 4}
    assert [trees.cut_tree(chain, g)["verify_tokens"] for g in (1, 2, 3)] == [2, 3, 4]
    u = [0.8, 0.6, 0.45]
    for layout, tree_widths in ((sglang, None), ({}, widths), (chain, None)):
        evs = predictions(u, 1, 2048, "eagle", engine="ideal", layout=layout, tree_widths=tree_widths)
        assert all(np.isfinite(float(e.speedup)) for e in evs)
