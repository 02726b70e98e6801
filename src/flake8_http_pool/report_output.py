"""Where `check`'s report goes and what closes it: the stream or --output-file (written whole, via a temporary
file renamed into place), colour, --statistics, --count and the `Found N findings` summary."""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Any, Callable, Iterator, Optional, TextIO

from .formats import TEXT_FORMATS, Style, make_formatter
from .reporting import Tally


def colour_wanted(choice: str, stream: TextIO, environ: Optional["os._Environ[str]"] = None) -> bool:
    """Whether to colour: `always`/`never` as said; `auto` on a terminal, unless NO_COLOR is set and not empty
    (no-color.org); FORCE_COLOR set and not empty colours even a pipe (as ruff and many tools read it)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class OutputFile:
    """A report file that appears whole or not at all: written to a temporary file beside it, renamed at the end.

    `label` names it in errors (default `--output-file PATH`); `binary` opens a byte stream (patches keep each
    file's own encoding) instead of UTF-8 text.
    """

    def __init__(self, path: str, label: Optional[str] = None, binary: bool = False) -> None:
        from .cli import UsageError

        self.path = path
        self.label = label or f"--output-file {path}"
        folder = os.path.dirname(os.path.abspath(path))
        try:
            handle, self.temporary = tempfile.mkstemp(prefix=".flake8-http-pool-", suffix=".tmp", dir=folder)
        except OSError as error:
            raise UsageError(f"{self.label}: cannot write there: {error.strerror or error}") from None
        self.stream: Any = os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding="utf-8",
                                                                            newline="")

    def commit(self) -> None:
        from .cli import UsageError

        try:
            self.stream.close()
            mode = 0o666 & ~_umask()
            os.chmod(self.temporary, mode)  # mkstemp's 0600 would surprise whoever reads the report
            os.replace(self.temporary, self.path)
        except OSError as error:
            self.discard()
            raise UsageError(f"{self.label}: cannot write it: {error.strerror or error}") from None

    def discard(self) -> None:
        if not self.stream.closed:
            self.stream.close()
        try:
            os.unlink(self.temporary)
        except OSError:
            pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_report(args: argparse.Namespace, results: Callable[[], Iterator[Any]], errors: Any,
                 stdout: TextIO, stderr: TextIO) -> bool:
    """Run `results` (FileReport items) through the chosen format into stdout or --output-file; True if any
    finding was reported. Files that could not be checked go to `errors`, which shows them as the format can.

    The formats are given every rule: a config below the working directory may select codes its config does not.
    """
    from .rules import ALL_RULES

    target: Optional[OutputFile] = OutputFile(args.output_file) if args.output_file else None
    out = target.stream if target is not None else stdout
    text = args.format in TEXT_FORMATS
    style = Style(text and target is None and colour_wanted(args.color, stdout))
    formatter = make_formatter(args.format, out, list(ALL_RULES), style)
    errors.formatter = formatter
    tally = Tally()
    try:
        formatter.start()
        for report in results():
            result = report.result
            if result.error is not None:
                errors(result.path, result.error, result.where)
            elif report.reported:
                tally.add(report.reported)
                formatter.findings(result.path, report.reported)
        formatter.finish(errors.items)
        # What follows the findings is for people: in the report for the text formats, on stderr for the
        # others (a JSON or SARIF document must stay one document).
        closing = out if text else stderr
        if args.statistics:
            names = {rule.code: rule.name for rule in ALL_RULES}
            for line in tally.statistics(names):
                closing.write(line + "\n")
        if text and not args.quiet and tally.total:
            closing.write(tally.summary() + "\n")
        if args.count:
            closing.write(f"{tally.total}\n")
    except BaseException:
        if target is not None:
            target.discard()
        raise
    if target is not None:
        target.commit()
    else:
        out.flush()
    return tally.total > 0

