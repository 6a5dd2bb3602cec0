"""The checks `make lint` runs beyond ruff and mypy: each finds what it is for (a check that
can find nothing protects nothing), and the repository passes them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.check_cycles import strongly_connected
from tools.check_dead_code import unused

ROOT = Path(__file__).resolve().parents[1]


def test_the_cycle_check_finds_a_cycle_through_several_modules():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    components = [sorted(c) for c in strongly_connected("abcd", edges) if len(c) > 1]
    assert components == [["a", "b", "c"]]


def test_the_dead_code_check_finds_an_unused_function_but_not_a_used_one(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def used():\n    return 1\n\n\ndef forgotten():\n    return 2\n\n\nprint(used())\n")
    assert [(item.typ, item.name) for item in unused([str(module)])] == [("function", "forgotten")]


def test_the_repository_has_no_import_cycle_and_no_dead_code():
    for tool in ("check_cycles.py", "check_dead_code.py"):
        out = subprocess.run([sys.executable, str(ROOT / "tools" / tool)], capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr


def test_tests_of_one_xdist_group_run_in_one_process(tmp_path):
    """The suite's parallel run keeps the tests that share refits in one process (``make test``:
    ``--dist loadgroup``): six tests in two files of one group, on two workers, run on one."""
    mark = 'import os, pathlib, pytest\npytestmark = pytest.mark.xdist_group("g")\n'
    ran = "    pathlib.Path(__file__).with_name(os.environ['PYTEST_XDIST_WORKER'] + '.ran').touch()\n"
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(mark + "".join(f"def test_{name}{i}():\n{ran}" for i in range(3)))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    command = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider"]
    out = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:]
    assert len(list(tmp_path.glob("*.ran"))) == 1, "the group's tests ran on several workers"
