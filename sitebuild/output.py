"""Writing the generated folder without ever destroying a file the build did not write: a
hidden folder beside the destination (``.NAME-new-*``) is filled, then exchanged with the
destination in one step. Its stamp (:data:`STAMP`) lists the files written, the only ones the
next build replaces; any other file is carried over unchanged, or refused if in the way. A build
killed at any moment leaves the previous folder; the next build tidies what it left beside it.
Two builds of one folder at the same time are not supported: one may fail, neither loses a file.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from specmodel.errors import SpecModelError
from specmodel.progress import progress
from specmodel.safe_input import excerpt

#: The file a build leaves in the folder it writes: the list of the files it wrote.
STAMP = ".specmodel-build"
STAMP_NOTE = (
    "Written by build_figures.py; the next build replaces the files listed here if unchanged, keeps all others."
)
_PENDING = "incomplete"  # the stamp's ``files`` while a build is still writing its folder


#: The signals a build turns into :class:`Interrupted`.
HELD = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during a build; ``written``: whether the new folder was already in place."""

    def __init__(self, signum: int = signal.SIGINT, written: bool = False) -> None:
        super().__init__(signum)
        self.signum, self.written = signum, written


def fresh_sibling(destination: Path, kind: str) -> Path:
    """A new empty hidden folder beside ``destination``, of the mode ``mkdir`` gives (umask)."""
    while True:
        path = destination.parent / f".{destination.name}-{kind}-{secrets.token_hex(4)}"
        with contextlib.suppress(FileExistsError):
            path.mkdir()
            return path


def _exchange(a: Path, b: Path) -> None:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); OSError if unavailable."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError) as exc:
        raise OSError(errno.ENOSYS, "renameat2 is not available") from exc
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def swap(staging: Path, destination: Path) -> Path | None:
    """Put ``staging`` in place of ``destination``; returns where the previous destination now
    is, or None. One atomic exchange where the system has one; otherwise two renames, the first
    undone if the second fails (and put back by the next build's :func:`tidy` if killed between)."""
    if not destination.exists():
        os.rename(staging, destination)
        return None
    try:
        _exchange(staging, destination)
        return staging
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise
    aside = fresh_sibling(destination, "old")
    os.rename(destination, aside)  # replaces the empty folder just made
    try:
        os.rename(staging, destination)
    except BaseException:
        os.rename(aside, destination)
        raise
    return aside


def stamp_text(files: dict[str, str | bytes] | None) -> str:
    """The stamp's content: a note and each file the build wrote with the SHA-256 of its content
    (sorted: deterministic)."""
    sums = {
        rel: hashlib.sha256(c if isinstance(c, bytes) else c.encode()).hexdigest() for rel, c in (files or {}).items()
    }
    listed = sums if files is not None else _PENDING
    return json.dumps({"note": STAMP_NOTE, "files": listed}, indent=1, sort_keys=True) + "\n"


def _stamp_files(folder: Path) -> object:
    """The ``files`` of ``folder``'s stamp (a list, or :data:`_PENDING`); None if it has none."""
    try:
        data = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("files") if isinstance(data, dict) else None


def read_manifest(folder: Path) -> dict[str, str] | None:
    """Path -> SHA-256 of the files an earlier build wrote in ``folder``; None for an older stamp."""
    files = _stamp_files(folder)
    return files if isinstance(files, dict) and all(isinstance(v, str) for v in files.values()) else None


def entries(folder: Path) -> list[str]:
    """Every file under ``folder`` (symbolic links and special files included, not followed)
    as a relative POSIX path, and every empty folder with a trailing ``/``; sorted."""
    found: list[str] = []
    for top, dirs, files in os.walk(folder):
        rel = Path(top).relative_to(folder)
        links = [d for d in dirs if os.path.islink(os.path.join(top, d))]
        dirs[:] = sorted(d for d in dirs if d not in links)
        names = files + links
        found += [(rel / name).as_posix() for name in names]
        if not names and not dirs and rel != Path("."):
            found.append(rel.as_posix() + "/")
    return sorted(found)


def _parents(paths: Iterable[str]) -> set[str]:
    """Every folder (relative) the files ``paths`` sit in."""
    return {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}


def collides(entry: str, written: frozenset[str] | set[str]) -> bool:
    """Whether the existing ``entry`` is in the way of the files ``written``: the same path, a
    file where a folder is needed, or something inside what will be a file."""
    path, folders = entry.rstrip("/"), _parents(written)
    return path in written or (not entry.endswith("/") and path in folders) or bool(_parents([path]) & written)


def survey(folder: Path, written: Iterable[str]) -> tuple[list[str], list[str]]:
    """``folder``'s entries an earlier build did not write (or that changed since), split into those
    kept and those in the way of ``written``. An older stamp, without a list, counts as ours only
    the files at paths this build writes that are not newer than the stamp."""
    planned = set(written)
    listed = read_manifest(folder)
    foreign, clashes = list[str](), list[str]()
    born = (folder / STAMP).stat().st_mtime if listed is None else 0.0
    for entry in entries(folder):
        ours = listed.get(entry, "") == _digest(folder / entry) if listed is not None else entry in planned and (
            os.lstat(folder / entry).st_mtime <= born)  # fmt: skip
        if entry != STAMP and not ours:
            (clashes if collides(entry, planned) else foreign).append(entry)
    return foreign, clashes


def _digest(path: Path) -> str | None:
    """SHA-256 of a regular file's content (None for anything else)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else None


def named(paths: list[str], limit: int = 3) -> str:
    """The first ``limit`` of ``paths``, and how many more."""
    shown = ", ".join(excerpt(p, 80) for p in paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def check_destination(destination: Path, written: Iterable[str] = ()) -> list[str]:
    """Raise unless ``destination`` may be written: absent, empty, or stamped with nothing of the
    user's in the way of the files ``written``; returns the user's files there (to keep)."""
    where = f"--out {excerpt(str(destination), 200)}"
    if destination.is_symlink() or (destination.exists() and not destination.is_dir()):
        raise SpecModelError(f"{where} is a file, not a folder; refusing to replace it (give a folder to write into)")
    if destination.parent.exists() and not destination.parent.is_dir():
        raise SpecModelError(f"{where}: {excerpt(str(destination.parent), 200)} is not a folder")
    if not destination.is_dir():
        return []
    if not (destination / STAMP).is_file():
        if any(destination.iterdir()):
            raise SpecModelError(f"{where} holds files that build_figures.py did not write; refusing to replace them "
                                 "(give a new or empty folder, or one an earlier build wrote)")  # fmt: skip
        return []
    foreign, clashes = survey(destination, written)
    if clashes:
        raise SpecModelError(f"{where}: {len(clashes)} file(s) that build_figures.py did not write are where it "
                             f"writes: {named(clashes)}; refusing to replace them (move them away)")  # fmt: skip
    return foreign


def _stale(destination: Path) -> list[Path]:
    """Hidden siblings of ``destination`` that a build of it left (``.NAME-new-*``, ``.NAME-old-*``)."""
    pattern = re.compile(rf"\.{re.escape(destination.name)}-(new|old)-[a-z0-9_]{{8}}")
    try:
        return sorted(p for p in destination.parent.iterdir() if pattern.fullmatch(p.name) and p.is_dir())
    except OSError:
        return []


def _disposable(folder: Path, destination: Path) -> bool:
    """Whether a stale sibling may go: empty, still being written (never swapped in), or stamped
    with every file of the user's in it also in ``destination`` (carried over there)."""
    if not any(folder.iterdir()) or _stamp_files(folder) == _PENDING:
        return True
    if not (folder / STAMP).is_file() or not destination.is_dir():
        return False
    listed = read_manifest(folder) or {}
    return all((destination / e).exists() for e in entries(folder) if e != STAMP and e not in listed)


def tidy(destination: Path) -> list[str]:
    """Recover ``destination`` from the folder a killed build moved it to, and remove the
    folders such builds left beside it; returns what it did, one line each."""
    destination, done = Path(os.path.abspath(destination)), list[str]()
    if not destination.parent.is_dir():
        return done
    olds = [p for p in _stale(destination) if "-old-" in p.name and (p / STAMP).is_file()]
    if not destination.exists() and not destination.is_symlink() and olds:
        newest = max(olds, key=lambda p: p.stat().st_mtime)
        newest.rename(destination)
        done.append(f"restored {destination} from {newest.name}, left by an interrupted build")
    for folder in _stale(destination):
        if _disposable(folder, destination):
            remove(folder)
            done.append(f"removed {folder.name}, left by an interrupted build")
    return done


def remove(folder: Path) -> None:
    """Remove a build folder, its stamp last (so that a kill midway leaves it recognisable)."""
    for child in list(folder.iterdir()):
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        elif child.name != STAMP:
            child.unlink()
    (folder / STAMP).unlink(missing_ok=True)
    folder.rmdir()


def carry(source: Path, target: Path, entry: str) -> list[Path]:
    """Put the user's ``entry`` of ``source`` in ``target`` unchanged: a hard link, else a copy
    keeping mode, times and owner. Returns the folders it created, for :func:`copy_folder_stats`."""
    rel = Path(entry.rstrip("/"))
    folders = [*reversed(rel.parents)][1:] + ([rel] if entry.endswith("/") else [])
    created = [folder for folder in folders if not (target / folder).exists()]
    for folder in created:
        (target / folder).mkdir()
    if not entry.endswith("/"):
        try:
            os.link(source / rel, target / rel, follow_symlinks=False)
        except OSError:
            shutil.copy2(source / rel, target / rel, follow_symlinks=False)
            _same_owner(source / rel, target / rel)
    return created


def copy_folder_stats(source: Path, target: Path, folders: Iterable[Path]) -> None:
    """Give each of ``folders`` in ``target`` the mode, times and owner it has in ``source``,
    deepest first (so that setting one does not change its parent's times)."""
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        shutil.copystat(source / folder, target / folder)
        _same_owner(source / folder, target / folder)


def _same_owner(src: Path, dst: Path) -> None:
    """Give ``dst`` the owner and group of ``src`` where permitted."""
    info = src.lstat()
    with contextlib.suppress(OSError):
        os.chown(dst, info.st_uid, info.st_gid, follow_symlinks=False)


def populate(staging: Path, files: dict[str, str | bytes], destination: Path, kept: list[str]) -> None:
    """Write ``files`` and the user's ``kept`` entries of ``destination``, with its mode and owner;
    the stamp first (marking the folder ours while it fills), completed last."""
    (staging / STAMP).write_text(stamp_text(None), encoding="utf-8")
    for rel, content in progress(files.items(), "writing", total=len(files), unit="file"):
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (staging / rel).write_bytes(content)
        else:
            (staging / rel).write_text(content, encoding="utf-8")
    created = [folder for entry in kept for folder in carry(destination, staging, entry)]
    copy_folder_stats(destination, staging, created)
    (staging / STAMP).write_text(stamp_text(files), encoding="utf-8")
    if destination.is_dir():
        os.chmod(staging, stat.S_IMODE(destination.stat().st_mode))
        _same_owner(destination, staging)


def write_tree(files: dict[str, str | bytes], destination: Path) -> list[str]:
    """Write ``files`` (and the stamp) into a new sibling of ``destination`` and swap it in,
    keeping the user's files found there; returns those. The previous folder is removed."""
    files = {rel: content for rel, content in files.items() if rel != STAMP}
    kept = check_destination(destination, files)
    destination = Path(os.path.abspath(destination))  # `--out .` has a parent to write beside
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = fresh_sibling(destination, "new")
    written, old = False, None
    try:
        populate(staging, files, destination, kept)
        old = swap(staging, destination)
        written = True
    except KeyboardInterrupt as exc:
        raise Interrupted(getattr(exc, "signum", signal.SIGINT), written) from None
    finally:
        leftover = old if written else staging  # after an exchange, staging holds the old folder
        if leftover is not None and leftover.exists():
            remove(leftover)
    return kept


def _terminate(signum: int, frame: object) -> None:
    raise Interrupted(signum)


def run_build(prog: str, destination: Path, work: Callable[[], str], show: Callable[[str, str], int]) -> int:
    """Run ``work`` (which returns what to print) and ``show(text, prog)`` it; a user error is
    one line and status 2, a failed write 1, SIGINT 130 and SIGTERM 143, with one line on stderr.
    Both signals raise :class:`Interrupted`, which the CLI run in-process lets through."""
    previous = {held: signal.getsignal(held) for held in HELD}
    for held in (h for h in HELD if previous[h] in (signal.SIG_DFL, signal.default_int_handler)):
        signal.signal(held, _terminate)  # not where the caller ignores it (a background job)
    with contextlib.suppress(AttributeError, ValueError):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past `ulimit -f`: an error, not a kill
    text = None
    try:
        text = work()
        return show(text, prog)  # an interrupt while printing is one line too
    except SpecModelError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        written = text is not None or (isinstance(exc, Interrupted) and exc.written)
        state = "holds the new build" if written else "left as it was"
        print(f"{prog}: interrupted; {destination} {state}", file=sys.stderr)
        return 128 + (exc.signum if isinstance(exc, Interrupted) else signal.SIGINT)
    except OSError as exc:
        print(f"{prog}: error: cannot write {destination}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)


__all__ = ["STAMP", "Interrupted", "check_destination", "named", "run_build", "tidy", "write_tree"]
