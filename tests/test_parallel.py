"""Tensor parallelism and tree drafts: identities, limits, memory per GPU and bad input."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmodel import Settings, SpecModelError, evaluate
from specmodel.formatting import GIB
from specmodel.model import acceptance as acc
from specmodel.model import architecture as arch
from specmodel.model import parallel, roofline
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.records import validate
from specmodel.vllm.speculative_config import served_drafter_from_config, token_tree

GRID = {
    "concurrency": np.array([1, 8, 64, 512])[:, None, None, None],
    "context": np.array([256, 4096])[None, :, None, None],
    "drafter": np.array(["qwen3-0.6b", "ngram", "eagle", "eagle3"])[None, None, :, None],
    "engine": np.array(["ideal", "vllm"])[None, None, None, :],
}


def _fields(ev) -> dict:
    return {f.name: getattr(ev, f.name) for f in dataclasses.fields(ev)}


def _assert_identical(a, b) -> None:
    for name, value in _fields(a).items():
        np.testing.assert_array_equal(value, getattr(b, name), err_msg=name)


# --- tensor parallelism ----------------------------------------------------------------------


def test_tensor_parallel_1_is_the_one_card_roofline_bit_for_bit():
    """On one GPU the split (1/N of the weights and arithmetic, the cache by KV heads, the
    all-reduces) vanishes: the verify pass is the roofline's ``W + B n kv`` bytes and ``Q B f``
    FLOPs of the whole model, exactly, and spends nothing on all-reduces. (In ``vllm``, which
    gathers embedding rows, W leaves out Qwen3-8B's untied input table and adds B Q rows.)"""
    ev = evaluate(**GRID, tensor_parallel=1)
    qwen = get_architecture("qwen3-8b")
    c = Settings().constants
    n = GRID["context"] + c.KV_READ_FRACTION * c.GENERATED_TOKENS
    f = roofline.flops_per_position(
        arch.dense_flops_per_position(qwen, c.FLOPS_PER_PARAMETER), arch.attention_flops_per_position_per_token(qwen), n
    )
    batch = GRID["concurrency"].astype(float)
    gather = np.array([0.0, 1.0])[None, None, None, :]  # ideal reads the table, vllm gathers rows
    weights = (
        float(arch.weight_bytes(qwen))
        - gather * arch.input_embedding_bytes(qwen)
        + batch * 5.0 * (gather * arch.embedding_gather_bytes(qwen, 1))
    )
    expected_bytes = roofline.pass_bytes(weights, float(arch.kv_cache_bytes_per_token(qwen)), batch, n)
    np.testing.assert_array_equal(ev.verify_bytes, np.broadcast_to(expected_bytes, ev.speedup.shape))
    np.testing.assert_array_equal(
        ev.verify_flops, np.broadcast_to(roofline.pass_flops(f, batch, 5.0), ev.speedup.shape)
    )
    assert np.all(ev.verify_allreduce_time == 0) and np.all(ev.verify_communication_share == 0)


def test_a_scenario_on_one_gpu_overrides_a_deployment_on_several():
    four = validate(Settings, {"deployment": {"tensor_parallel": 4}})
    _assert_identical(evaluate(**GRID, tensor_parallel=1, settings=four), evaluate(**GRID))
    assert np.all(evaluate(**GRID, settings=four).verify_allreduce_time > 0)


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_each_gpu_holds_one_nth_of_the_weights_and_cache(gpus):
    one, split = evaluate(**GRID), evaluate(**GRID, tensor_parallel=gpus)
    np.testing.assert_allclose(split.target_weight_bytes_per_gpu * gpus, one.target_weight_bytes, rtol=1e-15)
    # Qwen3-8B has 8 KV heads: up to 8 GPUs each holds 1/N of the cache.
    np.testing.assert_allclose(
        split.target_kv_bytes_per_token_per_gpu * gpus, one.target_kv_bytes_per_token, rtol=1e-15
    )
    # The verify pass moves 1/N of the weights and cache and does 1/N of the arithmetic per GPU.
    np.testing.assert_allclose(split.verify_flops * gpus, one.verify_flops, rtol=1e-12)
    np.testing.assert_allclose(split.verify_bytes * gpus, one.verify_bytes, rtol=1e-12)


def test_more_gpus_than_kv_heads_replicate_the_cache():
    """Qwen3-30B-A3B has 4 KV heads: at 8 GPUs each still holds one head, a quarter of the cache."""
    one = evaluate(target="qwen3-30b-a3b", drafter="ngram")
    eight = evaluate(target="qwen3-30b-a3b", drafter="ngram", tensor_parallel=8)
    assert float(eight.target_kv_bytes_per_token_per_gpu) == pytest.approx(float(one.target_kv_bytes_per_token) / 4)
    assert float(parallel.kv_share_per_gpu(4, 8)) == 0.25


def test_the_all_reduce_is_its_own_readout_and_its_share_grows_with_gpus():
    shares = np.stack([evaluate(**GRID, tensor_parallel=n).verify_communication_share for n in (1, 2, 4, 8)])
    times = np.stack([evaluate(**GRID, tensor_parallel=n).verify_allreduce_time for n in (1, 2, 4, 8)])
    assert np.all(times[1:] > 0)
    assert np.all(np.diff(shares, axis=0) > 0), "the all-reduce share of the verify pass grows with N"


def test_all_reduce_time_follows_the_ring_formula():
    """Two all-reduces per layer of B Q D b bytes: latency + 2 (N-1)/N x bytes / bandwidth each."""
    h100 = get_hardware("h100-sxm").interconnect
    ev = evaluate(concurrency=64, gamma=4, tensor_parallel=4)
    message = 64 * 5 * 4096 * 2  # B Q D b for Qwen3-8B (D = 4096, bf16)
    latency = h100.allreduce_latency.value + 2 * 3 * h100.hop_latency.value
    one = latency + 1.5 * message / h100.bandwidth.value
    assert float(ev.verify_allreduce_time) == pytest.approx(2 * 36 * one, rel=1e-12)


def test_a_mesh_gives_a_group_of_n_gpus_n_minus_1_links():
    link = get_hardware("mi300x").interconnect
    assert link.topology == "mesh"
    assert float(parallel.group_bandwidth(link.bandwidth.value, "mesh", 2)) == link.bandwidth.value
    assert float(parallel.group_bandwidth(link.bandwidth.value, "mesh", 8)) == 7 * link.bandwidth.value
    two = evaluate(hardware="mi300x", tensor_parallel=2, concurrency=64)
    eight = evaluate(hardware="mi300x", tensor_parallel=8, concurrency=64)
    # Per all-reduce, the bytes term falls from 1 x S / 64 GB/s to 1.75 x S / 448 GB/s.
    assert float(eight.verify_allreduce_time) < float(two.verify_allreduce_time) * 2


def test_llama_3_70b_needs_more_than_one_h100_and_fits_on_four():
    one = evaluate(target="llama-3-70b", drafter="llama-3.2-1b", context=2048)
    four = evaluate(target="llama-3-70b", drafter="llama-3.2-1b", context=2048, tensor_parallel=4)
    need, usable = float(one.memory_required_bytes), float(one.usable_memory_bytes)
    assert not bool(one.fits), f"one H100: needs {need / GIB:.1f} GiB, usable {usable / GIB:.1f} GiB"
    assert float(one.target_weight_bytes) > usable, "the weights alone exceed one card"
    need4 = float(four.memory_required_bytes)
    assert bool(four.fits), f"four H100s: needs {need4 / GIB:.1f} GiB per GPU, usable {usable / GIB:.1f} GiB"
    assert float(four.max_concurrency) > 1


def test_a_drafter_on_one_gpu_sits_whole_on_it():
    shared = evaluate(target="llama-3-70b", drafter="llama-3.1-8b", tensor_parallel=4)
    alone = evaluate(target="llama-3-70b", drafter="llama-3.1-8b", tensor_parallel=4, draft_tensor_parallel=1)
    extra = float(alone.memory_required_bytes - shared.memory_required_bytes)
    weights = float(shared.draft_weight_bytes)
    assert extra > 0.75 * weights - 1, "three quarters more of the draft's weights on the busiest GPU"
    assert float(alone.max_concurrency) < float(shared.max_concurrency)


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"tensor_parallel": 3}, "does not divide qwen3-8b's 32 attention heads"),
        ({"tensor_parallel": 16}, "tensor_parallel must be an integer from 1 to 8"),
        ({"tensor_parallel": 4, "draft_tensor_parallel": 2}, "the drafter runs on 1 GPU or on all"),
        ({"tensor_parallel": 0}, "tensor_parallel must be an integer"),
        ({"tree_topk": 2, "drafter": "ngram"}, "tree_topk must be 1 for the n-gram drafter"),
        ({"tree_topk": 2, "gamma": 3, "verify_tokens": 12}, "more than tree_topk 2 and gamma 3 can draft"),
        ({"verify_tokens": 1}, "verify_tokens"),
    ],
)
def test_bad_layouts_are_refused_with_one_line(fields, needle):
    with pytest.raises(SpecModelError, match=None) as caught:
        evaluate(**fields)
    message = str(caught.value)
    assert needle in message and "\n" not in message


# --- trees ---------------------------------------------------------------------------------


def test_a_tree_of_one_candidate_verifying_gamma_plus_1_is_the_chain_exactly():
    for gamma in (1, 3, 6):
        chain = evaluate(**GRID, gamma=gamma)
        tree = evaluate(**GRID, gamma=gamma, tree_topk=1, verify_tokens=gamma + 1)
        _assert_identical(tree, chain)


@given(
    u=st.lists(st.floats(0.01, 0.99), min_size=1, max_size=8).map(lambda a: np.cumprod(sorted(a, reverse=True))),
)
@settings(max_examples=60, deadline=None)
def test_the_tree_acceptance_model_limits(u):
    gamma = len(u)
    np.testing.assert_allclose(acc.tree_per_position(u, 1, gamma + 1, gamma), u, rtol=1e-12)
    wider = [acc.tree_per_position(u, k, k * gamma + 1, gamma) for k in (1, 2, 4)]
    assert np.all(np.diff(np.stack(wider), axis=0) >= -1e-12), "more candidates never accept less"
    assert np.all(wider[-1] <= 1.0)


def test_a_tree_verifies_more_positions_and_drafts_more_candidates():
    chain = evaluate(drafter="eagle", gamma=5, concurrency=64)
    tree = evaluate(drafter="eagle", gamma=5, concurrency=64, tree_topk=4, verify_tokens=8)
    assert float(tree.verify_flops) == pytest.approx(float(chain.verify_flops) * 8 / 6, rel=1e-12)
    assert float(tree.mean_acceptance_length) > float(chain.mean_acceptance_length)


def test_a_wide_tree_wins_at_one_sequence_and_loses_at_64():
    wide = evaluate(target="llama-3.1-8b", drafter="eagle", gamma=5, tree_topk=8, verify_tokens=41,
                    concurrency=[1, 64], engine="vllm")  # fmt: skip
    chain = evaluate(target="llama-3.1-8b", drafter="eagle", gamma=5, concurrency=[1, 64], engine="vllm")
    assert wide.speedup[0] > chain.speedup[0] > 1
    assert wide.speedup[1] < 1 < chain.speedup[1] or wide.speedup[1] < chain.speedup[1]


# --- vLLM's configuration and the command line -----------------------------------------------


def test_speculative_config_reads_draft_tensor_parallel_and_a_token_tree():
    d = served_drafter_from_config(
        json.dumps(
            {
                "method": "eagle",
                "model": "yuhuili/EAGLE-LLaMA3-Instruct-70B",
                "draft_tensor_parallel_size": 1,
                "speculative_token_tree": "[(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]",
            }
        )  # fmt: skip
    )
    assert (d.drafter, d.gamma) == ("eagle", 2)
    assert d.layout() == {"draft_tensor_parallel": 1, "tree_topk": 6, "verify_tokens": 10, "tree_draft_positions": 3}


@pytest.mark.parametrize(
    "tree", ["[(0,), (0, 0, 0)]", "[(-1,)]", "not a tree", "[]", "[(0,), (0,)]", "[(0,), (1,), (0, 0)]", "[(1,)]"]
)
def test_a_bad_token_tree_is_refused(tree):
    with pytest.raises(SpecModelError, match="speculative_token_tree"):
        token_tree(tree)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specmodel", *args], capture_output=True, text=True)


def test_point_takes_tensor_parallel_and_a_tree():
    out = _cli("point", "--target", "llama-3-70b", "--drafter", "eagle", "--tensor-parallel", "4",
               "--tree-topk", "4", "--verify-tokens", "8", "--gamma", "5", "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    values = json.loads(out.stdout)
    assert values["gpus"] == 4 and values["verify_allreduce_ms"] > 0
    assert values["tree_topk"] == 4 and values["verify_tokens"] == 8


def test_point_refuses_a_bad_tensor_parallel_in_one_line():
    out = _cli("point", "--tensor-parallel", "3")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "attention heads" in out.stderr


def test_sweep_takes_a_fixed_tensor_parallel_and_a_tree(tmp_path):
    out = tmp_path / "tree.parquet"
    result = _cli("sweep", "--out", str(out), "--target", "llama-3-70b", "--tensor-parallel", "4",
                  "--tree-topk", "4", "--verify-tokens", "8")  # fmt: skip
    assert result.returncode == 0, result.stderr
    import pandas as pd

    frame = pd.read_parquet(out)
    assert set(frame["tensor_parallel"]) == {4} and "ngram" not in set(frame["drafter"])
    # Llama-3-70B holds 8,192 positions: the default contexts stop where the prompt and the
    # generated tokens still fit.
    assert frame["context"].max() + 256 <= 8192
    row = frame[(frame.gamma == 5) & (frame.drafter == "eagle") & (frame.concurrency == 1) & (frame.context == 2048)
                & (frame.acceptance == "falling") & (frame.alpha == 0.75) & (frame.engine == "vllm")]  # fmt: skip
    ev = evaluate(target="llama-3-70b", tensor_parallel=4, tree_topk=4, verify_tokens=8, gamma=5, drafter="eagle",
                  engine="vllm")  # fmt: skip
    assert float(row["speedup"].iloc[0]) == pytest.approx(float(ev.speedup))


def test_advise_reads_the_layout_from_the_speculative_config(tmp_path):
    log = tmp_path / "v.log"
    log.write_text(
        "INFO SpecDecoding metrics: Mean acceptance length: 2.68, Accepted throughput: 84.00 tokens/s, "
        "Drafted throughput: 200.00 tokens/s, Accepted: 840 tokens, Drafted: 1500 tokens, "
        "Per-position acceptance rate: 0.760, 0.500, 0.420, Avg Draft acceptance rate: 56.0%\n"
    )
    config = json.dumps({"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3-Instruct-70B",
                         "draft_tensor_parallel_size": 1,
                         "speculative_token_tree": "[(0,), (1,), (0, 0), (1, 0), (0, 0, 0), (1, 0, 0)]"})  # fmt: skip
    result = _cli("advise", "--log", str(log), "--concurrency", "16", "--target", "llama-3-70b",
                  "--tensor-parallel", "4", "--speculative-config", config, "--hardware", "h100-sxm",
                  "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    advice = json.loads(result.stdout)
    assert advice["tensor_parallel"] == 4 and advice["draft_tensor_parallel"] == 1
    assert advice["tree_topk"] == 2 and advice["verify_tokens"] == 7 and advice["deployed_gamma"] == 3
