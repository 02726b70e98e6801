"""`check` with the project model: each file is parsed once, in a worker, for its findings and its summary.

1. Every file goes to the workers once: a Python file is read, hashed and looked up in the cache; on a miss it
   is checked alone (no seeds) and, when it passes phase 1 of the gate, summarized from the same Analysis the
   check built. The worker returns the report and the summary; both are cached.
2. The main process runs the solve (project.project_seeds); phase 2 of the gate (the remaining files whose
   bytes name what can matter) runs in the workers too, each file summarized once.
3. Only the files that get seeds (few) are checked again, with them (cached under their seeds' digest).

The main process holds the summaries (small) and the reports, never a tree.
"""

from __future__ import annotations

import functools
import pickle
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from . import cache_shapes as shapes
from . import ondisk
from .discovery import Candidate
from .project_cache import (MISSING, ProjectCache, StatMemo, blake2b, codes_key, content_hash, facts_key,
                            log_parse, options_fingerprint, seeds_key, text_key)

Summary = Dict[str, Any]
_FIRST, _REST, _OTHER = "first", "rest", "other"
SOLVE_MARK = "(solve)"  # written to the parse log (a test hook) when the project is solved, not read from the cache


# Below these counts the files are read for patches, or marked, in the main process (see gather_roots).
_POOL_AT_FILES = 200
_POOL_AT_MARKS = 4

_opened: Dict[str, ProjectCache] = {}  # per process: the cache of each folder, opened once


def _open(folder: Optional[str]) -> Optional[ProjectCache]:
    """The cache in a worker: the main process has made the folder (or said it cannot). The project facts that
    fix classes need (fix_facts.project_patches) are kept in it too."""
    from .fix_facts import use_cache

    if not folder:
        return None
    if folder not in _opened:
        _opened[folder] = ProjectCache(folder)
        use_cache(_opened[folder])
    return _opened[folder]


def _python_result(path: str, settings: Any, cache: Optional[ProjectCache], seeds: Any = None,
                   want_summary: bool = True) -> Tuple[Any, str, Optional[Summary], Optional[str]]:
    """One Python file's check result (unseeded, or under `seeds`), through the cache; with, when it passes
    phase 1 of the gate, its summary. (result, _FIRST or _REST, summary, content hash or None)."""
    from .checking import FileResult, check_source
    from .discovery import PYTHON
    from .project import _summary_analysis
    from .source_files import SourceError, read_bytes

    options = settings.options
    try:
        data = read_bytes(path, options.max_file_size)
    except SourceError as error:
        return FileResult(path, error=error.reason, where=error.where), _REST, None, None
    digest = content_hash(data)
    fingerprint = options_fingerprint(options)
    entry = cache.load(path, fingerprint, digest) if cache is not None else {}
    codes = codes_key(settings.codes)
    if seeds is not None:
        key = (codes, seeds_key(seeds))
        result = entry.get("seeded", {}).get(key)
        if result is not None:
            result = result._replace(path=path)  # cached under another spelling of the path (`./a.py`, `a.py`)
        else:
            log_parse(path)
            result = check_source(path, data, PYTHON, options, settings.codes, seeds)
            if cache is not None:
                seeded = dict(entry.get("seeded", {}))
                seeded[key] = result
                cache.store(path, fingerprint, digest, dict(entry, seeded=seeded))
        return result, _FIRST, None, digest
    result = entry.get("results", {}).get(codes)
    gated = entry.get("gated")
    if result is not None and gated is not None and (not gated or "summary" in entry):
        # The entry is the file's whatever the path's spelling (`./a.py`, `a.py`, absolute): shown as given now.
        return result._replace(path=path), _FIRST if gated else _REST, entry.get("summary"), digest
    held: List[Any] = []
    walked: List[Tuple[str, List[Any]]] = []
    log_parse(path)
    result = check_source(path, data, PYTHON, options, settings.codes, on_analysis=held.append,
                          on_found=lambda text, found: walked.append((text, found)))
    # Walked means past phase 1 of the gate (check_source walks exactly those; unseeded, nothing else reaches
    # the walk); not walked: nothing to find here (phase 2 may still want it), or it does not parse.
    gated = bool(held)
    summary = _summary_analysis(held[0], options) if held else None
    if held:
        held.clear()  # the walk's analysis and tree: garbage only once nothing here holds them
        _collect(len(data))
    if cache is not None:
        results = dict(entry.get("results", {}))
        results[codes] = result
        record = dict(entry, results=results, gated=gated)
        if gated:
            record["summary"] = summary
        if walked:  # unseeded: what the flake8 plugin reports for this text (plugin_project.known_findings)
            record["findings"] = (text_key(walked[0][0]), list(walked[0][1]))
        cache.store(path, fingerprint, digest, record)
    return result, _FIRST if gated else _REST, summary, digest


_frozen = False
# The source bytes walked since the last collection, and how many may be walked before the next: a collection
# after every file cost a tenth of the engine on a project of small modules (each one looks at everything the
# run holds, not only the garbage). This much source leaves less garbage than one large module's walk, so the
# peak stays where the largest module puts it (1 and 100 copies of the 10,000-file tree's first part: 30 and
# 37 MiB, as before).
_walked = 0
_COLLECT_AFTER_BYTES = 64 * 1024


def _collect(size: Optional[int] = None) -> None:
    """Free the walks just done now, not at some later full collection: a tree and its analysis hold reference
    cycles, and a worker otherwise carried the garbage of many files (its peak memory grew with the tree). After
    the first collection, what is left (modules, the run's own lists) is frozen, so the later ones look at little
    more than the garbage; frozen before it, the garbage of the walks so far was never freed. `size`: the bytes
    of the module just walked (the collection waits until `_COLLECT_AFTER_BYTES` have been); None collects now."""
    import gc

    global _frozen, _walked
    if size is not None:
        _walked += size
        if _walked < _COLLECT_AFTER_BYTES:
            return
    _walked = 0
    gc.collect()
    if not _frozen:
        gc.freeze()
        _frozen = True


def _classes_cache(path: str, settings: Any, cache: Optional[ProjectCache], digest: Optional[str],
                   seeds: Any = None, count: int = 0
                   ) -> Optional[Callable[[Callable[[], List[Optional[str]]]], List[Optional[str]]]]:
    """For reporting.annotate: the fix classes of a file's `count` findings through the cache, kept in the
    file's entry under its codes, seeds and project facts (the patches of the whole project among them), so a
    warm run plans no fix to mark its findings. None without a cache."""
    if cache is None or digest is None:
        return None

    def classes_of(compute: Callable[[], List[Optional[str]]]) -> List[Optional[str]]:
        from .fix_facts import facts_for_file

        facts = facts_for_file(path, settings.fix_facts())
        key = (codes_key(settings.codes), seeds_key(seeds) if seeds is not None else "", facts_key(facts))
        fingerprint = options_fingerprint(settings.options)
        entry = cache.load(path, fingerprint, digest)
        known = entry.get("classes", {}).get(key)
        if known is not None and len(known) == count:  # one per finding: a list of another length dropped some
            return known
        found = compute()
        if entry:  # the file's entry is written by its check first; an entry gone meanwhile is not made here
            cache.store(path, fingerprint, digest, dict(entry, classes={**entry.get("classes", {}), key: found}))
        return found

    return classes_of


def first_job(shared: Any, candidate: Any) -> Tuple[Any, str, Optional[Summary], Optional[str]]:
    """In a worker: one candidate's result, and for a Python file its place in the gate, its summary and its
    content hash. A Python file's findings are marked with their fixes later (`mark_job`), once the run knows
    its project's facts; another file's report is complete here."""
    from .discovery import PYTHON
    from .reporting import annotate
    from .settings import resolved

    from .project import packed

    overrides, folder = shared
    settings = resolved(overrides, candidate.key)
    if candidate.kind != PYTHON:
        from .checking import check_file

        result = check_file(candidate.path, candidate.kind, settings.options, settings.codes)
        return annotate(result, candidate.kind, settings.fix_facts(), facts_path=candidate.path), _OTHER, None, None
    result, place, summary, digest = _python_result(candidate.path, settings, _open(folder))
    return result, place, packed(summary), digest  # held packed by the main process (project.Summaries)


def _parsed_anyway(candidate: Any, overrides: Any) -> Any:
    """A file's check result with its parse forced: its syntax error, when it has one (few files, here)."""
    from .checking import check_file_parsed
    from .settings import resolved

    settings = resolved(overrides, candidate.key)
    return check_file_parsed(candidate.path, settings.options, settings.codes, candidate.hot)


def seeded_job(shared: Any, candidate: Any) -> Any:
    """In a worker: one Python file checked again under the seeds the solve gave it (its result, unmarked)."""
    from .settings import resolved

    overrides, folder = shared
    settings = resolved(overrides, candidate.key)
    return _python_result(candidate.path, settings, _open(folder), seeds=candidate.hot)[0]


def patch_job(shared: Any, item: Tuple[str, Any]) -> Tuple[str, ...]:
    """In a worker: the patch targets of one file of a project (fix_facts.file_patch_targets), given the words
    of its root (`item`: the path and what the shared words are looked up by, its root or the root's number)."""
    from .fix_facts import file_patch_targets

    folder, words = shared
    _open(folder)
    path, root = item
    return file_patch_targets(path, words[root])


def _patch_runner(shared: Any, workers: int) -> Any:
    """A runner of patch_job. Chunks four times the default: most files take a read and a byte search, and a
    chunk's round trip to a worker cost more than that. A file whose worker died is read in this process:
    taken as none (as its patches were), a patch there that a fix would bypass went unseen and the fix was
    offered; if the read kills this process too, the run stops before it has fixed anything."""
    from .runner import CHUNK_SIZE, Runner

    return Runner(patch_job, shared, lambda item: patch_job(shared, item), workers, chunk_size=4 * CHUNK_SIZE)


def mark_job(shared: Any, item: Tuple[Any, Any, Optional[str]]) -> Any:
    """In a worker: a Python file's findings marked with the fix `fix` would make at each (reporting.annotate),
    with the project facts the run gathered."""
    from .fix_facts import know_roots
    from .reporting import annotate
    from .settings import resolved

    overrides, folder, roots = shared
    candidate, result, digest = item
    know_roots(roots)
    settings = resolved(overrides, candidate.key)
    classes_of = _classes_cache(candidate.path, settings, _open(folder), digest, candidate.hot, len(result.findings))
    return annotate(result, candidate.kind, settings.fix_facts(), facts_path=candidate.path, classes_of=classes_of)


def _unmarked(item: Tuple[Any, Any, Optional[str]]) -> Any:
    from .reporting import FileReport, Reported

    result = item[1]
    return FileReport(result, tuple(Reported(found) for found in result.findings))


def gather_roots(roots: List[str], cache: Optional[ProjectCache], jobs: int) -> Dict[str, Tuple[FrozenSet[str], bool]]:
    """The fix facts of each project root, (patched, requests_232), for fix_facts.know_roots: every Python file
    of the roots read for patches once, in the workers. With a cache, a file that looks as it did last time
    (project_cache.StatMemo) is not read again: one edited test file is one file read.

    The roots' files are walked, not listed in memory: the files to read are listed on disk (ondisk.py), and
    only the targets found are kept (most files patch nothing)."""
    from .fix_facts import pins_requests_232

    folder = cache.folder if cache is not None else None
    db = ondisk.database()
    try:
        # Each root walked once: its files listed on disk as its words are found.
        db.execute("CREATE TABLE files(n INTEGER PRIMARY KEY, path BLOB NOT NULL, root INTEGER NOT NULL)")
        db.execute("CREATE TABLE todo(n INTEGER PRIMARY KEY, path BLOB NOT NULL, root INTEGER NOT NULL, "
                   "signature BLOB)")
        words = dict(zip(roots, _listed_roots(db, roots, "files")))
        # A file's targets are kept under its root's words: a module added under a new name may make a test's
        # patches matter that did not before.
        memos = {root: StatMemo(cache, "r", _root_key(root, words[root]), shapes.per_file(shapes.strings))
                 for root in roots}
        patched: Dict[str, Set[str]] = {root: set() for root in roots}

        def unknown() -> Iterator[Tuple[bytes, int, Optional[bytes]]]:
            for data, number in ondisk.rows(db, "SELECT path, root FROM files ORDER BY n"):
                root, path = roots[number], ondisk.text(data)
                signature, known = memos[root].get(path, "")
                if known is MISSING:
                    yield data, number, pickle.dumps(signature)
                else:
                    patched[root].update(known)

        count = ondisk.insert_all(db, "INSERT INTO todo(path, root, signature) VALUES (?, ?, ?)", unknown())
        # A few files are read here: a pool costs more than reading them (and each pool started is one more fork
        # of a process that runs threads).
        workers = jobs if count >= _POOL_AT_FILES else 1
        items = ((ondisk.text(path), roots[number], signature) for path, number, signature
                 in ondisk.rows(db, "SELECT path, root, signature FROM todo ORDER BY n"))
        for (path, root, signature), found in _each_with(items, lambda each: _patch_runner(
                (folder, words), workers).run(item[:2] for item in each)):
            patched[root].update(found)
            memos[root].put(path, pickle.loads(signature), "", found)
        for memo in memos.values():
            memo.save()
    finally:
        db.close()
    return {root: (frozenset(patched[root]), pins_requests_232(root)) for root in roots}


def _listed_roots(db: Any, roots: List[str], table: str) -> List[FrozenSet[bytes]]:
    """Each root walked once, its Python files listed in `table` of `db` (path, root's number) as its words
    (fix_facts.project_words) are found; the words of each root (roots with the same words share one set)."""
    from .fix_facts import project_python_files, project_words

    alike: Dict[FrozenSet[bytes], FrozenSet[bytes]] = {}
    words = []
    for number, root in enumerate(roots):
        found = project_words(root, _listed(db, project_python_files(root), number, table))
        words.append(alike.setdefault(found, found))
    return words


def _listed(db: Any, paths: Iterable[str], root: int, table: str) -> Iterator[str]:
    """`paths`, each written to `table` of `db` under `root` as it goes by (a batch at a time)."""
    sql = f"INSERT INTO {table}(path, root) VALUES (?, ?)"
    batch: List[Tuple[bytes, int]] = []
    for path in paths:
        batch.append((ondisk.blob(path), root))
        if len(batch) >= ondisk.BATCH:
            ondisk.insert_all(db, sql, batch)
            batch = []
        yield path
    ondisk.insert_all(db, sql, batch)


class PendingPatches:
    """The fix facts of a run's project roots as `fix --check` gathers them: each file its phase 1 reads gives
    its patches from that read (fix_command._planning_job), and the roots' other files are read for them
    afterwards (`facts`). gather_roots read every file once more, up front: 1.3 s of the 10,000-file tree's 5.5 s.

    The roots' files are listed as gather_roots lists them, in `db` (the run's target table's), each with the
    roots whose walk meets it: a file gives its patches to each of them, under that root's words."""

    def __init__(self, db: Any, roots: List[str], jobs: int) -> None:
        from .fix_facts import pins_requests_232

        self.db, self.roots, self.jobs = db, roots, jobs
        db.execute("CREATE TEMP TABLE root_files(n INTEGER PRIMARY KEY, path BLOB NOT NULL, root INTEGER NOT NULL, "
                   "read INTEGER NOT NULL DEFAULT 0)")
        self.words: Tuple[FrozenSet[bytes], ...] = tuple(_listed_roots(db, roots, "root_files"))
        db.execute("CREATE INDEX root_files_path ON root_files(path)")
        self.pins = [pins_requests_232(root) for root in roots]
        self.patched: List[Set[str]] = [set() for _ in roots]
        self._read: List[bytes] = []
        self._known: Optional[Dict[str, Tuple[FrozenSet[str], bool]]] = None

    def provisional(self) -> Dict[str, Tuple[FrozenSet[str], bool]]:
        """The roots' facts but their patches (fix_facts.know_roots with `pending`)."""
        return {root: (frozenset(), pins) for root, pins in zip(self.roots, self.pins)}

    def roots_of(self, paths: List[str]) -> Dict[str, Tuple[int, ...]]:
        """Absolute path -> the numbers of the roots whose walk meets it, for those of `paths` any does."""
        found: Dict[str, Tuple[int, ...]] = {}
        for data, root in ondisk.rows_in(self.db, "SELECT path, root FROM root_files WHERE path IN ({marks}) "
                                                  "ORDER BY n", paths):
            path = ondisk.text(data)
            found[path] = found.get(path, ()) + (root,)
        return found

    def read(self, path: str, patches: Iterable[Tuple[int, Tuple[str, ...]]]) -> None:
        """The file at `path` (absolute) was read: what it patches under each of its roots."""
        for number, targets in patches:
            self.patched[number].update(targets)
        self._read.append(ondisk.blob(path))
        if len(self._read) >= ondisk.BATCH:
            self._flush()

    def _flush(self) -> None:
        ondisk.insert_all(self.db, "UPDATE root_files SET read = 1 WHERE path = ?", ((path,) for path in self._read))
        self._read = []

    def facts(self) -> Dict[str, Tuple[FrozenSet[str], bool]]:
        """Each root's facts, (patched, requests_232): the files not read yet are read for them now, once."""
        if self._known is None:
            self._flush()
            count = self.db.execute("SELECT COUNT(*) FROM root_files WHERE read = 0").fetchone()[0]
            # Each file with its root's number: patch_job looks the words up by it (here a tuple of them).
            items = ((ondisk.text(path), number) for path, number in ondisk.rows(
                self.db, "SELECT path, root FROM root_files WHERE read = 0 ORDER BY n"))
            runner = _patch_runner((None, self.words), self.jobs if count >= _POOL_AT_FILES else 1)
            for (_, number), found in _each_with(items, runner.run):
                self.patched[number].update(found)
            self._known = {root: (frozenset(patched), pins)
                           for root, patched, pins in zip(self.roots, self.patched, self.pins)}
        return self._known


def _each_with(items: Iterable[Any], results_of: Callable[[Iterable[Any]], Iterable[Any]]
               ) -> Iterator[Tuple[Any, Any]]:
    """Each item with its result, `results_of` taking the items as they come and giving one result per item in
    their order (a runner): the items are held only while they are in flight."""
    from collections import deque

    waiting: Any = deque()

    def given() -> Iterator[Any]:
        for item in items:
            waiting.append(item)
            yield item

    for result in results_of(given()):
        yield waiting.popleft(), result


def _root_key(root: str, words: FrozenSet[bytes]) -> str:
    from .fix_facts import patches_key

    return patches_key("root\0" + root + "\0" + content_hash(b"\0".join(sorted(words))))


def search_job(shared: Any, item: Tuple[str, Any]) -> Tuple[str, bool, Optional[Summary]]:
    """In a worker: phase 2 of the gate for one file: whether its bytes name what can matter, and its summary
    (project.packed)."""
    from .project import matched_text, packed
    from .project_cache import summary_of_text
    from .settings import resolved
    from .source_files import SourceError, read_or_none

    overrides, folder, needles = shared
    path, key = item
    options = resolved(overrides, key).options
    data = read_or_none(path, options.max_file_size)
    try:
        text = matched_text(data, needles) if data is not None else None
    except SourceError:  # left out, as project_cache.read_module leaves it out
        text = None
    if text is None:
        return path, False, None
    cache = _open(folder)
    digest = content_hash(data)
    fingerprint = options_fingerprint(options)
    entry = cache.load(path, fingerprint, digest) if cache is not None else {}
    if "summary" in entry:
        return path, True, packed(entry["summary"])
    summary = summary_of_text(path, text, options)
    if cache is not None:
        cache.store(path, fingerprint, digest, dict(entry, summary=summary))
    return path, True, packed(summary)


def words_job(shared: Any, item: Tuple[str, Any]) -> Any:
    """In a worker: one file's words for the gate's word index (project.Words), its bytes read as `search_job`
    reads them."""
    from .project import searchable
    from .project_cache import read_module
    from .settings import resolved
    from .word_index import file_words

    overrides, project_words = shared
    path, key = item
    got = read_module(path, resolved(overrides, key).options)
    return file_words(searchable(*got), project_words) if got is not None else None


def _crashed_search(item: Tuple[str, Any]) -> Tuple[str, bool, Optional[Summary]]:
    return item[0], False, None


_INDEX_FORMAT = 1
_NEEDLES_KEPT = 4  # the needles a file was last missed by, in the stat memo of phase 2


_TAGS: Dict[Tuple[Any, Any], Tuple[str, str]] = {}


def _settings_tag(overrides: Any, key: Any) -> Tuple[str, str]:
    """What a file's results depend on besides its bytes: its options and its selection of codes."""
    tag = _TAGS.get((overrides, key))
    if tag is None:
        from .settings import resolved

        settings = resolved(overrides, key)
        tag = _TAGS[(overrides, key)] = (options_fingerprint(settings.options), codes_key(settings.codes))
    return tag


def _needles_key(needles: Any) -> str:
    """A digest of phase 2's needles that is the same in every process (a frozenset's order is not)."""
    direct, through = needles
    stable = (sorted((token, sorted(names)) for token, names in direct.items()),
              sorted((folder, sorted((token, sorted(names)) for token, names in below.items()))
                     for folder, below in through.items()))
    return content_hash(repr(stable).encode("utf-8", "surrogatepass"))


def _first_results(table: Any, overrides: Any, cache: Optional[ProjectCache], jobs: int,
                   crashed_first: Callable[[Any], "_Outcome"], own_only: bool = False) -> None:
    """Phase 1 for every file of `table` (file_table.FileTable), or for the run's own files only (`own_only`):
    first_job's outcome of each, written to it.

    With a cache, a stat index (project_cache.StatMemo, one per command line) holds each Python file's findings
    and place in the gate beside its signature on disk and its settings: a file that looks as it did, under the
    same settings, is neither read nor sent to a worker, so a warm run costs a stat per file. The files it does
    not vouch for are listed on disk first, then sent to the workers."""
    from .checking import FileResult
    from .discovery import PYTHON
    from .runner import RENEW_AFTER, Runner

    memo = StatMemo(cache, "i", repr((_INDEX_FORMAT, overrides)), shapes.per_file(shapes.phase_one))
    folder = cache.folder if cache is not None else None
    db = table.db
    given = (row for row in table.everything() if row[5] or not own_only)
    if cache is None:
        todo: Iterable[Tuple[Any, ...]] = ((*row[:5], None) for row in given)
    else:
        db.execute("CREATE TEMP TABLE todo(n INTEGER PRIMARY KEY, asked BLOB)")

        def vouched() -> Iterator[Tuple[int, str, Optional[str], bool, Optional[bytes], Any]]:
            todo_rows: List[Tuple[int, Optional[bytes]]] = []
            for n, path, kind, key, absolute, _ in given:
                asked = None
                if kind == PYTHON:
                    tag = _settings_tag(overrides, table.keys[key])
                    signature, known = memo.get(absolute, tag)
                    if known is not MISSING:
                        findings, place, digest = known
                        yield n, place, digest, place == _FIRST, None, FileResult(path, findings) if findings else None
                        continue
                    asked = pickle.dumps((absolute, signature, tag))
                todo_rows.append((n, asked))
                if len(todo_rows) >= 1024:
                    ondisk.insert_all(db, "INSERT INTO todo VALUES (?, ?)", todo_rows)
                    todo_rows = []
            ondisk.insert_all(db, "INSERT INTO todo VALUES (?, ?)", todo_rows)

        table.record(vouched())
        todo = ((n, ondisk.text(path), kind, key, ondisk.text(absolute), asked) for n, path, kind, key, absolute, asked
                in ondisk.rows(db, "SELECT files.n, files.path, files.kind, files.key, files.absolute, todo.asked "
                                   "FROM todo JOIN files USING (n) ORDER BY n"))
    asked: Dict[int, Any] = {}  # n -> (absolute path, signature, tag), for the files in the workers now
    paths: Dict[int, str] = {}

    def items() -> Iterator[Any]:
        for n, path, kind, key, _, question in todo:
            if question is not None:
                asked[n] = question
            paths[n] = path
            yield n, Candidate(path, kind, table.keys[key])

    def outcomes() -> Iterator[Tuple[int, str, Optional[str], bool, Optional[bytes], Any]]:
        run = Runner(_numbered_first, (overrides, folder), lambda item: (item[0], *crashed_first(item[1])), jobs,
                     renew_after=RENEW_AFTER, weight=_parsed)
        for n, report, place, summary, digest in run.run(items()):
            question = asked.pop(n, None)
            if question is not None and place != _OTHER and digest is not None and report.error is None and (
                    place == _REST or summary is not None):
                memo.put(*pickle.loads(question), (report.findings, place, digest))
            yield n, place, digest, False, summary, _kept(report, paths.pop(n))

    table.record(outcomes())
    if cache is not None:
        db.execute("DROP TABLE todo")
    memo.save()


def _parsed(outcome: Tuple[Any, ...]) -> int:
    """What one outcome of `_numbered_first` counts towards its pool's renewal: 1 for a file it parsed."""
    return 1 if outcome[2] == _FIRST else 0


def _numbered_first(shared: Any, item: Tuple[int, Any]) -> Tuple[Any, ...]:
    """first_job for a numbered candidate: (n, *its outcome)."""
    return (item[0], *first_job(shared, item[1]))


def _kept(report: Any, path: str) -> Any:
    """What the file table keeps of a phase-1 report: nothing for a clean Python file's (on a big tree almost
    every file is clean; its report is made again when it is reported)."""
    from .checking import FileResult

    if type(report) is FileResult and not report.findings and report.error is None and report.path == path:
        return None
    return report


_Outcome = Tuple[Any, str, Optional[Summary], Optional[str]]


def project_results(table: Any, overrides: Any, cache: Optional[ProjectCache], jobs: int,
                    crashed: Callable[[Any], Any], note: Callable[[str], None],
                    on_seeds: Optional[Callable[[Dict[str, Any]], None]] = None,
                    focused: bool = False) -> Iterator[Any]:
    """Every reported file's report, in order, with the findings the whole project makes (see the module
    docstring). `table`: the run's files (file_table.FileTable), its own and, when this run is one shard of a
    project (shards.py, --project-from), the project's other Python files, never reported; the solve takes the
    files in the project's order, as an unsharded run given that list does. `on_seeds` is handed the solve's
    seeds of every module (absolute path -> engine.ModuleSeeds) once they are known.

    `focused` (a shard): phase 1 is the run's own files' only, and the solve answers for them from the modules
    that can matter to them (`_focused_seeds`): the project's other files are read only as far as that needs,
    so shards divide the work. Without it the other files are gated and summarized like the run's own, and
    every module's seeds are the whole project's (`on_seeds`: a buffer of one of them is checked under them).

    A failure of the project model itself (an engine bug) costs the findings across modules, said in one line;
    each file is still reported as checked on its own."""
    from .checking import FileResult
    from .project import project_seeds
    from .project_run import model_failed
    from .reporting import FileReport
    from .runner import CHUNK_SIZE, Runner
    from .settings import resolved

    folder = cache.folder if cache is not None else None
    focused = focused and table.context > 0  # a shard given the whole project is solved as the whole project

    def crashed_first(candidate: Any) -> _Outcome:
        return crashed(candidate), _OTHER, None, None

    _first_results(table, overrides, cache, jobs, crashed_first, own_only=focused)
    modules = table.modules()
    seeds: Dict[str, Any] = {}
    # Files phase 2 of the gate took in (they name what can matter) but could not summarize: one that does not
    # parse is reported like any file the check parses, though its own check (phase 1) passed it over.
    unsummarized: List[str] = []
    if len(modules) >= 2:
        options: Dict[Any, Any] = {}

        def options_of_key(key: Any) -> Any:
            if key not in options:
                options[key] = resolved(overrides, key).options
            return options[key]

        def options_of(path: str) -> Any:
            return options_of_key(modules.one(path)[0])

        def gate_first(paths: Any) -> Tuple[Any, Iterable[str]]:
            # `paths` are `modules`' `.py` files (project.ModuleMap's), in their order: each place's files are read
            # from the table in that order.
            return _Gated(modules, summary_in_cache), (path for path, _, _ in modules.placed(_REST)
                                                       if path.endswith(".py"))

        def summary_in_cache(path: str) -> Optional[Summary]:
            # The stat index vouched for the file: its summary is read from its entry.
            settings = resolved(overrides, modules.one(path)[0])
            return _python_result(path, settings, cache)[2]

        missed = StatMemo(cache, "g", repr((_INDEX_FORMAT, overrides)), shapes.per_file(shapes.strings))

        def search(paths: Iterable[str], needles: Any) -> Dict[str, Optional[Summary]]:
            # A file whose bytes these needles missed before, and that looks as it did, is not read again.
            tag = _needles_key(needles)
            # With a cache, what the stat index needs back of the files in the workers (nothing per file else).
            asked: Dict[str, Tuple[Any, Tuple[str, ...], Tuple[Any, Any]]] = {}

            def wanted() -> Iterator[Tuple[str, Any]]:
                for part in ondisk.batches(paths, ondisk.IN_AT_ONCE):
                    state = modules.state(part)
                    for path in part:
                        key, digest = state[path]
                        signature, known = missed.get(path, (digest, _settings_tag(overrides, key)))
                        if known is MISSING or tag not in known:
                            if signature is not None:
                                asked[path] = (signature, () if known is MISSING else known,
                                               (digest, _settings_tag(overrides, key)))
                            yield path, key

            # Four times the default chunk: most files are a read and a byte search, less than a chunk's round trip.
            runner = Runner(search_job, (overrides, folder, needles), _crashed_search, jobs,
                            chunk_size=4 * CHUNK_SIZE)
            joined: Dict[str, Optional[Summary]] = {}
            for path, took, summary in runner.run(wanted()):
                memo = asked.pop(path, None)
                if took:
                    joined[path] = summary
                elif memo is not None:
                    signature, before, state_now = memo
                    missed.put(path, signature, state_now, (tag, *before[:_NEEDLES_KEPT - 1]))
            unsummarized.extend(path for path, summary in joined.items() if summary is None)
            return joined

        def words(paths: Iterable[str], project_words: Any) -> Iterator[Any]:
            def keyed() -> Iterator[Tuple[str, Any]]:
                for part in ondisk.batches(paths, ondisk.IN_AT_ONCE):
                    state = modules.state(part)
                    for path in part:
                        yield path, state[path][0]

            # A file whose worker died is taken as naming nothing, as `search` takes it.
            return Runner(words_job, (overrides, project_words), lambda item: None, jobs).run(keyed())

        solved_key, state = _solved_key(modules, options_of_key) if cache is not None and not focused else ("", "")
        cached = cache.load_blob("s", solved_key, shapes.check_solved) if solved_key else None
        try:
            if focused:
                log_parse(SOLVE_MARK)
                seeds = _focused_seeds(table, modules, options_of, cache, search, words, summary_in_cache,
                                       (overrides, jobs))
                missed.save()
            elif cached is not None and cached[0] == state:
                seeds = cached[1]  # the same files with the same bytes and settings: the same solve
                unsummarized.extend(cached[2])
            else:
                log_parse(SOLVE_MARK)
                seeds = project_seeds(modules, options_of, cache=cache, first=gate_first, search=search,
                                      words=words)
                missed.save()
                if cache is not None:
                    cache.store_blob("s", solved_key, (state, dict(seeds), tuple(unsummarized)))
        except Exception as error:  # noqa: BLE001 - see the docstring
            model_failed(error, note)
    if on_seeds is not None:
        on_seeds(seeds)
    # The reported Python files the solve gave seeds are checked again with them (few), through a stat index
    # too, under the seeds: a warm run reads none of these files either. Those phase 2 took in but could not
    # summarize are parsed, for their syntax errors.
    again: List[Tuple[int, Any, str, Optional[str]]] = []
    forced: List[Tuple[int, Any, str]] = []
    unparsed = set(unsummarized)
    if seeds or unparsed:
        for n, path, kind, key, absolute, digest in ondisk.rows(
                table.db, "SELECT files.n, files.path, files.kind, files.key, files.absolute, outcomes.digest FROM "
                "files JOIN outcomes USING (n) WHERE files.reported = 1 AND files.kind = 'python' AND "
                "outcomes.place != 'other' ORDER BY n"):
            path, absolute = ondisk.text(path), ondisk.text(absolute)
            if absolute in seeds:
                again.append((n, table.candidate((n, path, kind, key), seeds[absolute]), absolute, digest))
            if absolute in unparsed:
                forced.append((n, table.candidate((n, path, kind, key), seeds.get(absolute)), absolute))
    if again:
        seeded = StatMemo(cache, "i", repr((_INDEX_FORMAT, overrides, "seeded")),
                          shapes.per_file(shapes.findings))
        todo = []
        vouched = []
        for n, candidate, absolute, digest in again:
            tag = (digest, _settings_tag(overrides, candidate.key), seeds_key(candidate.hot))
            signature, known = seeded.get(absolute, tag)
            if known is MISSING:
                todo.append((n, candidate, absolute, signature, tag))
            else:  # on the file's result of phase 1: its error, when it had one, stays
                vouched.append((n, (table.report(n) or FileResult(candidate.path))._replace(findings=known)))
        table.set_report(vouched)
        runner = Runner(seeded_job, (overrides, folder), crashed, jobs)
        results = []
        for (n, candidate, absolute, signature, tag), report in zip(todo, runner.run([item[1] for item in todo])):
            results.append((n, report))
            if not isinstance(report, FileReport) and report.error is None and tag[0] is not None:
                seeded.put(absolute, signature, tag, report.findings)
        table.set_report(results)
        seeded.save()
    table.set_report([(n, _parsed_anyway(candidate, overrides)) for n, candidate, _ in forced
                      if getattr(table.report(n), "error", None) is None])
    hot = {n: candidate.hot for n, candidate, _, _ in again}
    del again, forced
    _mark(table, hot, overrides, cache, jobs)
    for path, report in ondisk.rows(table.db, "SELECT files.path, outcomes.report FROM files LEFT JOIN outcomes "
                                              "USING (n) WHERE files.reported = 1 ORDER BY n"):
        report = pickle.loads(report) if report is not None else FileResult(ondisk.text(path))
        yield report if isinstance(report, FileReport) else FileReport(report)


def _focused_seeds(table: Any, modules: Any, options_of: Callable[[str], Any], cache: Optional[ProjectCache],
                   search: Any, words: Any, in_cache: Callable[[str], Optional[Summary]],
                   pool: Tuple[Any, int]) -> Dict[str, Any]:
    """The seeds of the run's own Python files (a shard's), from the modules that can matter to them (focus.py):
    the modules they call, followed down, and the modules that call their functions, found by phase 2's search
    (`search`, `words`: in the workers) and followed up; the seeds of other files are not to be used.
    `in_cache(path)`: the summary phase 1 left in the cache (`held`) of an own file; `pool`: the run's
    overrides and worker count.

    Phase 1 has summarized the own files that pass its gate; one it passed over is followed, as any such module
    is, through every import of its bytes (phase 2 still summarizes it if it names a function that can
    matter): summarizing each of them to follow what it calls would cost a shard more than the whole project's
    phase 1. Their imports are read in the workers (`imports_job`) and resolved here as they come back (most
    of a shard's files; read here one after another, they were a tenth of its time). The project's other
    modules met on the way down are gated and summarized here, few."""
    from .focus import PLAIN_ROUNDS, called, focused_first, imports
    from .project import ModuleMap, _solve_gated, packed, project_root
    from .project_cache import LocalModules
    from .runner import Runner
    from .source_files import read_or_none

    own = frozenset(ondisk.text(row[0]) for row in ondisk.rows(
        table.db, "SELECT absolute FROM files WHERE reported = 1 AND kind = 'python'"))
    passed = frozenset(path for path, _, _ in modules.placed(_FIRST))  # their summaries stay in the table
    local = LocalModules(options_of, cache)

    def first(paths: List[str]) -> Tuple[Dict[str, Any], List[str]]:
        found: Dict[str, Any] = {}
        rest: List[str] = []
        others: List[str] = []
        for path in paths:
            if path in passed:
                held, data = modules.summary_of(path)
                found[path] = packed(in_cache(path)) if held else data  # packed, as phase 1 left it
            elif path in own:
                rest.append(path)
            else:
                others.append(path)
        if others:
            more, left = local.first(others)
            found.update(more)
            rest.extend(left)
        return found, rest

    mapped = ModuleMap(modules, project_root(modules))
    targets = [path for path in modules if path in own]

    def passed_over() -> Iterator[Tuple[str, Any]]:
        for part in ondisk.batches((path for path, _, _ in modules.placed(_REST)), ondisk.IN_AT_ONCE):
            state = modules.state(part)
            for path in part:
                yield path, state[path][0]

    overrides, jobs = pool
    imported: Dict[str, List[Tuple[str, bool]]] = {}  # the project modules each imports (few, most none)
    runner = Runner(imports_job, (overrides, mapped.stems), lambda item: (item[0], None), jobs)
    for path, names in runner.run(passed_over()):
        if names is not None:
            imported[path] = imports(path, mapped, names)
    gated, followed, _ = called(targets, mapped, first,
                                lambda path: read_or_none(path, options_of(path).max_file_size), lambda path: None,
                                imported.get)
    return _solve_gated(modules, focused_first(gated), search, local.summary, words, plain_rounds=PLAIN_ROUNDS,
                        modules=mapped, toward=(own, frozenset(followed)))


def imports_job(shared: Any, item: Tuple[str, Any]) -> Tuple[str, Optional[List[Tuple[str, List[str]]]]]:
    """In a worker: what one module's bytes import (focus.imported_names), or None when it cannot be read;
    without the imports that can name no module of the project (none of their names is a module's last name,
    `shared`'s stems table: `import os` in a project with no `os.py`), which resolve to nothing."""
    from .focus import imported_names
    from .settings import resolved
    from .source_files import read_or_none

    overrides, stems = shared
    path, key = item
    data = read_or_none(path, resolved(overrides, key).options.max_file_size)
    if data is None:
        return path, None
    return path, [(name, names) for name, names in imported_names(data) if name.startswith(".") or any(
        _may_be_stem(stems, part) for part in [*name.split("."), *names] if part != "*")]


@functools.lru_cache(maxsize=4096)
def _may_be_stem(stems: bytes, word: str) -> bool:
    """project.may_be_stem, once per word in a worker: it is given one table, and asked the same few words
    (`os`, `typing`, the project's own packages) for every file."""
    from .project import may_be_stem

    return may_be_stem(stems, word)


class _Gated:
    """The summaries of phase 1 (project.First's first part), read from the file table as they are asked."""

    def __init__(self, modules: Any, in_cache: Callable[[str], Optional[Summary]]) -> None:
        self.modules = modules
        self.in_cache = in_cache

    def items(self) -> Iterator[Tuple[str, Any]]:
        for path, held, summary in self.modules.placed(_FIRST):
            if path.endswith(".py"):
                yield path, self.in_cache(path) if held else summary


def _mark(table: Any, hot: Dict[int, Any], overrides: Any, cache: Optional[ProjectCache], jobs: int) -> None:
    """Mark the findings of the reported Python files with the fix `fix` would make at each (their results are
    replaced by reports in the table).

    Marking a finding needs its project's facts (the names its tests patch, fix_facts.py): each project is read
    for them once (gather_roots), and only when some file of it has a finding."""
    from .checking import FileResult
    from .fix_facts import project_root
    from .runner import Runner

    query = ("SELECT files.n, files.path, files.kind, files.key, outcomes.digest, outcomes.report FROM files JOIN "
             "outcomes USING (n) WHERE files.n > ? AND files.reported = 1 AND files.kind = 'python' AND "
             "outcomes.place != 'other' AND outcomes.report IS NOT NULL ORDER BY files.n LIMIT ?")

    def wanted() -> Iterator[Tuple[int, Any, Any, Optional[str]]]:
        for n, path, kind, key, digest, report in ondisk.pages(table.db, query):
            result = pickle.loads(report)
            if type(result) is FileResult and result.error is None and result.findings:
                yield n, table.candidate((n, ondisk.text(path), kind, key), hot.get(n)), result, digest

    roots: Dict[str, None] = {}
    count = 0
    for _, candidate, _, _ in wanted():
        count += 1
        root = project_root(candidate.path)
        if root is not None:
            roots.setdefault(root)
    if not count:
        return
    facts = gather_roots(list(roots), cache, jobs)
    folder = cache.folder if cache is not None else None
    workers = jobs if count >= _POOL_AT_MARKS else 1
    runner = Runner(_numbered_mark, (overrides, folder, facts), lambda item: (item[0], _unmarked(item[1:])), workers)
    table.set_report(runner.run(wanted()))


def _numbered_mark(shared: Any, item: Tuple[int, Any, Any, Optional[str]]) -> Tuple[int, Any]:
    return item[0], mark_job(shared, item[1:])


def _solved_key(modules: Any, options_of_key: Callable[[Any], Any]) -> Tuple[str, str]:
    """The cache key of a solve over these files (one entry per set of paths, overwritten when any of them
    changes), and the state it must have been solved from: every file's content hash and settings."""
    fingerprints: Dict[Any, str] = {}

    def fingerprint(key: Any) -> str:
        options = options_of_key(key)
        if options not in fingerprints:
            fingerprints[options] = options_fingerprint(options)
        return fingerprints[options]

    # Hashed a path at a time: the text of a 100,000-file project's state alone is tens of megabytes.
    key = blake2b(digest_size=16)
    state = blake2b(digest_size=16)
    keys = modules.table.keys
    for path, digest, number in modules.with_state():
        key.update(path.encode("utf-8", "surrogatepass") + b"\0")
        state.update(repr((path, digest, fingerprint(keys[number]))).encode("utf-8", "surrogatepass") + b"\0")
    return "check-solved\0" + key.hexdigest(), state.hexdigest()
