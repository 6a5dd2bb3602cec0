"""Every vLLM metrics format still in use, read back to counters checked by hand; counters that
contradict each other refused, naming them; bounded input; and a fuzz of real lines through
``specmodel advise`` (exit 0 or 2, and on 2 one line)."""

import math
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specmodel import SpecModelError
from specmodel.cli import main
from specmodel.safe_input import MAX_LINE_BYTES
from specmodel.vllm.counters import SpecDecodeCounters, check_counters, logged_position_rate, per_position_rate
from specmodel.vllm.log_line import format_log_message
from specmodel.vllm.logs import counters_from_log, load_log, parse_log
from specmodel.vllm.prometheus import load_exposition, parse_exposition
from tests.exposition import format_exposition

VLLM = Path(__file__).resolve().parent / "data" / "vllm"
LOGS = sorted(p.name for p in VLLM.glob("*.log"))
#: What identifies the deployment that the counters alone do not state (advise refuses to guess it).
DEPLOYMENT = ["--hardware", "h100-sxm", "--target", "qwen3-8b", "--tensor-parallel", "1"]
DRAFTER = ["--drafter", "ngram"]
CONCURRENCY = ["--concurrency", "8"]
ADVISE = [*CONCURRENCY, *DRAFTER, *DEPLOYMENT]
#: What each fixture states besides its counters: its drafter (engine arguments) and its load
#: (busy ``Running:`` / ``vllm:num_requests_running`` samples). An option for either would
#: have to agree with the file, so only what a fixture leaves out is given.
STATED = {
    "draft-model-b8.log": {"drafter", "concurrency"},
    "v0-speculative-metrics.log": {"concurrency"},
    "v1-0.8.5-draft-rate-first.log": {"concurrency"},
    "v1-0.9-with-throughput.log": set(),  # its one stats line runs 0 requests
    "v1-current.log": {"concurrency"},
    "v1-dynamic-depth.log": {"drafter"},
    "v1-ngram-shorter-drafts.log": {"drafter"},
    "ngram-dp2.prom": {"concurrency"},
    "ngram-draft-tokens-per-pos.prom": set(),
}
#: How advice starts: where each field of the deployment came from, then the deployment.
ADVICE_START = "Read from the server's files and the options:\n"


def gives_advice(out: str) -> bool:
    return out.startswith(ADVICE_START) and "\nDeployment: " in out


def counts(c: SpecDecodeCounters) -> tuple[float, float, float]:
    return c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens


def advise_exit(capsys, flag: str, path: Path, options: list[str] = ADVISE) -> tuple[int, str, str]:
    code = main(["advise", flag, str(path), *options])
    out, err = capsys.readouterr()
    return code, out, err


# --- each format, by hand -----------------------------------------------------------------


def test_v1_085_draft_rate_first_without_throughput():
    """vLLM ~0.8.5: "Draft acceptance rate" first, no throughput; after a logger prefix, a
    container prefix and inside a Markdown table cell."""
    assert [r.line for r in parse_log((VLLM / "v1-0.8.5-draft-rate-first.log").read_text())] == [4, 6, 7]
    c = load_log(VLLM / "v1-0.8.5-draft-rate-first.log")
    # drafts = Drafted / 4 positions in each interval: 4000/4 + 3200/4 + 2000/4
    assert counts(c) == (1000 + 800 + 500, 4000 + 3200 + 2000, 1650 + 1384 + 730)
    # per position: the logged rate times the interval's drafts, summed
    assert c.accepted_per_position == pytest.approx(
        (
            0.702 * 1000 + 0.750 * 800 + 0.680 * 500,  # 702 + 600 + 340 = 1642
            0.455 * 1000 + 0.490 * 800 + 0.420 * 500,  # 455 + 392 + 210 = 1057
            0.292 * 1000 + 0.310 * 800 + 0.240 * 500,  # 292 + 248 + 120 = 660
            0.201 * 1000 + 0.180 * 800 + 0.120 * 500,  # 201 + 144 + 60 = 405
        )
    )
    assert sum(c.accepted_per_position) == pytest.approx(3764)  # = the accepted tokens
    assert per_position_rate(c) == pytest.approx([1642 / 2300, 1057 / 2300, 660 / 2300, 405 / 2300])
    assert c.notes == ()


def test_v1_09_with_throughput_and_an_empty_interval():
    """vLLM ~0.9: throughput between mean acceptance length and Accepted; an interval without
    drafts (nan) is skipped; one line after a syslog prefix, one in a table row."""
    records = parse_log((VLLM / "v1-0.9-with-throughput.log").read_text())
    assert [(r.line, r.accepted_throughput, r.drafted_throughput) for r in records[1:3]] == [
        (5, 340.0, 600.0),
        (6, 267.0, 450.0),
    ]
    c = load_log(VLLM / "v1-0.9-with-throughput.log")
    # drafts = 0 + 6000/3 + 4500/3 + 1200/3
    assert counts(c) == (0 + 2000 + 1500 + 400, 6000 + 4500 + 1200, 3400 + 2670 + 710)
    assert c.accepted_per_position == pytest.approx(
        (
            0.800 * 2000 + 0.840 * 1500 + 0.825 * 400,  # 1600 + 1260 + 330 = 3190
            0.550 * 2000 + 0.580 * 1500 + 0.575 * 400,  # 1100 + 870 + 230 = 2200
            0.350 * 2000 + 0.360 * 1500 + 0.375 * 400,  # 700 + 540 + 150 = 1390
        )
    )


def test_v1_current_behind_container_and_shell_prompts():
    records = parse_log((VLLM / "v1-current.log").read_text())
    assert [r.line for r in records] == [3, 5, 6]
    c = load_log(VLLM / "v1-current.log")
    # drafts = 2000/4 + 2400/4 + 1600/4
    assert counts(c) == (500 + 600 + 400, 2000 + 2400 + 1600, 840 + 939 + 630)
    assert c.accepted_per_position == pytest.approx(
        (
            0.760 * 500 + 0.735 * 600 + 0.750 * 400,  # 380 + 441 + 300 = 1121
            0.500 * 500 + 0.470 * 600 + 0.475 * 400,  # 250 + 282 + 190 = 722
            0.280 * 500 + 0.250 * 600 + 0.250 * 400,  # 140 + 150 + 100 = 390
            0.140 * 500 + 0.110 * 600 + 0.100 * 400,  # 70 + 66 + 40 = 176
        )
    )
    assert c.notes == ()


def test_v1_dynamic_depth_counts_drafts_by_the_depth():
    c = load_log(VLLM / "v1-dynamic-depth.log")
    # drafts = Drafted / Current speculative depth: 2000/5 + 1800/3 + 2000/4 (not 2000/5 + 1800/5 + 2000/5 = 1160)
    assert counts(c) == (400 + 600 + 500, 2000 + 1800 + 2000, 900 + 840 + 950)
    assert c.accepted_per_position == pytest.approx(
        (
            0.800 * 400 + 0.700 * 600 + 0.780 * 500,  # 320 + 420 + 390 = 1130
            0.600 * 400 + 0.450 * 600 + 0.560 * 500,  # 240 + 270 + 280 = 790
            0.425 * 400 + 0.250 * 600 + 0.360 * 500,  # 170 + 150 + 180 = 500
            0.275 * 400 + 0.000 * 600 + 0.200 * 500,  # 110 + 0 + 100 = 210
            0.150 * 400 + 0.000 * 600 + 0.000 * 500,  # 60
        )
    )
    assert sum(c.accepted_per_position) == pytest.approx(2690)
    (note,) = c.notes
    assert "depth 3 to 5 of 5" in note


def test_v1_ngram_shorter_drafts_are_counted_from_the_rates():
    """n-gram drafts of fewer than gamma tokens: Drafted / gamma would undercount the drafts;
    Accepted / (sum of the rates) = drafts (vLLM's rates are per draft)."""
    c = load_log(VLLM / "v1-ngram-shorter-drafts.log")
    # 900 / (0.450 + 0.300 + 0.150) + 380 / (0.400 + 0.240 + 0.120), not 2400/3 + 1300/3 = 1233.3
    assert c.num_drafts == pytest.approx(1000 + 500)
    assert counts(c)[1:] == (2400 + 1300, 900 + 380)
    assert c.accepted_per_position == pytest.approx((450 + 200, 300 + 120, 150 + 60))
    (note,) = c.notes
    assert "2 of 2 logged intervals" in note and "fewer than 3 tokens" in note


def test_v0_log_infers_a_same_profile_acceptance_and_says_so():
    records = parse_log((VLLM / "v0-speculative-metrics.log").read_text())
    assert [r.line for r in records] == [4, 5, 6]
    c = load_log(VLLM / "v0-speculative-metrics.log")
    # V0's lines are totals since the server started: the last one counts
    drafts = 12000 / 4  # draft tokens / speculative tokens = 3000
    emitted_per_draft = 7950 / drafts  # 2.65 = 1 + u_1 + .. + u_4 = 1 + a + a^2 + a^3 + a^4
    assert counts(c) == (drafts, 12000, 7950 - drafts)  # accepted in order = emitted - drafts = 4950
    alpha = c.accepted_per_position[0] / drafts
    assert sum(alpha**j for j in range(5)) == pytest.approx(emitted_per_draft, abs=1e-9)
    roots = np.roots([1, 1, 1, 1, 1 - emitted_per_draft])  # a^4 + a^3 + a^2 + a + 1 - 2.65 = 0
    (root,) = [r.real for r in roots if abs(r.imag) < 1e-12 and 0 < r.real < 1]
    assert alpha == pytest.approx(root)
    assert c.accepted_per_position == pytest.approx(tuple(drafts * alpha**j for j in range(1, 5)))
    assert per_position_rate(c) == pytest.approx([alpha, alpha**2, alpha**3, alpha**4])
    (note,) = c.notes
    assert "V0" in note and f"alpha = {alpha:.3f}" in note and "u_j = alpha^j" in note and "7020" in note


def test_draft_tokens_per_position_is_the_denominator():
    c = load_exposition(VLLM / "ngram-draft-tokens-per-pos.prom")
    assert c.draft_tokens_per_position == (1000, 800, 600)
    assert logged_position_rate(c) == pytest.approx([450 / 1000, 300 / 1000, 150 / 1000])  # what vLLM logs
    # accepted at position j over the drafts that held a guess j
    assert per_position_rate(c) == pytest.approx([450 / 1000, 300 / 800, 150 / 600])
    assert parse_exposition(format_exposition(c)) == c  # rendered with the new counter, and back


def test_a_rising_ratio_keeps_the_lower_rate_and_says_so():
    c = SpecDecodeCounters(100, 140, 95, (60, 35), (100, 40))
    assert per_position_rate(c) == pytest.approx([0.6, 0.6])  # 35/40 = 0.875 would rise above 60/100
    back = parse_exposition(format_exposition(c))
    assert back.accepted_per_position == (60, 35) and any("rises at position 1" in n for n in back.notes)


def test_shorter_drafts_without_the_per_position_counter_are_noted():
    back = parse_exposition(format_exposition(SpecDecodeCounters(100, 250, 90, (60, 20, 10))))
    (note,) = back.notes
    assert "2.50 of 3 tokens" in note


# --- contradictions are refused, naming the counters --------------------------------------


def test_the_trimmed_scrape_is_refused_naming_the_counters(capsys):
    with pytest.raises(SpecModelError) as info:
        load_exposition(VLLM / "trimmed-k5.prom")
    message = str(info.value)
    for needle in ("num_draft_tokens_total", "num_drafts_total", "10000 / 2000 = 5", "4 positions (0 to 3)"):
        assert needle in message
    code, out, err = advise_exit(capsys, "--metrics", VLLM / "trimmed-k5.prom")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_a_v0_scrape_is_refused_naming_v0(capsys):
    code, out, err = advise_exit(capsys, "--metrics", VLLM / "v0-engine.prom")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "V0 engine" in err and "--log" in err and "speculative decoding on" not in err


COUNTERS = SpecDecodeCounters(100, 400, 161, (75, 48, 26, 12))

CONTRADICTIONS = [
    (SpecDecodeCounters(100, 400, 170, (75, 48, 26, 12)), "add up to 161, but vllm:spec_decode_num_accepted_tokens"),
    (SpecDecodeCounters(100, 500, 161, (75, 48, 26, 12)), "500 / 100 = 5 draft tokens per draft"),
    (
        SpecDecodeCounters(100, 300, 161, (75, 48, 26, 12), (100, 100, 60, 30)),
        "add up to 290, but vllm:spec_decode_num_draft",
    ),
    (SpecDecodeCounters(100, 300, 161, (75, 48, 26, 12), (120, 80, 60, 40)), "position 0 is 120, more than drafts"),
    (SpecDecodeCounters(100, 260, 161, (75, 48, 26, 12), (100, 60, 80, 20)), "position 2 is 80, more than position"),
    (SpecDecodeCounters(100, 300, 161, (75, 48, 26, 12), (100, 90, 100, 10)), "position 2 is 100, more than"),
    (SpecDecodeCounters(100, 256, 161, (75, 48, 26, 12), (100, 90, 56, 10)), "position 3: vllm:spec_decode_num_acc"),
    (SpecDecodeCounters(100, 400, 161, (75, 48, 26, math.inf)), "infinite, NaN or negative"),
    (SpecDecodeCounters(math.nan, 400, 161, (75, 48, 26, 12)), "infinite, NaN or negative"),
]


@pytest.mark.parametrize(("counters", "needle"), CONTRADICTIONS, ids=[n[:30] for _, n in CONTRADICTIONS])
def test_counters_that_contradict_each_other_are_refused(counters, needle):
    with pytest.raises(SpecModelError) as info:
        check_counters(counters, "--metrics 'm.prom'")
    assert needle in str(info.value) and "\n" not in str(info.value)


LINE = format_log_message(COUNTERS, 2.0)
V0_LINE = (VLLM / "v0-speculative-metrics.log").read_text().splitlines()[3]

BAD = [
    (LINE.replace(", 0.120", "").replace("2.61", "2.49").replace(": 161", ": 149").replace("40.2", "37.2"),
     "was a position cut from the line?"),
    (LINE.replace("Mean acceptance length: 2.61, ", "Mean acceptance length: 2.61, Current speculative depth: 6, "),
     "Current speculative depth 6"),
    (LINE.replace("Accepted: 161 tokens", "Accepted: 161 tokens, Accepted: 161 tokens"), "'Accepted' appears twice"),
    (LINE.split(", Avg Draft")[0], "no 'Avg Draft acceptance rate: <number>%' field"),
    (LINE + ", Draft acceptance rate: 40.2%", "two fields give the draft acceptance percent"),
    ("SpecDecoding metrics: Draft acceptance rate: 40.2%, Accepted: 161 tokens, Drafted: 400 tokens",
     "vLLM before 0.8.5"),
    (V0_LINE.replace("tokens: 2600.", "tokens: 2600"), "expected it to end with '.'"),
    (V0_LINE.replace("4000", "4001"), "not a multiple of speculative tokens 4"),
    (V0_LINE.replace("2600", "6000").replace("0.520", "1.200"), "Number of emitted tokens 6000 is not 1 to 5"),
    (V0_LINE.replace("2324", "1324").replace("0.581", "0.331"), "exceeds Number of accepted tokens 1324"),
    (V0_LINE.replace("0.520", "0.530"), "System efficiency 0.53 is not"),
    (V0_LINE.replace("0.581", "0.591"), "Draft acceptance rate 0.591 is not"),
    (V0_LINE + "\n" + V0_LINE.replace("2324", "1743").replace("4000", "3000").replace("2600", "1950"),
     "line 2: accepted 1743, but line 1 has 2324"),
    (V0_LINE + "\n" + LINE, "line 2: a V1 'SpecDecoding metrics:' line, but line 1 is a V0"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "needle"), BAD, ids=[n[:30] for _, n in BAD])
def test_bad_lines_of_every_format_are_one_clear_error(text, needle):
    with pytest.raises(SpecModelError) as info:
        parse_log(text, source="--log 'x.log'")
    message = str(info.value)
    assert needle in message and "\n" not in message and message.startswith("--log 'x.log' line")


def reordered(line: str) -> str:
    """A real line with its fields in reverse order and two fields vLLM does not print."""
    marker = next(m for m in ("SpecDecoding metrics: ", "Speculative metrics: ") if m in line)
    head, message = line.split(marker)
    groups: list[str] = []
    for chunk in re.split(r"[|`]", message)[0].strip().removesuffix(".").split(", "):
        if ": " in chunk:
            groups.append(chunk)
        else:  # the per-position list goes on
            groups[-1] += ", " + chunk
    end = "." if marker.startswith("Speculative") else ""
    return head + marker + ", ".join([*reversed(groups), "Draft time per step: 1.5 ms", "Top-k: 0.9, 0.8"]) + end


@pytest.mark.parametrize("name", LOGS)
def test_fields_are_read_by_name_in_any_order_and_new_ones_ignored(name):
    lines = [reordered(line) for line in (VLLM / name).read_text().splitlines() if "metrics:" in line]
    assert lines[0] != [line for line in (VLLM / name).read_text().splitlines() if "metrics:" in line][0]
    assert counts(counters_from_log(parse_log("\n".join(lines)))) == counts(load_log(VLLM / name))


@pytest.mark.parametrize("name", [*LOGS, "ngram-dp2.prom", "ngram-draft-tokens-per-pos.prom"])
def test_every_readable_fixture_gives_advice(capsys, name):
    stated = STATED[name]
    options = [
        *DEPLOYMENT,
        *([] if "drafter" in stated else DRAFTER),
        *([] if "concurrency" in stated else CONCURRENCY),
    ]
    code, out, err = advise_exit(capsys, "--log" if name.endswith(".log") else "--metrics", VLLM / name, options)
    assert (code, err) == (0, "") and gives_advice(out), err


# --- bounded input ------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--log", "--metrics"])
def test_dev_zero_fails_at_once_with_one_line(flag):
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "specmodel", "advise", flag, "/dev/zero", *ADVISE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.perf_counter() - start < 10
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "is a character device, not a regular file" in lines[0], out.stderr


def test_long_lines_are_skipped_unless_they_hold_a_marker(tmp_path):
    good = (VLLM / "v1-current.log").read_bytes()
    path = tmp_path / "long.log"
    path.write_bytes(b"prompt: '" + b"x" * (3 * MAX_LINE_BYTES) + b"'\n" + good + b"y" * (5 * 2**20))
    assert counts(load_log(path)) == counts(load_log(VLLM / "v1-current.log"))
    path.write_bytes(good + b"z" * (2 * MAX_LINE_BYTES) + LINE.encode() + b"\n")
    with pytest.raises(SpecModelError, match=r"line 7 holds 'SpecDecoding metrics:' but is longer than 65,536"):
        load_log(path)


def test_line_numbers_hold_across_blocks(tmp_path):
    filler = b"INFO 09-09 11:51:35 [loggers.py:127] Engine 000: Avg prompt throughput: 1638.2 tokens/s\n"
    lines = 3 * 2**20 // len(filler) + 1
    path = tmp_path / "big.log"
    with path.open("wb") as out:
        for i in range(lines):
            out.write(filler)
            if i % 5000 == 4999:
                out.write(LINE.encode() + b"\r\n")
        out.write(b"x" * 1000 + LINE[:-1].encode())  # the last line, cut, without a line break
    with pytest.raises(SpecModelError) as info:
        load_log(path)
    assert f"line {lines + lines // 5000 + 1}: malformed or truncated" in str(info.value)
    path.write_bytes(path.read_bytes()[: -len(LINE) + 1] + LINE.encode())
    c = load_log(path)
    assert c.num_drafts == 100 * (lines // 5000 + 1)


def test_memory_does_not_grow_with_the_log(tmp_path):
    path = tmp_path / "v.log"
    other = b'(APIServer pid=1) INFO:     127.0.0.1:53412 - "POST /v1/completions HTTP/1.1" 200 OK\n'
    path.write_bytes((other * 49 + LINE.encode() + b"\n") * 3000)  # 150,000 lines, 20 MB
    tracemalloc.start()
    load_log(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 6 * 2**20  # a block or two of 1 MiB, not the file


# --- fuzzing through the command ----------------------------------------------------------

REAL_LINES = [
    (flag, line)
    for flag, pattern in (("--log", "*.log"), ("--metrics", "*.prom"))
    for path in sorted(VLLM.glob(pattern))
    for line in path.read_text().splitlines()
    if "metrics:" in line or (flag == "--metrics" and "spec_decode" in line and not line.startswith("#"))
]


@st.composite
def mutated(draw):
    flag, line = draw(st.sampled_from(REAL_LINES))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(line)))
        op = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "duplicate", "swap"]))
        char = draw(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(list("0123456789.,:% ")))
        if op == "delete":
            line = line[:at] + line[at + 1 :]
        elif op == "insert":
            line = line[:at] + char + line[at:]
        elif op == "replace":
            line = line[:at] + char + line[at + 1 :]
        elif op == "truncate":
            line = line[:at]
        else:
            fields = line.split(", ")
            i, j = draw(st.integers(0, len(fields) - 1)), draw(st.integers(0, len(fields) - 1))
            if op == "duplicate":
                fields.insert(j, fields[i])
            else:
                fields[i], fields[j] = fields[j], fields[i]
            line = ", ".join(fields)
    return flag, line


@given(mutated(), st.booleans())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_mutated_real_lines_exit_0_or_2_with_one_line(capsys, tmp_path_factory, case, with_context):
    flag, line = case
    path = tmp_path_factory.getbasetemp() / ("fuzz.log" if flag == "--log" else "fuzz.prom")
    context = [other for f, other in REAL_LINES if f == flag][:3] if with_context else []
    path.write_text("\n".join([*context, line]) + "\n", encoding="utf-8")
    capsys.readouterr()
    code, out, err = advise_exit(capsys, flag, path)
    assert code in (0, 2)
    if code == 2:
        assert out == "" and len(err.strip().splitlines()) == 1, err
    else:
        assert err == "" and gives_advice(out)
