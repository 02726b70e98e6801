"""One shard of a run split across CI jobs: the rest of its project (`--project-from FILE`), which the project
model reads but the shard neither reports nor fixes.

A shard lists part of a project (`--files-from shard.txt`) and names the whole of it (`--project-from
all.txt`). The model then solves the same program in every shard, in the project list's order, so each finding
comes out exactly once, in the shard holding its file, with the message an unsharded run gives; and a change
across modules (fix_across.py) is carried out by the shard holding its first file, and left alone by the others.
Problems with the project's other files are left to the shards that hold them.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Iterator, List, TextIO


def project_paths(name: str, stdin: TextIO) -> List[str]:
    """The paths `--project-from` lists. A list that cannot be read is a usage error: the shard would run on a
    project model that lacks the other shards' files and silently lose their findings across modules."""
    from .cli import UsageError
    from .discovery import paths_from_file

    unreadable: List[str] = []

    def on_error(path: str, reason: str) -> None:
        if path == name:
            unreadable.append(reason)

    paths = list(paths_from_file(name, stdin, on_error))
    if unreadable:
        raise UsageError(f"--project-from {name}: {unreadable[0]}")
    return paths


def quietly(*_: Any, **__: Any) -> None:
    """What a shard does with a problem of a file it only reads for the model: nothing (its own shard says it)."""


def project_candidates(resolver: Any) -> Callable[[Iterable[str]], Iterator[Any]]:
    """Discovery of the project's files, each keyed with its settings, reporting nothing."""
    from .discovery import Discovery

    discovery = Discovery(resolver, quietly)

    def candidates(paths: Iterable[str]) -> Iterator[Any]:
        return iter(resolver.keyed(discovery.candidates(paths), quietly))

    return candidates


def context_candidates(name: str, stdin: TextIO, resolver: Any) -> Iterator[Any]:
    """`check`'s view of `--project-from`: the Python candidates of the project, in the list's order, as they
    are found (the list is read first: one that cannot be read is a usage error before any file is)."""
    paths = project_paths(name, stdin)
    return _python_candidates(paths, resolver)


def _python_candidates(paths: Iterable[str], resolver: Any) -> Iterator[Any]:
    from .discovery import PYTHON

    return (candidate for candidate in project_candidates(resolver)(paths) if candidate.kind == PYTHON)


def stdin_project(path: str, resolver: Any) -> List[Any]:
    """`check -`'s project when --project-from gives none: the Python files of --stdin-filename's project, found
    and listed as the flake8 plugin finds and lists them (none over its PROJECT_LIMIT), keyed with their
    settings; empty when the file has no project root above it."""
    from .plugin_project import at_most, project_files, project_limit, root_of
    from .project_cache import CACHE_DIR_NAME

    root = root_of(path)
    files = at_most(project_files(root, (), CACHE_DIR_NAME), project_limit()) if root is not None else None
    return list(_python_candidates(files, resolver)) if files else []


def stdin_seeds(path: str, resolver: Any, open_cache: Callable[[List[str]], Any],
                note: Callable[[str], None]) -> Dict[str, Any]:
    """`check -`'s seeds for an editor's buffer of `path` (absolute) when the buffer is all the run checks: those
    of that file alone, from the modules of its project that can matter to it (focus.py), as the flake8 plugin
    answers for the few files it is named: a buffer checked with a cold cache costs those modules, not a solve
    of the whole project. `open_cache(files)`: the project cache for the project's files, or None. A failure of
    the model costs the findings across modules, said through `note`, as in project_check."""
    import os

    from .focus import focused_seeds
    from .project_run import model_failed
    from .settings import resolved

    candidates = stdin_project(path, resolver)
    keys = {os.path.abspath(candidate.path): candidate.key for candidate in candidates}
    if len(keys) < 2 or path not in keys:
        return {}  # no project to solve (as project_check solves none), or the buffer's file is not of it
    files = list(keys)
    try:
        seeds = focused_seeds([path], files, lambda file: resolved(resolver.overrides, keys[file]).options,
                              open_cache(files))
    except Exception as error:  # noqa: BLE001 - see the docstring
        model_failed(error, note)
        return {}
    return {path: seeds[path]} if path in seeds else {}
