"""The `fix` subcommand: discover files as `check` does, fix each (in worker processes), write, diff or check.

Exit codes: 0 done (or nothing to change), 1 with `--check` when a file would change, 2 a usage error or a
file that could not be processed (each gets one `path: error: reason` line; the others are still fixed).
"""

from __future__ import annotations

import argparse
import difflib
import time
from collections import Counter
from typing import Any, Iterable, List, NamedTuple, Optional, TextIO, Tuple

from .fix_facts import FixFacts
from .options import Options

WRITE, DIFF, CHECK = "write", "diff", "check"
# The progress line appears on a terminal only once a run has taken this long (seconds).
PROGRESS_AFTER = 1.0


class FileFixResult(NamedTuple):
    """What fixing one file gave; `diff` is set in --diff mode for a file that would change."""

    path: str
    changed: bool = False
    applied: Tuple[Tuple[str, int], ...] = ()
    unsafe_left: Tuple[Tuple[str, int], ...] = ()
    error: Optional[str] = None
    diff: Optional[str] = None


def add_fix_parser(commands: Any) -> argparse.ArgumentParser:
    """Register `fix` on the command line's subparsers, with the scan arguments it shares with `check`."""
    from .cli import add_scan_arguments

    fix = commands.add_parser(
        "fix",
        help="rewrite code to reuse connections (safe fixes; --unsafe-fixes for the rest)",
        description="Apply the fixes of the rules found in Python files, in place. Directories are walked as by "
        "`check`. Exit 0: done; 1: with --check, files would change; 2: usage error or a file that could not "
        "be processed.",
    )
    add_scan_arguments(fix, "fix")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that may change behaviour")
    mode = fix.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff of the changes and write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if any file would change (judged by planning the fixes, without applying them)")
    fix.add_argument("--no-progress", action="store_true", help="never show the progress line on stderr")
    return fix


def fix_file(path: str, options: Options, codes: frozenset, unsafe: bool, mode: str,
             facts: Optional[FixFacts] = None) -> FileFixResult:
    """Fix one file; never raises for anything the file holds. Writes only in WRITE mode, and only on change.

    `facts` are the project's (see fix_facts); without them a fix sees only what this file itself says.
    """
    from .checking import mentions_a_library
    from .fix_facts import NO_FACTS, module_name
    from .fixing import fix_source, planned_fixes, write_atomically
    from .source_files import SourceError, decode_source, read_bytes

    try:
        data = read_bytes(path)
        text = decode_source(data)
        if not options.unpooled_calls and not mentions_a_library(data):
            return FileFixResult(path)
        facts = (facts or NO_FACTS)._replace(module=module_name(path))
        if mode == CHECK:
            # Whether anything would change is the planners' answer; carrying the plan out with libcst would
            # cost about four times as much and write nothing anyway.
            planned = planned_fixes(text, options, codes, unsafe, filename=path, facts=facts)
            left = tuple(sorted(planned.unsafe_left.items()))
            if planned.error is not None:
                return FileFixResult(path, unsafe_left=left, error=planned.error)
            return FileFixResult(path, bool(planned.applied), tuple(sorted(planned.applied.items())), left)
        result = fix_source(text, options, codes, unsafe, filename=path, facts=facts)
    except SourceError as error:
        return FileFixResult(path, error=error.reason)
    except (RecursionError, MemoryError):
        return FileFixResult(path, error="cannot fix: nested too deeply")
    except Exception as error:  # a bug of ours must cost one file, not the run
        return FileFixResult(path, error=f"internal error while fixing ({type(error).__name__}: {error})")
    applied = tuple(sorted(result.applied.items()))
    left = tuple(sorted(result.unsafe_left.items()))
    if result.error is not None:
        return FileFixResult(path, unsafe_left=left, error=result.error)
    if result.text == text:
        return FileFixResult(path, unsafe_left=left)
    if mode == DIFF:
        return FileFixResult(path, True, applied, left, diff=unified_diff(path, text, result.text))
    if mode == WRITE:
        try:
            write_atomically(path, result.text, data)
        except (OSError, UnicodeEncodeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            return FileFixResult(path, unsafe_left=left, error=f"cannot write: {reason}")
    return FileFixResult(path, True, applied, left)


def unified_diff(path: str, old: str, new: str) -> str:
    """A `diff -u` of the change, marking a last line without a newline as diff does."""
    out = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), path, path):
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _fix_job(shared: Tuple[Options, frozenset, bool, str, FixFacts], candidate: Any) -> FileFixResult:
    options, codes, unsafe, mode, facts = shared
    return fix_file(candidate.path, options, codes, unsafe, mode, facts)


def project_fix_facts(paths: List[str], config: Any) -> FixFacts:
    """The facts of the projects the paths lie in: what their files patch, whether they pin requests 2.32+."""
    from .fix_facts import FixFacts, find_project_root, gather_fix_facts

    roots = sorted({find_project_root(path) for path in paths})
    gathered = [gather_fix_facts(root) for root in roots]
    return FixFacts(
        patched=frozenset().union(*(facts.patched for facts in gathered)),
        requests_232=bool(gathered) and all(facts.requests_232 for facts in gathered),
        application=bool(getattr(config, "application", False)),
        extend_safe=tuple(getattr(config, "extend_safe_fixes", ())),
        extend_unsafe=tuple(getattr(config, "extend_unsafe_fixes", ())),
    )


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
            skipped: List[Tuple[str, str]], mode: str) -> str:
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
    if skipped:
        lines.append(f"{len(skipped)} file{'s' if len(skipped) != 1 else ''} skipped:")
        lines.extend(f"  {path}: {reason}" for path, reason in skipped)
    return "".join(f"flake8-http-pool fix: {line}\n" if not line.startswith("  ") else line + "\n" for line in lines)


def run_fix(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """`fix`: discover, fix (in parallel), write / diff / check, summarise; the exit code."""
    from . import cli
    from .discovery import PYTHON, Discovery, Excluder, expand_arguments
    from .runner import Runner, default_jobs

    options, codes, exclude, config = cli.scan_settings(args)

    mode = DIFF if args.diff else CHECK if args.check else WRITE
    skipped: List[Tuple[str, str]] = []

    def on_error(path: str, reason: str) -> None:
        stderr.write(f"{path}: error: {reason}\n")
        stderr.flush()
        skipped.append((path, reason))

    discovery = Discovery(Excluder(exclude), on_error)
    paths: Iterable[str] = expand_arguments(args.paths or ["."], stdin)
    candidates = (c for c in discovery.candidates(paths) if c.kind == PYTHON)
    # A path list on stdin names files of the project around the working directory.
    roots = [p for p in (args.paths or ["."]) if p != "-"] or ["."]
    facts = project_fix_facts(roots, config)
    runner = Runner(_fix_job, (options, codes, args.unsafe_fixes, mode, facts), _crashed, args.jobs or default_jobs())

    progress = _Progress(stderr, not args.no_progress)
    scanned = changed = 0
    applied: "Counter[str]" = Counter()
    unsafe_left: "Counter[str]" = Counter()
    try:
        for result in runner.run(candidates):
            scanned += 1
            unsafe_left.update(dict(result.unsafe_left))
            if result.error is not None:
                progress.clear()
                on_error(result.path, result.error)
            elif result.changed:
                changed += 1
                applied.update(dict(result.applied))
                if result.diff:
                    progress.clear()
                    stdout.write(result.diff)
                elif mode == CHECK:
                    progress.clear()
                    stdout.write(f"would fix {result.path} ({_counts(Counter(dict(result.applied)))})\n")
            progress.update(scanned)
    finally:
        progress.clear()
        stdout.flush()
    stderr.write(summary(scanned, changed, applied, unsafe_left, skipped, mode))
    if skipped:
        return cli.EXIT_ERROR
    return 1 if mode == CHECK and changed else 0
