"""``specmodel advise --report FILE.html``: one self-contained page, written whole, holding
the verdict, its reason and the figures' data, loading nothing when viewed."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from specmodel.cli.sweep import write_atomically
from specmodel.vllm import report
from tests.cli_runner import cli

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "data" / "vllm" / "draft-model-b8.log"
CONFIG = '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}'
# The log states the model, its drafter, one GPU (vLLM's default) and 8 running requests; not the card.
ADVISE = ("advise", "--log", str(LOG), "--concurrency", "8", "--speculative-config", CONFIG, "--hardware", "h100-sxm")


class Page(HTMLParser):
    """Every tag's attributes, the scripts' text, and the elements left open."""

    def __init__(self) -> None:
        super().__init__()
        self.attributes: list[tuple[str, str, str | None]] = []
        self.scripts: list[str] = []
        self.open: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.attributes += [(tag, k, v) for k, v in attrs]
        if tag not in ("meta", "br", "link", "img", "input"):
            self.open.append(tag)
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (tag, self.open[-5:])
        self.open.pop()
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "advice.html"
    status, out, err = cli(*ADVISE, "--json", "--report", str(path))
    assert status == 0, err
    return path, json.loads(out)


def test_the_page_is_written_parses_and_loads_nothing(written):
    path, advice = written
    assert advice["report"] == str(path)
    text = path.read_text(encoding="utf-8")
    page = Page()
    page.feed(text)
    page.close()
    assert page.open == ["html"] or page.open == []
    loads = [(t, k, v) for t, k, v in page.attributes if k in ("src", "href") and re.match(r"\s*(https?:)?//", v or "")]
    assert loads == []
    assert sum("Plotly.newPlot" not in s and "plotly.js" in s for s in page.scripts) == 1  # inlined once
    assert text.count("plotly.js (cartesian - minified)") == 1


def test_the_page_holds_the_verdict_its_reason_and_the_figures(written):
    path, advice = written
    text = path.read_text(encoding="utf-8")
    assert f"Verdict: {advice['verdict']}" in text
    assert advice["reason"].split(":")[0].replace("'", "&#x27;") in text
    figures = json.loads(re.search(r'<script type="application/json" id="figures">(.*?)</script>', text, re.S)[1])
    assert set(figures) == {"ladder", "gamma"}
    gamma = figures["gamma"]["data"][0]
    assert gamma["y"] == pytest.approx([advice["predicted_speedup"][str(g)] for g in gamma["x"]])
    ladder = dict(zip(figures["ladder"]["data"][0]["x"], figures["ladder"]["data"][0]["y"], strict=True))
    deployed = advice["predicted_speedup"][str(advice["deployed_gamma"])]
    assert ladder[8] == pytest.approx(deployed)  # the ladder at the deployment's own concurrency


def test_text_output_says_where_the_report_is(tmp_path):
    path = tmp_path / "a.html"
    status, out, _ = cli(*ADVISE, "--report", str(path))
    assert status == 0 and out.strip().endswith(f"Report written to {path}") and path.is_file()


@pytest.mark.parametrize(
    ("name", "says"),
    [("advice.txt", "name a .html file"), ("absent/advice.html", "does not exist")],
)
def test_a_bad_report_path_is_one_line_and_writes_nothing(tmp_path, name, says):
    status, out, err = cli(*ADVISE, "--report", str(tmp_path / name))
    assert status == 2 and out == "" and err.count("\n") == 1 and says in err
    assert list(tmp_path.iterdir()) == []


def test_the_page_is_written_atomically_a_failure_leaves_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "a.html"
    path.write_text("old")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", broken)
    with pytest.raises(OSError):
        write_atomically("<html></html>", path)
    monkeypatch.undo()
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.html"]


def test_without_plotly_js_the_report_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(report, "VENDORED", Path("no-such-folder/plotly.js"))
    monkeypatch.setattr(report.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(report.SpecModelError, match="install the plotly package") as caught:
        report.plotly_js()
    assert "\n" not in str(caught.value)


@pytest.mark.browser
def test_the_figures_render_offline_in_chromium(written, browser):
    path, _ = written
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("#ladder .main-svg", timeout=15000)
    page.wait_for_selector("#gamma .main-svg", timeout=15000)
    assert page.locator("#ladder .scatterlayer .trace").count() >= 2
    assert errors == []
    assert [u for u in requests if not u.startswith("file:")] == []
    page.close()


# --- advise --bench -----------------------------------------------------------------------

BENCH = ROOT / "tests" / "data" / "bench"
EAGLE3 = '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'
RUNS = (str(BENCH / "vllm-main-plain-c16.json"), str(BENCH / "vllm-main-spec-c16.json"))
# The speculative run's metadata names its card gpu=H100-SXM-80GB, the catalogue's h100-sxm:
# the option agrees with the file.
CARD = ("--hardware", "h100-sxm")


def test_bench_advice_shows_the_measured_speedup_beside_the_calibrated_prediction(tmp_path):
    path = tmp_path / "bench.html"
    args = ("advise", "--bench", *RUNS, "--speculative-config", EAGLE3, *CARD, "--json", "--report", str(path))
    status, out, err = cli(*args)
    assert status == 0, err
    result = json.loads(out)
    (row,) = result["bench"]
    plain, spec = (json.loads(Path(f).read_text())["mean_tpot_ms"] for f in RUNS)
    assert row["concurrency"] == 16 and row["gamma"] == 3
    assert row["measured_speedup"] == pytest.approx(plain / spec)
    assert row["predicted_speedup"] == pytest.approx(row["measured_speedup"], rel=0.1)
    assert result["calibration"]["fitted"] and result["engine"] == "calibrated"
    assert result["concurrency"] == 16 and result["target"] == "llama-3.1-8b"
    figures = json.loads(re.search(r'id="figures">(.*?)</script>', path.read_text(), re.S)[1])
    measured = [t for t in figures["ladder"]["data"] if t["name"].startswith("measured")]
    assert measured and measured[0]["x"] == [16] and measured[0]["y"] == pytest.approx([plain / spec])


def test_bench_advice_with_a_profile_uses_it_as_given(tmp_path):
    from specmodel.measurements import predict
    from specmodel.model.profile_file import profile_text
    from specmodel.model.settings import Settings

    p = replace(Settings().engine("vllm"), key="mine", fit=None, overlap=1.2)
    profile = tmp_path / "mine.toml"
    profile.write_text(profile_text(p))
    args = (
        "advise",
        "--bench",
        *RUNS,
        "--speculative-config",
        EAGLE3,
        *CARD,
        "--engine-profile",
        str(profile),
        "--json",
    )
    status, out, err = cli(*args)
    assert status == 0, err
    result = json.loads(out)
    assert result["engine"] == "mine" and result["calibration"]["fitted"] == {}
    from specmodel.server_runs import Deployment, load_runs, paired_measurements

    rows = paired_measurements(load_runs(list(RUNS)), Deployment(hardware="h100-sxm", drafter="eagle3"))
    expected = predict(rows, "mine", Settings().with_engine(p))
    assert result["bench"][0]["predicted_speedup"] == pytest.approx(float(expected[0]))


def test_bench_advice_without_a_speculative_run_is_one_line():
    # The plain run's metadata names neither its card nor its GPUs: both are given.
    deployment = ("--hardware", "h100-sxm", "--tensor-parallel", "1")
    status, out, err = cli("advise", "--bench", RUNS[0], "--speculative-config", EAGLE3, *deployment)
    assert status == 2 and out == "" and err.count("\n") == 1 and "--bench" in err


def test_a_log_without_a_concurrency_is_one_line(tmp_path):
    # LOG's stats lines state the running requests (8): without --concurrency, those are priced.
    status, out, err = cli("advise", "--log", str(LOG), "--speculative-config", CONFIG, "--hardware", "h100-sxm")
    assert status == 0 and "8 concurrent sequence(s)" in out, err
    # The same log without its stats lines states no load: --concurrency is asked for.
    quiet = tmp_path / "quiet.log"
    quiet.write_text("".join(line for line in LOG.read_text().splitlines(keepends=True) if "Running:" not in line))
    status, out, err = cli("advise", "--log", str(quiet), "--speculative-config", CONFIG, "--hardware", "h100-sxm")
    assert status == 2 and out == "" and err.count("\n") == 1 and "give --concurrency N" in err


def test_the_ladder_draws_the_interval_and_the_recommended_gamma(tmp_path):
    """The ladder holds the deployed gamma's curve with its interval band (lower and upper
    traces around it), and the recommended gamma's curve where it differs from the deployed."""
    from specmodel.model.settings import Settings
    from specmodel.vllm.advise import advise
    from specmodel.vllm.report import ladder, ladder_band, ladder_figure
    from specmodel.vllm.speculative_config import served_drafter

    settings = Settings()
    advice = advise([0.75, 0.478, 0.259, 0.119], 16, served=served_drafter("qwen3-0.6b"), settings=settings)
    rungs = ladder(advice, settings)
    band = ladder_band(advice, settings, rungs)
    figure = ladder_figure(advice, rungs, (), band, ladder(advice, settings, gamma=1))
    names = [t["name"] for t in figure["data"]]
    assert names[0] == "predicted, gamma 4" and any("interval" in n for n in names)
    low, high = band[0]["y"], band[1]["y"]
    curve = [s for _, s in rungs if s is not None]
    assert all(lo <= s <= hi for lo, s, hi in zip(low, curve, high, strict=True))
    assert any(n.startswith("predicted, recommended gamma") for n in names)
