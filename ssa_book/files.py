"""Writing the book's files so that no reader sees half of one, and cleaning up after a writer that was stopped.

A file (a cache entry, a dataset's file) is written to a temporary sibling, then renamed over its
name (``os.replace``, atomic within a folder): a reader finds the old file or the new one, and an
interrupted write leaves only the temporary. The temporary is created as ``open()`` would create
the file, with the permissions the umask leaves (``tempfile.mkstemp`` would make it 0600, and
the rename would keep that), so a shared cache stays readable by its group.

Whose temporary is it? Its name says: ``.NAME~HOST~PID~RANDOM.SUFFIX``. A later run removes a
temporary only when its writer is certainly gone (:func:`is_abandoned`):

* orphaned: written on this host by a process that no longer exists (a recycled process id
  looks alive, and only keeps the file until it is old); or
* old: untouched for :data:`ABANDONED_AFTER_S` (an hour). A writer at work touches its file
  far more often: an entry is written in milliseconds, a download writes a chunk every few
  seconds, and gives up after two minutes without one.

A temporary of another host (a shared folder) is judged by its age alone, as is one named the old
way (``tempfile.mkstemp``'s ``.NAME.RANDOM.SUFFIX``), whose writer is unknown.
"""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
import time
from pathlib import Path
from typing import BinaryIO, Callable

ABANDONED_AFTER_S = 3600
TEMPORARY_SUFFIX = ".tmp"  # the suffix of a temporary unless the writer names another (a download's: .part)
_SEPARATOR = "~"  # not in a host name, so the host and the process id can be read back from the right


def _host() -> str:
    return socket.gethostname().replace(_SEPARATOR, "-") or "unknown"


def temporary_sibling(path: Path, suffix: str) -> Path:
    """A fresh name beside ``path`` for writing it: ``.NAME~HOST~PID~RANDOM{suffix}``."""
    return path.with_name(_SEPARATOR.join((f".{path.name}", _host(), str(os.getpid()), secrets.token_hex(4))) + suffix)


def create_temporary(path: Path, suffix: str) -> tuple[int, Path]:
    """Create a :func:`temporary_sibling` of ``path`` (and ``path``'s folder); its file
    descriptor, open for writing, and its path. Permissions: ``0666`` less the umask, as ``open()``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temporary = temporary_sibling(path, suffix)
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:  # 32 random bits met another writer's: draw again
            continue


def write_atomically(
    path: Path, content: str | bytes | Callable[[BinaryIO], object], *, suffix: str = TEMPORARY_SUFFIX
) -> None:
    """Write ``content`` (text as UTF-8, bytes, or what a function writes to the open binary file:
    a checkpoint's ``torch.save``) to ``path`` through a temporary sibling renamed over it."""
    handle, temporary = create_temporary(path, suffix)
    try:
        with os.fdopen(handle, "wb") as stream:
            if callable(content):
                content(stream)
            else:
                stream.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except (OverflowError, ValueError):
        return False
    return True


def _writer(temporary: Path) -> tuple[str, int] | None:
    """(host, process id) from a :func:`temporary_sibling`'s name; ``None`` for another name."""
    parts = temporary.name.rsplit(_SEPARATOR, 3)
    if len(parts) != 4 or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2])


def is_abandoned(temporary: Path, now: float | None = None) -> bool:
    """Whether no writer can still be writing ``temporary`` (the module's doc says how this is decided)."""
    try:
        touched = temporary.stat().st_mtime
    except FileNotFoundError:
        return False  # its writer renamed it, or another run removed it
    if (time.time() if now is None else now) - touched > ABANDONED_AFTER_S:
        return True
    writer = _writer(temporary)
    return writer is not None and writer[0] == _host() and not _process_exists(writer[1])


def remove_abandoned_temporaries(
    folder: Path, suffix: str, *, recursive: bool = False, log: Callable[[str], None] | None = None
) -> list[Path]:
    """Remove the abandoned temporaries (hidden files ending in ``suffix``, :func:`is_abandoned`)
    in ``folder`` (and, ``recursive``, under it); those removed, each named to ``log``."""
    if not folder.is_dir():
        return []
    removed = []
    for temporary in sorted((folder.rglob if recursive else folder.glob)(f".*{suffix}")):
        if temporary.is_file() and is_abandoned(temporary):
            temporary.unlink(missing_ok=True)
            removed.append(temporary)
            if log is not None:
                log(f"removed {temporary}: a temporary file left by an interrupted write")
    return removed


def folder_problem(folder: Path, *, new_parents: bool = False) -> str | None:
    """Why files cannot be written in ``folder``, or ``None`` when they can. A missing folder is
    fine when the folder it would be created in can be written: its parent, or with
    ``new_parents`` (a command that creates the folders above it too) the nearest folder above it
    that exists. Without ``new_parents`` a missing parent is refused: for a folder such as the
    result cache that is more often a mistyped path than a new folder."""
    folder = Path(folder).expanduser()
    if folder.exists():
        if not folder.is_dir():
            return f"{folder} is not a folder"
        return None if _can_write_in(folder) else f"{folder} is not writable"
    above = folder.absolute().parent
    while new_parents and not above.exists() and above != above.parent:
        above = above.parent
    if not above.exists():
        return f"{folder} does not exist, nor does its parent folder {above}"
    if not above.is_dir():
        return f"{folder} cannot be created: {above} is not a folder"
    if not _can_write_in(above):
        return f"{folder} does not exist and cannot be created: {above} is not writable"
    return None


def _can_write_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder``: the permissions say so (``os.access``), and
    so does a nameless file created there and dropped at once, for what permissions do not tell
    (a read-only mount, a system folder such as /proc, where even root cannot write)."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False
