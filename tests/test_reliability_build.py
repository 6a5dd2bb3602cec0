"""The site build never loses a file of the user's, survives an interrupt at any moment, and
fails one line at a time when its output cannot be written; so does the CLI's stdout.

One real rebuild (of a copy of the test session's build) and two interrupted builds; the rest
runs the output layer in-process on small folders."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitebuild import output
from sitebuild.output import STAMP
from specmodel.errors import SpecModelError

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
OTHER = 4321  # a uid and gid that is not the builder's (the tests run as root or skip the owner)


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def state(folder: Path) -> dict[str, tuple]:
    """Every entry under ``folder``: content (or link target), mode, owner, group, mtime."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        body = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
        mtime = None if path.is_dir() and not path.is_symlink() else info.st_mtime_ns
        found[str(path.relative_to(folder))] = (body, stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, mtime)
    return found


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}-"))


def own(path: Path) -> None:
    """Give ``path`` to another user where we may (as root); the owner checks then mean something."""
    if os.geteuid() == 0:
        os.chown(path, OTHER, OTHER, follow_symlinks=False)


def users_files(gen: Path) -> dict[str, tuple]:
    """Put files of the user's in ``gen`` (top level, a generated subfolder, a folder of their
    own, an empty folder, a link), with unusual modes, owners and times; returns their state."""
    (gen / "MY-NOTES.md").write_text("notes\n")
    (gen / "figures" / "mine.html").write_text("<p>mine</p>\n")
    (gen / "mine" / "deep").mkdir(parents=True)
    (gen / "mine" / "deep" / "data.csv").write_text("a,b\n1,2\n")
    (gen / "empty").mkdir()
    (gen / "link").symlink_to("MY-NOTES.md")
    os.chmod(gen / "MY-NOTES.md", 0o600)
    os.chmod(gen / "mine", 0o750)
    for path in (gen / "MY-NOTES.md", gen / "mine" / "deep" / "data.csv", gen / "mine", gen / "link"):
        own(path)
    os.utime(gen / "MY-NOTES.md", (1_000_000_000, 1_000_000_000))
    mine = ("MY-NOTES.md", "figures/mine.html", "mine", "mine/deep", "mine/deep/data.csv", "empty", "link")
    return {k: v for k, v in state(gen).items() if k in mine}


def build(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "build_figures.py"), *args], capture_output=True, text=True,
                          env=ENV, timeout=600, **kwargs)  # fmt: skip


# --- real builds ----------------------------------------------------------------------------


@pytest.fixture
def built(tmp_path, figures_run, generated) -> Path:
    """A copy of the session's real build (build_figures.py --out, its stamp included)."""
    assert figures_run.stderr == "", figures_run.stderr[-2000:]  # no progress off a terminal
    gen = tmp_path / "gen"
    shutil.copytree(generated, gen)
    return gen


@pytest.mark.slow
def test_a_rebuild_keeps_the_users_files_unchanged(built):
    stamp = (built / STAMP).read_text()
    mine = users_files(built)
    result = build("--out", str(built))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and "kept 5 file(s)" in result.stderr and "MY-NOTES.md" in result.stderr
    assert {k: v for k, v in state(built).items() if k in mine} == mine
    assert (built / STAMP).read_text() == stamp  # the same list: deterministic, no user file in it
    assert (built / "numbers.json").is_file() and siblings(built) == []
    assert stat.S_IMODE(built.stat().st_mode) == 0o777 & ~umask()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_build_says_one_line_and_leaves_the_folder_as_it_was(tmp_path, signum):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    (gen / "notes.md").write_text("mine")
    before = state(gen)
    process = subprocess.Popen([sys.executable, str(ROOT / "build_figures.py"), "--out", str(gen)], env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    time.sleep(10)  # past the imports, into the computation
    process.send_signal(signum)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, err[-2000:]
    assert err == f"build_figures.py: interrupted; {gen} left as it was\n" and out == ""
    assert state(gen) == before and siblings(gen) == []


# --- foreign files, collisions, old stamps (in-process) ---------------------------------------


def test_foreign_files_are_carried_over_and_named(tmp_path, capsys):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A", "figures/x.html": "X"}, gen)
    mine = users_files(gen)
    kept = output.write_tree({"a.txt": "A2", "figures/x.html": "X2", "figures/y.html": "Y"}, gen)
    assert kept == ["MY-NOTES.md", "empty/", "figures/mine.html", "link", "mine/deep/data.csv"]
    assert {k: v for k, v in state(gen).items() if k in mine} == mine
    assert (gen / "a.txt").read_text() == "A2"
    assert sorted(output.read_manifest(gen) or {}) == ["a.txt", "figures/x.html", "figures/y.html"]
    from sitebuild.build import kept_note

    note = kept_note(kept, gen)
    assert "kept 5 file(s)" in note and "'MY-NOTES.md'" in note and "and 2 more" in note


@pytest.mark.parametrize(("theirs", "ours"), [
    ("b.txt", {"a.txt": "A", "b.txt": "B"}),  # the same path
    ("sub", {"a.txt": "A", "sub/b.txt": "B"}),  # a file where a folder is needed
    ("c/d.txt", {"a.txt": "A", "c": "C"}),  # inside what will be a file
])  # fmt: skip
def test_a_foreign_file_in_the_way_is_refused_and_nothing_changes(tmp_path, theirs, ours):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    (gen / theirs).parent.mkdir(parents=True, exist_ok=True)
    (gen / theirs).write_text("mine")
    own(gen / theirs)
    before = state(gen)
    with pytest.raises(SpecModelError, match="refusing") as error:
        output.write_tree(ours, gen)
    assert repr(theirs) in str(error.value)
    assert state(gen) == before and siblings(gen) == []


def test_a_generated_file_the_user_edited_is_theirs(tmp_path):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A", "b.txt": "B"}, gen)
    (gen / "a.txt").write_text("A, edited")
    (gen / "b.txt").write_text("B, edited")
    before = state(gen)
    with pytest.raises(SpecModelError, match="'a.txt'"):  # the new build writes it: refused
        output.write_tree({"a.txt": "A2"}, gen)
    assert state(gen) == before
    os.remove(gen / "a.txt")
    assert output.write_tree({"a.txt": "A2"}, gen) == ["b.txt"]  # not written any more: kept
    assert (gen / "b.txt").read_text() == "B, edited"


def test_the_build_refuses_a_file_in_the_way_before_computing(tmp_path, monkeypatch, capsys):
    from sitebuild import build as site_build

    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    (gen / "numbers.json").write_text("my numbers")
    before = state(gen)
    monkeypatch.setattr(site_build, "outputs", lambda *a, **k: pytest.fail("computed before checking"))
    assert site_build.main(["--out", str(gen)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'numbers.json'" in err and state(gen) == before


def test_a_stamp_without_a_list_replaces_only_its_paths_older_than_itself(tmp_path):
    gen = tmp_path / "gen"
    gen.mkdir()
    (gen / "a.txt").write_text("old A")
    (gen / STAMP).write_text("Written by build_figures.py; the next build may replace this folder.\n")
    (gen / "notes.md").write_text("mine")
    assert output.write_tree({"a.txt": "A"}, gen) == ["notes.md"]
    assert (gen / "a.txt").read_text() == "A" and (gen / "notes.md").read_text() == "mine"
    (gen / STAMP).write_text("Written by build_figures.py; the next build may replace this folder.\n")
    os.utime(gen / STAMP, (1_000_000_000, 1_000_000_000))  # a.txt is now newer than the stamp: edited
    with pytest.raises(SpecModelError, match="'a.txt'"):
        output.write_tree({"a.txt": "A"}, gen)


# --- the swap, and what a killed build leaves -------------------------------------------------


def test_an_interrupt_at_the_exchange_leaves_the_old_folder(tmp_path, monkeypatch):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    (gen / "notes.md").write_text("mine")
    before = state(gen)

    def interrupted(a, b):
        raise KeyboardInterrupt

    monkeypatch.setattr(output, "_exchange", interrupted)
    with pytest.raises(output.Interrupted) as error:
        output.write_tree({"a.txt": "A2"}, gen)
    assert not error.value.written and state(gen) == before and siblings(gen) == []


def test_an_interrupt_between_two_renames_puts_the_old_folder_back(tmp_path, monkeypatch):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    before = state(gen)
    rename, calls = os.rename, []

    def unavailable(a, b):
        raise OSError(errno.ENOSYS, "no exchange")

    def second_interrupted(a, b):
        calls.append((a, b))
        if len(calls) == 2:
            raise KeyboardInterrupt
        rename(a, b)

    monkeypatch.setattr(output, "_exchange", unavailable)
    monkeypatch.setattr(output.os, "rename", second_interrupted)
    with pytest.raises(output.Interrupted):
        output.write_tree({"a.txt": "A2"}, gen)
    assert state(gen) == before and siblings(gen) == []


def test_a_signal_at_the_swap_leaves_one_whole_folder_and_says_which(tmp_path, monkeypatch):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    exchange = output._exchange

    def signalled(a, b):
        os.kill(os.getpid(), signal.SIGINT)
        exchange(a, b)

    monkeypatch.setattr(output, "_exchange", signalled)
    with pytest.raises(output.Interrupted) as error:
        output.write_tree({"a.txt": "A2"}, gen)
    assert (gen / "a.txt").read_text() == ("A2" if error.value.written else "A")
    assert output.read_manifest(gen) is not None and siblings(gen) == []


def test_folders_left_by_a_killed_build_are_named_and_nothing_is_removed(tmp_path):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    (gen / "notes.md").write_text("mine")
    stamped = [tmp_path / ".gen-0a1b2c3d", tmp_path / ".gen-new-1c2d3e4f", tmp_path / ".gen-half0000"]
    for folder in stamped:
        folder.mkdir()
        (folder / STAMP).write_text(output.stamp_text({"a.txt": "A"}))
        (folder / "a.txt").write_text("A")
    (stamped[2] / STAMP).write_text(output.stamp_text(None))  # still being written when killed
    (tmp_path / ".gen-empty000").mkdir()  # no stamp: not a build's
    (tmp_path / ".other-0a1b2c3d").mkdir()  # another folder's
    (tmp_path / ".other-0a1b2c3d" / STAMP).write_text(output.stamp_text({}))
    (tmp_path / ".gen-link0000").symlink_to(stamped[0])  # a link is never a build's folder
    before = {p.name: state(p) for p in tmp_path.iterdir() if p.name != "gen"}
    note = output.leftover_note(gen) or ""
    assert "3 folder(s)" in note and all(repr(p.name) in note for p in stamped) and "nothing was removed" in note
    output.write_tree({"a.txt": "A2"}, gen)
    assert {p.name: state(p) for p in tmp_path.iterdir() if p.name != "gen"} == before
    assert (gen / "notes.md").read_text() == "mine"


def test_a_destination_a_killed_build_moved_aside_is_named_whole(tmp_path):
    gen = tmp_path / "gen"
    output.write_tree({"a.txt": "A"}, gen)
    (gen / "notes.md").write_text("mine")
    before = state(gen)
    aside = output.private_sibling(gen)
    os.rename(gen, aside)  # killed between the two renames of the fallback
    assert repr(aside.name) in (output.leftover_note(gen) or "")
    assert state(aside) == before and not gen.exists()


# --- modes and owners -------------------------------------------------------------------------


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_generated_folders_and_files_take_the_umask(tmp_path, mask):
    previous = os.umask(mask)
    try:
        output.write_tree({"a.txt": "A", "sub/deep/b.bin": b"B"}, tmp_path / "gen")
    finally:
        os.umask(previous)
    for path in (tmp_path / "gen", tmp_path / "gen" / "sub", tmp_path / "gen" / "sub" / "deep"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o777 & ~mask
    for path in (tmp_path / "gen" / "a.txt", tmp_path / "gen" / "sub" / "deep" / "b.bin", tmp_path / "gen" / STAMP):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


def test_an_empty_folder_of_the_users_keeps_its_mode_and_owner(tmp_path):
    gen = tmp_path / "gen"
    gen.mkdir()
    os.chmod(gen, 0o751)
    own(gen)
    info = gen.stat()
    output.write_tree({"a.txt": "A"}, gen)
    after = gen.stat()
    assert (stat.S_IMODE(after.st_mode), after.st_uid, after.st_gid) == (0o751, info.st_uid, info.st_gid)
    assert (gen / "a.txt").read_text() == "A" and siblings(gen) == []


def test_writing_shows_progress_only_on_a_terminal(tmp_path, monkeypatch, capsys):
    output.write_tree({f"f{i}.txt": "x" for i in range(5)}, tmp_path / "quiet")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("specmodel.progress.shows_progress", lambda: True)
    output.write_tree({f"f{i}.txt": "x" for i in range(5)}, tmp_path / "shown")
    assert "writing" in capsys.readouterr().err


# --- stdout that cannot be written ------------------------------------------------------------

SMALL_BUILD = (
    "import sys; from sitebuild import build; "
    "build.outputs = lambda *a, **k: {f'f{i:03}.txt': 'x' for i in range(20)}; "
    "sys.exit(build.main(['--out', sys.argv[1]]))"
)


def limit_file_size(limit: int):
    """A ``preexec_fn`` setting ``ulimit -f`` (in bytes) in the child."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def command(kind: str, tmp_path: Path) -> list[str]:
    return {
        "point": [sys.executable, "-m", "specmodel", "point", "--json"],
        "calibrate": [sys.executable, "-m", "specmodel", "calibrate"],
        "build": [sys.executable, "-c", SMALL_BUILD, str(tmp_path / "gen")],
    }[kind]


@pytest.mark.parametrize("kind", ["point", "calibrate", "build"])
def test_a_closed_pipe_ends_quietly(tmp_path, kind):
    process = subprocess.Popen(command(kind, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                               cwd=ROOT)  # fmt: skip
    process.stdout.close()  # the reader has gone before anything is written
    with process.stderr:
        err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141 and err == ""


@pytest.mark.parametrize("kind", ["point", "calibrate", "build"])
def test_a_full_disk_is_one_line(tmp_path, kind):
    with open("/dev/full", "w") as full:
        result = subprocess.run(command(kind, tmp_path), stdout=full, stderr=subprocess.PIPE, text=True, env=ENV,
                                cwd=ROOT, timeout=120)  # fmt: skip
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "cannot write the output: No space left on device" in result.stderr


@pytest.mark.parametrize("kind", ["point", "build"])
def test_past_the_file_size_limit_is_one_line_and_no_truncated_file(tmp_path, kind):
    target, earlier = tmp_path / "out.json", "earlier\n" * 1000  # the output crosses the limit
    with open(target, "a") as out:
        out.write(earlier)
        out.flush()
        result = subprocess.run(command(kind, tmp_path), stdout=out, stderr=subprocess.PIPE, text=True, env=ENV,
                                cwd=ROOT, preexec_fn=limit_file_size(len(earlier) + 100), timeout=120)  # fmt: skip
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "File too large" in result.stderr and target.read_text() == earlier  # cut back, not truncated
