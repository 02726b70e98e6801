"""Finds the files to check: walks directories for `*.py` and dependency files, skipping what is not the project's."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from typing import Any, Callable, Iterable, Iterator, List, NamedTuple, Optional, Set, TextIO, Tuple

# Folders that never hold the project's own code (a virtual environment is recognised by its pyvenv.cfg).
SKIPPED_DIRECTORIES = frozenset({".git", "__pycache__", "build", "dist", ".tox", ".nox", "node_modules"})

PYTHON = "python"
DEPENDENCIES = "dependencies"


class Candidate(NamedTuple):
    """A file to check: the path as shown to the user, and what kind of file it is."""

    path: str
    kind: str  # PYTHON or DEPENDENCIES; setup.py is both, and is yielded once for each
    key: Any = None  # its settings key (settings.Key), set by settings.Resolver.keyed
    hot: Any = None  # what other modules make of it (engine.ModuleSeeds), set by `check`'s project model


def is_dependency_file(name: str) -> bool:
    """`requirements*.txt`, `pyproject.toml`, `setup.cfg` and `setup.py`: where dependencies are declared."""
    return (
        name in ("pyproject.toml", "setup.cfg", "setup.py")
        or (name.startswith("requirements") and name.endswith(".txt"))
    )


class Excluder:
    """`--exclude` patterns, matched as flake8 matches them: against the file or folder name, and the full path.

    A pattern holding a `/` is anchored to `base` (the folder of the config file that set it, or the working
    directory for the command line), so `src/legacy/*` means the same wherever the command runs from.
    """

    def __init__(self, patterns: Iterable[Tuple[str, str]]) -> None:
        self._patterns: List[str] = []
        for pattern, base in patterns:
            pattern = pattern.strip()
            if not pattern:
                continue
            if "/" in pattern or os.sep in pattern:
                pattern = os.path.normpath(os.path.join(os.path.abspath(base), pattern.rstrip("/")))
            self._patterns.append(pattern)

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def excluded(self, path: str) -> bool:
        if not self._patterns:
            return False
        name = os.path.basename(os.path.normpath(path))
        absolute = os.path.abspath(path)
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(absolute, p) for p in self._patterns)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def tree_file(entry: "os.DirEntry[str]", root: str) -> bool:
    """Whether a walk of `root` (a real path, os.path.realpath) reads the file `entry` names: a regular file, or a
    link to one inside `root`. A FIFO, socket or device named like a source file, a link leading out of the tree
    (`pw.py -> /etc/passwd`), a dangling link or a loop: not the project's code, skipped silently, as flake8 and
    ruff skip them. Every walker of a tree (check's, the project model's, the patch facts') asks this."""
    try:
        if entry.is_file(follow_symlinks=False):
            return True  # the entry's type from the listing: no system call for a plain file
        if not entry.is_symlink():
            return False
        info = entry.stat()  # follows the link; a loop raises
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and _inside(os.path.realpath(entry.path), root)


def _kinds(name: str, explicit: bool) -> Iterator[str]:
    """The checks a file gets: a named file is Python unless it is a dependency file that is not `setup.py`."""
    dependency = is_dependency_file(name)
    if name.endswith(".py") or (explicit and not dependency):
        yield PYTHON
    if dependency:
        yield DEPENDENCIES


class Discovery:
    """Turns command-line paths into candidates, lazily, so a huge tree is never held in memory.

    Problems with a path the user named (missing, unreadable folder), and folders or files met in a walk that
    cannot be looked at (no permission, a path over PATH_MAX), go to `on_error(path, reason)`; dangling links,
    symlink loops, symlinks leading out of the walked root and non-regular files met in a walk are skipped
    silently, as flake8 and ruff skip them.
    """

    def __init__(self, excluder: Any, on_error: Callable[[str, str], None]) -> None:
        self.excluder = excluder  # anything with `excluded(path)`: an Excluder, or a settings.Resolver
        self.on_error = on_error

    def candidates(self, paths: Iterable[str], remember: Optional[Callable[[int], bool]] = None
                   ) -> Iterator[Candidate]:
        """The candidates under `paths`, each file once. `remember(inode)`: True the first time a file is met
        (a run that keeps its files on disk keeps them there too, file_table.FileTable.remember); by default a
        set of them is kept here."""
        if remember is None:
            remember = _Seen().remember  # (device, inode) of files already yielded: a file is checked once
        for path in paths:
            yield from self._from_argument(path, remember)

    def _from_argument(self, path: str, seen: Callable[[int], bool]) -> Iterator[Candidate]:
        try:
            info = os.stat(path)
        except ValueError:  # a NUL byte in the name: no file can be called that
            self.on_error(path.replace("\x00", "\\0"), "the path holds a NUL byte")
            return
        except OSError as error:
            reason = "symlink loop" if error.errno == errno.ELOOP else (error.strerror or str(error)).lower()
            self.on_error(path, reason)
            return
        if self.excluder.excluded(path):
            return
        if stat.S_ISDIR(info.st_mode):
            yield from self._walk(path, seen)
        elif stat.S_ISREG(info.st_mode):
            if _remember(info, seen):
                for kind in _kinds(os.path.basename(path), explicit=True):
                    yield Candidate(path, kind)
        else:
            self.on_error(path, "not a regular file")

    def _walk(self, top: str, seen: Callable[[int], bool]) -> Iterator[Candidate]:
        root = os.path.realpath(top)
        visited_dirs: Set[Tuple[int, int]] = set()
        # Depth-first with an explicit stack (no recursion limit on deep trees); each folder's entries sorted
        # so the output order is stable from run to run.
        stack: List[str] = [top]
        while stack:
            directory = stack.pop()
            try:
                dir_info = os.stat(directory)
            except OSError as error:
                self._unreadable(directory, error)
                continue
            key = (dir_info.st_dev, dir_info.st_ino)
            if key in visited_dirs:
                continue  # reached again through a symlink: a loop or a second way in
            visited_dirs.add(key)
            try:
                with os.scandir(directory) as entries:
                    listing = sorted(entries, key=lambda e: e.name)
            except OSError as error:
                self._unreadable(directory, error)
                continue
            if directory != top and any(entry.name == "pyvenv.cfg" for entry in listing):
                continue  # a virtual environment
            subdirectories: List[str] = []
            for entry in listing:
                found = self._entry(entry, root, seen)
                if found is None:
                    continue
                if found == "dir":
                    subdirectories.append(entry.path)
                else:
                    for kind in _kinds(entry.name, explicit=False):
                        yield Candidate(entry.path, kind)
            stack.extend(reversed(subdirectories))

    def _unreadable(self, path: str, error: OSError) -> None:
        """One line for a folder or file the walk met and could not look at (no permission, a path longer than
        the system allows, an I/O error), so a run that skipped part of the tree never looks clean. A dangling
        symlink or a symlink loop is not the project's code and stays silent, as in flake8 and ruff."""
        if error.errno in (errno.ENOENT, errno.ELOOP):
            return
        if error.errno == errno.ENAMETOOLONG:
            reason = "path too long for the system to open (over PATH_MAX); skipped"
        else:
            reason = f"cannot be read: {(error.strerror or str(error)).lower()}; skipped"
        self.on_error(path, reason)

    def _entry(self, entry: "os.DirEntry[str]", root: str, seen: Callable[[int], bool]) -> Optional[str]:
        """"dir" for a folder to walk, "file" for a file to check, None to skip."""
        name = entry.name
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir()  # follows symlinks; False for a dangling or looping one
        except OSError:
            return None
        if is_dir:
            if name in SKIPPED_DIRECTORIES or self.excluder.excluded(entry.path):
                return None
            if is_link and not _inside(os.path.realpath(entry.path), root):
                return None
            return "dir"
        if not (name.endswith(".py") or is_dependency_file(name)):
            return None
        if self.excluder.excluded(entry.path):
            return None
        try:
            info = entry.stat()  # follows symlinks; a loop raises
        except OSError as error:
            self._unreadable(entry.path, error)
            return None
        if not stat.S_ISREG(info.st_mode):
            return None  # a FIFO, socket or device named like a source file
        if is_link and not _inside(os.path.realpath(entry.path), root):
            return None
        return "file" if _remember(info, seen) else None


def _remember(info: os.stat_result, seen: Callable[[int], bool]) -> bool:
    # One int per file, not a pair: a big tree's set of them was a sixth of what its run held per file.
    return seen(info.st_dev << 128 | info.st_ino)  # an inode number fits in 128 bits (Windows ReFS uses them all)


class _Seen:
    """The files met so far, in memory."""

    def __init__(self) -> None:
        self.seen: Set[int] = set()

    def remember(self, key: int) -> bool:
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def paths_from_file(name: str, stdin: TextIO, on_error: Callable[[str, str], None]) -> Iterator[str]:
    """The paths listed in `name` (`-`: standard input), one a line as `git ls-files` prints them.

    Read as bytes and decoded as the file system decodes names, so any name the system can hold comes through;
    blank lines are skipped, and an entry holding a NUL byte (no path can) costs one error line, not the run.
    Read a line at a time, never a line longer than any path can be: a list that is a device (`/dev/zero`) or
    holds such a line ends with one error line instead of filling the memory. A FIFO or a pipe (`<(git ls-files)`)
    is read as it comes.
    """
    if name == "-":
        binary = getattr(stdin, "buffer", None)
        stream: Any = binary if binary is not None else _Encoded(stdin)
        yield from _listed_paths(stream, "standard input", on_error)
        return
    try:
        handle = open(name, "rb")
    except OSError as error:
        on_error(name, f"cannot read the file list: {(error.strerror or str(error)).lower()}")
        return
    with handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            on_error(name, "cannot read the file list: not a regular file or a pipe")
            return
        yield from _listed_paths(handle, name, on_error)


# No path is longer than this many bytes (Linux's PATH_MAX is 4,096; macOS's 1,024; Windows' long paths 32,767).
_LONGEST_PATH = 32 * 1024


def _listed_paths(stream: Any, name: str, on_error: Callable[[str, str], None]) -> Iterator[str]:
    while True:
        raw = stream.readline(_LONGEST_PATH + 2)
        if not raw:
            return
        if len(raw) > _LONGEST_PATH + 1:  # (the line's end included)
            on_error(name, f"cannot read the file list: a line is longer than any path ({_LONGEST_PATH // 1024} KB);"
                           " the rest of the list is not read")
            return
        raw = raw[:-1] if raw.endswith(b"\n") else raw
        raw = raw[:-1] if raw.endswith(b"\r") else raw
        if not raw.strip():
            continue
        path = os.fsdecode(raw)
        if "\x00" in path:
            on_error(path.replace("\x00", "\\0"), "a path in the file list holds a NUL byte; skipped")
            continue
        yield path


class _Encoded:
    """A text stream (a test's StringIO standing in for standard input) read as the bytes a real one holds."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def readline(self, limit: int) -> bytes:
        return self.stream.readline(limit).encode("utf-8", "surrogateescape")
