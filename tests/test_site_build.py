"""The site build: strict MkDocs build, prose placeholders, reproducibility, atomic output."""

import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sitebuild import deployment
from sitebuild.build import FIGDATA, FIGURES
from sitebuild.build import main as build_main
from sitebuild.config import SiteSettings
from sitebuild.numbers import article_numbers
from specmodel import evaluate
from tests.site_builds import mkdocs_build, project_copy

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ROOT / "specmodel" / "data" / "calibration.csv"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_two_builds_give_identical_files(tmp_path, generated):
    """The session's build (build_figures.py in a process of its own) and one more, in this one."""
    assert build_main(["--out", str(tmp_path / "b"), "--calibration", str(CALIBRATION)]) == 0
    first, second = _tree(generated), _tree(tmp_path / "b")
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


@pytest.mark.slow
def test_the_build_reads_the_fits_and_makes_none(tmp_path):
    """build_figures.py never fits the profile: the fits the pages quote are make fit's records,
    and a fit is the only thing that imports scipy's optimiser."""
    code = ("import runpy, sys; sys.argv = ['build_figures.py', '--out', sys.argv[1]]\n"
            "try:\n    runpy.run_path('build_figures.py', run_name='__main__')\nexcept SystemExit as e:\n"
            "    assert not e.code, e.code\nprint('scipy.optimize' in sys.modules, file=sys.stderr)")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "g")], cwd=ROOT, capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.splitlines()[-1] == "False"


def test_every_figure_is_written_without_plotly_js(generated):
    for spec in FIGURES:
        text = (generated / "figures" / f"{spec.id}.html").read_text()
        assert f'id="fig-{spec.id}"' in text and "<figcaption>" in text
        assert "plotly.js" not in text.lower() and "<script" not in text
        # The figure's JSON is a file of its own, fetched by the page: the fragment only names it.
        assert f'data-src="{FIGDATA}{spec.id}.json"' in text and "data-figure" not in text
        assert len(text) < 4_000
        figure = json.loads((generated / "figdata" / f"{spec.id}.json").read_text())
        assert figure["data"] and figure["layout"]["height"] > 0
        assert "plotly.js" not in json.dumps(figure).lower()


def test_each_figure_reserves_its_height_and_its_controls_rows(generated):
    """The fragment's inline style holds the drawn heights (wide and narrow) and the number of
    sliders and menus figures.js gives a control of its own, so the page does not move."""
    import re

    controls = {}
    for spec in FIGURES:
        text = (generated / "figures" / f"{spec.id}.html").read_text()
        figure = json.loads((generated / "figdata" / f"{spec.id}.json").read_text())
        layout = figure["layout"]
        style = dict(re.findall(r"--specfig-([a-z-]+):([^;\"]+)", text))
        assert style["height"] == f"{layout['height']}px", spec.id
        narrow = layout.get("meta", {}).get("narrow", {}).get("layout", {}).get("height")
        assert style.get("narrow-height") == (f"{narrow}px" if narrow else None), spec.id
        count = len(layout.get("sliders", [])) + len(layout.get("updatemenus", []))
        assert style.get("controls") == (str(count) if count else None), spec.id
        controls[spec.id] = count
    assert {k for k, v in controls.items() if v} == {
        "ladder",
        "breakdown",
        "gamma",
        "gamma-schedule",
        "breakeven",
        "hardware",
        "timeline",
        "roofline",
    }


def test_each_figure_has_its_data_as_csv_from_the_same_computation(generated):
    """Every figure links a CSV of the tidy data it is drawn from (its text alternative); the
    CSV and the figure come from one call of the figure's data function."""
    import io

    import pandas as pd

    settings = deployment.resolved(SiteSettings())
    files = {name: (generated / name).read_text() for name in _tree(generated) if not name.endswith(".gz")}
    for spec in FIGURES:
        fragment, csv = files[f"figures/{spec.id}.html"], files[f"figdata/{spec.id}.csv"]
        assert isinstance(fragment, str) and isinstance(csv, str)
        assert f'href="{FIGDATA}{spec.id}.csv"' in fragment
        assert ">The data behind this figure (CSV)</a>" in fragment
        assert f'aria-label="The data behind this figure (CSV): {html.escape(spec.title, quote=True)}"' in fragment
        computed = spec.data(settings)
        drawn = spec.draw(computed, settings).to_json(pretty=False, engine="json")
        assert files[f"figdata/{spec.id}.json"] == drawn + "\n"
        table = pd.read_csv(io.StringIO(csv))
        expected = spec.table(computed)
        assert list(table.columns) == list(expected.columns), spec.id
        assert len(table) == len(expected) > 1, spec.id
        numeric = expected.select_dtypes("number").columns
        assert np.allclose(table[numeric].to_numpy(float), expected[numeric].to_numpy(float), rtol=1e-5, equal_nan=True)


def test_a_notebook_figure_carries_its_json_and_a_table_of_its_data():
    """A notebook page has no file of its own for the figure: the JSON is inline and the data a
    table under it."""
    import plotly.graph_objects as go

    from sitebuild.notebook import data_table, show

    fig = go.Figure(go.Scatter(x=[1, 2], y=[1.5, 2.25], name="H100"), layout={"height": 400})
    fig.update_layout(xaxis_title="concurrent sequences", yaxis_title="speedup")
    text = show(fig, "nb-test", "A caption.").data
    assert 'data-figure="' in text and "data-src" not in text and "--specfig-height:400px" in text
    assert '<details class="specfig-data"><summary>The data behind this figure</summary>' in text
    assert data_table(fig) in text and "<td>H100</td><td>2</td><td>2.25</td>" in text


@pytest.mark.slow
def test_failed_write_leaves_the_previous_output(tmp_path, monkeypatch, capsys, generated):
    out = tmp_path / "generated"
    shutil.copytree(generated, out)  # a previous build's output, its stamp included
    before = _tree(out)
    real_write = Path.write_text
    calls = []

    def failing_write(self, *args, **kwargs):
        calls.append(self)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing_write)
    assert build_main(["--out", str(out), "--calibration", str(CALIBRATION)]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["generated"]  # no staging folder left behind


def test_bad_calibration_path_is_one_line_and_exit_2(tmp_path, capsys):
    assert build_main(["--out", str(tmp_path / "g"), "--calibration", str(tmp_path / "nope.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope.csv" in err[0]
    assert not (tmp_path / "g").exists()


def test_build_prints_what_it_wrote_and_how_long(figures_run):
    result = figures_run  # build_figures.py --out <folder>, run once for the session
    assert result.returncode == 0, result.stderr
    assert "figures/ladder.html" in result.stdout and " s\n" in result.stdout


def test_numbers_file_has_text_and_value(generated):
    numbers = json.loads((generated / "numbers.json").read_text())
    assert set(numbers) == set(article_numbers(SiteSettings()))
    assert numbers["speedup_b1"]["text"].endswith("x")


def _copy_docs(tmp_path: Path, site_project: Path, page: str) -> Path:
    """A copy of the project (the default build's generated folder in it) whose index page is
    ``page``, without the notebook; returns the copy's root."""
    copy = tmp_path / "proj"
    shutil.copytree(site_project, copy, ignore=shutil.ignore_patterns("notebook.ipynb", "site"))
    config = (ROOT / "mkdocs.yml").read_text().replace("  - Notebook: notebook.ipynb\n", "")
    (copy / "mkdocs.yml").write_text(config)
    (copy / "docs" / "index.md").write_text(page)
    return copy


def test_unknown_number_fails_the_build(tmp_path, site_project):
    copy = _copy_docs(tmp_path, site_project, "# Page\n\nSpeedup {{ no_such_number }}.\n")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=copy,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode != 0
    assert "unknown number {{ no_such_number }}" in result.stderr


def test_unknown_figure_fails_the_build(tmp_path, site_project):
    copy = _copy_docs(tmp_path, site_project, "# Page\n\n{{ figure:nope }}\n")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=copy,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode != 0 and "unknown figure 'nope'" in result.stderr


def _numbers_with(tmp_path: Path, old: str, new: str) -> dict:
    """The prose numbers computed by a copy of the package whose constants.py has ``old``
    replaced by ``new`` (a fresh interpreter, as a rebuild would be)."""
    copy = tmp_path / "pkg"
    shutil.copytree(ROOT / "specmodel", copy / "specmodel", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "sitebuild", copy / "sitebuild", ignore=shutil.ignore_patterns("__pycache__"))
    constants = copy / "specmodel" / "model" / "constants.py"
    text = constants.read_text()
    assert old in text
    constants.write_text(text.replace(old, new))
    code = (
        "import json; from sitebuild.config import SiteSettings; from sitebuild.numbers import article_numbers; "
        "from sitebuild.claims import article_claims; s = SiteSettings(); "
        "out = {k: v.text for k, v in article_numbers(s).items()}; "
        "out.update({f'{c}.{k}': v.text for c, said in article_claims(s).items() for k, v in said.values.items()}); "
        "print(json.dumps(out))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(copy)},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def quoted(settings: SiteSettings) -> dict:
    """Every value the prose quotes: the numbers by name, and each claim's values as
    ``claim.value``."""
    from sitebuild.claims import article_claims

    claims = {f"{c}.{k}": v for c, said in article_claims(settings).items() for k, v in said.values.items()}
    return {**article_numbers(settings), **claims}


def _generated_values(generated: Path) -> dict:
    """numbers.json and claims.json's values as :func:`quoted` names them (dicts with ``value`` and ``text``)."""
    numbers = json.loads((generated / "numbers.json").read_text())
    claims = json.loads((generated / "claims.json").read_text())
    return {**numbers, **{f"{c}.{k}": v for c, said in claims.items() for k, v in said["values"].items()}}


@pytest.mark.slow
def test_changing_a_constant_changes_the_sentences_that_quote_it(tmp_path):
    current = {k: v.text for k, v in quoted(SiteSettings()).items()}
    changed = _numbers_with(tmp_path, "MEMORY_EFFICIENCY = 0.80", "MEMORY_EFFICIENCY = 0.60")
    for name in ("verify_mem_ms_b1", "rung_b1.spec_tps_b1", "rung_b1.base_tps_b1", "idle_b64"):
        assert changed[name] != current[name], name
    assert changed["kv_heads.target_kv_kib"] == current["kv_heads.target_kv_kib"]  # not a function of bandwidth


def test_markdown_has_no_typed_model_outputs():
    import re

    # Speedups and ratios in the prose must be placeholders, never typed numbers.
    for page in (ROOT / "docs").glob("*.md"):
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        assert not re.findall(r"\b\d+\.\d+ ?(?:x|×)\b", text), page.name


def test_built_pages_exist(built_site):
    pages = ("index.html", "beyond/index.html", "validation/index.html", "model/index.html", "notebook/index.html")
    for page in (*pages, "cli/index.html"):
        assert (built_site / page).is_file()
    assert "{{" not in (built_site / "index.html").read_text()


def test_a_failing_notebook_cell_fails_the_build(tmp_path, site_project):
    import nbformat

    copy = _copy_docs(tmp_path, site_project, "# Page\n")
    (copy / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text())
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("raise RuntimeError('this cell fails on purpose')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, copy / "docs" / "notebook.ipynb")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=copy,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode != 0
    assert "this cell fails on purpose" in result.stderr + result.stdout


def _build_with_config(tmp_path: Path, config_text: str, name: str = "h200.toml") -> subprocess.CompletedProcess:
    config = tmp_path / name
    config.write_text(config_text)
    return subprocess.run(
        [
            sys.executable,
            "build_figures.py",
            "--config",
            str(config),
            "--out",
            str(tmp_path / "proj" / "docs" / "generated"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_a_config_that_swaps_the_hardware_rebuilds_the_whole_site_for_it(tmp_path, generated):
    """With the card swapped to H200 the site's numbers follow it."""
    copy = project_copy(tmp_path / "proj")
    result = _build_with_config(tmp_path, '[deployment]\nhardware = "h200"\n')
    assert result.returncode == 0, result.stderr
    h100 = quoted(SiteSettings())
    h200 = _generated_values(copy / "docs" / "generated")
    assert h200["hardware_name"]["text"] == "NVIDIA H200 SXM 141 GB"
    # Memory-bound passes scale with bandwidth (4.8 / 3.35 TB/s), so throughput does...
    ratio = 4.8e12 / 3.35e12
    for name in ("rung_b1.base_tps_b1", "rung_b1.spec_tps_b1"):
        assert h200[name]["value"] == pytest.approx(h100[name].value * ratio, rel=1e-9), name
    assert h200["verify_mem_ms_b1"]["value"] == pytest.approx(h100["verify_mem_ms_b1"].value / ratio, rel=1e-9)
    # ...and the speedup at one sequence does not; capacity follows the memory the card reports
    # (nvidia-smi: 143,771 MiB, specmodel/data/hardware.toml).
    assert h200["speedup_b1"]["text"] == h100["speedup_b1"].text
    assert h200["usable_gib"]["value"] == pytest.approx(143771 * 2**20 * 0.9)
    # The batch that fits follows the card's usable memory: the model's own count on an H200, about
    # twice the H100's (126 against 72 GiB usable, less the same weights).
    h200_plain = int(evaluate(hardware="h200", settings=SiteSettings()).max_concurrency_without_draft)
    assert h200["batch_room.max_b_plain"]["value"] == h200_plain
    assert h200_plain >= 1.9 * h100["batch_room.max_b_plain"].value
    assert h200["memory_bound.ridge"]["text"] != h100["memory_bound.ridge"].text
    # The simulator's data and the settings file follow too.
    settings = json.loads((copy / "docs" / "generated" / "settings.json").read_text())
    assert settings["deployment"]["hardware"] == "h200"
    for name in ("data/sim/0-0-0-10.bin.gz", "data/sim/1-2-1-3.bin.gz"):  # ideal and vllm slices
        assert (copy / "docs" / "generated" / name).read_bytes() != (generated / name).read_bytes()
    # The built article names the H200 and quotes its numbers.
    site = mkdocs_build(copy)
    assert site.returncode == 0, site.stderr[-3000:]
    page = (copy / "site" / "index.html").read_text()
    assert "NVIDIA H200 SXM 141 GB" in page
    # but the link to the comparison page, the card a published measurement ran on and the figures
    # that show another deployment
    import re

    measured = re.sub(r"SpecDecode-Bench measured[^:]*:", "", page)
    # (a measurement's, and the other deployment the schedule figure compares, from "Beyond one GPU")
    other = r"<figure(?:(?!</figure>).)*(?:draft-model-measured|gamma-schedule)(?:(?!</figure>).)*</figure>"
    measured = re.sub(other, "", measured, flags=re.S)
    # (and the paragraphs that point to that page for the four-GPU deployment it measures)
    measured = re.sub(r"<p>(?:(?!</p>).)*href=\"beyond/\"(?:(?!</p>).)*</p>", "", measured, flags=re.S)
    assert "H100" not in measured.replace("H100, H200 and B200 side by side", "")
    assert f"{h200['rung_b1.spec_tps_b1']['text']} tokens/s" in page and h200["usable_gib"]["text"] in page


@pytest.mark.slow
def test_a_config_with_another_model_pair_and_constant(tmp_path, generated):
    result = _build_with_config(
        tmp_path,
        "deployment:\n  target: llama-3.1-8b\n  draft: llama-3.2-1b\n"
        "  big_draft: llama-3.2-3b\nconstants:\n  GPU_MEMORY_UTILIZATION: 0.95\n",
        "llama.yaml",
    )
    assert result.returncode == 0, result.stderr
    built = tmp_path / "proj" / "docs" / "generated"
    numbers = json.loads((built / "numbers.json").read_text())
    assert numbers["target_name"]["text"] == "Llama-3.1-8B" and numbers["draft_name"]["text"] == "Llama-3.2-1B"
    assert numbers["gpu_memory_utilization"]["text"] == "95%"
    assert "Llama-3.2-1B" in (built / "tables" / "footprint.md").read_text()
    assert "set by the config" in (built / "tables" / "constants.md").read_text()
    html = (built / "html" / "simulator.html").read_text()
    meta = html.split('<script type="application/json" id="specsim-meta">', 1)[1].split("</script>", 1)[0]
    assert json.loads(meta)["axes"]["drafter"][:2] == ["llama-3.2-1b", "llama-3.2-3b"]
    # The calibration table is always the article's deployment against the article.
    assert (built / "tables" / "calibration.md").read_text() == (generated / "tables" / "calibration.md").read_text()


def test_a_bad_config_fails_the_build_and_writes_nothing(tmp_path):
    result = _build_with_config(tmp_path, '[deployment]\nhardware = "h100"\n')
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "unknown hardware 'h100'; allowed: h100-sxm" in result.stderr
    assert not (tmp_path / "proj" / "docs" / "generated").exists()


def test_ladder_and_breakeven_map_mark_what_does_not_fit():
    import numpy as np

    from sitebuild.figures import common, ladders
    from specmodel import evaluate

    settings = SiteSettings()
    ladder = ladders.draw_ladder(ladders.ladder(settings), settings.deployment)
    trace = next(t for t in ladder.data if t.visible and t.legendgroup == "qwen3-0.6b")
    b = np.array(trace.x)
    fits = evaluate(concurrency=b, context=2048).fits
    assert [s == common.UNFIT_SYMBOL for s in trace.marker.symbol] == [not f for f in fits]
    assert (~fits).any() and fits.any()

    breakeven = ladders.draw_breakeven_map(ladders.breakeven_map(settings), settings.deployment)
    boxes = next(t for t in breakeven.data if t.visible and t.name == "does not fit in memory")
    data = ladders.breakeven_map(settings)
    unfit = data[(data.drafter == "qwen3-0.6b") & ~data.fits]
    assert sorted(zip(boxes.x, boxes.y)) == sorted(zip(unfit.concurrency.astype(str), unfit.context.astype(str)))


def test_hardware_page_compares_three_cards_side_by_side():
    from sitebuild.figures import cards

    settings = SiteSettings()
    fig = cards.draw_hardware_ladders(cards.hardware_ladders(settings), settings.deployment)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:3] == ["H100-SXM, 80 GB", "H200, 141 GB", "B200, 180 GB"]
    axes = {t.xaxis for t in fig.data if t.visible and t.legendgroup == "qwen3-0.6b"}
    assert axes == {"x", "x2", "x3"}
    assert "hardware.md" in (ROOT / "mkdocs.yml").read_text()


def test_simulator_log_fields_follow_vllm_log_format():
    """The simulator fills vLLM's log format slot by slot: its fields, in the format's order."""
    from sitebuild.simulator.data import LOG_FIELDS
    from sitebuild.simulator.log import LOG_SLOTS, log_template

    assert tuple(LOG_FIELDS) == LOG_SLOTS
    assert [p["slot"] for p in log_template() if "slot" in p] == list(LOG_SLOTS)


def test_beyond_page_follows_other_cards_in_the_nav():
    nav = [line.strip() for line in (ROOT / "mkdocs.yml").read_text().split("nav:")[1].splitlines() if line.strip()]
    assert nav.index("- Beyond one GPU: beyond.md") == nav.index("- Other cards: hardware.md") + 1


def test_the_70b_figure_shows_every_measurement_and_fits_at_batch_1():
    from sitebuild.figures import beyond as multi
    from sitebuild.figures import common

    settings = SiteSettings()
    curves, points = multi.measured_ladders(settings)
    fig = multi.draw_panel_ladders(curves, settings.deployment, points)
    measured = [t for t in fig.data if t.name == "measured"]
    assert sum(len(t.x) for t in measured) == len(points) == 24
    fitted = points[points["fitted"]]
    assert (fitted["batch"] == 1).all() and (abs(fitted["predicted"] / fitted["measured"] - 1) < 1e-3).all()
    # The model's curves use the vLLM profile on four H100s: open markers where that does not fit.
    curve = next(t for t in fig.data if t.legendgroup == "eagle" and t.mode == "lines+markers" and t.xaxis == "x2")
    assert common.UNFIT_SYMBOL in curve.marker.symbol and "circle" in curve.marker.symbol


def test_every_new_figure_has_a_narrow_variant():
    settings = SiteSettings()
    for spec in FIGURES:
        if spec.id.startswith("beyond-") or spec.id == "validation-multigpu":
            narrow = spec.make(settings).layout.meta["narrow"]["layout"]
            assert narrow["height"] > 0 and "legend.y" in narrow, spec.id


def test_every_number_and_claim_is_quoted_by_some_page():
    """No dead numbers: each number of numbers.json and each claim is used by a page."""
    import re

    from sitebuild.claims import article_claims
    from sitebuild.claims.prose import blocks

    text = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    used = set(re.findall(r"\{\{\s*([A-Za-z0-9_\-]+)\s*\}\}", text))
    assert sorted(set(article_numbers(SiteSettings())) - used) == []
    assert sorted(set(article_claims(SiteSettings())) - set(blocks(text))) == []


def test_open_markers_mean_only_does_not_fit():
    """Open markers mean "does not fit in memory" on every figure: a trace gives its points an
    open symbol one by one (those that do not fit), or all of them only if it is the trace of
    what does not fit; the engine figures mark the ideal roofline with a filled symbol."""
    settings = deployment.resolved(SiteSettings())
    for spec in FIGURES:
        for trace in spec.make(settings).data:
            marker = getattr(trace, "marker", None)
            symbol = getattr(marker, "symbol", None) if marker is not None else None
            if isinstance(symbol, str) and "open" in symbol:
                assert "does not fit" in (trace.name or ""), (spec.id, trace.name, symbol)
    for figure_id in ("engines", "validation", "validation-multigpu"):
        spec = next(s for s in FIGURES if s.id == figure_id)
        names = {t.name: t.marker.symbol for t in spec.make(settings).data if t.mode and "markers" in t.mode}
        ideal = [symbol for name, symbol in names.items() if "ideal" in name]
        assert ideal and all("open" not in str(symbol) for symbol in ideal), (figure_id, names)
        assert "open" not in spec.caption.lower()


def test_the_break_even_contour_has_no_labels_over_the_cells():
    settings = deployment.resolved(SiteSettings())
    spec = next(s for s in FIGURES if s.id == "breakeven")
    contours = [t for t in spec.make(settings).data if t.type == "contour"]
    assert contours and all(t.contours.showlabels is False for t in contours)
    assert "contour" in spec.caption  # the caption says what the line is


def test_multi_letter_subscripts_are_typeset_as_text(generated):
    r"""``\eta_{flop}`` (or ``η_flop``) typesets as eta sub f, then "lop": a subscript of more
    than one letter is ``\text{...}`` in every formula of the pages and generated tables."""
    import re

    texts = {f"tables/{p.name}": p.read_text() for p in (generated / "tables").glob("*.md")}
    texts.update({p.name: p.read_text() for p in (ROOT / "docs").glob("*.md")})
    bad = []
    for name, text in texts.items():
        for formula in re.findall(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", text, flags=re.S):
            tex = "".join(formula)
            bad += [f"{name}: {tex}" for m in re.finditer(r"_([A-Za-z]{2,})|_\{([A-Za-z]{3,})\}", tex)]
    assert bad == []


def test_captions_promise_only_controls_the_figure_has():
    """A caption that says "the slider", "the menu" or "buttons" is on a figure with such a
    control (the page adds a native one, reachable by keyboard, for each); one that says
    "hover" names another way to the same values."""
    import re

    settings = deployment.resolved(SiteSettings())
    for spec in FIGURES:
        layout = spec.make(settings).layout
        caption = spec.caption.lower()
        if re.search(r"\bslider\b", caption):
            assert layout.sliders, spec.id
        if re.search(r"\bmenu\b|\bbuttons?\b", caption):
            assert layout.updatemenus, spec.id
        if "hover" in caption:
            assert "data behind the figure" in caption, spec.id
        for menu in layout.updatemenus or ():
            assert menu.name, f"{spec.id}: a menu needs a name, the label of its native control"
