"""The site build: strict MkDocs build, prose placeholders, reproducibility, atomic output."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specmodel.site.build import FIGURES, main as build_main, outputs
from specmodel.site.numbers import article_numbers

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ROOT / "tests" / "data" / "calibration.csv"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_two_builds_give_identical_files(tmp_path):
    for name in ("a", "b"):
        assert build_main(["--out", str(tmp_path / name), "--calibration", str(CALIBRATION)]) == 0
    first, second = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_every_figure_is_written_without_plotly_js(tmp_path):
    assert build_main(["--out", str(tmp_path / "g"), "--calibration", str(CALIBRATION)]) == 0
    for spec in FIGURES:
        text = (tmp_path / "g" / "figures" / f"{spec.id}.html").read_text()
        assert f'id="fig-{spec.id}"' in text and "<figcaption>" in text
        assert "plotly.js" not in text.lower() and "<script" not in text
        assert len(text) < 200_000


def test_failed_write_leaves_the_previous_output(tmp_path, monkeypatch, capsys):
    out = tmp_path / "generated"
    assert build_main(["--out", str(out), "--calibration", str(CALIBRATION)]) == 0
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


def test_build_prints_what_it_wrote_and_how_long(tmp_path):
    result = subprocess.run([sys.executable, "build_figures.py", "--out", str(tmp_path / "g")], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "figures/ladder.html" in result.stdout and " s\n" in result.stdout


def test_numbers_file_has_text_and_value():
    files = outputs(CALIBRATION)
    numbers = json.loads(files["numbers.json"])
    assert set(numbers) == set(article_numbers())
    assert numbers["speedup_b1"]["text"].endswith("x")


def _copy_docs(tmp_path: Path, page: str) -> Path:
    """A copy of the project whose index page is ``page``; returns the copy's root."""
    copy = tmp_path / "proj"
    shutil.copytree(ROOT / "docs", copy / "docs", ignore=shutil.ignore_patterns("notebook.ipynb"))
    shutil.copytree(ROOT / "hooks", copy / "hooks")
    config = (ROOT / "mkdocs.yml").read_text().replace("  - Notebook: notebook.ipynb\n", "")
    (copy / "mkdocs.yml").write_text(config)
    (copy / "docs" / "index.md").write_text(page)
    return copy


@pytest.mark.usefixtures("built_site")
def test_unknown_number_fails_the_build(tmp_path):
    copy = _copy_docs(tmp_path, "# Page\n\nSpeedup {{ no_such_number }}.\n")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=copy, capture_output=True,
                            text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode != 0
    assert "unknown number {{ no_such_number }}" in result.stderr


@pytest.mark.usefixtures("built_site")
def test_unknown_figure_fails_the_build(tmp_path):
    copy = _copy_docs(tmp_path, "# Page\n\n{{ figure:nope }}\n")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=copy, capture_output=True,
                            text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode != 0 and "unknown figure 'nope'" in result.stderr


def _numbers_with(tmp_path: Path, old: str, new: str) -> dict:
    """The prose numbers computed by a copy of the package whose constants.py has ``old``
    replaced by ``new`` (a fresh interpreter, as a rebuild would be)."""
    copy = tmp_path / "pkg"
    shutil.copytree(ROOT / "specmodel", copy / "specmodel", ignore=shutil.ignore_patterns("__pycache__"))
    constants = copy / "specmodel" / "constants.py"
    text = constants.read_text()
    assert old in text
    constants.write_text(text.replace(old, new))
    code = "import json; from specmodel.site.numbers import article_numbers; " \
           "print(json.dumps({k: v.text for k, v in article_numbers().items()}))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(copy)}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_changing_a_constant_changes_the_sentences_that_quote_it(tmp_path):
    current = {k: v.text for k, v in article_numbers().items()}
    changed = _numbers_with(tmp_path, "MEMORY_EFFICIENCY = 0.80", "MEMORY_EFFICIENCY = 0.60")
    for name in ("verify_mem_ms_b1", "spec_tps_b1", "base_tps_b1", "idle_b64"):
        assert changed[name] != current[name], name
    assert changed["target_kv_kib"] == current["target_kv_kib"]  # not a function of bandwidth


def test_markdown_has_no_typed_model_outputs():
    import re

    # Speedups and ratios in the prose must be placeholders, never typed numbers.
    for page in (ROOT / "docs").glob("*.md"):
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        assert not re.findall(r"\b\d+\.\d+ ?(?:x|×)\b", text), page.name


def test_built_pages_exist(built_site):
    for page in ("index.html", "model/index.html", "notebook/index.html", "cli/index.html"):
        assert (built_site / page).is_file()
    assert "{{" not in (built_site / "index.html").read_text()


@pytest.mark.usefixtures("built_site")
def test_a_failing_notebook_cell_fails_the_build(tmp_path):
    import nbformat

    copy = _copy_docs(tmp_path, "# Page\n")
    (copy / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text())
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("raise RuntimeError('this cell fails on purpose')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, copy / "docs" / "notebook.ipynb")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=copy, capture_output=True,
                            text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode != 0
    assert "this cell fails on purpose" in result.stderr + result.stdout
