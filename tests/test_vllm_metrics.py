"""vLLM's spec-decode log line and Prometheus counters: rendered as vLLM renders them, read
back, and every kind of bad input refused with one line naming it."""

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specmodel import SpecModelError
from specmodel.safe_input import read_limited_text
from specmodel.vllm.counters import SpecDecodeCounters, per_position_rate
from specmodel.vllm.log_line import LOG_FORMAT, format_log_message
from specmodel.vllm.logs import counters_from_log, load_log, parse_log
from specmodel.vllm.prometheus import load_exposition, parse_exposition
from tests.exposition import format_exposition

VLLM = Path(__file__).resolve().parent / "data" / "vllm"

COUNTERS = SpecDecodeCounters(
    num_drafts=100, num_draft_tokens=400, num_accepted_tokens=161, accepted_per_position=(75, 48, 26, 12)
)
#: What vLLM prints for COUNTERS over 2 s (its format string, worked by hand).
LINE = (
    "SpecDecoding metrics: Mean acceptance length: 2.61, Accepted throughput: 80.50 tokens/s, "
    "Drafted throughput: 200.00 tokens/s, Accepted: 161 tokens, Drafted: 400 tokens, "
    "Per-position acceptance rate: 0.750, 0.480, 0.260, 0.120, Avg Draft acceptance rate: 40.2%"
)
#: The logger prefixes vLLM puts in front (V1 API server; plain).
PREFIXES = ("(APIServer pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] ", "INFO 11-30 12:00:00 [metrics.py:113] ", "")


def test_log_line_is_vllms_format():
    assert format_log_message(COUNTERS, 2.0) == LINE


def test_format_string_fields_in_vllms_order():
    fields = [
        "Mean acceptance length: %.2f",
        "Accepted throughput: %.2f tokens/s",
        "Drafted throughput: %.2f tokens/s",
        "Accepted: %d tokens",
        "Drafted: %d tokens",
        "Per-position acceptance rate: %s",
        "Avg Draft acceptance rate: %.1f%%",
    ]
    assert "SpecDecoding metrics: " + ", ".join(fields) == LOG_FORMAT


def test_no_time_gives_zero_throughput_as_vllm_does():
    assert "Accepted throughput: 0.00 tokens/s, Drafted throughput: 0.00 tokens/s" in format_log_message(COUNTERS, 0)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_parse_a_line_after_any_logger_prefix(prefix):
    (interval,) = parse_log("some other line\n" + prefix + LINE + "\n")
    assert interval.line == 2
    assert (interval.accepted, interval.drafted) == (161, 400)
    assert interval.per_position == (0.75, 0.48, 0.26, 0.12)
    assert interval.mean_acceptance_length == 2.61
    assert (interval.accepted_throughput, interval.drafted_throughput) == (80.5, 200)
    assert interval.draft_acceptance_percent == 40.2


def test_fields_a_patched_build_appends_are_ignored():
    (interval,) = parse_log(LINE + ", Draft time/step: 1.234 ms")
    assert interval.accepted == 161


def test_the_sample_log_sums_its_intervals():
    counters = load_log(VLLM / "draft-model-b8.log")
    assert counters.num_accepted_tokens == 1280 + 1276 + 1250 + 1298
    assert counters.num_draft_tokens == 3112 + 3168 + 3216 + 3052
    assert counters.num_drafts == counters.num_draft_tokens / 4
    rates = per_position_rate(counters)
    assert rates[0] == pytest.approx((0.762 * 778 + 0.749 * 792 + 0.751 * 804 + 0.765 * 763) / 3137)
    assert all(a >= b for a, b in zip(rates, rates[1:]))


def test_exposition_has_vllms_names_labels_and_total_suffix():
    text = format_exposition(COUNTERS, model_name="m", engine="0")
    assert 'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100.0' in text
    assert 'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 400.0' in text
    assert 'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 161.0' in text
    for position, value in enumerate((75, 48, 26, 12)):
        labels = f'engine="0",model_name="m",position="{position}"'
        assert f"vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels}}} {value}.0" in text
    assert "# TYPE vllm:spec_decode_num_drafts_total counter" in text


def test_exposition_round_trip_is_exact():
    assert parse_exposition(format_exposition(COUNTERS)) == COUNTERS


def test_the_sample_scrape_sums_engines_and_ignores_other_metrics():
    counters = load_exposition(VLLM / "ngram-dp2.prom")
    assert counters == SpecDecodeCounters(
        8099 + 8018, 24297 + 24054, 8343 + 8417, (4807 + 4813, 2464 + 2523, 1072 + 1081)
    )


def test_scrapes_appended_give_the_increase():
    later = SpecDecodeCounters(150, 600, 250, (110, 80, 40, 20))
    counters = parse_exposition(format_exposition(COUNTERS) + format_exposition(later))
    assert counters == SpecDecodeCounters(50, 200, 89, (35, 32, 14, 8))


def test_log_round_trip_keeps_the_counts():
    (interval,) = parse_log(format_log_message(COUNTERS, 2.0))
    back = counters_from_log([interval])
    assert (back.num_drafts, back.num_draft_tokens, back.num_accepted_tokens) == (100, 400, 161)
    assert back.accepted_per_position == pytest.approx((75, 48, 26, 12))


# --- bad input ----------------------------------------------------------------------------

GOOD = "INFO 11-30 12:00:00 [metrics.py:113] " + LINE

BAD_LOGS = [
    ("INFO 11-30 12:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s\n", "no line contains"),
    (GOOD + "\n" + GOOD[:150] + "\n", "line 2: malformed or truncated"),
    (GOOD.replace("Accepted: 161 tokens", "Accepted: many tokens"), "expected 'Accepted: <integer> tokens'"),
    (GOOD.replace("Mean acceptance length: 2.61", "Mean acceptance length: n/a"), "'Mean acceptance length: <number>'"),
    (GOOD.replace("0.750, 0.480", "0.450, 0.480"), "rises from 0.45 at position 1 to 0.48"),
    (GOOD.replace("Accepted: 161", "Accepted: 401"), "exceeds Drafted 400"),
    (GOOD.replace("40.2%", "52.0%"), "does not match Accepted/Drafted"),
    (GOOD.replace("Mean acceptance length: 2.61", "Mean acceptance length: 3.61"), "does not match 1 + the sum"),
    (
        GOOD
        + "\n"
        + GOOD.replace(", 0.120", "").replace("2.61", "2.49").replace(": 161", ": 149").replace("40.2", "37.2"),
        "line 2: 3 per-position rates, but line 1 has 4",
    ),
    (GOOD.replace("0.120", "nan"), "is nan although 400 tokens were drafted"),
    (GOOD.replace("0.750", "1.750").replace("2.61", "3.61"), "above 1"),
]


@pytest.mark.parametrize(("text", "needle"), BAD_LOGS, ids=[n[:30] for _, n in BAD_LOGS])
def test_bad_log_is_one_clear_error(text, needle):
    with pytest.raises(SpecModelError) as info:
        parse_log(text, source="--log 'x.log'")
    message = str(info.value)
    assert needle in message and "\n" not in message and message.startswith("--log 'x.log'")


def test_an_interval_without_drafts_is_skipped():
    empty = (
        "SpecDecoding metrics: Mean acceptance length: nan, Accepted throughput: 0.00 tokens/s, Drafted "
        "throughput: 0.00 tokens/s, Accepted: 0 tokens, Drafted: 0 tokens, Per-position acceptance rate: nan, "
        "nan, nan, nan, Avg Draft acceptance rate: nan%"
    )
    counters = counters_from_log(parse_log(empty + "\n" + LINE))
    assert counters.num_drafts == 100 and counters.accepted_per_position == pytest.approx((75, 48, 26, 12))
    with pytest.raises(SpecModelError, match="no drafts"):
        from specmodel.vllm.counters import check_counters

        check_counters(counters_from_log(parse_log(empty)), "x")


EXPOSITION = format_exposition(COUNTERS)

BAD_EXPOSITIONS = [
    ('vllm:spec_decode_num_drafts_total{engine="0"} lots\n', "line 1: not Prometheus text exposition"),
    (
        EXPOSITION + format_exposition(SpecDecodeCounters(90, 400, 161, (75, 48, 26, 12))),
        "line 18: counter vllm:spec_decode_num_drafts_total decreases from 100 to 90",
    ),
    (
        EXPOSITION.replace("vllm:spec_decode_num_drafts_total", "vllm:something_else_total"),
        "no vllm:spec_decode_num_drafts_total sample",
    ),
    (EXPOSITION.replace('position="2"', 'position="7"'), "has positions [0, 1, 3, 7]"),
    (EXPOSITION.replace('position="1"} 48.0', 'position="1"} 80.0'), "position 1 is 80, more than position 0's count"),
    (EXPOSITION.replace("} 161.0", "} 461.0"), "461 accepted tokens exceed 400 draft tokens"),
    (EXPOSITION.replace("} 100.0", "} NaN"), "is nan"),
    (
        EXPOSITION.replace("} 100.0", "} 0.0")
        .replace("} 400.0", "} 0.0")
        .replace("} 161.0", "} 0.0")
        .replace("} 75.0", "} 0.0")
        .replace("} 48.0", "} 0.0")
        .replace("} 26.0", "} 0.0")
        .replace("} 12.0", "} 0.0"),
        "is 0; no drafts",
    ),
    ("# just comments\n", "no vllm:spec_decode_num_drafts_total sample"),
]


@pytest.mark.parametrize(("text", "needle"), BAD_EXPOSITIONS, ids=[n[:30] for _, n in BAD_EXPOSITIONS])
def test_bad_exposition_is_one_clear_error(text, needle):
    with pytest.raises(SpecModelError) as info:
        parse_exposition(text, source="--metrics 'm.prom'")
    message = str(info.value)
    assert needle in message and "\n" not in message and message.startswith("--metrics 'm.prom'")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "is empty"),
        (b"\n  \n", "is empty"),
        (b"\x7fELF\x02\x01\x01\x00\x00", "binary file"),
        (b"INFO ok\n\xff\xfe bad", "line 2: not UTF-8 text"),
    ],
)
def test_unreadable_files_are_one_clear_error(tmp_path, content, needle):
    path = tmp_path / "f"
    path.write_bytes(content)
    with pytest.raises(SpecModelError, match=needle):
        read_limited_text(path, "--log")


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(SpecModelError, match="no such file"):
        read_limited_text(tmp_path / "nope.log", "--log")
    with pytest.raises(SpecModelError, match="is a folder"):
        read_limited_text(tmp_path, "--log")


# --- fuzzing ------------------------------------------------------------------------------


@given(st.integers(0, len(LINE) - 1))
def test_every_truncation_of_the_line_is_refused(cut):
    with pytest.raises(SpecModelError) as info:
        parse_log(PREFIXES[0] + LINE[:cut] + "\n", source="vllm.log")
    if cut >= len("SpecDecoding metrics:"):
        assert str(info.value).startswith("vllm.log line 1: malformed or truncated")
    else:
        assert "no line contains" in str(info.value)


@given(st.text(max_size=300))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_the_log_parser_never_crashes(text):
    try:
        intervals = parse_log(text)
    except SpecModelError as exc:
        assert len(str(exc).splitlines()) == 1
    else:
        assert intervals


@given(st.integers(0, len(LINE) - 1), st.characters())
@settings(max_examples=300)
def test_a_corrupted_character_is_refused_or_consistent(at, char):
    text = LINE[:at] + char + LINE[at + 1 :]
    try:
        (interval,) = parse_log(text)
    except SpecModelError as exc:
        assert len(str(exc).splitlines()) == 1
    except ValueError:  # pragma: no cover
        raise
    else:  # what parses obeys vLLM's arithmetic
        assert interval.accepted <= interval.drafted
        assert all(a >= b for a, b in zip(interval.per_position, interval.per_position[1:]))
        assert math.isclose(interval.draft_acceptance_percent, 100 * interval.accepted / interval.drafted, abs_tol=0.06)


@given(st.text(max_size=300) | st.sampled_from(EXPOSITION.splitlines()).map(lambda s: s + "\n"))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_the_exposition_parser_never_crashes(text):
    try:
        parse_exposition(text)
    except SpecModelError as exc:
        assert len(str(exc).splitlines()) == 1


@given(st.lists(st.integers(0, len(EXPOSITION.splitlines()) - 1), min_size=1, max_size=4), st.text(max_size=20))
@settings(max_examples=200)
def test_a_mangled_exposition_is_refused_or_read(lines, junk):
    rows = EXPOSITION.splitlines()
    for i in lines:
        rows[i] = rows[i][: len(rows[i]) // 2] + junk
    try:
        counters = parse_exposition("\n".join(rows) + "\n")
    except SpecModelError as exc:
        assert len(str(exc).splitlines()) == 1
    else:
        assert counters.num_accepted_tokens <= counters.num_draft_tokens
