"""tools/time_passes.py, the GPU timing of the article's two models, and what the validation page
makes of its record: without PyTorch or without a CUDA GPU the tool refuses in one line with
status 2 (no test needs a GPU); the card it prices the passes on is the catalogue's; a record
it writes is read back, set against the model's pass times and worded on the page, and without
a record the page says that no timing has been recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitebuild.claims import validation as claims
from sitebuild.claims.prose import blocks, sentence
from sitebuild.config import SiteSettings
from sitebuild.figures import validation as page
from sitebuild.pass_timings import PassTimings, model_pass_ms, read_pass_timings
from specmodel.errors import SpecModelError
from specmodel.model.settings import Constants

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "time_passes.py"


def _run(code: str, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    """``code`` run by this Python with the repository (and ``extra_path`` first) on the path."""
    path = os.pathsep.join(str(p) for p in (extra_path, ROOT) if p is not None)
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=120)  # fmt: skip


RUN_TOOL = "import runpy, sys; sys.argv = ['time_passes.py']; runpy.run_path({tool!r}, run_name='__main__')"


def _one_line_refusal(result: subprocess.CompletedProcess) -> str:
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(lines) == 1 and "Traceback" not in result.stderr, lines
    assert lines[0].startswith("time_passes.py: ")
    return lines[0]


def test_without_pytorch_it_refuses_in_one_line():
    blocked = "import sys; sys.modules['torch'] = None\n"  # import torch fails, installed or not
    line = _one_line_refusal(_run(blocked + RUN_TOOL.format(tool=str(TOOL))))
    assert "PyTorch is not installed" in line


def test_without_a_cuda_gpu_it_refuses_in_one_line(tmp_path):
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("class cuda:\n    is_available = staticmethod(lambda: False)\n")
    line = _one_line_refusal(_run(RUN_TOOL.format(tool=str(TOOL)), extra_path=tmp_path))
    assert "no CUDA GPU" in line


def test_it_imports_pytorch_only_when_it_runs():
    result = _run(f"import runpy, sys; runpy.run_path({str(TOOL)!r}); print('torch' in sys.modules)")
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize(
    ("device", "key"),
    [("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA H200", "h200"), ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
     ("NVIDIA L40S", "l40s"), ("NVIDIA B200", "b200")],
)  # fmt: skip
def test_the_card_is_the_catalogues(device, key):
    tool = _tool()
    assert tool.catalogue_card(device, None) == key
    assert tool.catalogue_card("Some Card", "h200") == "h200"


@pytest.mark.parametrize("device", ["NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA GeForce RTX 4090"])
def test_a_card_the_catalogue_does_not_hold_is_refused(device):
    tool = _tool()
    with pytest.raises(tool.Refused, match="--hardware"):
        tool.catalogue_card(device, None)


def test_the_models_config_fields_are_config_jsons():
    fields = _tool().config_fields("qwen3-8b")
    assert fields["model_type"] == "qwen3" and fields["num_hidden_layers"] == 36 and fields["head_dim"] == 128
    assert not {"key", "name", "source", "published_parameters"} & set(fields)


def _tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("time_passes", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["time_passes"] = module  # dataclasses and pydantic look their module up
    spec.loader.exec_module(module)
    return module


def _record(tmp_path: Path) -> Path:
    """A record as the tool writes it (made up here: the numbers are not measurements)."""
    timings = [
        {"model": m, "role": r, "batch": b, "positions": q, "median_ms": 10.0 * b**0.2, "min_ms": 9.0, "repeats": 10}
        for m, r in (("qwen3-8b", "target"), ("qwen3-0.6b", "draft"))
        for b in (1, 64)
        for q in (1, 5)
    ]
    timings.append({"model": "qwen3-8b", "role": "target", "batch": 256, "positions": 5, "error": "out of memory"})
    record = {"card": "NVIDIA H200", "hardware": "h200", "torch": "2.5.1", "transformers": "4.47.0", "cuda": "12.4",
              "dtype": "bfloat16", "attention": "sdpa", "kv_tokens": 2048, "gamma": 4, "date": "2026-01-01",
              "timings": timings}  # fmt: skip
    path = tmp_path / "pass-timings.json"
    path.write_text(json.dumps(record))
    return path


def test_a_record_is_read_and_set_against_the_models_pass_times(tmp_path):
    record = read_pass_timings(_record(tmp_path))
    assert isinstance(record, PassTimings)
    frame = page.pass_timings_frame(record, SiteSettings())
    assert len(frame) == 8  # the pass that ran out of memory is left out
    c = Constants()
    assert frame["model_ms"].iloc[0] == pytest.approx(float(model_pass_ms(c, "qwen3-8b", "h200", 1, 1, 2048)))
    table = page.pass_timings_table(frame).splitlines()
    assert len(table) == 2 + 8 and "Qwen3-8B (target)" in table[2]


def test_the_models_pass_time_is_the_roofline_of_the_pass():
    c = Constants()
    one, many = (float(model_pass_ms(c, "qwen3-8b", "h100-sxm", b, 1, 2048)) for b in (1, 256))
    assert 4 < one < 8  # about 16 GB of weights at 0.8 of 3.35 TB/s
    assert many > one  # 256 sequences also read 256 caches of 2,048 tokens


def test_a_bad_record_is_one_line(tmp_path):
    path = tmp_path / "pass-timings.json"
    path.write_text(json.dumps({"card": "x"}))
    with pytest.raises(SpecModelError, match="pass timings"):
        read_pass_timings(path)


def test_the_page_words_a_record_and_its_absence(tmp_path, monkeypatch):
    body = blocks((ROOT / "docs" / "validation.md").read_text(encoding="utf-8"))["pass_timings"]
    monkeypatch.setattr(claims, "PASS_TIMINGS", tmp_path / "absent.json")
    said = claims.pass_timings(SiteSettings())
    assert said.outcome == "none"
    text = sentence("pass_timings", said.outcomes, {}, body)
    assert "No forward pass has been timed on a GPU" in text and text.count(". ") == 0  # one sentence
    monkeypatch.setattr(claims, "PASS_TIMINGS", _record(tmp_path))
    said = claims.pass_timings(SiteSettings())
    assert said.outcome == "recorded"
    text = sentence("pass_timings", said.outcomes, {k: v.text for k, v in said.values.items()}, body)
    assert "NVIDIA H200" in text and "{{ table:pass-timings }}" in text
