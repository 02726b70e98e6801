"""The `merge` subcommand: one report from the JSON or SARIF reports of a run split across CI jobs.

Each shard runs `check --files-from SHARD --project-from ALL --output-format json` (or sarif), and one job
merges what they wrote (docs/sharding.md). The merged report is what `check` over all the files would have
written, in any of its formats, with its closing summary line and its exit code: the findings come back with
every field (report_input.py), each file's once even when shards overlap, the files in path order (the order
`git ls-files` lists them in, so an unsharded `check --files-from` of that list writes the same bytes).
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from typing import Any, Dict, List, Sequence, TextIO, Tuple


def add_merge_parser(commands: Any) -> argparse.ArgumentParser:
    """Register `merge` on the command line's subparsers, with `check`'s reporting flags."""
    from .cli import add_report_arguments

    merge: argparse.ArgumentParser = commands.add_parser(
        "merge",
        help="join the JSON or SARIF reports of a sharded check into one report",
        description="Read the reports that `check --output-format json` or `--output-format sarif` wrote, one "
        "per shard of a run split across CI jobs (`check --files-from SHARD --project-from ALL`), and write "
        "one report in any format `check` writes, as `check` of all the files would: the same findings with "
        "every field, a finding two reports share once, the files in path order, and check's closing summary "
        "line. Exit 0: no findings; 1: findings (0 with --exit-zero); 2: a report that could not be read (named "
        "on stderr; the others are still merged) or a file a shard could not check.",
    )
    merge.add_argument("reports", nargs="+", metavar="REPORT",
                       help="a report of `check --output-format json` or `sarif` (reports of both kinds mix)")
    add_report_arguments(merge)
    merge.set_defaults(handler=run_merge)
    return merge


def run_merge(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """`merge`: read every report, join them, write the result through `check`'s formats; the exit code."""
    from . import cli
    from .escaping import shown
    from .report_input import ReportError, read_report
    from .report_output import write_report

    read: List[Sequence[Any]] = []
    unreadable = False
    for name in args.reports:
        try:
            read.append(read_report(name))
        except ReportError as error:
            stderr.write(f"flake8-http-pool: error: {shown(name)}: {shown(str(error))}\n")
            stderr.flush()
            unreadable = True
    reports = merged(read)
    errors = cli._Errors(stderr)
    found = write_report(args, lambda: iter(reports), errors, stdout, stderr)
    return cli.exit_code(args, bool(errors.items) or unreadable, found)


def merged(reports: Sequence[Sequence[Any]]) -> List[Any]:
    """The FileReports of `reports` (each a list of report_input entries) joined: per file, every finding any
    report has, as many times as the report holding it most often has it (so overlapping shards count it once);
    each error once; files in path order, a file's findings in its report's order."""
    from .checking import FileResult
    from .formats import CheckError
    from .reporting import FileReport

    findings: Dict[str, List[Any]] = {}  # per path key, the Reported items kept
    names: Dict[str, str] = {}  # per path key, the path as the first report spelled it
    errors: Dict[Tuple[str, str, Any], Any] = {}
    for report in reports:
        mine: Dict[str, List[Any]] = {}
        for entry in report:
            key = _path_key(entry.path)
            names.setdefault(key, entry.path)
            if isinstance(entry, CheckError):
                errors.setdefault((key, entry.reason, entry.where), entry)
            else:
                mine.setdefault(key, []).append(entry.reported)
        for key, items in mine.items():
            kept = findings.setdefault(key, [])
            had = Counter(_identity(item) for item in kept)
            seen: "Counter[Tuple[Any, ...]]" = Counter()
            for item in items:
                identity = _identity(item)
                seen[identity] += 1
                if seen[identity] > had[identity]:
                    kept.append(item)
    out: List[Tuple[bytes, int, Any]] = []
    for key, items in findings.items():
        result = FileResult(names[key], tuple(item.located for item in items))
        out.append((_order(key), 0, FileReport(result, tuple(items))))
    for (key, _, _), error in errors.items():
        out.append((_order(key), 1, FileReport(FileResult(names[key], error=error.reason, where=error.where))))
    out.sort(key=lambda item: item[:2])
    return [report for _, _, report in out]


def _path_key(path: str) -> str:
    """One file however a report spells it (`./app/x.py`, `app/x.py`)."""
    return os.path.normpath(path)


def _order(key: str) -> bytes:
    """Path order as `git ls-files` sorts: by the path's bytes, `/` between folders."""
    return key.replace(os.sep, "/").encode("utf-8", "surrogateescape")


def _identity(item: Any) -> Tuple[Any, ...]:
    f = item.located.finding
    return (f.code, f.line, f.col, f.end_line, f.end_col, f.message)
