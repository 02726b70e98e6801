"""The project gate's two phases (project.First, read and gate every module; project.Search, the modules whose
bytes name what can matter; project.Words, the rest read for the word index of its later rounds) in worker
processes, each worker through the disk cache as this process would go.

`fix` (project_run.py) and the flake8 plugin (plugin_project.py) run them so; they differ only in where a
module's options come from (`ResolvedOptions`: each file's settings key against the command line's;
`FixedOptions`: flake8's one set) and in whether the summaries keep their module's findings for the plugin.
`check` runs the same phases in its own workers, beside each file's check (project_check.py).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Tuple

from .options import Options


class FixedOptions(NamedTuple):
    """Every module's options are these (the flake8 plugin's)."""

    options: Options

    def of(self, key: Any) -> Options:
        return self.options


class ResolvedOptions(NamedTuple):
    """A module's options are its settings key resolved against the command line's overrides (settings.py)."""

    overrides: Any

    def of(self, key: Any) -> Options:
        from .settings import resolved

        return resolved(self.overrides, key).options


Source = Any  # FixedOptions or ResolvedOptions: hashable and picklable, so it is sent once per worker
First = Callable[[List[str]], Tuple[Dict[str, Any], List[str]]]
Search = Callable[[List[str], Any], Dict[str, Any]]
Words = Callable[[Iterable[str], Any], Iterator[Any]]


def parallel_first(keys: Mapping[str, Any], source: Source, folder: Optional[str], jobs: int,
                   findings: bool = False) -> First:
    """Phase 1 for the paths asked, in `jobs` worker processes. `keys`: each path's settings key (anything,
    for FixedOptions); `findings`: keep each summarized module's findings in its entry (the plugin's)."""
    from .runner import Runner

    def first(paths: List[str]) -> Tuple[Dict[str, Any], List[str]]:
        found: Dict[str, Any] = {}
        rest: List[str] = []
        local = _local_modules(keys.get, source, folder, findings)  # the item of a crashed worker, here
        runner = Runner(_first_job, (source, folder, findings), lambda item: local.first([item[0]]), jobs)
        for one_found, one_rest in runner.run(_keyed(keys, paths)):
            found.update(one_found)
            rest.extend(one_rest)
        return found, rest

    return first


def parallel_search(keys: Mapping[str, Any], source: Source, folder: Optional[str], jobs: int, pool_at: int,
                    findings: bool = False) -> Search:
    """Phase 2, as `parallel_first`; in this process when fewer than `pool_at` paths are searched."""
    from .runner import Runner

    def search(paths: List[str], needles: Any) -> Dict[str, Any]:
        found: Dict[str, Any] = {}
        local = _local_modules(keys.get, source, folder, findings)
        runner = Runner(_search_job, (source, folder, findings, needles),
                        lambda item: local.search([item[0]], needles), jobs if len(paths) >= pool_at else 1)
        for one in runner.run(_keyed(keys, paths)):
            found.update(one)
        return found

    return search


def parallel_words(keys: Mapping[str, Any], source: Source, folder: Optional[str], jobs: int) -> Words:
    """The reading of the gate's word index (project.Words), as `parallel_first`."""
    from .runner import Runner

    def words(paths: Iterable[str], project_words: Any) -> Iterator[Any]:
        local = _local_modules(keys.get, source, folder, False)
        runner = Runner(_words_job, (source, project_words), lambda item: next(local.words([item[0]], project_words)),
                        jobs)
        return runner.run(_keyed(keys, paths))

    return words


def _keyed(keys: Mapping[str, Any], paths: Iterable[str]) -> Iterator[Tuple[str, Any]]:
    """Each path with its settings key (a table of a run's files looks them up a batch at a time)."""
    many = getattr(keys, "keyed", None)
    return many(paths) if many is not None else ((path, keys.get(path)) for path in paths)


def _local_modules(key_of: Callable[[str], Any], source: Source, folder: Optional[str], findings: bool) -> Any:
    from .project_cache import LocalModules, ProjectCache

    return LocalModules(lambda path: source.of(key_of(path)), ProjectCache(folder) if folder else None,
                        findings=findings)


# Per worker: the LocalModules of each (source, cache folder, findings), and the settings key of the path it
# works on. Only that one: kept for every path given, a worker of a 100,000-file search grew by 6 MiB.
_LOCAL: Dict[Tuple[Source, Optional[str], bool], Any] = {}
_KEYS: Dict[str, Any] = {}


def _working_on(path: str, key: Any) -> None:
    _KEYS.clear()
    _KEYS[path] = key


def _local(shared: Tuple[Source, Optional[str], bool]) -> Any:
    if shared not in _LOCAL:
        _LOCAL[shared] = _local_modules(_KEYS.__getitem__, *shared)
    return _LOCAL[shared]


def _first_job(shared: Tuple[Source, Optional[str], bool], item: Tuple[str, Any]) -> Tuple[Dict[str, Any], List[str]]:
    """In a worker: phase 1 for one file (its summary kept in the cache when there is one)."""
    from .project import packed

    path, key = item
    _working_on(path, key)
    found, rest = _local(shared).first([path])
    return {path: packed(summary) for path, summary in found.items()}, rest  # project.Summaries holds them so


def _words_job(shared: Tuple[Source, Any], item: Tuple[str, Any]) -> Any:
    """In a worker: one file's words for the gate's word index (read as `_search_job` reads it, no cache)."""
    source, project_words = shared
    path, key = item
    _working_on(path, key)
    return next(_local((source, None, False)).words([path], project_words))


def _search_job(shared: Tuple[Source, Optional[str], bool, Any], item: Tuple[str, Any]) -> Dict[str, Any]:
    """In a worker: phase 2 for one file."""
    from .project import packed

    source, folder, findings, needles = shared
    path, key = item
    _working_on(path, key)
    found = _local((source, folder, findings)).search([path], needles)
    return {path: packed(summary) for path, summary in found.items()}
