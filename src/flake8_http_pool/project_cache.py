"""The project model's disk cache: per module, its summary and its findings, keyed by its bytes and the settings.

Layout (`.flake8-http-pool-cache/` at the project root unless `cache-dir`, `--cache-dir` or the
FLAKE8_HTTP_POOL_CACHE_DIR environment variable says otherwise):

- `CACHEDIR.TAG` and a `.gitignore` holding `*`, written with the folder;
- `m/XX/NAME`: one entry per (module path, options fingerprint): a pickled dict holding the module's content
  hash and what was computed from those bytes: whether it passed phase 1 of the gate, its summary, its
  unseeded check result per selection of codes, and its result under given seeds;
- `s/NAME`: solved seeds of a whole project (the plugin's and `check`'s), keyed by every module's (path, hash),
  and the plugin's stat index;
- `i/NAME`, `g/NAME`, `r/NAME`: `check`'s stat indexes (StatMemo), one per command line or project root: each
  file's phase-1 outcome, the phase-2 needles its bytes missed, and its patch targets, beside the file's size,
  times and inode, so a warm run reads no file that looks as it did;
- `p/NAME`: a file's patch targets by content hash (fix_facts.py).

No process takes a lock: flake8's workers solving one project at once share each module's summary through its
entry as soon as one of them has written it (plugin_project.py).

Every write goes to a temporary file beside its target, then `os.replace`: a reader sees a whole old entry or
a whole new one, never half. Two processes writing one entry at once: the last one wins, both whole. An entry
that does not load (truncated, corrupt, another version's) is a miss and is rewritten. A folder that cannot
be written means no cache, said once at most; never a failure.

The key holds the tool's version, SUMMARY_VERSION and the options (Options) the summary and findings depend on,
so a setting changed is a miss, never a stale finding.

A cache folder committed into a repository someone else wrote (`git add -f` beats the `.gitignore`) is read as
hostile. It cannot make a lint run execute code: entries are pickles read by an unpickler that builds nothing
but plain data and this tool's own result tuples (`_SAFE_CLASSES`). It cannot send a read or a write outside
itself, nor hang the run: the folder and everything in it is used only as real directories and regular files,
opened without following links, each entry read within a cap (cache_files.py). It cannot fail the run: an entry
of a shape this version does not write is a miss (cache_shapes.py). What it can do is hide or forge findings of
the repository it came with, as any file of that repository could.
"""

from __future__ import annotations

import io
import os
import pickle
from typing import AbstractSet, Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from . import __version__
from .escaping import shown
from .options import Options

try:
    # hashlib's import loads OpenSSL (4 ms more than this module, in a bare process), which flake8 alone never
    # does: an editor's lint of one file paid it for a hash CPython builds in. The same function; hashlib's where
    # a build lacks the module.
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - every CPython 3.9 to 3.13 has it
    from hashlib import blake2b

CACHE_DIR_NAME = ".flake8-http-pool-cache"
ENV_CACHE_DIR = "FLAKE8_HTTP_POOL_CACHE_DIR"
# A debugging hook the tests use: each module this process parses for the project model or its check (a cache
# miss) is appended, one path a line, to the file this names. A warm run over an unchanged tree appends none.
ENV_PARSE_LOG = "FLAKE8_HTTP_POOL_PARSE_LOG"
CACHE_FORMAT = 1  # bump when an entry's layout changes
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by flake8-http-pool.\n"
        "# For information about cache directory tags, see https://bford.info/cachedir/\n")

Summary = Dict[str, Any]

# What an entry may hold besides dicts, lists, tuples, sets, strings, bytes, numbers, booleans and None: the
# NamedTuples of a check's result and of the project model's seeds (fields of plain data).
_SAFE_CLASSES = frozenset({
    ("flake8_http_pool.checking", "FileResult"),
    ("flake8_http_pool.checking", "Located"),
    ("flake8_http_pool.finding", "Finding"),
    ("flake8_http_pool.engine", "ModuleSeeds"),
    ("builtins", "frozenset"),
    ("builtins", "set"),
})


class _UnsafeEntry(Exception):
    """An entry that names a class it may not build (written by something else): read as a miss."""


class _DataUnpickler(pickle.Unpickler):
    """Builds plain data and `_SAFE_CLASSES` only (the standard library's "restricting globals")."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _SAFE_CLASSES:
            raise _UnsafeEntry(f"{module}.{name}")
        return super().find_class(module, name)


def content_hash(data: bytes) -> str:
    """The hash a module's entry is keyed by (blake2b, 128 bits)."""
    return blake2b(data, digest_size=16).hexdigest()


def _digest(value: str) -> str:
    return blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# Bump when a summary's shape or meaning changes (project.summarize): every entry is keyed on it.
SUMMARY_VERSION = 10

Signature = Tuple[int, int, int, int]

# A file changed this close to the start of a run (or after it) is not vouched for by its signature next time:
# a write in the same clock tick as the read could leave size and times as they were (git's "racy" files).
RACY_NS = 2_000_000_000


def stat_signature(path: str) -> Optional[Signature]:
    """What a file looks like on disk without reading it (size, modification and change times, inode), as git's
    index and ruff's and mypy's caches look first; None when it cannot be stat'ed."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def settled(signature: Signature, started_ns: int) -> bool:
    """Whether `signature`, taken in a run started at `started_ns` (time.time_ns()), can stand for the file's
    bytes in a later run: it last changed well before the run began."""
    return max(signature[1], signature[2]) < started_ns - RACY_NS


MISSING = object()  # StatMemo.get: the file must be read


class StatMemo:
    """Values computed from files, kept in one blob of the cache beside each file's signature and a tag (what
    else the value depends on): a file that looks as it did gives its value without being read. Entries met or
    put in this run are kept; the rest (files gone, or not asked about) are dropped when it is saved.

    `valid(path, value)` says whether a value kept for `path` has the shape this memo's values have
    (cache_shapes): one that has not is a miss, as a file changed since would be."""

    def __init__(self, cache: Optional["ProjectCache"], kind: str, key: str,
                 valid: Callable[[str, Any], bool]) -> None:
        import time

        self.cache, self.kind, self.key, self.valid = cache, kind, key, valid
        self.started = time.time_ns()  # before any file is stat'ed
        known = cache.load_blob(kind, key, _is_dict) if cache is not None else None
        self.old: Dict[str, Tuple[Signature, Any, Any]] = known if known is not None else {}
        self.new: Dict[str, Tuple[Signature, Any, Any]] = {}

    def get(self, path: str, tag: Any) -> Tuple[Optional[Signature], Any]:
        """(the file's signature now, its value) or (signature, MISSING); `path` absolute."""
        signature = stat_signature(path) if self.cache is not None else None
        return signature, self.known(path, signature, tag) if signature is not None else MISSING

    def known(self, path: str, signature: Any, tag: Any) -> Any:
        """The value kept for `path` when it was kept at `signature` under `tag` (and is kept on), else MISSING."""
        entry = self.old.get(path)
        if type(entry) is tuple and len(entry) == 3 and entry[0] == signature and entry[1] == tag \
                and _valid(lambda value: self.valid(path, value), entry[2]):
            self.new[path] = entry
            return entry[2]
        return MISSING

    def put(self, path: str, signature: Optional[Signature], tag: Any, value: Any) -> None:
        """Keep `value` for `path` as it looked at `signature` (from `get`, taken before the file was read)."""
        if signature is not None and settled(signature, self.started):
            self.new[path] = (signature, tag, value)

    def save(self) -> None:
        if self.cache is not None and self.new != self.old:
            self.cache.store_blob(self.kind, self.key, self.new)


def _is_dict(value: Any) -> bool:
    return type(value) is dict


def options_fingerprint(options: Options) -> str:
    """What an entry's summary and findings depend on besides the module's bytes (Options holds only tuples,
    strings and ints, so its repr is stable across processes)."""
    return _digest(repr((CACHE_FORMAT, __version__, SUMMARY_VERSION, tuple(options))))


def codes_key(codes: Any) -> str:
    """The selection of codes a check result was filtered by (frozensets print in any order: sort)."""
    return ",".join(sorted(codes))


def seeds_key(seeds: Any) -> str:
    """A stable digest of engine.ModuleSeeds, every field of it: the result of a check under seeds depends on
    all of them (a key of `hot` and `factories` alone once served a check under old `blocking` seeds)."""
    return _digest(repr([(field, sorted(value.items()) if isinstance(value, Mapping) else sorted(value))
                         for field, value in zip(seeds._fields, seeds)]))


def facts_key(facts: Any) -> str:
    """A stable digest of fix_facts.FixFacts (its sets sorted: a frozenset prints in an order that changes
    from one process to the next)."""
    return _digest(repr([sorted(value) if isinstance(value, (frozenset, set)) else value for value in facts]))


def log_parse(path: str) -> None:
    """Append `path` to the parse log (ENV_PARSE_LOG), when one is asked for."""
    target = os.environ.get(ENV_PARSE_LOG)
    if target:
        try:
            with open(target, "a", encoding="utf-8") as out:
                out.write(path + "\n")
        except OSError:
            pass


def cache_folder(root: str, configured: Optional[str] = None) -> str:
    """The cache folder of a project: `configured` (the command line's or the config's), else the environment's,
    else `.flake8-http-pool-cache` at the root. A relative path is taken from the root."""
    chosen = configured or os.environ.get(ENV_CACHE_DIR) or CACHE_DIR_NAME
    return os.path.abspath(os.path.join(root, os.path.expanduser(chosen)))


# The most bytes an entry is read for (a bigger one is a miss, never read). A module's entry holds its summary,
# its findings and its fix marks, a fraction of its source, and a module over --max-file-size (4 MiB unless set)
# is never summarized: 64 MiB is sixteen times that. The biggest blob is `check`'s stat index: about 250 bytes a
# file, one or two KB for a file with findings; 512 MiB holds it for 250,000 files that all have findings, over
# two million that have none (the biggest tree benchmarked has 100,000).
ENTRY_CAP = 64 << 20
BLOB_CAP = 512 << 20


class ProjectCache:
    """One cache folder (see cache_files.py for how it is opened, read and written). `open()` makes it (with
    its tag and `.gitignore`); every method is safe to call when the folder is unusable: it then reads nothing
    and writes nothing. `root`: the project root, when the folder is inside it (every folder between them is
    then walked without following a link)."""

    def __init__(self, folder: str, root: Optional[str] = None) -> None:
        from .cache_files import CacheFolder

        self.folder = folder
        self.usable = True
        self._files = CacheFolder(folder, root)

    @classmethod
    def open(cls, folder: str, note: Optional[Callable[[str], None]] = None, root: Optional[str] = None,
             quiet_when_unwritable: bool = False) -> Optional["ProjectCache"]:
        """The cache at `folder`, made if missing; None (and one `note`) when it cannot be written, or when it,
        or a folder in it, is not a real directory (a symbolic link, a file, a FIFO). With
        `quiet_when_unwritable` only a symbolic link is noted (the flake8 plugin: a read-only checkout is
        common and says nothing; a link refused is the one case where a cache the user set up goes unused)."""
        from .cache_files import FolderRefused

        cache = cls(folder, root)
        try:
            cache._files.make()
            for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Made by flake8-http-pool.\n*\n")):
                # Whatever is there already is left alone: a link to elsewhere is never written through.
                if not cache._files.exists((name,)):
                    cache._files.write((name,), text.encode("utf-8"))
            for kind in _KINDS:  # each kind's folder a real one, before any worker reads or writes there
                cache._files.make((kind,))
            probe = os.path.join(folder, "m")
            if not os.access(probe, os.W_OK | os.X_OK):
                raise PermissionError(f"cannot write in {probe}")
        except OSError as error:
            cache._files.close()
            if note is not None and (not quiet_when_unwritable or (isinstance(error, FolderRefused) and error.link)):
                reason = error.reason if isinstance(error, FolderRefused) else \
                    getattr(error, "strerror", None) or str(error)
                note(f"cache folder {shown(folder)}: {reason}; running without a cache")
            return None
        return cache

    # -- one module's entry ---------------------------------------------------------------------------
    @staticmethod
    def _entry_names(path: str, fingerprint: str) -> Tuple[str, str, str]:
        name = _digest(f"{os.path.abspath(path)}\0{fingerprint}")
        return "m", name[:2], name[2:]

    def load(self, path: str, fingerprint: str, digest: str, only: Optional[Tuple[str, ...]] = None
             ) -> Dict[str, Any]:
        """The entry of `path` for these options and bytes; an empty dict when there is none that fits (none,
        another file's, or one of a shape this version does not write: cache_shapes.module_entry).

        `only`: the fields wanted, the others neither checked nor given (the flake8 plugin's warm run reads a
        module's findings, and checking the shape of its summary too cost more than reading the entry)."""
        from .cache_shapes import module_entry, module_entry_field

        entry = self._read(self._entry_names(path, fingerprint), ENTRY_CAP)
        if not (isinstance(entry, dict) and entry.get("hash") == digest and entry.get("path") == os.path.abspath(path)):
            return {}
        if only is None:
            return entry if _valid(module_entry, entry) else {}
        wanted = {name: entry[name] for name in only if name in entry}
        return wanted if all(_valid(module_entry_field(name), value) for name, value in wanted.items()) else {}

    def store(self, path: str, fingerprint: str, digest: str, entry: Dict[str, Any]) -> None:
        """Write the entry of `path` (whole: what was loaded, plus what this run computed)."""
        entry = dict(entry, hash=digest, path=os.path.abspath(path))
        self._write(self._entry_names(path, fingerprint), entry)

    # -- blobs: the stat indexes, solved seeds and patch targets ---------------------------------------
    def load_blob(self, kind: str, key: str, valid: Callable[[Any], bool]) -> Any:
        """The blob of `kind` under `key`, when it passes `valid` (its shape: cache_shapes); None otherwise."""
        found = self._read((kind, _digest(key)), BLOB_CAP)
        if isinstance(found, tuple) and len(found) == 2 and found[0] == key and _valid(valid, found[1]):
            return found[1]
        return None

    def store_blob(self, kind: str, key: str, value: Any) -> None:
        self._write((kind, _digest(key)), (key, value))

    # -- the file system ------------------------------------------------------------------------------
    def _read(self, names: Tuple[str, ...], cap: int) -> Any:
        if not self.usable:
            return None
        data = self._files.read(names, cap)
        if data is None:
            return None
        try:
            return _DataUnpickler(io.BytesIO(data)).load()
        except Exception:  # noqa: BLE001 - truncated, corrupt or of another version: a miss, rewritten later
            return None

    def _write(self, names: Tuple[str, ...], value: Any) -> None:
        if not self.usable:
            return
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            self._files.write(names, data)
        except OSError:
            self.usable = False  # a full disk, a folder made read-only or replaced by a link mid-run: run on
        except (pickle.PicklingError, TypeError, RecursionError):
            pass


# The folders of the kinds of entry (see the module docstring).
_KINDS = ("m", "s", "i", "g", "r", "p")


def _valid(check: Callable[[Any], bool], value: Any) -> bool:
    """`check(value)`, False when the check cannot finish (a structure nested past the recursion limit)."""
    try:
        return check(value)
    except RecursionError:
        return False


# -- one module, through the cache ---------------------------------------------------------------------
def passes_gate(data: bytes, text: str, options: Options) -> bool:
    """Phase 1 of the gate: the file imports an HTTP library, or the `unpooled-calls` patterns may match."""
    from .checking import mentions_a_library
    from .engine import may_have_findings

    return bool(options.unpooled_calls) or (mentions_a_library(data, text) and may_have_findings(text, options))


def summary_of_text(path: str, text: str, options: Options) -> Optional[Summary]:
    """Parse and summarize one module; None when it does not parse or the engine fails on it (its own check
    reports that)."""
    from .project import _summary_or_none
    from .source_files import SourceError, parse_source

    log_parse(path)
    try:
        tree = parse_source(text, path)
    except (SourceError, RecursionError, MemoryError):
        return None
    return _summary_or_none(tree, options)


def text_key(text: str) -> str:
    """The hash of a module's text, as the flake8 plugin is given it (flake8's lines joined)."""
    return content_hash(text.encode("utf-8", "surrogatepass"))


def summary_and_findings(path: str, text: str, options: Options) -> Tuple[Optional[Summary], Optional[List[Any]]]:
    """`summary_of_text`, and from the same walk the module's findings as the flake8 plugin reports them when the
    project seeds nothing in it (engine.check_lines without seeds): the plugin then reads them instead of
    walking the module again. Findings None: not known (the module does not parse, or the engine failed on
    it: the plugin's own check then meets that itself)."""
    from .engine import analyze, may_have_findings
    from .project import _summary_analysis, _summary_or_none
    from .source_files import SourceError, parse_source

    log_parse(path)
    try:
        tree = parse_source(text, path)
    except (SourceError, RecursionError, MemoryError):
        return None, None
    if not may_have_findings(text, options):
        return _summary_or_none(tree, options), []
    held: List[Any] = []
    try:
        findings = analyze(tree, options, source=text, on_analysis=held.append)
    except Exception:  # noqa: BLE001 - an engine bug: the summary alone, as _summary_or_none would give it
        return (_summary_analysis(held[0], options) if held else _summary_or_none(tree, options)), None
    return _summary_analysis(held[0], options), findings


def read_module(path: str, options: Options) -> Optional[Tuple[bytes, str]]:
    """A module's bytes and text, or None when it cannot be read or decoded (its own check says why)."""
    from .source_files import SourceError, decode_source, read_bytes

    try:
        data = read_bytes(path, options.max_file_size)
        return data, decode_source(data)
    except SourceError:
        return None


class LocalModules:
    """The gate's per-file steps (project.First, Search, Load) in this process, through the cache."""

    def __init__(self, options_of: Callable[[str], Options], cache: Optional[ProjectCache],
                 findings: Union[bool, AbstractSet[str]] = False) -> None:
        self.options_of = options_of
        self.cache = cache
        # The flake8 plugin's: each module summarized (or each of a set of paths: the files a focused solve
        # answers for) keeps its unseeded findings beside its summary in its entry ("findings": (text_key of
        # the text, findings)), from the same walk.
        self.findings = findings
        self._fingerprints: Dict[Options, str] = {}

    def _fingerprint(self, options: Options) -> str:
        if options not in self._fingerprints:
            self._fingerprints[options] = options_fingerprint(options)
        return self._fingerprints[options]

    def _entry(self, path: str, options: Options,
               got: Optional[Tuple[bytes, str]] = None) -> Optional[Tuple[bytes, str, str, Dict[str, Any]]]:
        """The module's bytes, text, content hash and cache entry (`got`: its bytes and text, read already)."""
        if got is None:
            got = read_module(path, options)
            if got is None:
                return None
        digest = content_hash(got[0])
        entry = self.cache.load(path, self._fingerprint(options), digest) if self.cache is not None else {}
        return got[0], got[1], digest, entry

    def _summarized(self, path: str, options: Options, text: str, digest: str, entry: Dict[str, Any],
                    **extra: Any) -> Optional[Summary]:
        if "summary" in entry:
            return entry["summary"]
        wanted = self.findings if isinstance(self.findings, bool) else path in self.findings
        if wanted and self.cache is not None:
            summary, findings = summary_and_findings(path, text, options)
            if findings is not None:
                extra["findings"] = (text_key(text), findings)
        else:
            summary = summary_of_text(path, text, options)
        if self.cache is not None:
            self.cache.store(path, self._fingerprint(options), digest, dict(entry, summary=summary, **extra))
        return summary

    def summary_of_read(self, path: str, options: Options, data: bytes, text: str,
                        analysis: Any = None) -> Optional[Summary]:
        """Phase 1's summary of a module read already and past the gate: from the cache, else from `analysis`
        (the Analysis a check of the same text built, without seeds), else parsed here."""
        digest = content_hash(data)
        entry = self.cache.load(path, self._fingerprint(options), digest) if self.cache is not None else {}
        if "summary" in entry or analysis is None:
            return self._summarized(path, options, text, digest, entry, gated=True)
        from .project import _summary_analysis

        summary = _summary_analysis(analysis, options)
        if self.cache is not None:
            self.cache.store(path, self._fingerprint(options), digest, dict(entry, summary=summary, gated=True))
        return summary

    def first(self, paths: List[str]) -> Tuple[Dict[str, Optional[Summary]], List[str]]:
        found: Dict[str, Optional[Summary]] = {}
        rest: List[str] = []
        from .checking import mentions_a_library
        from .source_files import SourceError, decode_source, read_bytes

        for path in paths:
            options = self.options_of(path)
            try:
                data = read_bytes(path, options.max_file_size)
                if not options.unpooled_calls and data.isascii() and not mentions_a_library(data):
                    # ASCII bytes naming no HTTP library fail `passes_gate` whatever the cache holds (an entry is
                    # marked gated only when they passed). Most modules of a project are that, and a cold solve
                    # decoded, hashed and looked each of them up for nothing. One that would not decode (a NUL
                    # byte, a bad cookie) is left to phase 2, which reads it again and leaves it out.
                    rest.append(path)
                    continue
                got = self._entry(path, options, (data, decode_source(data)))
            except SourceError:
                continue
            if got is None:
                continue
            data, text, digest, entry = got
            gated = entry.get("gated")
            if gated is None:
                # Not kept when false: the gate costs less than writing an entry file would (most files of a
                # project fail it, and a file's creation cost more than twice the whole gate and summary).
                gated = passes_gate(data, text, options)
            if gated:
                found[path] = self._summarized(path, options, text, digest, entry, gated=True)
            else:
                rest.append(path)
        return found, rest

    def search(self, paths: List[str], needles: Any) -> Dict[str, Optional[Summary]]:
        from .project import matched_text
        from .source_files import SourceError, read_bytes

        found: Dict[str, Optional[Summary]] = {}
        for path in paths:
            options = self.options_of(path)
            try:
                data = read_bytes(path, options.max_file_size)
                text = matched_text(data, needles)  # before the hash and the entry: most files match nothing
                if text is None:
                    continue
                got = self._entry(path, options, (data, text))
            except SourceError:
                continue
            if got is not None:
                found[path] = self._summarized(path, options, got[1], got[2], got[3])
        return found

    def summary(self, path: str) -> Optional[Summary]:
        options = self.options_of(path)
        got = self._entry(path, options)
        return None if got is None else self._summarized(path, options, got[1], got[2], got[3])

    def words(self, paths: Iterable[str], project_words: Any) -> Iterator[Any]:
        """project.Words: each file's words for the gate's word index, its bytes read as `search` reads them."""
        from .project import searchable
        from .source_files import SourceError, decode_source, read_bytes
        from .word_index import file_words

        for path in paths:
            try:
                data = read_bytes(path, self.options_of(path).max_file_size)
                found = file_words(searchable(data, None if data.isascii() else decode_source(data)), project_words)
            except SourceError:
                found = None
            yield found
