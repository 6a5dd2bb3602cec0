"""Rules every command keeps whatever it is given: it never destroys or moves a file it did
not create, every user error is one line and exit status 2, input is read within bounds, and
what cannot be true is refused rather than computed."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from sitebuild.output import STAMP
from specmodel.cli import main, sweep

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specmodel", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)  # fmt: skip


def build(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(ROOT / "build_figures.py"), *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)  # fmt: skip


def one_line_error(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-500:])
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr[-500:]
    # One line, not a dump of the input; it may name everything allowed (a calibration metric
    # is any of the ~35 readouts).
    assert len(result.stderr) < 1000


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- 1. no command destroys or moves a file it did not create ------------------------------


@pytest.mark.parametrize("make", ["folder", "file", "cwd"])
def test_the_build_refuses_a_destination_it_did_not_write_and_leaves_it_alone(tmp_path, make):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("my notes\n")
    (tmp_path / "report.txt").write_text("my report\n")
    before = snapshot(tmp_path)
    out = {"folder": str(tmp_path / "mine"), "file": str(tmp_path / "report.txt"), "cwd": "."}[make]
    result = build("--out", out, cwd=tmp_path)
    one_line_error(result)
    assert "refusing" in result.stderr
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "report.txt"]  # no hidden leftovers


@pytest.mark.slow
def test_the_build_writes_a_new_or_empty_folder_and_replaces_its_own(tmp_path, figures_run, generated):
    # A new folder: the session's build wrote one (build_figures.py --out <a path that did not exist>).
    assert (generated / STAMP).is_file() and (generated / "numbers.json").is_file()
    assert sorted(p.name for p in generated.parent.iterdir()) == ["generated", "returncode", "stderr", "stdout"]
    (tmp_path / "empty").mkdir()
    shutil.copytree(generated, tmp_path / "new")  # a build of its own, to be replaced
    for out in (tmp_path / "empty", tmp_path / "new"):
        result = build("--out", str(out))
        assert result.returncode == 0, result.stderr
        assert (out / STAMP).is_file() and (out / "numbers.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "new"]


def test_the_build_checks_its_destination_before_computing(tmp_path, monkeypatch, capsys):
    from sitebuild import build as site_build

    (tmp_path / "report.txt").write_text("x")
    monkeypatch.setattr(site_build, "outputs", lambda *a, **k: pytest.fail("computed before checking"))
    assert site_build.main(["--out", str(tmp_path / "report.txt")]) == 2
    assert "refusing" in capsys.readouterr().err


def test_sweep_checks_its_output_before_computing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("specmodel.grid.sweep", lambda *a, **k: pytest.fail("computed before checking"))
    (tmp_path / "grid.csv").mkdir()
    for out in (tmp_path / "grid.csv", Path("/proc/x.csv"), Path("/sys/x.csv"), tmp_path / "nope" / "g.csv"):
        assert main(["sweep", "--out", str(out)]) == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_an_interrupted_sweep_leaves_no_temporary_file(tmp_path):
    class Frame:
        def to_csv(self, path, index):
            Path(path).write_text("partial")
            os.kill(os.getpid(), signal.SIGTERM)  # the handler turns it into an interrupt
            time.sleep(5)

    with pytest.raises(KeyboardInterrupt):
        sweep.write_atomically(Frame(), tmp_path / "g.csv")
    assert list(tmp_path.iterdir()) == []


def test_sweep_output_has_the_usual_permissions(tmp_path):
    frame = pd.DataFrame({"a": [1, 2]})
    target = tmp_path / "g.csv"
    sweep.write_atomically(frame, target)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_sigint_during_a_sweep_exits_130_and_leaves_nothing(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "specmodel", "sweep", "--out", str(tmp_path / "g.csv")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode in (0, 130) and "Traceback" not in err
    if process.returncode == 130:
        assert err.count("\n") == 1 and list(tmp_path.iterdir()) == []


# --- 2. every user error is one line and exit 2 ---------------------------------------------

DEEP = "[" * 50_000 + "]" * 50_000

USER_ERRORS = [
    ["point", "--concurrency", "99999999999999999999"],
    ["point", "--concurrency", "1000000"],
    ["point", "--context", "10000000"],
    ["point", "--gamma", "0"],
    ["advise", "--log", "tests/data/vllm/draft-model-b8.log", "--concurrency", "8", "--speculative-config", DEEP],
    ["advise", "--log", "tests/data/vllm/draft-model-b8.log", "--concurrency", "8", "--speculative-config",
     '{"num_speculative_tokens": 4, "model": ' * 2 + "}"],
]  # fmt: skip


@pytest.mark.parametrize("args", USER_ERRORS, ids=lambda a: " ".join(a)[:40])
def test_user_errors_are_one_line(args):
    one_line_error(run(*args, cwd=ROOT))


def test_a_context_past_the_models_limit_names_the_limit():
    result = run("point", "--context", "10000000")
    assert "max_position_embeddings" in result.stderr and "40,960" in result.stderr


@pytest.mark.parametrize(("content", "needle"), [
    (b"", "empty"),
    (b"\x00\x01\x02binary", "binary"),
    (b"a,b,c\n1,2,3\n", "columns must be"),
    (b"concurrency,context,gamma,drafter,acceptance,alpha,metric,value,tolerance,kind,note\n"
     b"1,2048,4,qwen3-0.6b,falling,0.75,bogus,1.9,0.03,relative,\n", "unknown metric"),
    (b"concurrency,context,gamma,drafter,acceptance,alpha,metric,value,tolerance,kind,note\n", "no rows"),
])  # fmt: skip
def test_bad_calibration_tables_are_one_line(tmp_path, content, needle):
    table = tmp_path / "t.csv"
    table.write_bytes(content)
    result = run("calibrate", "--table", str(table))
    one_line_error(result)
    assert needle in result.stderr


@pytest.mark.parametrize("text", [
    "[constants]\nWORKSPACE_BYTES = inf\n",
    "[constants]\nFLOPS_PER_PARAMETER = 1e300\n",
    "[constants]\nMEMORY_EFFICIENCY = 1e-9\n",
    "[constants]\nCOMPUTE_EFFICIENCY = 1e-9\n",
    "[constants]\nGPU_MEMORY_UTILIZATION = true\n",
    '[constants]\nGENERATED_TOKENS = "256"\n',
    "[constants]\nGENERATED_TOKENS = nan\n",
])  # fmt: skip
def test_configs_are_strictly_typed_and_bounded(tmp_path, text):
    config = tmp_path / "c.toml"
    config.write_text(text)
    result = build("--config", str(config), "--out", str(tmp_path / "out"))
    one_line_error(result)
    assert not (tmp_path / "out").exists()


def test_a_closed_pipe_is_not_a_traceback():
    result = subprocess.run(f"{sys.executable} -m specmodel point | head -1", shell=True, capture_output=True,
                            text=True, timeout=60)  # fmt: skip
    assert result.stdout.startswith("1 sequence(s)") and "Traceback" not in result.stderr


# --- 3. bounded input -----------------------------------------------------------------------


def test_a_yaml_bomb_is_refused_quickly(tmp_path):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [*a{i - 1},*a{i - 1},*a{i - 1},*a{i - 1},*a{i - 1},*a{i - 1},*a{i - 1},*a{i - 1},*a{i - 1}]"
              for i in range(1, 10)]  # fmt: skip
    config = tmp_path / "bomb.yaml"
    config.write_text("constants:\n  " + "\n  ".join(lines) + "\n")
    start = time.perf_counter()
    result = build("--config", str(config), "--out", str(tmp_path / "out"))
    assert time.perf_counter() - start < 60  # a generous bound: today's refusal takes well under a second
    one_line_error(result)
    assert "aliases" in result.stderr


def test_a_huge_config_value_is_not_echoed(tmp_path):
    config = tmp_path / "big.toml"
    config.write_text('[deployment]\nhardware = "' + "x" * 10_000_000 + '"\n')
    result = build("--config", str(config), "--out", str(tmp_path / "out"))
    one_line_error(result)
