"""Outputs that cannot be turned against their user: the site build's folder (nothing removed
through a symbolic link or beside it, a private folder while it fills, an unreadable entry
refused), a folder another process holds a lock on (refused at once), a command's output that
is one of its inputs (refused; a replaced file keeps its mode and owner), and every path check
made before any computation, naming the option it checks."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitebuild import build as site_build
from sitebuild import output
from sitebuild.output import STAMP
from specmodel.errors import SpecModelError
from tests.cli_runner import cli

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
BENCH = ROOT / "tests" / "data" / "bench" / "sglang-0.5.jsonl"
LOG = ROOT / "tests" / "data" / "vllm" / "draft-model-b8.log"
SPECULATIVE = '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}'
OTHER = 4321  # a uid and gid that is not the test's (set only where the test runs as root)
SMALL = {"a.txt": "A", "figures/x.html": "X"}


def state(folder: Path) -> dict[str, tuple]:
    """Every entry under ``folder`` (not following links): content or link target, and mode."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        body = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
        found[str(path.relative_to(folder))] = (body, stat.S_IMODE(info.st_mode))
    return found


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def small_build(monkeypatch) -> None:
    """The site build in process, computing two small files."""
    monkeypatch.setattr(site_build, "outputs", lambda *a, **k: dict(SMALL))


@pytest.fixture
def no_build(monkeypatch) -> None:
    """The site build in process, failing the test if it computes anything."""
    monkeypatch.setattr(site_build, "outputs", lambda *a, **k: pytest.fail("computed before checking"))


def reads_mode_000(tmp_path: Path) -> bool:
    """Whether this process reads a folder of mode 000 (root with its capabilities does)."""
    probe = tmp_path / "probe"
    probe.mkdir(mode=0)
    try:
        os.listdir(probe)
        return True
    except PermissionError:
        return False
    finally:
        probe.chmod(0o700)
        probe.rmdir()


# --- 1. the build's folder: symbolic links, the private folder, unreadable entries -------------


def victims(tmp_path: Path) -> list[Path]:
    """Folders elsewhere, each with a file: another build's output and a plain folder."""
    other, plain = tmp_path / "home" / "site-gen", tmp_path / "home" / "papers"
    other.parent.mkdir()
    output.write_tree({"a.txt": "A"}, other)
    plain.mkdir()
    (plain / "thesis.tex").write_text("only copy")
    return [other, plain]


def plant(shared: Path, targets: list[Path]) -> list[Path]:
    """Symbolic links beside ``shared/gen`` named as a build's leftovers would be, to ``targets``."""
    links = [shared / f".gen-{kind}-0a1b2c3d" for kind in ("old", "new")] + [shared / ".gen-k2j4m5n6"]
    for link, target in zip(links, [*targets, targets[0]]):
        link.symlink_to(target)
    return links


def test_a_symlinked_leftover_beside_the_folder_is_never_followed(tmp_path, small_build, capsys):
    shared = tmp_path / "shared"
    shared.mkdir()
    output.write_tree({"b.txt": "B"}, shared / "gen")
    targets = victims(tmp_path)
    before = {t: state(t) for t in targets}
    links = plant(shared, targets)
    assert site_build.main(["--out", str(shared / "gen")]) == 0
    assert "note" not in capsys.readouterr().err  # a link is not a build's leftover
    assert {t: state(t) for t in targets} == before
    assert all(link.is_symlink() for link in links) and (shared / "gen" / "a.txt").read_text() == "A"


def test_a_run_that_fails_at_its_config_touches_nothing_beside_the_folder(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    targets = victims(tmp_path)
    before = {t: state(t) for t in targets}
    links = plant(shared, targets)
    config = tmp_path / "bad.toml"
    config.write_text("[constants]\nNO_SUCH_CONSTANT = 1\n")
    argv = [sys.executable, str(ROOT / "build_figures.py"), "--out", str(shared / "gen"), "--config", str(config)]
    result = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 2 and "NO_SUCH_CONSTANT" in one_line(result.stderr)
    assert {t: state(t) for t in targets} == before
    assert sorted(p.name for p in shared.iterdir()) == sorted(link.name for link in links)


@pytest.mark.parametrize("mask", [0o000, 0o022])
def test_the_folder_is_filled_in_private_and_then_takes_the_umasks_mode(tmp_path, monkeypatch, mask):
    seen: list[tuple[str, int]] = []
    populate = output.populate

    def watched(staging, *args):
        seen.append((staging.name, stat.S_IMODE(os.lstat(staging).st_mode)))
        populate(staging, *args)

    monkeypatch.setattr(output, "populate", watched)
    previous = os.umask(mask)
    try:
        output.write_tree(SMALL, tmp_path / "gen")
        output.write_tree(SMALL, tmp_path / "gen")
    finally:
        os.umask(previous)
    assert [mode for _, mode in seen] == [0o700, 0o700]  # nobody else can plant anything in it
    assert all(re.fullmatch(r"\.gen-[a-z0-9_]{8}", name) for name, _ in seen) and seen[0][0] != seen[1][0]
    assert stat.S_IMODE((tmp_path / "gen").stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((tmp_path / "gen" / "a.txt").stat().st_mode) == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]


def built_with_private_folder(tmp_path: Path) -> Path:
    """A built folder ``gen`` holding a folder of the user's, ``private/mine.txt``, of mode 000."""
    gen = tmp_path / "gen"
    output.write_tree(SMALL, gen)
    (gen / "private").mkdir()
    (gen / "private" / "mine.txt").write_text("mine")
    (gen / "private").chmod(0)
    return gen


@pytest.fixture
def unreadable_folder(tmp_path) -> Iterator[Path]:
    """A built folder holding a folder of the user's with mode 000 (made readable again after)."""
    if reads_mode_000(tmp_path):
        pytest.skip("this process reads folders of mode 000 (root): nothing here is unreadable to it")
    gen = built_with_private_folder(tmp_path)
    yield gen
    (gen / "private").chmod(0o700)


def test_an_unreadable_folder_inside_is_refused_before_anything_moves(tmp_path, unreadable_folder, no_build, capsys):
    gen = unreadable_folder
    before = sorted(p.name for p in gen.iterdir()), (gen / STAMP).read_text()
    assert site_build.main(["--out", str(gen)]) == 2
    err = one_line(capsys.readouterr().err)
    assert "'private'" in err and "cannot read" in err
    with pytest.raises(SpecModelError, match="'private'"):
        output.write_tree({"a.txt": "A2"}, gen)
    assert (sorted(p.name for p in gen.iterdir()), (gen / STAMP).read_text()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]  # no hidden folder left beside it
    (gen / "private").chmod(0o700)
    assert (gen / "private" / "mine.txt").read_text() == "mine"


#: Runs a command without the capabilities that let root read any folder (util-linux's setpriv):
#: how a root test session meets a folder of mode 000 as any other user does.
WITHOUT_OVERRIDE = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")


def test_a_process_that_cannot_read_a_folder_inside_is_refused_before_anything_moves(tmp_path):
    """The same refusal in a process that really cannot read the folder, where this session can
    (root): the build runs without the capabilities that bypass file modes."""
    if not reads_mode_000(tmp_path):
        pytest.skip("this process cannot read folders of mode 000: the in-process test covers it")
    if shutil.which(WITHOUT_OVERRIDE[0]) is None:
        pytest.skip("setpriv (util-linux) is not installed: no way to drop root's file-mode override")
    gen = built_with_private_folder(tmp_path)
    before = sorted(p.name for p in gen.iterdir()), (gen / STAMP).read_text()
    root = Path(__file__).resolve().parents[1]
    argv = [*WITHOUT_OVERRIDE, sys.executable, "build_figures.py", "--out", str(gen)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300, env=env)
    (gen / "private").chmod(0o700)
    assert run.returncode == 2, run.stderr[-2000:]
    err = one_line(run.stderr)
    assert "'private'" in err and "cannot read" in err
    assert (sorted(p.name for p in gen.iterdir()), (gen / STAMP).read_text()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]
    assert (gen / "private" / "mine.txt").read_text() == "mine"


def test_the_previous_folder_is_emptied_without_following_a_link_planted_in_it(tmp_path, monkeypatch, capsys):
    gen, victim = tmp_path / "gen", tmp_path / "elsewhere"
    output.write_tree({"figures/x.html": "X", "a.txt": "A"}, gen)
    victim.mkdir()
    (victim / "x.html").write_text("someone else's")
    swap = output.swap

    def planted(staging, destination):
        old = swap(staging, destination)
        shutil.rmtree(old / "figures")
        (old / "figures").symlink_to(victim)  # swapped for a link just before the old folder goes
        (old / "late.txt").write_text("appeared during the build")
        return old

    monkeypatch.setattr(output, "swap", planted)
    output.write_tree({"figures/x.html": "X2", "a.txt": "A2"}, gen)
    assert (victim / "x.html").read_text() == "someone else's"
    err = one_line(capsys.readouterr().err)
    assert "'figures'" in err and "'late.txt'" in err and "the previous folder stays" in err
    assert (gen / "figures" / "x.html").read_text() == "X2"


# --- 2. a lock another process holds ------------------------------------------------------------

#: A process that locks the path it is given (``flock`` on a folder, ``lockf`` on a file) and holds it.
HOLD = (
    "import fcntl, os, sys, time; fd = os.open(sys.argv[1], {flags}); fcntl.{how}(fd, fcntl.LOCK_EX); "
    "print('held', flush=True); time.sleep(120)"
)
SMALL_BUILD = (
    "import sys; from sitebuild import build; "
    "build.outputs = lambda *a, **k: {'a.txt': 'A2'}; "
    "sys.exit(build.main(['--out', sys.argv[1]]))"
)


@pytest.fixture
def holder() -> Iterator:
    """Start a process that locks a path (``flock`` or ``lockf``) and holds it; ended after."""
    started: list[subprocess.Popen] = []

    def hold(path: Path, how: str = "flock") -> None:
        script = HOLD.format(flags="os.O_RDWR" if how == "lockf" else "os.O_RDONLY", how=how)
        process = subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True)
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == "held\n"

    yield hold
    for process in started:
        process.kill()
        process.communicate(timeout=30)  # closes its pipe


def test_a_build_of_a_folder_another_process_locks_is_refused_at_once(tmp_path, holder):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    before = state(gen)
    holder(gen)
    result = subprocess.run([sys.executable, str(ROOT / "build_figures.py"), "--out", str(gen)], capture_output=True,
                            text=True, env=ENV, timeout=60)  # fmt: skip
    assert result.returncode == 2 and "locked by another process" in one_line(result.stderr)
    assert state(gen) == before and sorted(p.name for p in tmp_path.iterdir()) == ["gen"]


@pytest.mark.parametrize("where", ["parent", "stamp"])
def test_a_lock_that_is_not_a_builds_does_not_stop_the_build(tmp_path, holder, where):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    holder(tmp_path, "flock") if where == "parent" else holder(gen / STAMP, "lockf")
    result = subprocess.run([sys.executable, "-c", SMALL_BUILD, str(gen)], capture_output=True, text=True, env=ENV,
                            timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (gen / "a.txt").read_text() == "A2"


# --- 3. an output that is an input; a replaced file keeps its mode and owner ---------------------


def fit_engine(*files: Path | str, out: Path) -> tuple[int, str, str]:
    return cli("fit-engine", *map(str, files), "--hardware", "h100-sxm", "--out", str(out))


@pytest.mark.parametrize("how", ["same path", "hard link", "symbolic link", "link as the input"])
def test_fit_engine_refuses_to_write_over_its_input(tmp_path, monkeypatch, how):
    monkeypatch.setattr("specmodel.cli.fit_engine.load_runs", lambda *a: pytest.fail("computed before checking"))
    bench = tmp_path / "bench.jsonl"
    shutil.copy(BENCH, bench)
    bench.chmod(0o640)
    given, out = bench, bench
    if how == "hard link":
        os.link(bench, out := tmp_path / "profile.toml")
    elif how == "symbolic link":
        (out := tmp_path / "profile.toml").symlink_to(bench)
    elif how == "link as the input":
        (given := tmp_path / "link.jsonl").symlink_to(bench)
    status, stdout, err = fit_engine(given, out=out)
    assert status == 2 and stdout == "" and "refusing to replace an input" in one_line(err)
    assert f"--out {str(out)!r}" in err and f"FILE {str(given)!r}" in err
    assert bench.read_bytes() == BENCH.read_bytes() and stat.S_IMODE(bench.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_advise_refuses_a_report_that_is_its_log(tmp_path, monkeypatch):
    monkeypatch.setattr("specmodel.vllm.load.given_load", lambda *a: pytest.fail("computed before checking"))
    log = tmp_path / "server.html"
    shutil.copy(LOG, log)
    status, _, err = cli("advise", "--log", str(log), "--concurrency", "8", "--speculative-config", SPECULATIVE,
                         "--hardware", "h100-sxm", "--report", str(log))  # fmt: skip
    assert status == 2 and "--report" in one_line(err) and "--log" in err and "refusing to replace an input" in err
    assert log.read_bytes() == LOG.read_bytes()


@pytest.mark.parametrize("where", ["config", "engine_profile"])
def test_the_build_refuses_an_input_inside_its_folder(tmp_path, no_build, capsys, where):
    gen = tmp_path / "gen"
    output.write_tree(SMALL, gen)
    profile = tmp_path / "gen" / "mine" / "server.toml"
    profile.parent.mkdir()
    assert cli("fit-engine", str(BENCH), "--hardware", "h100-sxm", "--out", str(profile))[0] == 0
    config = (gen if where == "config" else tmp_path) / "site.toml"
    config.write_text(f'engine_profile = "{os.path.relpath(profile, config.parent)}"\n')
    before = state(gen)
    assert site_build.main(["--out", str(gen), "--config", str(config)]) == 2
    err = one_line(capsys.readouterr().err)
    assert "refusing to replace an input" in err and ("--config" in err) and str(gen) in err
    assert state(gen) == before


def own_elsewhere(path: Path) -> tuple[int, int]:
    """Give ``path`` another owner where the test may (as root); returns its owner and group."""
    if os.geteuid() == 0:
        os.chown(path, OTHER, OTHER)
    info = path.stat()
    return info.st_uid, info.st_gid


def replace(kind: str, out: Path) -> int:
    """Run the command ``kind`` writing ``out``; returns its exit status."""
    argv = {
        "fit-engine": ["fit-engine", str(BENCH), "--hardware", "h100-sxm", "--out", str(out)],
        "sweep": ["sweep", "--concurrency", "1", "--context", "256", "--gamma", "1", "--drafter", "ngram",
                  "--alpha", "0.6", "--acceptance", "falling", "--out", str(out)],
        "advise": ["advise", "--log", str(LOG), "--concurrency", "8", "--speculative-config", SPECULATIVE,
                   "--hardware", "h100-sxm", "--report", str(out)],
    }[kind]  # fmt: skip
    status, _, err = cli(*argv)
    assert status == 0, err
    return status


@pytest.mark.parametrize(("kind", "name"), [("fit-engine", "p.toml"), ("sweep", "g.csv"), ("advise", "a.html")])
def test_a_replaced_output_keeps_its_mode_and_owner(tmp_path, kind, name):
    out = tmp_path / name
    out.write_text("old")
    out.chmod(0o640)
    owner = own_elsewhere(out)
    replace(kind, out)
    info = out.stat()
    assert info.st_size > len("old") and stat.S_IMODE(info.st_mode) == 0o640 and (info.st_uid, info.st_gid) == owner
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


# --- 4. every path refused before any computation, naming its option ------------------------------

#: Each command: its argv up to the output path, the option, the output's extension, and what
#: computes (stubbed to fail the test if called).
COMMANDS = {
    "sweep": (["sweep", "--out"], "--out", ".csv", "specmodel.grid.plan_sweep"),
    "advise": (["advise", "--log", str(LOG), "--concurrency", "8", "--speculative-config", SPECULATIVE,
                "--hardware", "h100-sxm", "--report"], "--report", ".html", "specmodel.vllm.load.given_load"),
    "fit-engine": (["fit-engine", str(BENCH), "--hardware", "h100-sxm", "--out"], "--out", ".toml",
                   "specmodel.cli.fit_engine.load_runs"),
}  # fmt: skip


def bad_path(tmp_path: Path, case: str, suffix: str) -> Path:
    """An output path the command must refuse: ``case`` says why."""
    if case == "name too long":
        return tmp_path / ("n" * 300 + suffix)
    if case == "no such folder":
        return tmp_path / "absent" / f"out{suffix}"
    if case == "a file as its folder":
        (tmp_path / "plain").write_text("mine")
        return tmp_path / "plain" / f"out{suffix}"
    if case == "a folder":
        (tmp_path / f"out{suffix}").mkdir()
        return tmp_path / f"out{suffix}"
    if case == "a FIFO":
        os.mkfifo(tmp_path / f"out{suffix}")
        return tmp_path / f"out{suffix}"
    return Path(f"/proc/out{suffix}")  # a folder no one writes in


CASES = ["name too long", "no such folder", "a file as its folder", "a folder", "a FIFO", "an unwritable folder"]
SAYS = {"name too long": "too long", "no such folder": "does not exist", "a file as its folder": "not a folder",
        "a folder": "is a folder; give a file name", "a FIFO": "not a regular file",
        "an unwritable folder": "cannot write in"}  # fmt: skip


@pytest.mark.parametrize("kind", list(COMMANDS))
@pytest.mark.parametrize("case", CASES)
def test_a_bad_output_path_is_refused_before_computing(tmp_path, monkeypatch, kind, case):
    argv, option, suffix, computes = COMMANDS[kind]
    monkeypatch.setattr(computes, lambda *a, **k: pytest.fail("computed before checking"))
    path = bad_path(tmp_path, case, suffix)
    before = state(tmp_path)
    status, stdout, err = cli(*argv, str(path))
    assert status == 2 and stdout == "" and SAYS[case] in one_line(err)
    assert f"{option} " in err and (option == "--out" or "--out" not in err)  # the option it checks
    assert ".csv or .parquet" not in err or kind == "sweep"
    assert state(tmp_path) == before


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_a_long_name_the_file_system_allows_is_written(tmp_path, kind):
    out = tmp_path / ("n" * (250 - len(COMMANDS[kind][2])) + COMMANDS[kind][2])  # its temporary file's name is cut
    replace(kind, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


@pytest.mark.parametrize("case", ["name too long", "a long name above it", "path too long", "a file above it",
                                  "a file", "a FIFO", "an unwritable folder"])  # fmt: skip
def test_the_build_refuses_a_bad_folder_before_computing(tmp_path, no_build, capsys, case):
    says = {"name too long": "too long", "a long name above it": "too long", "path too long": "path is too long",
            "a file above it": "is a file, not a folder", "a file": "is a file, not a folder",
            "a FIFO": "is a file, not a folder", "an unwritable folder": "cannot write in"}[case]  # fmt: skip
    out = tmp_path / "gen"
    if case == "path too long":  # deep enough that the files written below it pass the system's limit
        deep = tmp_path.joinpath(*["d" * 250] * ((4096 - len(str(tmp_path))) // 251))
        deep.mkdir(parents=True)
        out = deep / "gen"
    elif case == "a long name above it":
        out = tmp_path / ("n" * 300) / "gen"
    elif case == "a file above it":
        (tmp_path / "plain").write_text("mine")
        out = tmp_path / "plain" / "sub" / "gen"
    elif case in ("a file", "a FIFO"):
        out.write_text("mine") if case == "a file" else os.mkfifo(out)
    else:
        out = bad_path(tmp_path, case, "")
    before = state(tmp_path)
    assert site_build.main(["--out", str(out)]) == 2
    err = one_line(capsys.readouterr().err)
    assert says in err and "--out" in err and state(tmp_path) == before


def test_the_folders_above_a_new_build_are_made_once_it_has_computed(tmp_path, small_build, capsys):
    out = tmp_path / "new" / "docs" / "generated"
    config = tmp_path / "new" / "site.toml"
    assert site_build.main(["--out", str(out), "--config", str(config)]) == 2  # a missing config: nothing made
    assert "site.toml" in one_line(capsys.readouterr().err) and list(tmp_path.iterdir()) == []
    assert site_build.main(["--out", str(out)]) == 0
    assert (out / "a.txt").read_text() == "A" and sorted(p.name for p in out.parent.iterdir()) == ["generated"]
