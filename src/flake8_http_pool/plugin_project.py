"""The project model for the flake8 plugin: the seeds of the file flake8 hands it, from its whole project.

flake8 gives the plugin one file at a time, in several processes. For each file the plugin finds the project
root (the nearest pyproject.toml, setup.cfg, setup.py or .git above it), lists the project's Python files once
per process and root, and loads the solved seeds through the cache (project_cache.py):

- warm: one walk of the root and one `stat` per file (a stat index, project_cache.StatMemo, gives each unchanged
  file's hash), then ONE cache entry holding the solved seeds of exactly that set of (path, hash): nothing is
  read or parsed;
- cold: each process that needs the project's seeds solves it, in flake8's worker processes (flake8 runs one
  per core; the plugin starts none of its own and solves nothing in flake8's main process). Each module's
  summary is cached on its own as it is made, written whole and then renamed, and each process goes through
  the modules in an order of its own, so two workers summarize each half of the project once between them:
  what one has cached, the other reads. Each stores the solved seeds (the same, whoever wrote them last).

Any failure here (an unreadable tree, an engine bug) leaves the file to be checked alone: never a crash.
libcst is never imported on this path.
"""

from __future__ import annotations

import fnmatch
import marshal
import operator
import os
import random
import re
import sys
import time
from itertools import islice
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from .engine import ModuleSeeds
from .options import Options

# Folders that never hold the project's own code (besides any folder holding a pyvenv.cfg).
SKIPPED = frozenset({".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", "site-packages",
                     "node_modules", "__pycache__", "build", "dist", ".eggs", ".mypy_cache", ".ruff_cache",
                     ".pytest_cache"})

# A "project" of more Python files than this is a tree of many projects (a pyenv root holding every Python's
# standard library under one .git, a monorepo's root): each flake8 process would walk it and the first would
# summarize all of it before the file in hand could be reported. The plugin then checks modules alone; `check`
# (which is given the files) has no limit. FLAKE8_HTTP_POOL_PROJECT_LIMIT changes it (0: no limit).
PROJECT_LIMIT = 25_000
ENV_PROJECT_LIMIT = "FLAKE8_HTTP_POOL_PROJECT_LIMIT"

# Per process: the solved seeds of each (root, options, excludes, cache folder asked for) met so far, and each
# folder's root.
_SOLVED: Dict[Tuple[str, Options, Tuple[str, ...], Optional[str]], Dict[str, ModuleSeeds]] = {}
_ROOTS: Dict[str, Optional[str]] = {}
# Per process: the cache folder each (root, options) was last solved through, its opened cache, and each
# options' fingerprint (known_findings reads the modules' entries there).
_FOLDERS: Dict[Tuple[Optional[str], Options], str] = {}
_CACHES: Dict[str, Any] = {}
_FINGERPRINTS: Dict[Options, str] = {}
# Per process: the files whose bytes a cold solve in this process found to fail phase 1's gate, by options, each
# with its stat signature then (see passed_over).
_PASSED_OVER: Dict[Options, Dict[str, Tuple[int, int, int, int]]] = {}


def project_files(root: str, exclude: Sequence[str] = (), cache_name: str = "",
                  listings: Any = None) -> Iterator[str]:
    """Every `*.py` of the project below `root` (absolute paths), skipping virtual environments, caches, build
    output, VCS folders, the cache folder and flake8's `exclude` patterns (matched against a name and its
    absolute path, as flake8 matches them); links to folders are not followed.

    With `listings` (a project_cache.StatMemo), a folder that looks as it did (adding, removing or renaming an
    entry changes a folder's times) gives the listing kept for it instead of being listed and matched again."""
    from .discovery import tree_file
    from .project_cache import MISSING

    real = os.path.realpath(root)

    # One compiled pattern for all of them: the walk meets every name of a tree that may be large.
    matches = re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in exclude)).match \
        if exclude else None

    def excluded(name: str, path: str) -> bool:
        return matches is not None and bool(matches(os.path.normcase(name)) or matches(os.path.normcase(path)))

    def listed(directory: str) -> Tuple[List[str], List[str]]:
        """The folder's Python files and the subfolders to walk (absolute paths, sorted)."""
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return [], []
        files, dirs = [], []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            name = entry.name
            if is_dir:
                if name not in SKIPPED and name != cache_name and not name.endswith(".egg-info") \
                        and not excluded(name, entry.path) and not installed_library(name, entry.path):
                    dirs.append(entry.path)
            elif name.endswith(".py") and not excluded(name, entry.path) and tree_file(entry, real):
                files.append(entry.path)
        return sorted(files), sorted(dirs)

    folders = [root]
    while folders:
        directory = folders.pop()
        if listings is None:
            files, dirs = listed(directory)
        else:
            signature, known = listings.get(directory, "")
            if known is MISSING:
                files, dirs = listed(directory)
                listings.put(directory, signature, "", (files, dirs))
            else:  # (cache_shapes.folder_listing: paths directly inside `directory`, or a miss)
                files, dirs = known
        yield from files
        # A virtual environment made inside a folder already listed changes that folder, not its parent.
        folders.extend(reversed([d for d in dirs if not os.path.exists(os.path.join(d, "pyvenv.cfg"))]))


_LIBRARY_FOLDER = re.compile(r"python\d+\.\d+t?")


def installed_library(name: str, path: str) -> bool:
    """Whether the folder is an installed Python's standard library (`lib/python3.11` holding `lib-dynload`, the
    compiled modules an installation has and a copy of the sources has not): never the project's code. A pyenv
    root (one .git above every Python it installed) was otherwise one project of every standard library."""
    return bool(_LIBRARY_FOLDER.fullmatch(name)) and os.path.isdir(os.path.join(path, "lib-dynload"))


def root_of(filename: str) -> Optional[str]:
    """The project root of a file (memoised per folder), None when there is none."""
    folder = os.path.dirname(os.path.abspath(filename))
    if folder not in _ROOTS:
        from .roots import find_project_root

        _ROOTS[folder] = find_project_root(folder)
    return _ROOTS[folder]


def seeds_for(filename: str, options: Options, exclude: Sequence[str] = (),
              cache_dir: Optional[str] = None, focus: bool = False) -> Optional[ModuleSeeds]:
    """The seeds of `filename` from its project; None when it has none, has no project, or anything fails.

    `focus`: flake8 was given a few files (pre-commit, an editor): when the project's solve is not in the
    cache, the file's seeds come from the modules that can matter to it (focus.py), not from a cold solve of
    the whole project."""
    try:
        path = os.path.abspath(filename)
        if not os.path.isfile(path):
            return None
        root = root_of(path)
        if root is None:
            return None
        key = (root, options, tuple(exclude), cache_dir)
        if key not in _SOLVED:
            solved = solved_project(root, options, exclude, cache_dir, focus=path if focus else None)
            if isinstance(solved, Focused):
                return solved.get(path)
            _SOLVED[key] = solved or {}
        return _SOLVED[key].get(path)
    except Exception:  # noqa: BLE001 - the model's failure costs the cross-module findings, never the run
        return None


def buffer_seeds(seeds: Optional[ModuleSeeds], path: str, data: bytes) -> Optional[ModuleSeeds]:
    """The seeds of the file at `path` for an editor's buffer of it (`data`, read from standard input): all of
    them when the buffer holds the file's bytes, else only those that name the module's functions and classes.
    The others name calls by line and column in the file as saved, which an unsaved edit may have moved onto
    another call; they come back once the buffer is saved."""
    if seeds is None:
        return None
    from .source_files import read_or_none

    if read_or_none(path, len(data) or 1) == data:  # a file longer than the buffer is not read whole to tell
        return seeds
    return seeds._replace(factories={}, blocking={}, writers={})


def prepare(paths: Sequence[str], options: Options, exclude: Sequence[str] = (),
            cache_dir: Optional[str] = None) -> None:
    """In flake8's main process, before its workers start: the projects of the paths flake8 was given (files or
    folders) whose solve the cache holds, loaded (the workers fork from this process and inherit them, so a warm
    tree is walked once per run, not once per worker), and the cache folder of the others opened (a note about
    it is written once, here, not by every worker). A cold project is left to the workers (`solved_project`).
    Nothing here may fail the run: a path that cannot be answered is left to `seeds_for`."""
    for given in paths:
        try:
            path = os.path.abspath(given)
            root = root_of(os.path.join(path, "-") if os.path.isdir(path) else path)
            key = (root, options, tuple(exclude), cache_dir)
            if root is not None and key not in _SOLVED:
                found = solved_project(root, options, exclude, cache_dir, solve=False)
                if found is not None:
                    _SOLVED[key] = found
        except Exception:  # noqa: BLE001 - see seeds_for
            continue


def solved_project(root: str, options: Options, exclude: Sequence[str] = (),
                   cache_dir: Optional[str] = None, focus: Optional[str] = None,
                   solve: bool = True) -> Optional[Dict[str, ModuleSeeds]]:
    """The whole project's seeds, through the cache (see the module docstring); without one when the cache
    folder cannot be written. The folder is `cache_dir` (flake8's --http-pool-cache-dir), else, when that is
    None, the one the project's own config names (`cache-dir`, as `check` reads it), else the environment's or
    the default.

    `focus` (a file's absolute path): when the whole project's seeds are not in the cache, those of that file
    alone (a `Focused`), from the modules that can matter to it (focus.py; the others' are left out).

    `solve` False: None instead of solving a project whose solve the cache does not hold (see `prepare`)."""
    from . import cache_shapes as shapes
    from .project_cache import (CACHE_DIR_NAME, LocalModules, ProjectCache, StatMemo, cache_folder,
                                options_fingerprint, settled)

    folder = cache_folder(root, cache_dir if cache_dir is not None else _configured_cache_dir(root))
    limit = project_limit()
    # The folders' listings are kept once the cache folder exists (a project too small to solve makes none).
    listings = StatMemo(ProjectCache(folder, root) if os.path.isdir(folder) else None, "s",
                        f"folders\0{root}\0{tuple(exclude)!r}\0{folder}", shapes.folder_listing)
    files = at_most(project_files(root, exclude, os.path.basename(folder) or CACHE_DIR_NAME, listings), 2 * limit)
    if files is None:
        return {}  # see PROJECT_LIMIT: far over it, not even listed whole
    # Kept also for a tree over the limit, so that telling it is one costs the next run no listing.
    listings.save()
    if (limit and len(files) > limit) or len(files) < 2:
        return {}  # see PROJECT_LIMIT
    cache = ProjectCache.open(folder, _note_once, root, quiet_when_unwritable=True)
    if cache is None:
        if focus is not None:
            return _focused(None, options, files, focus)
        if not solve:
            return None
        from .project import project_seeds

        return project_seeds(files, lambda _: options)
    _FOLDERS[(root, options)] = folder  # (known_findings reads the modules' entries there)
    fingerprint = options_fingerprint(options)
    index_key = f"{root}\0{fingerprint}"
    solved_key = "solved\0" + index_key
    started = time.time_ns()  # before any file is stat'ed (see project_cache.settled)
    signatures = _signatures(files)
    # The quick check: one digest of every file's path and signature, kept beside the state it was solved at.
    # When nothing changed, that is all an editor's lint reads (the index's 10,000 entries cost more than the
    # stats themselves); otherwise the index tells which files to read again.
    quick = _quick_digest(files, signatures)

    def all_settled() -> bool:  # what the digest vouches for is kept only then (see project_cache.settled)
        return all(signature is not None and settled(signature, started) for signature in signatures)

    quick_key = "quick\0" + index_key
    last_quick = cache.load_blob("s", quick_key, shapes.pair_of_text)
    hashes: Optional[List[Tuple[str, str]]] = None
    if focus is not None and (last_quick is None or last_quick[0] != quick):
        # No solve of the project as it is now (none at all, or files changed since): not worth hashing every
        # file to find out. The file's own focused answer is kept under the same digest of every file's stat,
        # so an editor linting it again, nothing changed, reads nothing more.
        focused_key = f"focused\0{index_key}\0{focus}"
        kept = cache.load_blob("s", focused_key, shapes.plugin_solved)
        if kept is not None and kept[0] == quick:
            return Focused(kept[1])
        found = _focused(cache, options, files, focus)
        if all_settled():
            cache.store_blob("s", focused_key, (quick, dict(found)))
        return found
    if last_quick is not None and last_quick[0] == quick:
        state = last_quick[1]
    else:
        hashes, state = _hashes_by_index(cache, "index\0" + index_key, files, signatures, options.max_file_size)
        if all_settled():
            cache.store_blob("s", quick_key, (quick, state))
    found = _solved(cache.load_blob("s", solved_key, shapes.plugin_solved), state)
    if found is None and focus is not None:
        return _focused(cache, options, files, focus)  # (the solve kept for this state is gone)
    if found is None and not solve:
        return None
    if found is None:
        if hashes is None:
            hashes, state = _hashes_by_index(cache, "index\0" + index_key, files, signatures, options.max_file_size)
        from .project import project_seeds

        local = LocalModules(lambda _: options, cache, findings=True)
        order = random.Random(os.getpid())
        found = dict(project_seeds([path for path, _ in hashes], lambda _: options, cache=cache,
                                   first=_noting_passed_over(_first_in_order(local.first, order), options, files,
                                                             signatures),
                                   search=_search_in_order(local.search, order), load=local.summary,
                                   words=local.words))
        cache.store_blob("s", solved_key, (state, found))
    return found


def _first_in_order(first: Any, order: Any) -> Any:
    """Phase 1 (`first`) going through its modules in `order`'s shuffle of them, answering in theirs: the
    processes solving one project at once (flake8's workers) each summarize the modules the others have not
    cached yet, instead of the same ones at the same time."""

    def run(paths: List[str]) -> Any:
        given = list(paths)
        shuffled = given[:]
        order.shuffle(shuffled)
        found, rest = first(shuffled)
        left = set(rest)
        return {path: found[path] for path in given if path in found}, [path for path in given if path in left]

    return run


def _search_in_order(search: Any, order: Any) -> Any:
    """Phase 2 (`search`) in `order`'s shuffle of its modules, as `_first_in_order`."""

    def run(paths: List[str], needles: Any) -> Any:
        given = list(paths)
        shuffled = given[:]
        order.shuffle(shuffled)
        found = search(shuffled, needles)
        return {path: found[path] for path in given if path in found}

    return run


class Focused(Dict[str, ModuleSeeds]):
    """The seeds solved_project found for one file from the modules that can matter to it: not the project's."""


def _focused(cache: Any, options: Options, files: List[str], focus: str) -> Focused:
    """The seeds of `focus` alone (the others a focused solve gives are not the project's) from the modules of
    `files` that can matter to it (focus.py), each module's summary through the cache."""
    from .focus import focused_seeds

    seeds = focused_seeds([focus], files, lambda _: options, cache, findings=True)
    return Focused({focus: seeds[focus]} if focus in seeds else {})


def _noting_passed_over(first: Any, options: Options, files: List[str],
                        signatures: List[Optional[Tuple[int, int, int, int]]]) -> Any:
    """Phase 1 (`first`), noting in _PASSED_OVER the files its gate passed over, with the stat signature each
    had before it was read (`signatures`, of `files`)."""
    noted = _PASSED_OVER.setdefault(options, {})

    def noting(paths: List[str]) -> Any:
        found, rest = first(paths)
        signature_of = dict(zip(files, signatures))
        for path in rest:
            signature = signature_of.get(path)
            if signature is not None:
                noted[path] = signature
        return found, rest

    return noting


def passed_over(filename: str, options: Options) -> bool:
    """Whether this process's cold solve found the bytes of `filename` fail phase 1's gate with `options`: then
    the plugin's text gate (engine.may_have_findings) fails on the text flake8 read from them, and the plugin
    needs neither to join the file's lines nor to search them. Phase 1's gate is that text gate after a search
    of the bytes for the libraries' names, and what flake8 reads differs only in newlines (flake8 makes every
    "\r" one), which can only split a line that gate searches for an import into several.

    It holds while the file keeps the stat signature it had when the solve read it (one `stat`, checked here:
    a process that lives on, as flake8's API allows, may see the file edited since); a warm run solves nothing
    and answers False."""
    noted = _PASSED_OVER.get(options)
    if not noted:
        return False
    path = os.path.abspath(filename)
    signature = noted.get(path)
    if signature is None:
        return False
    try:
        return _SIGNATURE(os.stat(path)) == signature
    except (OSError, ValueError):
        return False


def _quick_digest(files: List[str], signatures: List[Optional[Tuple[int, int, int, int]]]) -> str:
    """One digest of every file's path and signature. Marshal's version 2 makes no references between equal
    objects (whose use depends on their reference counts), so the same values give the same bytes in every
    process; the two lists are marshalled apart, which costs half of marshalling them as one tuple."""
    from .project_cache import blake2b

    digest = blake2b(marshal.dumps(files, 2), digest_size=20)
    digest.update(marshal.dumps(signatures, 2))
    return digest.hexdigest()


_SIGNATURE = operator.attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")  # project_cache.stat_signature


def _signatures(files: List[str]) -> List[Optional[Tuple[int, int, int, int]]]:
    """Each file's project_cache.stat_signature (None for one that cannot be stat'ed), in a loop of its own:
    an editor's lint pays it for every file of the project."""
    try:
        return list(map(_SIGNATURE, map(os.stat, files)))  # in C, when every file can be stat'ed
    except (OSError, ValueError):
        from .project_cache import stat_signature

        return [stat_signature(path) for path in files]


def _hashes_by_index(cache: Any, key: str, files: List[str], signatures: List[Optional[Tuple[int, int, int, int]]],
                     max_size: Optional[int]) -> Tuple[List[Tuple[str, str]], str]:
    """Each readable file's content hash, from the stat index (`key`) for a file that looks as it did, else
    read (source_files.read_bytes: a file over `max_size` or that is no regular file is left out, as its own
    check skips it); and the digest of that (path, hash) set, the state the project is solved at. The index is
    saved."""
    from .cache_shapes import per_file, text
    from .project_cache import MISSING, StatMemo, content_hash
    from .source_files import read_or_none

    index = StatMemo(cache, "s", key, per_file(text))
    hashes: List[Tuple[str, str]] = []
    hits = 0
    for path, signature in zip(files, signatures):
        if signature is None:
            continue
        digest = index.known(path, signature, "")
        if digest is not MISSING:
            hits += 1
        else:
            data = read_or_none(path, max_size)
            if data is None:
                continue
            digest = content_hash(data)
            index.put(path, signature, "", digest)
        hashes.append((path, digest))
    # When every file looks as it did and none is gone, the set is the one whose digest the index kept.
    last = index.known(_STATE, None, "")
    state = last if last is not MISSING and hits == len(hashes) == len(index.old) - 1 else _digest_of(hashes)
    index.new[_STATE] = (None, "", state)
    index.save()
    return hashes, state


def known_findings(filename: str, text: str, options: Options) -> Optional[List[Any]]:
    """The findings of `filename` (whose text flake8 read as `text`) kept by its project's solve, when it was
    summarized with this very text and these options; None when they are not known. Only for a file the
    project seeds nothing in (`seeds_for` gave None): the findings kept are the unseeded ones."""
    try:
        path = os.path.abspath(filename)
        folder = _FOLDERS.get((root_of(path), options))
        if folder is None:
            return None
        from .project_cache import ProjectCache, content_hash, options_fingerprint, text_key
        from .source_files import SourceError, read_bytes

        if folder not in _CACHES:
            _CACHES[folder] = ProjectCache(folder, root_of(path))
        if options not in _FINGERPRINTS:
            _FINGERPRINTS[options] = options_fingerprint(options)
        try:
            data = read_bytes(path, options.max_file_size)
        except SourceError:
            return None
        entry = _CACHES[folder].load(path, _FINGERPRINTS[options], content_hash(data), only=("findings",))
        kept = entry.get("findings")
        if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == text_key(text) and isinstance(kept[1], list):
            return kept[1]
        return None
    except Exception:  # noqa: BLE001 - the plugin then walks the file itself
        return None


_STATE = "\0state"  # the stat index's entry holding the digest of the (path, hash) set it last gave


def _configured_cache_dir(root: str) -> Optional[str]:
    """`cache-dir` of the config `check` would find from the project root, None without one (a config that does
    not load is `check`'s to report: here it means the default folder)."""
    from .config import ConfigError, discover_config

    try:
        return discover_config(root).cache_dir
    except (ConfigError, OSError, ValueError):
        return None


def _digest_of(hashes: List[Tuple[str, str]]) -> str:
    from .project_cache import content_hash

    return content_hash(repr(sorted(hashes)).encode("utf-8", "surrogatepass"))


def _solved(blob: Any, state: str) -> Optional[Dict[str, ModuleSeeds]]:
    """The seeds of a solved-project blob (cache_shapes.plugin_solved) solved at `state`."""
    return blob[1] if blob is not None and blob[0] == state else None


_NOTED: Set[str] = set()  # per process: the notes written (flake8's workers inherit it from the main process)


def _note_once(message: str) -> None:
    """One `flake8-http-pool: ...` line on stderr, once per process: the cache could not be used as it is."""
    if message not in _NOTED:
        _NOTED.add(message)
        sys.stderr.write(f"flake8-http-pool: {message}\n")
        sys.stderr.flush()


def at_most(paths: Iterator[str], cap: int) -> Optional[List[str]]:
    """The paths as a list, or None when there are more than `cap` (0: no cap); no more than one past the cap
    is taken from `paths`."""
    listed = list(islice(paths, cap + 1) if cap else paths)
    return None if cap and len(listed) > cap else listed


def project_limit() -> int:
    """PROJECT_LIMIT, or the environment's FLAKE8_HTTP_POOL_PROJECT_LIMIT (0: none)."""
    try:
        return max(0, int(os.environ.get(ENV_PROJECT_LIMIT, PROJECT_LIMIT)))
    except ValueError:
        return PROJECT_LIMIT
