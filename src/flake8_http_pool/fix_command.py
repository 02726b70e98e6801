"""The `fix` subcommand: discover files as `check` does, fix each (in worker processes), write, diff or check.

Exit codes, as ruff's: 0 done, every finding fixed (or none found); 1 findings remain that `fix` did not fix
(unsafe fixes held back, report-only rules), or with `--diff` / `--check` a file would change; with
`--exit-zero` 0 in those cases; 2 a usage error or a file that could not be processed (each gets one line on stderr, `path: error: reason`, or for a source Python
refuses flake8's `path:line:col: E999 SyntaxError: ...`; the others are still fixed),
128 + N when stopped by signal N (SIGINT, SIGTERM, SIGHUP), with no file half-written.

Each file has a root it may not be written outside of: the directory argument a walk found it in, or the
working directory for a file named on the command line or in the --files-from list (see `writing.locate`).
`fix -` fixes the source on standard input and prints it (see `_fix_stdin`).
"""

from __future__ import annotations

import argparse
import difflib
import os
import signal
import threading
import time
from collections import Counter
from contextlib import contextmanager
from types import FrameType
from typing import (Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Set, TextIO,
                    Tuple)

from .escaping import shown
from .fix_facts import NO_FACTS, AskNames, FixFacts, NamesElsewhere, project_root
from .options import Options

WRITE, DIFF, CHECK = "write", "diff", "check"
PATCH = "patch"  # --split-by-owner: each changed file's hunks, on its bytes, for owner_patches
# The progress line appears on a terminal only once a run has taken this long (seconds).
PROGRESS_AFTER = 1.0
# Past this many seconds of CPU time fixing one file, the file is skipped and named (--timeout-per-file).
DEFAULT_TIMEOUT = 20.0


class FixTarget(NamedTuple):
    """A file to fix, with the root it may not be written outside of and whether the user named it."""

    path: str
    root: str
    explicit: bool
    key: Any = None  # its settings key (settings.Key): which config's settings it is fixed with
    seeds: Any = None  # engine.ModuleSeeds: what the project model found about it because of other modules
    # Names it defines that other modules of the project name (fix_facts.FixFacts.named_elsewhere); None: unknown.
    named_elsewhere: "Optional[FrozenSet[str] | NamesElsewhere]" = None


class FileFixResult(NamedTuple):
    """What fixing one file gave; `diff` is set in --diff mode for a file that would change."""

    path: str
    changed: bool = False
    applied: Tuple[Tuple[str, int], ...] = ()
    unsafe_left: Tuple[Tuple[str, int], ...] = ()
    error: Optional[str] = None
    diff: Optional[str] = None
    where: Optional[Tuple[int, int]] = None  # set for a source error in flake8's shape (see SourceError)
    remaining: Tuple[Tuple[str, int], ...] = ()  # WRITE mode: findings per code the file still has afterwards
    patch: Optional[bytes] = None  # PATCH mode: the file's diff hunks on its bytes (owner_patches.file_hunks)
    change: Tuple[str, ...] = ()  # the files (absolute) of the change across modules it is part of, its site first
    # Not fixed yet: its plan asked whether the project names these elsewhere (fix_facts.AskNames); nothing of
    # it was written, and it is fixed again once the run knows (_Names).
    asked: FrozenSet[str] = frozenset()
    # A plan of `fix --check`'s phase 1: what it asked of the project's patches before they were known, taking
    # no for an answer (fix_facts.FixFacts.pending); it is made again if the project's patches answer yes to any.
    asked_patches: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = ()


def add_fix_parser(commands: Any) -> argparse.ArgumentParser:
    """Register `fix` on the command line's subparsers, with the scan arguments it shares with `check`."""
    from .cli import add_cache_arguments, add_scan_arguments

    fix = commands.add_parser(
        "fix",
        help="rewrite code to reuse connections (safe fixes; --unsafe-fixes for the rest)",
        description="Apply the fixes of the rules found in Python files, in place. Directories are walked as by "
        "`check`. A file is written only under its root (the directory argument it was found in, else the "
        "working directory; name a file by its real path to fix it elsewhere), only if unchanged since it was "
        "read and not read-only, atomically, keeping links, owner, mode and line ends. Exit 0: done, nothing "
        "left; 1: findings remain that were not fixed (unsafe or report-only), or with --diff/--check/--split-by-owner "
        "files would change (--exit-zero: 0); 2: usage error or a file that could not be processed; 128+N: stopped by "
        "signal N (no file half-written).",
    )
    add_scan_arguments(fix, "fix")
    # The whole-project analysis is on by default, as in `check`; --preview stays accepted.
    fix.add_argument("--preview", action="store_true", help=argparse.SUPPRESS)
    add_cache_arguments(fix)
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that may change behaviour")
    mode = fix.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff of the changes and write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change (judged by planning the fixes, without applying them)")
    mode.add_argument(
        "--split-by-owner", metavar="DIR",
        help="write nothing to the sources: write the changes as patches into DIR (created if missing), one per "
        "CODEOWNERS owner set (`@org/a @org/b` -> org-a+org-b.patch) and, for files with no owner, one per "
        "top-level folder (unowned-FOLDER.patch; the root's files: unowned.patch). Each applies alone from the "
        "repository root (git apply, patch -p1); a change across modules goes whole into the patch of the "
        "owners of its finding's file. A previous run's patches in DIR are replaced; other *.patch files there "
        "are refused. Exit codes as --diff.",
    )
    fix.add_argument("--codeowners", metavar="FILE",
                     help="with --split-by-owner: the CODEOWNERS file to read (default: the repository root's "
                     ".github/CODEOWNERS, CODEOWNERS or docs/CODEOWNERS, the first that exists)")
    fix.add_argument("--no-progress", action="store_true", help="never show the progress line on stderr")
    fix.add_argument("--exit-zero", action="store_true",
                     help="exit 0 even when findings remain or files would change (errors still exit 2)")
    fix.add_argument("--show-fixes", action="store_true",
                     help="list what was fixed in each file (`path: HTP101 x2, HTP203`)")
    fix.add_argument("--quiet", "-q", action="store_true",
                     help="print nothing but errors (no summary, no progress line)")
    fix.add_argument(
        "--timeout-per-file", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help="skip (and name) a file whose fix takes more than this many seconds of CPU time, the same on a quiet "
        f"and on a loaded machine (default {DEFAULT_TIMEOUT:g}; 0: no limit)",
    )
    return fix


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    return value


def _over_budget(path: str, timeout: Optional[float]) -> FileFixResult:
    return FileFixResult(path, error=f"took longer than {timeout:g} s to fix; skipped")


def fix_file(
    path: str,
    options: Options,
    codes: FrozenSet[str],
    unsafe: bool,
    mode: str,
    root: Optional[str] = None,
    explicit: bool = True,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    settings: FixFacts = NO_FACTS,
    seeds: Any = None,
    model: Optional[List[Any]] = None,
) -> FileFixResult:
    """Fix one file; never raises for anything the file holds. Writes only in WRITE mode, and only on change.

    `root` (default: the working directory) is where the file may be written; `explicit` says the user named
    the file. Fixing is limited to `timeout` seconds of CPU time (None or 0: no limit; time_budget.py).
    `settings` carries the config's fix-safety settings; the facts of the file's own project (what it patches,
    what it pins) are added here.
    `seeds` (engine.ModuleSeeds) are what the project model found about the file because of other modules.
    `model`, in CHECK mode: a list given the project model's phase 1 from the same read and parse, [bytes,
    text, whether the project gate passes it, the engine's Analysis of it or None] (_planning_first).
    """
    from .checking import mentions_a_library
    from .engine import may_have_findings
    from .fix_facts import facts_for_file
    from .fixing import fix_source, planned_fixes
    from .source_files import SourceError, decode_source, no_memory_to_load, read_bytes, resource_error
    from .time_budget import OverBudget, over_budget_in, time_budget
    from .writing import WriteRefused, locate, snapshot

    data: Optional[bytes] = None  # until read: memory may run out before (the message then has no size)
    try:
        place = locate(path, os.getcwd() if root is None else root, explicit)
        before = _stat(path)  # before the read: a change during the read then shows as a newer mtime
        data = read_bytes(path, options.max_file_size)
        text = decode_source(data)
        library = mentions_a_library(data, text)
        if model is not None:  # the project gate (project_cache.passes_gate), from this read
            model[:] = [data, text, bool(options.unpooled_calls) or (library and may_have_findings(text, options)),
                        None]
        if not options.unpooled_calls and not (seeds is not None and seeds.factories) and not library:
            return FileFixResult(path)
        facts = facts_for_file(path, settings, None if explicit else root)
        with time_budget(timeout):
            if mode == CHECK:
                # Whether anything would change is the planners' answer; carrying the plan out with libcst would
                # cost about four times as much and write nothing anyway.
                planned = planned_fixes(text, options, codes, unsafe, filename=path, facts=facts, seeds=seeds,
                                        on_analysis=None if model is None else lambda found: model.__setitem__(3, found))
                left = tuple(sorted(planned.unsafe_left.items()))
                if planned.error is not None:
                    return FileFixResult(path, unsafe_left=left, error=planned.error, where=planned.where)
                return FileFixResult(path, bool(planned.applied), tuple(sorted(planned.applied.items())), left)
            result = fix_source(text, options, codes, unsafe, filename=path, facts=facts, seeds=seeds)
            unhandled = None
            if result.error is None and "\f" in text:
                unhandled = _unhandled_sites(result.text, options, codes, unsafe, path, facts, result.seeds)
    except WriteRefused as refusal:
        return FileFixResult(path, error=refusal.reason)
    except AskNames as asked:  # raised while planning, before anything is written
        return FileFixResult(path, asked=asked.names)
    except OverBudget:
        return _over_budget(path, timeout)
    except SourceError as error:
        return FileFixResult(path, error=error.reason, where=error.where)
    except (RecursionError, MemoryError) as error:
        return FileFixResult(path, error=resource_error(error, "fix", None if data is None else len(data)))
    except Exception as error:  # a bug of ours must cost one file, not the run
        if over_budget_in(error) is not None:  # unwinding from the budget's end failed: the time ran out
            return _over_budget(path, timeout)
        if no_memory_to_load(error):  # (libcst's modules, loaded as the first fix needs them)
            return FileFixResult(path, error=resource_error(MemoryError(), "fix", None if data is None else len(data)))
        return FileFixResult(path, error=f"internal error while fixing ({type(error).__name__}: {error})")
    applied = tuple(sorted(result.applied.items()))
    left = tuple(sorted(result.unsafe_left.items()))
    if result.error is not None:
        return FileFixResult(path, unsafe_left=left, error=result.error, where=result.where)
    remaining = remaining_findings(result.text, options, codes, path, result.seeds) if mode == WRITE else ()
    if result.text == text:
        return FileFixResult(path, unsafe_left=left, error=unhandled, remaining=remaining)
    lost = text.count("\f") - result.text.count("\f")
    if lost > 0:  # whitespace to the compiler, but a byte the user wrote: never dropped silently
        return FileFixResult(path, unsafe_left=left, error=f"the fix would drop {lost} form feed(s) (\\f); not fixed")
    if mode == DIFF:
        return FileFixResult(path, True, applied, left, error=unhandled, diff=unified_diff(path, text, result.text))
    if mode == PATCH:
        from .owner_patches import file_hunks
        from .writing import encode_like

        return FileFixResult(path, True, applied, left, error=unhandled,
                             patch=file_hunks(data, encode_like(result.text, data)))
    if mode == WRITE:
        refused = _write(path, result.text, data, place, None if before is None else snapshot(before, data))
        if refused is not None:
            return FileFixResult(path, unsafe_left=left, error=refused)
    return FileFixResult(path, True, applied, left, error=unhandled, remaining=remaining)


def remaining_findings(text: str, options: Options, codes: FrozenSet[str], path: str,
                       seeds: Any = None) -> Tuple[Tuple[str, int], ...]:
    """The findings per code `check` would still report in a (fixed) text: what decides fix's exit code.

    One more analysis of a file that mentions a library (no libcst): the fix's own last round analysed it
    too, but what `fix_source` hands back does not say, and `check`'s answer is the one that counts.
    """
    from .engine import analyze, may_have_findings
    from .noqa import unsuppressed
    from .source_files import SourceError, parse_source

    if not may_have_findings(text, options) and not (seeds is not None and seeds.factories):
        return ()
    try:
        found = unsuppressed(analyze(parse_source(text, path), options, codes=set(codes), source=text, seeds=seeds),
                             text)
    except (SourceError, RecursionError):
        return ()  # the fix's verification already refused such a text; nothing to count
    return tuple(sorted(Counter(f.code for f in found if f.code in codes).items()))


def _stat(path: str) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except OSError:
        return None  # the read that follows says why in its own words


def _write(path: str, text: str, data: bytes, place: Any, read_as: Any) -> Optional[str]:
    """Write the fixed text; None when written, else why not."""
    from .runner import stop_if_orphaned
    from .writing import WriteRefused, write_atomically

    stop_if_orphaned()  # a worker whose run is gone must not go on rewriting files
    try:
        write_atomically(path, text, data, place, read_as)
    except WriteRefused as refusal:
        return refusal.reason
    except (OSError, UnicodeEncodeError) as error:
        return f"cannot write: {getattr(error, 'strerror', None) or str(error)}"
    return None


def _unhandled_sites(text: str, options: Options, codes: FrozenSet[str], unsafe: bool, path: str,
                     facts: FixFacts, seeds: Any = None) -> Optional[str]:
    """Why fixable sites are left in a fixed text holding a form feed, or None when there are none.

    A form feed at the start of a line moves the column `ast` reports away from the one libcst sees, so a fix
    can find no node where its plan says one is. Without this the file would be reported as "0 changed"
    while `check` still reports the site.
    """
    from .engine import analyze
    from .fixing import planned_fixes
    from .noqa import unsuppressed
    from .source_files import parse_source

    left = planned_fixes(text, options, codes, unsafe, filename=path, facts=facts, seeds=seeds).applied
    if not left:
        return None
    findings = unsuppressed(analyze(parse_source(text, path), options, codes=set(left), source=text, seeds=seeds),
                            text)
    sites = ", ".join(f"{f.code} at line {f.line}" for f in findings) or ", ".join(sorted(left))
    return f"{sites}: not fixed (the fix cannot handle a form feed at the start of a line); fix by hand"


def unified_diff(path: str, old: str, new: str) -> str:
    """A `diff -u` of the change, marking a last line without a newline as diff does."""
    out = []
    name = shown(path)
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), name, name):
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _fix_job(shared: Tuple[Any, bool, str, Optional[float], Dict[str, Any]], target: FixTarget) -> FileFixResult:
    """In a worker: fix one file with the settings its key names (`shared` holds the command line's Overrides)."""
    from .settings import resolved

    from .fix_facts import know_roots

    overrides, unsafe, mode, timeout, roots = shared
    know_roots(roots)
    found = resolved(overrides, target.key)
    facts = found.fix_facts()
    if target.named_elsewhere is not None:
        facts = facts._replace(named_elsewhere=target.named_elsewhere)
    return fix_file(target.path, found.options, found.codes, unsafe, mode, target.root, target.explicit, timeout,
                    facts, target.seeds)


def _planning_job(shared: Tuple[Any, bool, Optional[float], Dict[str, Any], Optional[str], Any],
                  item: Tuple[FixTarget, bool, Tuple[int, ...]]
                  ) -> Tuple[Optional[FileFixResult], Optional[bool], Any, Optional[Tuple[Any, ...]]]:
    """In a worker, phase 1 of `fix --check`'s project model: (the file's result planned without seeds, the
    project gate's verdict, None when it cannot be read, the summary of a module the gate passes, and what the
    file patches under each of its project roots, None when it was not read for them).

    The plan is the one `_fix_job` makes for a file the model seeds nothing in, and it comes from the same read
    and parse as the gate and the summary: the plan of such a file (most of them) is then not made again.
    `item`: the target, whether it is planned (in a shard, the rest of the project only gets summarized), and
    the numbers of the roots it gives its patches to. `shared` ends with each root's words when the project's
    patches are gathered from these reads (project_check.PendingPatches), else None.
    """
    from .fix_facts import asked_patches, file_patch_targets, know_roots
    from .project import packed
    from .project_cache import LocalModules
    from .project_check import _collect, _open
    from .settings import resolved

    overrides, unsafe, timeout, roots, folder, words = shared
    target, plan, root_numbers = item
    found = resolved(overrides, target.key)
    options = found.options
    path = os.path.abspath(target.path)
    local = LocalModules(lambda _: options, _open(folder))
    model: List[Any] = []
    result = None
    if plan:
        know_roots(roots, pending=words is not None)
        facts = found.fix_facts()._replace(named_elsewhere=NamesElsewhere())
        asked_patches()  # nothing left over from a file before
        result = fix_file(target.path, options, found.codes, unsafe, CHECK, target.root, target.explicit, timeout,
                          facts, None, model)
        asked = asked_patches()
        if asked:
            result = result._replace(asked_patches=asked)
    patches = None
    if root_numbers:
        data = model[0] if model else None  # this read's bytes, or read again (not read for a plan)
        patches = tuple((number, targets) for number in root_numbers
                        for targets in (file_patch_targets(path, words[number], data),) if targets)
    if not model:  # not read for a plan (refused, unreadable, or not planned): phase 1 as the model runs it
        summaries, rest = local.first([path])
        if path in summaries:
            _collect()  # the gate's walk, freed now as a plan's is below
        return result, True if path in summaries else False if rest else None, packed(summaries.get(path)), patches
    data, text, gated, analysis = model
    # Packed (project.Summaries holds it so): the main process held every module's summary as objects.
    summary = packed(local.summary_of_read(path, options, data, text, analysis)) if gated else None
    del model, analysis
    _collect()  # the plan's tree and analysis, freed now (project_check._collect)
    return result, gated, summary, patches


def _planning_first(table: Any, shared: Tuple[Any, ...], cache: Any, jobs: int, own: Any,
                    pending: Any = None) -> Callable[..., Any]:
    """Phase 1 of the project model (project.First) for `fix --check`, run by _planning_job: each file of
    `own` (None: every file) is planned on the way, its plan kept in `table` (target_table.TargetTable).
    `pending` (project_check.PendingPatches, or None): the project's patches, taken from the same reads."""
    from . import ondisk
    from .project import packed
    from .project_cache import LocalModules
    from .project_run import POOL_AT_FILES
    from .runner import Runner
    from .settings import resolved

    def first(paths: Any) -> Tuple[Any, Iterable[str]]:
        # What each file gave, on disk: the summaries of the files past the gate, and the others' paths.
        table.db.execute("CREATE TEMP TABLE gated(n INTEGER PRIMARY KEY, path BLOB NOT NULL, none INTEGER NOT "
                         "NULL, data BLOB)")
        table.db.execute("CREATE TEMP TABLE rest(n INTEGER PRIMARY KEY, path BLOB NOT NULL)")

        def items() -> Iterator[Tuple[str, Tuple[FixTarget, bool, Tuple[int, ...]]]]:
            for part in ondisk.batches(paths, ondisk.IN_AT_ONCE):
                found = table.get_many(part)
                roots_of = pending.roots_of(part) if pending is not None else {}
                for path in part:
                    yield path, (found[path], own is None or path in own, roots_of.get(path, ()))

        def outcomes() -> Iterator[Tuple[str, Optional[bool], Any]]:
            workers = jobs if len(paths) >= POOL_AT_FILES else 1
            # Not renewed as check's phase 1 is (runner.RENEW_AFTER): a worker that plans a fix imports libcst,
            # and a new one would import it again.
            runner = Runner(_numbered_planning, shared, lambda item: (item[0], None, None, None, None), workers)
            plans: List[Tuple[str, Optional[FileFixResult]]] = []
            for path, result, gated, summary, patches in runner.run(items()):
                if patches is not None:
                    pending.read(path, patches)
                if result is not None:
                    # Most files have nothing to fix: their plan is made again when it is used (_planned_or_run).
                    plans.append((path, None if result == FileFixResult(result.path) else result))
                    if len(plans) >= ondisk.BATCH:
                        table.plan(plans)
                        plans = []
                if gated is None:  # its worker died, or it cannot be read: phase 1 here, as the model would run it
                    target = table.get(path)
                    options = resolved(shared[0], target.key).options
                    one, other = LocalModules(lambda _: options, cache).first([path])
                    for found, summary_found in one.items():
                        yield found, True, packed(summary_found)
                    for left in other:
                        yield left, False, None
                else:
                    yield path, gated, summary
            table.plan(plans)

        for batch in ondisk.batches(outcomes()):
            ondisk.insert_all(table.db, "INSERT INTO gated(path, none, data) VALUES (?, ?, ?)",
                              ((ondisk.blob(path), int(summary is None), summary)
                               for path, gated, summary in batch if gated))
            ondisk.insert_all(table.db, "INSERT INTO rest(path) VALUES (?)",
                              ((ondisk.blob(path),) for path, gated, _ in batch if not gated))
        return _Gated(table.db), (ondisk.text(row[0]) for row in ondisk.rows(table.db,
                                                                              "SELECT path FROM rest ORDER BY n"))

    return first


class _Gated:
    """The summaries of `fix --check`'s phase 1 (project.First's first part), read from its table in order."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def items(self) -> Iterator[Tuple[str, Any]]:
        from . import ondisk

        for path, none, data in ondisk.rows(self.db, "SELECT path, none, data FROM gated ORDER BY n"):
            yield ondisk.text(path), None if none else data


def _numbered_planning(shared: Tuple[Any, ...], item: Tuple[str, Tuple[FixTarget, bool, Tuple[int, ...]]]
                       ) -> Tuple[str, Optional[FileFixResult], Optional[bool], Any, Any]:
    return (item[0], *_planning_job(shared, item[1]))


def _with_absolute(targets: Iterable[FixTarget]) -> Iterator[Tuple[FixTarget, str]]:
    """Each target with its absolute path: a table's hold them (target_table.Targets), others are worked out."""
    with_absolute = getattr(targets, "with_absolute", None)
    if with_absolute is not None:
        return with_absolute()  # type: ignore[no-any-return]
    return ((target, os.path.abspath(target.path)) for target in targets)


def _planned_or_run(targets: Iterable[FixTarget], planned: Any,
                    run: Callable[[Iterable[FixTarget]], Iterable[FileFixResult]],
                    roots: Optional[Dict[str, Any]] = None) -> Iterator[FileFixResult]:
    """Each target's result in order: the plan made in phase 1 (_planning_job; `planned`, the run's
    target_table.TargetTable, or None when nothing was planned) when the project model seeds nothing in the
    file and the plan asked nothing the run's answers (`roots`: the fix facts of its project roots) now tell
    otherwise, else the one `run` gives; closing this closes `run`'s."""
    from . import ondisk
    from .fix_facts import answered_yes
    from .target_table import NOT_PLANNED

    def with_kept() -> Iterator[Tuple[FixTarget, Optional[FileFixResult]]]:
        """Each target, with its plan when that is its result (the plans looked up a batch at a time)."""
        for part in ondisk.batches(_with_absolute(targets), ondisk.IN_AT_ONCE):
            plans = planned.planned_many([absolute for _, absolute in part]) if planned is not None else {}
            for target, absolute in part:
                result = plans.get(absolute, NOT_PLANNED)
                if result is NOT_PLANNED or target.seeds is not None:
                    yield target, None
                elif result is None:
                    yield target, FileFixResult(target.path)
                elif result.asked or (result.asked_patches and answered_yes(result.asked_patches, roots or {})):
                    yield target, None
                else:
                    yield target, result

    results = iter(run(target for target, result in with_kept() if result is None))
    try:
        for _, result in with_kept():
            yield result if result is not None else next(results)
    finally:
        _close(results)


def _gather_up_front(targets: List[FixTarget], cache: Any, jobs: int, table: Any = None) -> Tuple[Dict[str, Any], Any]:
    """The fix facts of the targets' projects (fix_facts.know_roots), gathered once for the whole run, in the
    workers, before any file is fixed; in this process they are then known too (fix_across_modules plans with
    them). Left to the file that needs them (gathered where it is fixed) when the run has one target, or when
    no target can have anything to fix (none names an HTTP library or calls another module's factory).

    With `table` (the run's target_table.TargetTable: `fix --check` without a cache), the projects' patches
    are not gathered here but from phase 1's reads: (the facts but the patches, project_check.PendingPatches).
    A cache keeps each file's patches by its stat, and a warm run reads none: that run gathers them up front.
    (the facts, None) else."""
    from .checking import mentions_a_library
    from .fix_facts import know_roots, project_root
    from .project_check import PendingPatches, gather_roots

    if len(targets) < 2:
        return {}, None

    def may_fix(target: FixTarget) -> bool:
        if target.seeds is not None and target.seeds.factories:
            return True
        from .source_files import DEFAULT_MAX_FILE_SIZE, read_or_none

        # Bounded as every read of the tree is: a file over the default limit gathers its facts where it is fixed.
        data = read_or_none(target.path, DEFAULT_MAX_FILE_SIZE)
        return data is not None and mentions_a_library(data)

    if not any(may_fix(target) for target in targets):
        return {}, None
    folders = {(os.path.dirname(absolute), None if t.explicit else t.root) for t, absolute in _with_absolute(targets)}
    roots = {root: None for root in (project_root(folder, walked) for folder, walked in sorted(folders, key=str))
             if root is not None}
    if table is not None and cache is None:
        pending = PendingPatches(table.db, list(roots), jobs)
        return pending.provisional(), pending
    facts = gather_roots(list(roots), cache, jobs)
    know_roots(facts)
    return facts, None


def fix_targets(candidates: Callable[[Iterable[str]], Iterable[Any]], paths: Iterable[str]) -> Iterator[FixTarget]:
    """The Python files `candidates` finds under `paths`, each with its root (see the module docstring).

    `candidates` (Discovery.candidates) is lazy, one argument at a time, so the argument being expanded when a
    candidate comes out is the one it was found under; one discovery keeps its files-seen-once rule.
    """
    from .discovery import PYTHON

    cwd = os.getcwd()
    current: List[str] = []

    def arguments() -> Iterator[str]:
        for path in paths:
            current[:] = [path]
            yield path

    for candidate in candidates(arguments()):
        if candidate.kind != PYTHON:
            continue
        argument = current[0]
        key = getattr(candidate, "key", None)
        if candidate.path == argument:
            yield FixTarget(candidate.path, cwd, True, key)
        else:
            yield FixTarget(candidate.path, argument, False, key)


def _crashed(candidate: Any) -> FileFixResult:
    return FileFixResult(candidate.path, error="the worker process fixing it died")


class _Progress:
    """`fixing: 1200 files` on a terminal's stderr, once the run has lasted PROGRESS_AFTER seconds."""

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled and _isatty(stream)
        self.started = time.monotonic()
        self.last = 0.0
        self.shown = False

    def update(self, count: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started >= PROGRESS_AFTER and now - self.last >= 0.1:
            self.stream.write(f"\rfixing: {count} files")
            self.stream.flush()
            self.last, self.shown = now, True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _counts(counter: "Counter[str]") -> str:
    return ", ".join(f"{code}: {n}" for code, n in sorted(counter.items()))


def summary(scanned: int, changed: int, applied: "Counter[str]", unsafe_left: "Counter[str]",
            skipped: List[Tuple[str, str]], mode: str, remaining: "Optional[Counter[str]]" = None) -> str:
    """The closing lines: files scanned and changed, fixes per code, unsafe fixes left, files skipped and why."""
    verb = "changed" if mode == WRITE else "would change"
    fixes = sum(applied.values())
    head = f"{scanned} file{'s' if scanned != 1 else ''} scanned, {changed} {verb}"
    if fixes:
        head += f", {fixes} fix{'es' if fixes != 1 else ''} ({_counts(applied)})"
    lines = [head]
    left = sum(unsafe_left.values())
    if left:
        lines.append(f"{left} unsafe fix{'es' if left != 1 else ''} not applied ({_counts(unsafe_left)}); "
                     "use --unsafe-fixes to apply")
    # Findings left beyond the unsafe fixes held back: report-only rules and sites no fix can take.
    unfixable = (remaining or Counter()) - unsafe_left
    still = sum(unfixable.values())
    if still:
        lines.append(f"{still} finding{'s' if still != 1 else ''} with no fix left ({_counts(unfixable)}); "
                     "`flake8-http-pool check` shows them")
    if skipped:
        lines.append(f"{len(skipped)} file{'s' if len(skipped) != 1 else ''} skipped:")
        lines.extend(f"  {shown(path)}: {shown(reason)}" for path, reason in skipped)
    return "".join(f"flake8-http-pool fix: {line}\n" if not line.startswith("  ") else line + "\n" for line in lines)


def _require_libcst() -> None:
    """libcst is the `[fix]` extra: without it, one usage-error line (exit 2) before any file is read."""
    from . import cli
    from .extras import MissingExtra, require_libcst

    try:
        require_libcst()
    except MissingExtra as error:
        raise cli.UsageError(str(error)) from None


def run_fix(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """`fix`: discover, fix (in parallel), write / diff / check, summarise; the exit code."""
    from . import cli
    from .discovery import Discovery
    from .runner import Interrupted, Runner, worker_count
    from .target_table import TargetTable

    cli.check_usage(args)
    _require_libcst()
    if cli.STDIN in args.paths and (len(args.paths) > 1 or args.files_from is not None):
        raise cli.UsageError("`fix -` fixes the source on standard input alone; give no other path or --files-from")
    mode = DIFF if args.diff else CHECK if args.check else PATCH if args.split_by_owner is not None else WRITE
    previous_patches = _check_split_usage(args, mode)
    scanned_settings = cli.scan_settings(args, stderr)
    resolver = scanned_settings.resolver

    skipped: List[Tuple[str, str]] = []

    def on_error(path: str, reason: str, where: Optional[Tuple[int, int]] = None) -> None:
        # A source error in flake8's shape (`path:3:6: E999 SyntaxError: ...`), else `path: error: reason`.
        # The reason may name other files of the tree (a change across modules): escaped as the path is.
        name, why = shown(path), shown(reason)
        stderr.write(f"{name}:{where[0]}:{where[1]}: {why}\n" if where else f"{name}: error: {why}\n")
        stderr.flush()
        skipped.append((path, reason))

    if cli.STDIN in args.paths:
        return _fix_stdin(args, stdin, stdout, stderr, resolver, scanned_settings.config, mode, on_error)
    # Each folder's config decides what is excluded below it, and each file is fixed with its own config's
    # settings (per-file-ignores included: a site of an ignored code is never touched, as with noqa).
    discovery = Discovery(resolver, on_error)
    paths: Iterable[str] = cli.scan_paths(args, stdin, on_error)
    jobs = worker_count(args.jobs, cli._note(stderr))

    progress = _Progress(stderr, not args.no_progress and not args.quiet)
    scanned = changed = 0
    applied: "Counter[str]" = Counter()
    unsafe_left: "Counter[str]" = Counter()
    remaining: "Counter[str]" = Counter()
    # The project model needs every module before any file is fixed: a wrapper's session goes in its own
    # module because of a loop in another. The solve runs here; each file's job carries its own seeds. The
    # files are listed on disk (target_table.py), and gone through as often as the run needs.
    table = TargetTable()
    table.add(fix_targets(lambda found: resolver.keyed(discovery.candidates(found, table.remember), on_error),
                          paths))
    splitter = None
    if mode == PATCH:
        from .owner_patches import OwnerPatches

        splitter = OwnerPatches.for_paths(args.split_by_owner, previous_patches, args.codeowners,
                                          table.path_list(), cli._note(stderr))
    # One shard of a run (--project-from): the rest of the project is read for the model, fixed elsewhere.
    with_project(table, args.project_from, stdin, resolver)
    own = table.own()
    targets: Any = table.all()
    cache = cli.open_project_cache(args, scanned_settings.config, table.paths(), cli._note(stderr))
    roots, pending = _gather_up_front(targets, cache, jobs, table if mode == CHECK else None)
    # `fix --check` plans each file the project model seeds nothing in as the model's phase 1 reads it (and
    # without a cache, takes the project's patches from that read too).
    first = None if mode != CHECK else _planning_first(
        table, (resolver.overrides, args.unsafe_fixes, args.timeout_per_file, roots,
                cache.folder if cache is not None else None, pending.words if pending is not None else None),
        cache, jobs, own, pending)
    with_project_seeds(table, resolver.overrides, cli._note(stderr), cache, jobs, first)
    if pending is not None:
        from .fix_facts import know_roots

        roots = pending.facts()  # the files phase 1 did not read, read for their patches now
        know_roots(roots)
    shared = (resolver.overrides, args.unsafe_fixes, mode, args.timeout_per_file, roots)
    names = _Names.of_table(table, jobs)
    # Changes across modules (HTP104's parameter threaded through other modules' callers) are carried out
    # here, each all or nothing; their files are done, the others go to the workers.
    across, held, targets = fix_across_modules(table, resolver.overrides, args.unsafe_fixes, mode, on_error,
                                               cli._note(stderr), names, own)
    unsafe_left.update(held)

    def run(some: Iterable[FixTarget]) -> Iterable[FileFixResult]:
        return Runner(_fix_job, shared, _crashed, jobs).run(names.given(some))

    results: Iterable[FileFixResult] = names.settled(
        _chain_results(across, _planned_or_run(targets, table if first is not None else None, run, roots)),
        lambda path: table.get(os.path.abspath(path)), run)
    try:
        with _stopped_by_signals():
            try:
                for result in results:
                    scanned += 1
                    unsafe_left.update(dict(result.unsafe_left))
                    remaining.update(dict(result.remaining))
                    if result.error is not None:
                        progress.clear()
                        on_error(result.path, result.error, result.where)
                    if result.changed:  # a file may be fixed and still name a site it could not fix
                        changed += 1
                        applied.update(dict(result.applied))
                        if result.diff:
                            progress.clear()
                            stdout.write(result.diff)
                        elif splitter is not None and result.patch is not None:
                            splitter.add(result.path, result.patch, result.change)
                        elif mode == CHECK:
                            progress.clear()
                            counts = _counts(Counter(dict(result.applied)))
                            stdout.write(f"would fix {shown(result.path)}" + (f" ({counts})\n" if counts else "\n"))
                        if args.show_fixes and result.applied:
                            progress.clear()
                            # stdout holds nothing else when writing; a diff or the --check list keeps it
                            (stdout if mode == WRITE else stderr).write(shown_fixes(result.path, result.applied))
                    progress.update(scanned)
            finally:
                _close(results)  # stops the workers now (still shielded from a second signal)
    except Interrupted as stop:
        progress.clear()
        stderr.write("flake8-http-pool: interrupted\n")
        return 128 + stop.signum
    finally:
        progress.clear()
        stdout.flush()
    closing = summary(scanned, changed, applied, unsafe_left, skipped, mode, remaining)
    if splitter is not None:
        # The owners' names come from the repository's CODEOWNERS: escaped as its file names are.
        closing += "".join(f"flake8-http-pool fix: {shown(line)}\n" for line in splitter.summary(splitter.write()))
    if not args.quiet:
        stderr.write(closing)
    return fix_exit_code(args, mode, bool(skipped), changed > 0, sum(remaining.values()) > 0)


def _check_split_usage(args: argparse.Namespace, mode: str) -> List[str]:
    """--split-by-owner's usage errors, before any file is read; the patches a previous run left in its folder."""
    from . import cli
    from .owner_patches import check_folder

    if args.codeowners is not None and mode != PATCH:
        raise cli.UsageError("--codeowners is read by --split-by-owner only")
    if mode != PATCH:
        return []
    if args.codeowners is not None and not os.path.isfile(args.codeowners):
        reason = "not a regular file" if os.path.exists(args.codeowners) else "no such file"
        raise cli.UsageError(f"--codeowners {args.codeowners}: {reason}")
    if cli.STDIN in args.paths:
        raise cli.UsageError("--split-by-owner writes patches of files; it cannot take `-` (source on standard "
                             "input)")
    return check_folder(args.split_by_owner)


def _chain_results(first: List[FileFixResult], then: Iterable[FileFixResult]) -> Iterator[FileFixResult]:
    """`first`, then `then`; closing it closes `then` (the runner's results: it stops the workers)."""
    try:
        yield from first
        yield from then
    finally:
        _close(then)


def fix_across_modules(table: Any, overrides: Any, unsafe: bool, mode: str,
                       on_error: Callable[..., None], note: Callable[[str], None], answers: "_Names",
                       own: Any = None) -> Tuple[List[FileFixResult], "Counter[str]", Any]:
    """Carry out the changes across modules among `targets` (fix_across.py): (the results of the files they
    changed, the unsafe fixes held back without --unsafe-fixes, the targets left for the per-file fix).

    A change is written all or nothing (writing.write_group): when any of its files fails verification, or
    its per-file fixes fail, or one cannot be written, none is, and the reason is reported for that file.

    `table`: the run's target_table.TargetTable. `own`: in one shard of a run (shards.py), the absolute paths
    it fixes (target_table.Own); the table then holds the whole project. A change is carried out by the shard
    holding its first file, whichever shards hold the others; a shard leaves alone its files that another
    shard's change takes, and fixes none outside `own` else.

    `answers`: the run's answers about names used elsewhere, asked for as the plans need them.
    """
    from .fix_across import plan_changes, relocated, verify_change
    from .fix_facts import facts_for_file
    from .fixing import fix_source
    from .owner_patches import file_hunks
    from .settings import resolved
    from .writing import GroupFile, WriteRefused, content_snapshot, encode_like, locate, write_group

    seeds = table.seeds
    held: "Counter[str]" = Counter()
    if not any(s.hot for s in seeds.values()):
        return [], held, table.left(set(), own is not None)
    found: Dict[str, Any] = {}
    targets_of: Dict[str, FixTarget] = {}

    class ByPath:  # the target at an absolute path (the few a change takes)
        def __getitem__(self, path: str) -> FixTarget:
            if path not in targets_of:
                targets_of[path] = table.get(path)
            return targets_of[path]

    by_path = ByPath()

    class Paths:  # every target's absolute path, gone through as often as the plans need
        def __iter__(self) -> Iterator[str]:
            return table.absolute_paths()

    def settings_of(path: str) -> Any:
        if path not in found:
            found[path] = resolved(overrides, by_path[path].key)
        return found[path]

    def facts_of(path: str) -> FixFacts:
        target = by_path[path]
        facts = facts_for_file(path, settings_of(path).fix_facts(), None if target.explicit else target.root)
        return facts._replace(named_elsewhere=answers.current)

    def options_of(path: str) -> Options:
        return settings_of(path).options

    def codes_of(path: str) -> Any:
        return set(settings_of(path).codes)

    try:
        changes = answers.answering(lambda: plan_changes(Paths(), seeds, options_of, facts_of, codes_of))
    except Exception as error:  # noqa: BLE001 - a bug here must cost the changes across modules, not the run
        note(f"internal error while planning fixes across modules ({type(error).__name__}: {error}); "
             "none made")
        return [], held, table.left(set(), own is not None)

    def prepared(change: Any) -> Tuple[Optional[Tuple[str, str]], List[Tuple[Any, Any]]]:
        """(why the change cannot be made, or None; each file's final text)."""
        return answers.answering(lambda: prepared_once(change))

    def prepared_once(change: Any) -> Tuple[Optional[Tuple[str, str]], List[Tuple[Any, Any]]]:
        failure = verify_change(change, options_of, seeds, codes_of)
        finals: List[Tuple[Any, Any]] = []
        for file in change.files if failure is None else ():
            fixed = fix_source(file.new_text, options_of(file.path), codes_of(file.path), unsafe,
                               filename=file.path, facts=facts_of(file.path),
                               seeds=relocated(seeds.get(file.path), file))
            if fixed.error is not None:
                return (file.path, fixed.error), finals
            finals.append((file, fixed))
        return failure, finals

    results: List[FileFixResult] = []
    done: Set[str] = set()
    for change in changes:
        if own is not None and change.files[0].path not in own:
            # Another shard's change: its files are that shard's when it can be made (the same verdict there).
            if unsafe and prepared(change)[0] is None:
                done.update(f.path for f in change.files)
            continue
        if not unsafe:
            held[change.code] += 1
            continue
        names = ", ".join(shown(f.path) for f in change.files)

        def refuse(path: str, reason: str) -> None:
            on_error(path, f"{change.code} across modules ({change.what}): {reason}; none of its files written "
                     f"({names})")

        failure, finals = prepared(change)
        if failure is not None:
            refuse(*failure)
            continue
        if mode == WRITE:
            try:
                group = []
                for file, fixed in finals:
                    target = by_path[file.path]
                    group.append(GroupFile(file.path, fixed.text, file.data,
                                           locate(target.path, target.root, target.explicit),
                                           content_snapshot(file.data)))
                write_group(group)
            except WriteRefused as refusal:  # GroupRefused names the file that refused
                refuse(getattr(refusal, "path", change.files[0].path), refusal.reason)
                # Left as they were read, and not fixed one by one either: the disk said no, or they changed.
                results.extend(FileFixResult(by_path[f.path].path) for f in change.files)
                done.update(f.path for f in change.files)
                continue
        for number, (file, fixed) in enumerate(finals):
            applied = Counter(fixed.applied)
            if number == 0:
                applied[change.code] += 1
            target = by_path[file.path]
            options, codes = options_of(file.path), frozenset(codes_of(file.path))
            remaining = remaining_findings(fixed.text, options, codes, file.path, fixed.seeds) if mode == WRITE else ()
            results.append(FileFixResult(
                target.path, True, tuple(sorted(applied.items())), tuple(sorted(fixed.unsafe_left.items())),
                diff=unified_diff(target.path, file.text, fixed.text) if mode == DIFF else None,
                remaining=remaining,
                patch=file_hunks(file.data, encode_like(fixed.text, file.data)) if mode == PATCH else None,
                change=tuple(f.path for f in change.files)))
            done.add(file.path)
    return results, held, table.left(done, own is not None)


def with_project_seeds(table: Any, overrides: Any, note: Callable[[str], None], cache: Any = None, jobs: int = 1,
                       first: Any = None) -> None:
    """Give the targets of `table` (target_table.TargetTable) what the project model found about each module
    because of the others (`first`: the model's phase 1 as the caller runs it, project_run.project_seeds)."""
    from .project_run import project_seeds

    table.seeds = project_seeds((), overrides, note, cache, jobs, first, keys=table.keys_by_path())


class _Names:
    """The run's answers to "does another module of the project name this def or class?" (fix_facts.AskNames),
    found for the names the plans ask about, all of them in one pass over the project's files per round.

    `paths`: the files the run fixes; `places`: (folder, walked root) pairs, whose projects (fix_facts.project_root,
    the roots their fixes are planned with) hold the files searched besides them, as callers the run never edits.
    `on_disk`: whether `paths` hold what is fixed. An editor's buffer (`fix -`) is not its file on disk: that file
    is not counted, and a name any other file holds is named elsewhere, where a file of the run needs a second."""

    # A file planned again asks only names it did not ask before; past this many rounds something is wrong.
    ROUNDS = 8

    def __init__(self, paths: Any, places: Iterable[Tuple[str, Optional[str]]], jobs: int,
                 on_disk: bool = True) -> None:
        from .project_run import RunPaths

        self.paths = RunPaths.of(paths)
        self.places = places  # gone through only when a plan first asks: most runs never do
        self.jobs = jobs
        self.on_disk = on_disk
        self.outside: Optional[List[str]] = None
        self.current = NamesElsewhere()

    @classmethod
    def of_table(cls, table: Any, jobs: int) -> "_Names":
        """For the targets of a run (target_table.TargetTable)."""
        from .project_run import RunPaths

        return cls(RunPaths(table), ((os.path.dirname(absolute), None if t.explicit else t.root)
                                      for t, absolute in table.all().with_absolute()), jobs)

    @classmethod
    def of_buffer(cls, path: Optional[str], jobs: int) -> "_Names":
        """For an editor's buffer standing for the file at `path` (None: no file, so no project)."""
        if path is None:
            return cls([], [], jobs, on_disk=False)
        return cls([path], [(os.path.dirname(os.path.abspath(path)), None)], jobs, on_disk=False)

    def answer(self, asked: Iterable[str]) -> None:
        from .project_run import names_named

        new = frozenset(asked) - self.current.known
        if not new:
            return
        if self.outside is None:
            roots = {project_root(folder, walked) for folder, walked in sorted(set(self.places), key=str)}
            self.outside = the_rest_of(sorted(root for root in roots if root is not None), self.paths)
        found = names_named(self.paths if self.on_disk else (), new, self.outside, jobs=self.jobs)
        self.current = self.current.answered(found.twice if self.on_disk else found.outside, new, found.outside)

    def answering(self, call: Callable[[], Any]) -> Any:
        """`call()`, made again once the names it asks about are answered; `call` plans with `self.current`.
        A call still asking after ROUNDS gets the safe answer: each name not answered counts as named."""
        for _ in range(self.ROUNDS):
            try:
                return call()
            except AskNames as asked:
                self.answer(asked.names)
        answered = self.current
        self.current = answered._replace(rest_named=True)
        try:
            return call()
        finally:
            self.current = answered

    def given(self, targets: Iterable[FixTarget]) -> Iterator[FixTarget]:
        """The targets with the answers known when each is handed out."""
        for target in targets:
            yield target._replace(named_elsewhere=self.current)

    def settled(self, results: Iterable[FileFixResult], target_of: Callable[[str], FixTarget],
                again: Callable[[List[FixTarget]], Iterable[FileFixResult]]) -> Iterator[FileFixResult]:
        """`results` as they come, but a file whose plan asked is fixed again (`again`) once the names asked by
        every file are answered; closing this closes `results`. `target_of(path)`: the target of a result."""
        waiting: List[FixTarget] = []
        asked: Set[str] = set()
        try:
            for result in results:
                if result.asked:
                    asked.update(result.asked)
                    waiting.append(target_of(result.path))
                else:
                    yield result
        finally:
            _close(results)
        for _ in range(self.ROUNDS):
            if not waiting:
                return
            self.answer(asked)
            asking, waiting, asked = waiting, [], set()
            rerun = again(list(self.given(asking)))
            try:
                for target, result in zip(asking, rerun):
                    if result.asked:
                        asked.update(result.asked)
                        waiting.append(target)
                    else:
                        yield result
            finally:
                _close(rerun)
        for target in waiting:
            yield FileFixResult(target.path, error="internal error while fixing (its plan kept asking which names "
                                "other modules use)")


def the_rest_of(roots: Iterable[str], paths: Any) -> List[str]:
    """The Python files of the projects at `roots` that are not among `paths` (a project_run.RunPaths, or
    paths), as the flake8 plugin lists a project's files, but with no exclude: a module `--exclude` leaves out
    may still call a function."""
    from .plugin_project import project_files
    from .project_cache import CACHE_DIR_NAME
    from .project_run import RunPaths

    given = RunPaths.of(paths)
    rest: Set[str] = set()
    for root in roots:
        rest.update(path for path in project_files(root, (), CACHE_DIR_NAME) if path not in given)
    return sorted(rest)


def _has_unpooled_calls(target: FixTarget, overrides: Any) -> bool:
    from .settings import resolved

    return bool(resolved(overrides, target.key).options.unpooled_calls)


def with_project(table: Any, project_from: Optional[str], stdin: TextIO, resolver: Any) -> None:
    """With --project-from, add the rest of the project to the run's targets (target_table.TargetTable), read
    for the model and never fixed alone, every target then in the project list's order (shards.py)."""
    if project_from is None:
        return
    from .shards import project_candidates, project_paths

    paths = project_paths(project_from, stdin)
    table.add_project(fix_targets(project_candidates(resolver), paths), paths)


def fix_exit_code(args: argparse.Namespace, mode: str, errors: bool, changed: bool, remaining: bool) -> int:
    """ruff's: 2 on errors; else 1 when --diff/--check/--split-by-owner would change a file, or when writing
    left findings unfixed; 0 otherwise, and always 0 with --exit-zero."""
    from . import cli

    if errors:
        return cli.EXIT_ERROR
    if args.exit_zero:
        return cli.EXIT_CLEAN
    if mode in (DIFF, CHECK, PATCH):
        return cli.EXIT_FINDINGS if changed else cli.EXIT_CLEAN
    return cli.EXIT_FINDINGS if remaining else cli.EXIT_CLEAN


def shown_fixes(path: str, applied: Iterable[Tuple[str, int]]) -> str:
    """`--show-fixes`' line for a file: `path: HTP101 x2, HTP203`."""
    parts = [code if count == 1 else f"{code} x{count}" for code, count in sorted(applied)]
    return f"{shown(path)}: {', '.join(parts)}\n"


class _BufferProject:
    """What the project says of an editor's buffer (`fix --stdin-filename app/http.py -`), as `check -` and the
    flake8 plugin see it: the seeds of the file it stands for (plugin_project.buffer_seeds: those that point at a
    call by its position wait for the save), and which of its names the project's other modules use.

    The project is --project-from's list, else the Python files of the file's project root; a buffer named
    as no file on disk gets no seeds, and one with no project root is fixed alone."""

    def __init__(self, args: argparse.Namespace, stdin: TextIO, resolver: Any, config: Any, data: bytes,
                 note: Callable[[str], None]) -> None:
        from . import cli
        from .plugin_project import buffer_seeds
        from .project_run import project_seeds
        from .runner import worker_count
        from .shards import context_candidates, stdin_project

        self.jobs = worker_count(args.jobs, note)
        self.seeds: Any = None
        # Its own file on disk is not searched: any other file of the project naming a def is a caller the
        # buffer's fix cannot edit.
        self.names = _Names.of_buffer(os.path.abspath(args.stdin_filename) if args.stdin_filename else None,
                                      self.jobs)
        on_disk = cli.stdin_on_disk(args)
        if args.project_from is not None:
            context = list(context_candidates(args.project_from, stdin, resolver))
        else:
            context = stdin_project(on_disk, resolver) if on_disk is not None else []
        if on_disk is not None and context:
            cache = cli.open_project_cache(args, config, [c.path for c in context], note)
            solved = project_seeds([(c.path, c.key) for c in context], resolver.overrides, note, cache, self.jobs)
            self.seeds = buffer_seeds(solved.get(on_disk), on_disk, data)


def _fix_stdin(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO, resolver: Any, config: Any,
               mode: str, on_error: Callable[..., None]) -> int:
    """`fix -`: fix the source on standard input and print it (or its diff) on stdout; never writes a file.

    In the default mode the whole source is printed, fixed or not, as ruff does: an editor replaces its buffer
    with what comes back, so a source that cannot be fixed comes back unchanged (exit 2, the reason on stderr).
    A buffer named as a file of a project (--stdin-filename) is fixed as `fix` of the project fixes that file
    (see _BufferProject).
    """
    from . import cli
    from .fix_facts import facts_for_file
    from .fixing import fix_source, planned_fixes
    from .source_files import SourceError, decode_source, resource_error, too_large

    data = cli.read_stdin_bytes(stdin)
    name = cli.stdin_display(args)

    def echo() -> None:
        if mode == WRITE:
            out = getattr(stdout, "buffer", None)
            if out is not None:
                stdout.flush()
                out.write(data)
                out.flush()
            else:
                stdout.write(data.decode("utf-8", "surrogateescape"))

    if args.stdin_filename and cli.stdin_excluded(resolver, args.stdin_filename):
        echo()
        return 0
    key = cli.stdin_key(args, resolver, on_error)
    if key is None:  # its config cannot be used (said on stderr): the buffer comes back as it was
        echo()
        return cli.EXIT_ERROR
    from .settings import resolved

    found = resolved(resolver.overrides, key)
    options, codes, settings = found.options, found.codes, found.fix_facts()
    try:
        refused = too_large(len(data), options.max_file_size)
        if refused is not None:
            raise refused
        text = decode_source(data)
        facts = facts_for_file(os.path.abspath(args.stdin_filename), settings) if args.stdin_filename else settings
        project = _BufferProject(args, stdin, resolver, config, data, cli._note(stderr))

        def plan(facts: FixFacts) -> Any:
            if mode == CHECK:
                return planned_fixes(text, options, codes, args.unsafe_fixes, filename=name, facts=facts,
                                     seeds=project.seeds)
            return fix_source(text, options, codes, args.unsafe_fixes, filename=name, facts=facts,
                              seeds=project.seeds)

        result = project.names.answering(lambda: plan(facts._replace(named_elsewhere=project.names.current)))
    except SourceError as error:
        on_error(name, error.reason, error.where)
        echo()
        return cli.EXIT_ERROR
    except (RecursionError, MemoryError) as error:
        on_error(name, resource_error(error, "fix", len(data)))
        echo()
        return cli.EXIT_ERROR
    if result.error is not None:
        on_error(name, result.error, result.where)
        echo()
        return cli.EXIT_ERROR
    changed = bool(result.applied) if mode == CHECK else result.text != text
    remaining = Counter(dict(remaining_findings(result.text, options, codes, name, result.seeds))) \
        if mode == WRITE else Counter()
    if mode == WRITE:
        if changed:
            stdout.write(result.text)
        else:
            echo()
    elif mode == DIFF and changed:
        stdout.write(unified_diff(name, text, result.text))
    elif mode == CHECK and changed:
        stdout.write(f"would fix {shown(name)} ({_counts(Counter(dict(result.applied)))})\n")
    stdout.flush()
    if args.show_fixes and changed and result.applied:
        stderr.write(shown_fixes(name, result.applied.items()))  # stdout is the source
    if not args.quiet:
        stderr.write(summary(1, int(changed), Counter(dict(result.applied)) if changed else Counter(),
                             result.unsafe_left, [], mode, remaining))
    return fix_exit_code(args, mode, False, changed, sum(remaining.values()) > 0)


def _close(results: Iterable[Any]) -> None:
    close = getattr(results, "close", None)
    if close is not None:
        close()


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into Interrupted (SIGINT already raises KeyboardInterrupt), so a run unwinds.

    Only the first signal raises: a second one must not cut the clean-up short. Where the run is not in the
    main thread no handler can be set, and the defaults apply.
    """
    from .runner import Interrupted

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised: List[int] = []
    me = os.getpid()

    def stop(signum: int, frame: Optional[FrameType]) -> None:
        if os.getpid() != me:
            # A worker forked from this process, stopped before it set its own handlers (runner._init_worker):
            # it has nothing to unwind, and raising there prints a traceback from the pool's start-up.
            os._exit(128 + signum)
        if not raised:
            raised.append(signum)
            raise Interrupted(signum)

    previous: Dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signum = getattr(signal, name)
            previous[signum] = signal.signal(signum, stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
