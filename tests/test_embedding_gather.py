"""The embedding read as decoding does it: a pass of an engine that looks tokens up gathers the
B Q rows of an untied input embedding its tokens index, not the V x D table; the output head is
read whole, and a tied table (the output head itself) is read once. The ``ideal`` engine reads
every weight once per pass, as the article prices it (its quoted verify pass, 15.6 GiB)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from specmodel import evaluate
from specmodel.model import architecture as arch
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture, get_hardware
from specmodel.model.timing import TIME_PARTS

QWEN8 = get_architecture("qwen3-8b")  # untied (tie_word_embeddings false)
QWEN4 = get_architecture("qwen3-4b")  # tied


def test_the_gather_reads_one_row_per_position_of_an_untied_table_only():
    d_b = QWEN8.hidden_size * QWEN8.bytes_per_element
    assert arch.embedding_gather_bytes(QWEN8, 320) == 320 * d_b
    assert arch.input_embedding_bytes(QWEN8) == QWEN8.vocab_size * d_b
    assert arch.embedding_gather_bytes(QWEN4, 320) == 0
    assert arch.input_embedding_bytes(QWEN4) == 0


@pytest.mark.parametrize("batch", [1, 64])
def test_an_engine_that_gathers_reads_the_rows_not_the_table(batch):
    ev = evaluate(engine="vllm", target="qwen3-8b", concurrency=batch, gamma=4)
    table = arch.input_embedding_bytes(QWEN8)
    whole = arch.weight_bytes(QWEN8)
    plain = whole - table + arch.embedding_gather_bytes(QWEN8, batch)
    assert float(ev.plain_weights_read_bytes) == pytest.approx(plain)
    verify = whole - table + arch.embedding_gather_bytes(QWEN8, 5 * batch)  # gamma + 1 positions each
    assert float(ev.verify_weights_read_bytes) == pytest.approx(verify)
    assert float(ev.target_weight_bytes) == whole  # the table stays on the card


def test_the_ideal_engine_reads_every_weight_once():
    ev = evaluate(engine="ideal", target="qwen3-8b", concurrency=64)
    assert float(ev.plain_weights_read_bytes) == arch.weight_bytes(QWEN8)
    assert float(ev.verify_weights_read_bytes) == arch.weight_bytes(QWEN8)


def test_a_tied_table_is_read_whole_by_the_output_head_in_either_engine():
    for engine in ("vllm", "ideal"):
        ev = evaluate(engine=engine, target="qwen3-4b", concurrency=[1, 64])
        assert np.all(ev.plain_weights_read_bytes == arch.weight_bytes(QWEN4))


def test_a_cohort_charges_the_gathered_rows_to_the_weights():
    """Plain decoding of B sequences in a cohort: the weights' memory time per output token is
    the pass's weight read over B, the table left out and one row per sequence added."""
    s = Settings()
    gathering = s.with_engine(replace(s.engine("ideal"), embedding_read="gather"))
    batch = 8
    ev = evaluate(target="qwen3-8b", concurrency=batch, settings=gathering)
    hw, c = get_hardware("h100-sxm"), s.constants
    read = arch.weight_bytes(QWEN8) - arch.input_embedding_bytes(QWEN8) + arch.embedding_gather_bytes(QWEN8, batch)
    per_token = read / (c.MEMORY_EFFICIENCY * hw.memory_bandwidth.value) / batch
    weights = float(ev.base_time_parts[..., TIME_PARTS.index("target_weights")])
    assert weights == pytest.approx(per_token, rel=1e-9)
    table = float(evaluate(target="qwen3-8b", concurrency=batch).base_time_parts[..., 0])
    assert table > weights  # the whole-table read costs more


def test_the_articles_quoted_verify_pass_needs_the_whole_table():
    """Why ``ideal`` keeps the table read: the article's verify pass moves 15.6 GiB
    (data/calibration.csv, 1% tolerance); gathering would make it 14.4 GiB."""
    s = Settings()
    gathering = s.with_engine(replace(s.engine("ideal"), embedding_read="gather"))
    gib = 2.0**30
    assert float(evaluate(settings=s).verify_bytes) / gib == pytest.approx(15.6, rel=0.01)
    assert float(evaluate(settings=gathering).verify_bytes) / gib == pytest.approx(14.4, abs=0.05)


def test_a_heads_step_gathers_its_token_rows_where_the_engine_gathers():
    """EAGLE on Qwen3-8B: each step looks one row per sequence up in the target's embedding."""
    ev = evaluate(engine=np.array(["ideal", "vllm"]), drafter="eagle", target="qwen3-8b", concurrency=64)
    ideal, vllm = (float(x) for x in ev.draft_step_bytes)
    assert vllm - ideal == pytest.approx(64 * QWEN8.hidden_size * QWEN8.bytes_per_element)
