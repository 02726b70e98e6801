"""Writes a fixed file without ever losing a byte: under its root, never over a change, keeping links and owner.

What `fix` promises about a write (issue 9):

- The new text is encoded as the original was (PEP 263 cookie, BOM).
- The file is written only where it was read: the directories from the root down to it are opened one by one
  without following a symlink, and the temporary file, the check and the replace all go through the last
  directory's descriptor, so a folder swapped for a symlink while `fix` runs cannot send the write elsewhere.
- Right before the replace the file must still be the one that was read (same inode, size, mtime and content
  hash); a file changed meanwhile (an editor, a formatter, a second process) is left alone.
- A read-only file (no write bit for anyone) is left alone, even when running as root.
- The replace is atomic (temporary file beside the original, flushed, `os.replace`), with the original's owner,
  group, mode and extended attributes; where that cannot keep them (a hard-linked file, an owner this process
  may not give away) the file is rewritten in place with a backup copy beside it until the new content is on
  disk, restored on failure.
- SIGINT, SIGTERM, SIGHUP, SIGALRM and SIGPROF (the time budget's) are held back during the write, so a signal
  lands before or after it, never in the middle; temporary files are removed on every way out.
"""

from __future__ import annotations

import errno
import io
import os
import signal
import stat
import tokenize
from contextlib import contextmanager
from typing import Iterator, List, NamedTuple, Optional, Sequence, Tuple

TEMP_SUFFIX = ".fix-tmp"
BACKUP_SUFFIX = ".fix-bak"
# The bytes a file name may have where the file system does not say (NAME_MAX of ext4, XFS, Btrfs, tmpfs), and
# a length every file system in common use takes (eCryptfs' 143 is the shortest), below which none is asked.
NAME_MAX = 255
_SURE_TO_FIT = 143

CHANGED = "changed on disk while fixing; not written"
READ_ONLY = "read-only file; not written"

_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Whether this platform can open, stat, create and rename relative to a directory descriptor (every Unix).
_AT_CALLS = {os.open, os.stat, os.rename, os.unlink} <= os.supports_dir_fd and bool(_NOFOLLOW)
_HELD_SIGNALS = frozenset(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGALRM", "SIGPROF") if hasattr(signal, name)
)


class WriteRefused(Exception):
    """A file `fix` will not write, or could not; `reason` is the text after `path: error: `."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Place(NamedTuple):
    """Where a file may be written: a real directory, and the components of the file's real path below it."""

    root: str
    parts: Tuple[str, ...]


class Snapshot(NamedTuple):
    """The file as it was read; it must still be so right before it is replaced."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    digest: bytes


def source_encoding(data: bytes) -> str:
    """The encoding the interpreter reads `data` with ("utf-8-sig" when it starts with a BOM)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding


def encode_like(new_text: str, original_bytes: bytes) -> bytes:
    """`new_text` in the original file's encoding, BOM included when the original had one."""
    return new_text.encode(source_encoding(original_bytes))


def _digest(data: bytes) -> bytes:
    import hashlib  # here: the flake8 plugin writes its cache through this module and never needs OpenSSL

    return hashlib.sha256(data).digest()


def snapshot(info: os.stat_result, data: bytes) -> Snapshot:
    """What must still hold at write time, from a `stat` taken before the read and the bytes read.

    Taking the stat first is the cautious order: a change during the read then shows as a newer mtime.
    """
    return Snapshot(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, _digest(data))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def locate(path: str, root: str, explicit: bool) -> Place:
    """Where `path` may be written, or WriteRefused when its real path lies outside `root`.

    `root` is the directory argument a walk found the file in, or the working directory for a file named
    explicitly. A named file outside it is still fixed when it was named by its real path (no symlink on the
    way): the user asked for exactly that file.
    """
    real = os.path.realpath(path)
    real_root = os.path.realpath(root)
    if _inside(real, real_root) and real != real_root:
        return Place(real_root, tuple(os.path.relpath(real, real_root).split(os.sep)))
    if explicit and real == os.path.abspath(path):
        anchor = os.path.splitdrive(real)[0] + os.sep
        return Place(anchor, tuple(real[len(anchor):].split(os.sep)))
    raise WriteRefused(f"symlink to a file outside {root}; pass its real path to fix it")


def _place_of(path: str) -> Place:
    real = os.path.realpath(path)
    return Place(os.path.dirname(real), (os.path.basename(real),))


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold back the signals that stop a run until the block is done (they are delivered right after)."""
    if not hasattr(signal, "pthread_sigmask") or not _HELD_SIGNALS:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def write_atomically(
    path: str,
    new_text: str,
    original_bytes: bytes,
    place: Optional[Place] = None,
    read_as: Optional[Snapshot] = None,
) -> bool:
    """Replace the file at `path` with `new_text`; False (and no write at all) when the bytes would not change.

    `place` bounds where the write may land (by default the real directory of `path`: a symlink is followed
    and its target replaced); `read_as` is the snapshot taken when the file was read (by default only the
    content is compared). Raises WriteRefused for a file that changed, is read-only or moved out of its
    place, and OSError when the disk says no; in every case the file keeps its old bytes.
    """
    data = encode_like(new_text, original_bytes)
    if data == original_bytes:
        return False
    if place is None:
        place = _place_of(path)
    expected = read_as or Snapshot(-1, -1, len(original_bytes), -1, _digest(original_bytes))
    with signals_held():
        if not _AT_CALLS:
            _write_by_path(os.path.join(place.root, *place.parts), data, expected)
            return True
        directory = _open_directory(place)
        try:
            _write_in(directory, place.parts[-1], data, original_bytes, expected)
        finally:
            os.close(directory)
    return True


def _open_directory(place: Place) -> int:
    """A descriptor of the file's directory, reached from the root one component at a time, never by a symlink."""
    fd = os.open(place.root, _DIRECTORY_FLAGS | _CLOEXEC)
    try:
        for name in place.parts[:-1]:
            try:
                child = os.open(name, _DIRECTORY_FLAGS | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                    raise WriteRefused(
                        f"the folder {name!r} on its path was moved or replaced by a symlink while fixing; "
                        "not written"
                    ) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


class _Found(NamedTuple):
    """The file at write time: its stat and its extended attributes."""

    info: os.stat_result
    xattrs: Tuple[Tuple[str, bytes], ...]


def _current(directory: int, name: str, expected: Snapshot) -> _Found:
    """The file as it is now, or WriteRefused when it is no longer the file that was read (content included)."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOENT, errno.ENOTDIR, errno.ENXIO):
            raise WriteRefused(CHANGED) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != expected.size:
            raise WriteRefused(CHANGED)
        if expected.inode >= 0 and (
            (info.st_dev, info.st_ino, info.st_mtime_ns) != (expected.device, expected.inode, expected.mtime_ns)
        ):
            raise WriteRefused(CHANGED)
        if _digest(_read_all(fd)) != expected.digest:
            raise WriteRefused(CHANGED)
        return _Found(info, _xattrs(fd))
    finally:
        os.close(fd)


def _xattrs(fd: int) -> Tuple[Tuple[str, bytes], ...]:
    """The extended attributes of an open file (an SELinux label, ACLs, user.*); none where unsupported."""
    if not hasattr(os, "listxattr"):
        return ()
    try:
        return tuple((key, os.getxattr(fd, key)) for key in os.listxattr(fd))
    except OSError:
        return ()


def _read_all(fd: int) -> bytes:
    chunks: List[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _name_max(directory: Optional[int]) -> int:
    """The longest name, in bytes, the file system of `directory` (a descriptor) takes; NAME_MAX if it does not say."""
    try:
        found = os.fpathconf(directory, "PC_NAME_MAX") if directory is not None else -1
    except (OSError, ValueError, AttributeError):
        found = -1
    return found if found > 0 else NAME_MAX


def _beside_name(name: str, extra: int, directory: Optional[int] = None) -> str:
    """`name` cut (at a character, never inside one) so that `.{cut}` plus `extra` more bytes fits the file
    system's limit on a name: a temporary or backup file beside a file whose own name is near the limit (240
    characters, or 120 that take two bytes each) must fit as well. The cut is never empty."""
    if 1 + len(os.fsencode(name)) + extra <= _SURE_TO_FIT:
        return name  # the usual case, without asking the file system
    room = max(1, _name_max(directory) - 1 - extra)
    cut = name[:room]  # a character takes at least one byte
    while len(os.fsencode(cut)) > room and len(cut) > 1:
        cut = cut[:-1]
    return cut


def _new_file(directory: int, name: str, suffix: str) -> Tuple[str, int]:
    """A fresh private file beside `name` (never an existing one, never through a symlink): its name and fd.
    The name part is cut to fit the file system's limit; the random part keeps it apart from others."""
    stem = _beside_name(name, 1 + 8 + len(suffix), directory)
    for _ in range(100):
        # os.urandom is what secrets.token_hex reads; importing secrets imports hmac, hashlib and OpenSSL, which
        # the flake8 plugin's cache writes (through this module) otherwise never load.
        candidate = f".{stem}.{os.urandom(4).hex()}{suffix}"
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600,
                         dir_fd=directory)
        except FileExistsError:
            continue
        return candidate, fd
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)


def _unlink_quietly(name: str, directory: int) -> None:
    try:
        os.unlink(name, dir_fd=directory)
    except OSError:
        pass


def _write_in(directory: int, name: str, data: bytes, original: bytes, expected: Snapshot) -> None:
    found = _current(directory, name, expected)
    if found.info.st_mode & 0o222 == 0:
        raise WriteRefused(READ_ONLY)
    if found.info.st_nlink > 1:
        # A rename would leave the other links on the old inode: rewrite this one instead.
        _rewrite_in_place(directory, name, data, original, expected)
        return
    temporary: Optional[str] = None
    fd = -1
    try:
        temporary, fd = _new_file(directory, name, TEMP_SUFFIX)
        _write_all(fd, data)
        if not _take_attributes(fd, found):
            # An owner or attribute this process may not give a new file: keep the file and rewrite it instead.
            os.close(fd)
            fd = -1
            _unlink_quietly(temporary, directory)
            temporary = None
            _rewrite_in_place(directory, name, data, original, expected)
            return
        os.fsync(fd)
        os.close(fd)
        fd = -1
        _current(directory, name, expected)  # once more, right before the replace
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        temporary = None
    finally:
        if fd >= 0:
            os.close(fd)
        if temporary is not None:
            _unlink_quietly(temporary, directory)
    # No fsync of the directory: after a power cut the rename may be undone, leaving the old file whole, which
    # loses nothing; its cost is a disk flush per file.


def _take_attributes(fd: int, found: _Found) -> bool:
    """Give the new file the original's owner, group, mode and extended attributes; False where not allowed."""
    original = found.info
    mine = os.fstat(fd)
    try:
        if (mine.st_uid, mine.st_gid) != (original.st_uid, original.st_gid):
            os.fchown(fd, original.st_uid, original.st_gid)
        for key, value in found.xattrs:
            os.setxattr(fd, key, value)
    except PermissionError:
        return False
    except OSError as error:
        if error.errno in (errno.EPERM, errno.EACCES, getattr(errno, "ENOTSUP", -1), errno.EOPNOTSUPP):
            return False
        raise
    os.fchmod(fd, stat.S_IMODE(original.st_mode))  # after the chown, which clears set-id bits
    return True


def _rewrite_in_place(directory: int, name: str, data: bytes, original: bytes, expected: Snapshot) -> None:
    """Overwrite the file itself (same inode: links, owner, mode and attributes stay), with a backup beside it.

    The backup holds the original bytes, on disk, until the new content is; a failure puts the original back
    and removes the backup. Only when even that fails does the backup stay, and the error names it.
    """
    backup, fd = _new_file(directory, name, BACKUP_SUFFIX)
    try:
        _write_all(fd, original)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(backup, directory)
        raise
    os.close(fd)
    keep_backup = False
    try:
        checked = _current(directory, name, expected).info  # once more, right before the write
        target = os.open(name, os.O_WRONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=directory)
        try:
            info = os.fstat(target)
            if (info.st_dev, info.st_ino) != (checked.st_dev, checked.st_ino):
                raise WriteRefused(CHANGED)
            try:
                _overwrite(target, data)
            except BaseException as error:
                try:
                    _overwrite(target, original)
                except BaseException:
                    keep_backup = True
                    raise WriteRefused(
                        f"cannot write ({_reason(error)}) nor put the original back; it is saved as {backup}"
                    ) from error
                raise
        finally:
            os.close(target)
    finally:
        if not keep_backup:
            _unlink_quietly(backup, directory)


def _overwrite(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    _write_all(fd, data)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _reason(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def _write_by_path(path: str, data: bytes, expected: Snapshot) -> None:
    """Where a platform cannot work relative to a directory descriptor: the plain atomic replace."""
    import tempfile

    from .source_files import read_or_none

    current = read_or_none(path, max(expected.size, 1))  # a file grown since it was read is not read whole
    if current is None or _digest(current) != expected.digest:
        raise WriteRefused(CHANGED)
    info = os.stat(path)
    if info.st_mode & 0o222 == 0:
        raise WriteRefused(READ_ONLY)
    directory, name = os.path.split(path)
    # mkstemp adds 8 random characters between the prefix and the suffix.
    stem = _beside_name(name, 1 + 8 + len(TEMP_SUFFIX))
    fd, temporary = tempfile.mkstemp(prefix=f".{stem}.", suffix=TEMP_SUFFIX, dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class GroupFile(NamedTuple):
    """One file of a change written all or nothing (see `write_group`)."""

    path: str
    new_text: str
    original_bytes: bytes
    place: Place
    read_as: Snapshot


class GroupRefused(WriteRefused):
    """A change across files that was not written, none of its files; `path` is the file that refused."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path


class _Staged(NamedTuple):
    file: GroupFile
    directory: int
    name: str
    temporary: str
    backup: str  # a hard link to the original, to put it back by a rename


def write_group(files: Sequence[GroupFile]) -> None:
    """Write every file of a change, or none: GroupRefused (naming the file and why) leaves them all as read.

    Each file is checked as `write_atomically` checks it (under its root, unchanged since read, writable),
    and its new bytes go to a temporary file beside it, with its owner, mode and attributes, flushed to disk:
    all of them before any is replaced. Each original gets a hard link beside it (its backup, the same
    inode). Then the temporary files replace the originals in order; if one replace fails, the ones already
    replaced get their originals back from the backups. A file that cannot be handled so (hard-linked
    already, an owner this process may not give, a platform without directory descriptors) refuses the group.
    """
    if not _AT_CALLS:
        raise GroupRefused(files[0].path if files else "", "this platform cannot write a change across files "
                           "all or nothing; not written")
    staged: List[_Staged] = []
    replaced: List[_Staged] = []
    with signals_held():
        try:
            for file in files:
                staged.append(_stage(file))
            for entry in staged:
                try:
                    _current(entry.directory, entry.name, entry.file.read_as)  # once more, right before
                    os.replace(entry.temporary, entry.name, src_dir_fd=entry.directory, dst_dir_fd=entry.directory)
                except WriteRefused as refusal:
                    raise GroupRefused(entry.file.path, refusal.reason) from None
                except OSError as error:
                    raise GroupRefused(entry.file.path, f"cannot write: {_reason(error)}") from None
                replaced.append(entry)
        except BaseException as error:
            kept: List[str] = []
            for entry in reversed(replaced):
                # The backup is the original inode: renaming it back restores the file exactly.
                try:
                    os.replace(entry.backup, entry.name, src_dir_fd=entry.directory, dst_dir_fd=entry.directory)
                except OSError:
                    kept.append(entry.backup)  # never removed below: it is the only copy of the original
                    staged = [e if e is not entry else e._replace(backup="") for e in staged]
            if kept:
                reason = getattr(error, "reason", None) or _reason(error)
                raise GroupRefused(files[0].path, f"{reason}; and the originals could not all be put back: "
                                   f"they are saved as {', '.join(kept)}") from error
            raise
        finally:
            for entry in staged:
                _unlink_quietly(entry.temporary, entry.directory)
                if entry.backup:
                    _unlink_quietly(entry.backup, entry.directory)
                os.close(entry.directory)


def _stage(file: GroupFile) -> _Staged:
    """Check one file of a group and write its new bytes beside it; GroupRefused when it cannot be."""
    data = encode_like(file.new_text, file.original_bytes)
    try:
        directory = _open_directory(file.place)
    except WriteRefused as refusal:
        raise GroupRefused(file.path, refusal.reason) from None
    except OSError as error:
        raise GroupRefused(file.path, f"cannot write: {_reason(error)}") from None
    name = file.place.parts[-1]
    temporary = backup = ""
    fd = -1
    try:
        found = _current(directory, name, file.read_as)
        if found.info.st_mode & 0o222 == 0:
            raise WriteRefused(READ_ONLY)
        if found.info.st_nlink > 1:
            raise WriteRefused("hard-linked: a change across files is written by renames, which would leave "
                               "the other links behind; not written")
        temporary, fd = _new_file(directory, name, TEMP_SUFFIX)
        _write_all(fd, data)
        if not _take_attributes(fd, found):
            raise WriteRefused("its owner or attributes cannot be given to a new file; a change across files "
                               "is not written")
        os.fsync(fd)
        backup = _backup_name(directory, name)
        os.link(name, backup, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
        return _Staged(file, directory, name, temporary, backup)
    except BaseException as error:
        if temporary:
            _unlink_quietly(temporary, directory)
        os.close(directory)
        if isinstance(error, WriteRefused):
            raise GroupRefused(file.path, error.reason) from None
        if isinstance(error, OSError):
            raise GroupRefused(file.path, f"cannot write: {_reason(error)}") from None
        raise
    finally:
        if fd >= 0:
            os.close(fd)


def _backup_name(directory: int, name: str) -> str:
    """A name beside `name` that nothing holds (os.link creates it), cut to fit as `_new_file`'s are."""
    stem = _beside_name(name, 1 + 8 + len(BACKUP_SUFFIX), directory)
    for _ in range(100):
        candidate = f".{stem}.{os.urandom(4).hex()}{BACKUP_SUFFIX}"
        try:
            os.stat(candidate, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            return candidate
    raise FileExistsError(errno.EEXIST, "no free backup name", name)


def content_snapshot(data: bytes) -> Snapshot:
    """A snapshot that holds the content only (the file must still have these bytes when written)."""
    return Snapshot(-1, -1, len(data), -1, _digest(data))
