"""Writing the generated folder without ever destroying a file the build did not write.

A private folder beside the destination (:func:`tempfile.mkdtemp`: mode 0700, a name no one can
guess, nothing anyone else can plant in it) is filled, given the destination's mode and owner
(or the umask's mode), then exchanged with the destination in one step. Its stamp
(:data:`STAMP`) lists the files written with their SHA-256: the only files the next build
replaces. Every other entry is carried over unchanged; one in the way of a file the build
writes, or one the build cannot read, is refused before anything moves. The previous folder is
then emptied of what the build found in it (its own files, and the user's, carried over),
through folder descriptors that never follow a symbolic link; anything else stays, and is named.

A build holds a lock on the destination (``flock``), never waited on: another process's lock
is refused at once. A build killed outright may leave its private folder: the next build names
it (recognised by the stamp it holds) and removes nothing it did not create.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from specmodel.errors import SpecModelError
from specmodel.output_path import NAME_ROOM, TEMPORARY_EXTRA, check_output, shown
from specmodel.progress import progress
from specmodel.safe_input import excerpt

#: The file a build leaves in the folder it writes: the list of the files it wrote.
STAMP = ".specmodel-build"
STAMP_NOTE = (
    "Written by build_figures.py; the next build replaces the files listed here if unchanged, keeps all others."
)
_PENDING = "incomplete"  # the stamp's ``files`` while a build is still writing its folder
#: Most bytes of a stamp read (a real one is tens of KiB).
MAX_STAMP_BYTES = 1 << 24

#: What ``build_figures.py --out`` takes, as its refusals say it.
FOLDER_TAKES = "a folder to write into"

#: The signals a build turns into :class:`Interrupted`.
HELD = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during a build; ``written``: whether the new folder was already in place."""

    def __init__(self, signum: int = signal.SIGINT, written: bool = False) -> None:
        super().__init__(signum)
        self.signum, self.written = signum, written


def private_sibling(destination: Path) -> Path:
    """A new empty folder beside ``destination``, private (mode 0700) with a name no one can
    guess (:func:`tempfile.mkdtemp`), starting as the folder's name (cut to :data:`NAME_ROOM`)."""
    return Path(tempfile.mkdtemp(prefix=f".{destination.name[:NAME_ROOM]}-", dir=destination.parent))


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
    undone if the second fails (a build killed between them leaves the previous folder beside
    the destination, named by the next build)."""
    if not os.path.lexists(destination):
        os.rename(staging, destination)
        return None
    try:
        _exchange(staging, destination)
        return staging
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise
    aside = private_sibling(destination)
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


def _regular(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a symbolic link, FIFO or device)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _stamp(folder: Path) -> dict[str, Any] | None:
    """``folder``'s stamp as JSON (None if it has none, or another file by that name)."""
    if not _regular(folder / STAMP):
        return None
    try:
        with open(folder / STAMP, "rb") as handle:
            data = json.loads(handle.read(MAX_STAMP_BYTES))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_manifest(folder: Path) -> dict[str, str] | None:
    """Path -> SHA-256 of the files an earlier build wrote in ``folder``; None for an older stamp."""
    files = (_stamp(folder) or {}).get("files")
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


def unreadable(folder: Path) -> list[str]:
    """What under ``folder`` this process cannot read (``.`` for the folder itself): a folder it
    cannot list, a regular file it cannot open; symbolic links are not followed."""
    if not os.access(folder, os.R_OK | os.X_OK):
        return ["."]
    found: list[str] = []
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(top, name)
            mode = os.lstat(path).st_mode
            need = os.R_OK | os.X_OK if stat.S_ISDIR(mode) else os.R_OK if stat.S_ISREG(mode) else 0
            if need and not os.access(path, need):
                found.append(Path(path).relative_to(folder).as_posix())
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
    born = os.lstat(folder / STAMP).st_mtime if listed is None else 0.0
    for entry in entries(folder):
        ours = listed.get(entry, "") == _digest(folder / entry) if listed is not None else entry in planned and (
            os.lstat(folder / entry).st_mtime <= born)  # fmt: skip
        if entry != STAMP and not ours:
            (clashes if collides(entry, planned) else foreign).append(entry)
    return foreign, clashes


def _digest(path: Path) -> str | None:
    """SHA-256 of a regular file's content (None for anything else)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if _regular(path) else None


def named(paths: list[str], limit: int = 3) -> str:
    """The first ``limit`` of ``paths``, and how many more."""
    shown_ = ", ".join(excerpt(p, 80) for p in paths[:limit])
    return shown_ + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def check_destination(
    destination: Path, written: Iterable[str] = (), inputs: Iterable[tuple[str, Any]] = ()
) -> list[str]:
    """Raise unless ``destination`` may be written (:func:`specmodel.output_path.check_output`,
    the folders above it made if missing; ``inputs``: the build's input files): absent, empty,
    or stamped with nothing of the user's in the way of the files ``written`` and nothing it
    cannot read; returns the user's files there (to keep)."""
    written = set(written)
    where = f"--out {shown(destination)}"
    inside = 11 + max((len(os.fsencode(p)) for p in written), default=TEMPORARY_EXTRA)  # the private folder's name
    check_output(destination, "--out", FOLDER_TAKES, folder=True, inputs=inputs, inside=inside, parents=True)
    if not os.path.lexists(destination):
        return []
    blocked = unreadable(destination)
    if blocked:
        raise SpecModelError(f"{where}: cannot read {named(blocked)} in it; refusing to replace the folder without "
                             "it (make it readable, or move it away)")  # fmt: skip
    if not _regular(destination / STAMP):
        if any(destination.iterdir()):
            raise SpecModelError(f"{where} holds files that build_figures.py did not write; refusing to replace them "
                                 "(give a new or empty folder, or one an earlier build wrote)")  # fmt: skip
        return []
    foreign, clashes = survey(destination, written)
    if clashes:
        raise SpecModelError(f"{where}: {len(clashes)} file(s) that build_figures.py did not write are where it "
                             f"writes: {named(clashes)}; refusing to replace them (move them away)")  # fmt: skip
    return foreign


@contextlib.contextmanager
def claimed(destination: Path) -> Iterator[None]:
    """Hold a lock (``flock``) on the folder ``destination`` while a build computes and writes
    it; a lock another process holds is refused at once, never waited on. A folder not yet made
    is not locked (of two builds making it, the second's rename fails, nothing is lost)."""
    try:
        fd = os.open(destination, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:  # absent, or refused by the checks that follow
        fd = -1
    try:
        if fd >= 0 and not _locked(fd):
            raise SpecModelError(
                f"--out {shown(destination)} is locked by another process (another build writing it?); "
                "not waiting: run again once it has finished"
            )
        yield
    finally:
        if fd >= 0:
            os.close(fd)


def _locked(fd: int) -> bool:
    """Take an exclusive ``flock`` on ``fd`` without waiting; False if another process holds one."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def leftovers(destination: Path) -> list[str]:
    """The folders beside ``destination`` that a killed build of it left: real folders (not
    symbolic links) named as its private folders start, holding a build's stamp."""
    destination = Path(os.path.abspath(destination))
    prefix = f".{destination.name[:NAME_ROOM]}-"
    try:
        with os.scandir(destination.parent) as found:
            near = [Path(e.path) for e in found if e.name.startswith(prefix) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(p.name for p in near if (_stamp(p) or {}).get("note") == STAMP_NOTE)


def leftover_note(destination: Path) -> str | None:
    """The line naming the folders a killed build left beside ``destination`` (none removed)."""
    found = leftovers(destination)
    if not found:
        return None
    return (f"note: {len(found)} folder(s) beside {destination} hold a build's stamp, left by a build that was "
            f"stopped: {named(found)}; nothing was removed: check them, then remove them")  # fmt: skip


def remove_listed(folder: Path, listed: Iterable[str]) -> list[str]:
    """Remove from ``folder`` the entries ``listed`` (relative paths, an empty folder as ``x/``),
    the folders they sit in once empty, the stamp last and ``folder`` itself once empty: through
    folder descriptors, never following a symbolic link. Returns what stays besides the stamp
    (sorted; the stamp stays with it)."""
    listed = set(listed)
    folders = _parents(listed) | {e.rstrip("/") for e in listed if e.endswith("/")}
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        stays = _remove_in(fd, "", listed - {STAMP}, folders)
        if stays == [STAMP]:
            os.unlink(STAMP, dir_fd=fd)
            stays = []
    finally:
        os.close(fd)
    if not stays:
        os.rmdir(folder)
    return sorted(set(stays) - {STAMP})


def _remove_in(fd: int, prefix: str, files: set[str], folders: set[str]) -> list[str]:
    """:func:`remove_listed` in the folder open as ``fd`` (at ``prefix``); returns what stays."""
    with os.scandir(fd) as found:
        items = [(item.name, item.is_dir(follow_symlinks=False)) for item in found]
    stays: list[str] = []
    for name, is_folder in items:
        rel = prefix + name
        if is_folder and rel in folders:
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            try:
                inner = _remove_in(sub, rel + "/", files, folders)
            finally:
                os.close(sub)
            stays += inner
            if not inner:
                os.rmdir(name, dir_fd=fd)
        elif rel in files and not is_folder:
            os.unlink(name, dir_fd=fd)
        else:
            stays.append(rel + ("/" if is_folder else ""))
    return stays


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
    """Write ``files`` and the user's ``kept`` entries of ``destination``; the stamp first (marking
    the folder ours while it fills), completed last; then give ``staging`` the mode and owner of
    ``destination``, or the umask's mode for a new folder (while it fills it is private)."""
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
    if os.path.isdir(destination):
        os.chmod(staging, stat.S_IMODE(destination.stat().st_mode))
        _same_owner(destination, staging)
    else:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(staging, 0o777 & ~mask)


def _same_folder(path: Path, made: os.stat_result) -> bool:
    """Whether ``path`` is the folder ``made`` describes (the same device and inode)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == (made.st_dev, made.st_ino)


def write_tree(files: dict[str, str | bytes], destination: Path) -> list[str]:
    """Write ``files`` (and the stamp) into a private folder beside ``destination`` and swap it
    in, keeping the user's files found there; returns those. What the previous folder held when
    checked is then removed from it (:func:`remove_listed`), and the folder too if empty."""
    files = {rel: content for rel, content in files.items() if rel != STAMP}
    destination = Path(os.path.abspath(destination))  # `--out .` has a parent to write beside
    kept = check_destination(destination, files)
    present = entries(destination) if os.path.isdir(destination) else []
    destination.parent.mkdir(parents=True, exist_ok=True)  # the folders above it, checked to be makeable
    staging = private_sibling(destination)
    made = os.lstat(staging)
    old: Path | None = None
    try:
        populate(staging, files, destination, kept)
        old = swap(staging, destination)
    except KeyboardInterrupt as exc:
        raise Interrupted(getattr(exc, "signum", signal.SIGINT), _same_folder(destination, made)) from None
    finally:
        if not _same_folder(destination, made):  # never put in place: the private folder is this build's alone
            if _same_folder(staging, made):
                shutil.rmtree(staging, ignore_errors=True)
        elif (old := old or (staging if os.path.lexists(staging) else None)) is not None:
            _remove_previous(old, present)
    return kept


def _remove_previous(old: Path, present: list[str]) -> None:
    """Remove from the previous folder, now at ``old``, the entries ``present`` when it was
    checked; anything else stays there, named on stderr."""
    try:
        stays = remove_listed(old, present)
    except OSError as exc:
        stays = [f"({exc.strerror or exc})"]
    if stays:
        print(f"build_figures.py: note: the previous folder stays as {old}: it holds {named(stays)}, which the "
              "build did not find there when it began writing", file=sys.stderr)  # fmt: skip


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


__all__ = ["STAMP", "Interrupted", "check_destination", "claimed", "leftover_note", "named", "run_build", "write_tree"]
