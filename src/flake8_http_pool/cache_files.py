"""The cache folder on disk, trusted for nothing: used only as a real directory, never through a symbolic link,
every entry read bounded.

A cache folder can come with the code being checked (`git add -f` beats its `.gitignore`, and the
repository's own config may name any folder as `cache-dir`), so:

- the folder, and every folder made or walked in it, is opened one component at a time with O_NOFOLLOW and
  O_DIRECTORY under its parent's descriptor (made there with mkdir when missing): a symbolic link, a file or a
  FIFO in place of one refuses the folder (FolderRefused), never followed; a cache folder inside the project
  is walked so from the project root, one outside it from its parent folder (which the user or the config
  named);
- an entry is opened under its folder's descriptor, O_NOFOLLOW and non-blocking (a FIFO cannot hang the
  open), and read only when fstat shows a regular file within its kind's cap: anything else is a miss, left
  where it is;
- an entry is written to a new file made beside it (O_CREAT, O_EXCL, O_NOFOLLOW) and renamed over it, both
  under the folder's descriptor: a link in its place is replaced, never written through. Nothing takes a
  lock: two runs at once each write whole entries, and the last rename wins with the same content.

Where the platform lacks the *at calls or O_NOFOLLOW (writing.py's _AT_CALLS), the same checks run on paths,
each `lstat`ed before use: a committed link is still never followed, though a process changing the folder
while the run reads it could race the check.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Dict, Optional, Tuple, Union

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC | _NONBLOCK
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK | getattr(os, "O_BINARY", 0)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0)
_AT_CALLS = {os.open, os.stat, os.mkdir, os.rename, os.unlink} <= os.supports_dir_fd and bool(_NOFOLLOW)
# What open(O_NOFOLLOW) says of a symbolic link (FreeBSD: EMLINK, NetBSD: EFTYPE), and O_DIRECTORY of a file.
_NOT_FOLLOWED = frozenset(code for code in (errno.ELOOP, getattr(errno, "EMLINK", None),
                                            getattr(errno, "EFTYPE", None), errno.ENOTDIR) if code is not None)

TEMPORARY_PREFIX = ".tmp-"

# A folder as the calls below take it: its descriptor, or (without the *at calls) its path.
Place = Union[int, str]


class FolderRefused(OSError):
    """A folder of the cache that is not a real directory (a symbolic link, a file, a FIFO): the cache is not
    used. `reason` says which and what it is; `link`: whether it is a symbolic link."""

    def __init__(self, reason: str, link: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.link = link


def _refused(place: Place, name: str, shown: Optional[str]) -> FolderRefused:
    """Why `name` in `place` is not used; `shown`: how the note names it (None: the cache folder itself)."""
    info = _lstat(place, name)
    mode = info.st_mode if info is not None else 0
    what = "a symbolic link" if stat.S_ISLNK(mode) else "a file" if stat.S_ISREG(mode) else \
        "a FIFO" if stat.S_ISFIFO(mode) else "something else"
    return FolderRefused(f"{what}, not a real folder" if shown is None else f"{shown} is {what}, not a real folder",
                         stat.S_ISLNK(mode))


def _lstat(place: Place, name: str) -> Optional[os.stat_result]:
    try:
        if isinstance(place, int):
            return os.stat(name, dir_fd=place, follow_symlinks=False)
        return os.lstat(os.path.join(place, name))
    except OSError:
        return None


def _child(place: Place, name: str, create: bool, shown: Optional[str]) -> Place:
    """Folder `name` in `place`, made when missing and `create`; FolderRefused when it is anything but a real
    directory (`shown`: how a note names it, None for the cache folder itself)."""
    if not isinstance(place, int):
        path = os.path.join(place, name)
        info = _lstat(place, name)
        if info is None and create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(path)
            info = _lstat(place, name)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "no such folder", path)
        if not stat.S_ISDIR(info.st_mode):
            raise _refused(place, name, shown)
        return path
    for attempt in (0, 1):
        try:
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=place)
        except FileNotFoundError:
            if not create or attempt:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile by another run: the open tells
                os.mkdir(name, 0o777, dir_fd=place)
        except OSError as error:
            if error.errno in _NOT_FOLLOWED:
                raise _refused(place, name, shown) from None
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def _close(place: Place) -> None:
    if isinstance(place, int):
        os.close(place)


def _open_file(place: Place, name: str, flags: int, mode: int = 0o666) -> int:
    if isinstance(place, int):
        return os.open(name, flags, mode, dir_fd=place)
    path = os.path.join(place, name)
    info = _lstat(place, name)
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise OSError(errno.ELOOP, "a symbolic link", path)
    return os.open(path, flags, mode)


def read_bounded(fd: int, cap: int) -> Optional[bytes]:
    """The whole of a regular file open at `fd` when it holds at most `cap` bytes; None for anything else (a
    FIFO, a device, a folder, a bigger file)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
        return None
    chunks = []
    total = 0
    while True:
        chunk = os.read(fd, min(cap + 1 - total, 1 << 20))
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > cap:  # grown since the fstat
            return None
        chunks.append(chunk)


def _below(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # another drive
        return False


class CacheFolder:
    """One cache folder, reached without following a link: from `anchor` (opened as the user named it) through
    `parts`, the components walked with O_NOFOLLOW (the folder's own name, and the folders between it and the
    project root when it is inside the project). The folder's descriptor and those of its subfolders (the
    kinds of entry: `m`, `s`, ...) are kept open for the life of the object."""

    def __init__(self, folder: str, root: Optional[str] = None) -> None:
        self._places: Dict[Tuple[str, ...], Place] = {}
        folder = os.path.abspath(folder)
        self.folder = folder
        top = os.path.abspath(root) if root is not None else None
        if top is not None and folder != top and _below(folder, top):
            self.anchor = top
            self.parts: Tuple[str, ...] = tuple(os.path.relpath(folder, top).split(os.sep))
        else:
            self.anchor, name = os.path.split(folder)
            self.parts = (name,) if name else ()

    def close(self) -> None:
        """Close the descriptors kept."""
        places, self._places = self._places, {}
        for place in places.values():
            with contextlib.suppress(OSError):
                _close(place)

    def __del__(self) -> None:
        # At the interpreter's exit the module's globals may already be gone: a folder left open then is the
        # process's to close, and a complaint on stderr would be noise the user did not cause.
        try:
            self.close()
        except Exception:
            pass

    def _folder(self, create: bool) -> Place:
        place = self._places.get(())
        if place is not None:
            return place
        if create:
            os.makedirs(self.anchor, exist_ok=True)  # outside the walk: a folder the user or the config named
        place = os.open(self.anchor, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC) if _AT_CALLS \
            else self.anchor
        try:
            for depth, name in enumerate(self.parts, 1):
                shown = os.path.join(self.anchor, *self.parts[:depth]) if depth < len(self.parts) else None
                child = _child(place, name, create, shown)
                _close(place)
                place = child
        except BaseException:
            _close(place)
            raise
        self._places[()] = place
        return place

    def _directory(self, names: Tuple[str, ...], create: bool) -> Tuple[Place, bool]:
        """The folder holding an entry (`names`: the subfolders from the cache folder down), and whether the
        caller must close it (the cache folder and its direct subfolders are kept open)."""
        place = self._folder(create)
        if not names:
            return place, False
        kind = self._places.get(names[:1])
        if kind is None:
            kind = self._places[names[:1]] = _child(place, names[0], create, names[0])
        if len(names) == 1:
            return kind, False
        child = _child(kind, names[1], create, os.path.join(*names[:2]))
        try:
            for depth in range(2, len(names)):
                deeper = _child(child, names[depth], create, os.path.join(*names[:depth + 1]))
                _close(child)
                child = deeper
        except BaseException:
            _close(child)
            raise
        return child, True

    def make(self, names: Tuple[str, ...] = ()) -> None:
        """Make the folder (and the subfolder `names` in it) if missing; FolderRefused when one is not a real
        directory, OSError when it cannot be made."""
        place, owned = self._directory(names, create=True)
        if owned:
            _close(place)

    def exists(self, names: Tuple[str, ...]) -> bool:
        """Whether anything (a link included) is at `names` in the folder."""
        try:
            place, owned = self._directory(names[:-1], create=False)
        except OSError:
            return False
        try:
            return _lstat(place, names[-1]) is not None
        finally:
            if owned:
                _close(place)

    def read(self, names: Tuple[str, ...], cap: int) -> Optional[bytes]:
        """The entry at `names` when it is a regular file of at most `cap` bytes, reached without a link; None
        otherwise (missing, a link, a FIFO, a device, too big, a folder on the way that is not one)."""
        try:
            place, owned = self._directory(names[:-1], create=False)
        except OSError:
            return None
        try:
            fd = _open_file(place, names[-1], _READ_FLAGS)
        except OSError:
            return None
        finally:
            if owned:
                _close(place)
        try:
            return read_bounded(fd, cap)
        except OSError:
            return None
        finally:
            os.close(fd)

    def write(self, names: Tuple[str, ...], data: bytes) -> None:
        """Replace the entry at `names` with `data`, whole (a new file renamed over it); OSError when it cannot
        be. A folder removed since it was opened (another run cleared the cache) is made again."""
        try:
            self._write(names, data)
        except FileNotFoundError:
            self.close()
            self._write(names, data)

    def _write(self, names: Tuple[str, ...], data: bytes) -> None:
        from .writing import signals_held

        place, owned = self._directory(names[:-1], create=True)
        try:
            # Held signals: a worker stopped by one exits at once (runner._worker_stop), never between the two.
            with signals_held():
                temporary, fd = self._new_file(place)
                try:
                    with os.fdopen(fd, "wb") as out:
                        out.write(data)
                    if isinstance(place, int):
                        os.replace(temporary, names[-1], src_dir_fd=place, dst_dir_fd=place)
                    else:
                        os.replace(os.path.join(place, temporary), os.path.join(place, names[-1]))
                except BaseException:
                    with contextlib.suppress(OSError):
                        if isinstance(place, int):
                            os.unlink(temporary, dir_fd=place)
                        else:
                            os.unlink(os.path.join(place, temporary))
                    raise
        finally:
            if owned:
                _close(place)

    @staticmethod
    def _new_file(place: Place) -> Tuple[str, int]:
        for _ in range(100):
            name = TEMPORARY_PREFIX + os.urandom(6).hex()
            try:
                return name, _open_file(place, name, _NEW_FLAGS, 0o600)
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, "no free temporary name")
