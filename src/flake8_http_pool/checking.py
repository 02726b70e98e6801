"""Checks one file: reads it, gates it, parses it and runs the engine, returning its findings or one error."""

from __future__ import annotations

from typing import Any, Callable, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

from .discovery import DEPENDENCIES, PYTHON
from .engine import analyze, may_have_findings
from .finding import Finding
from .noqa import unsuppressed
from .options import Options
from .source_files import (SourceError, as_parser_reads, bytes_as_parser_reads, decode_source, parse_source,
                           read_bytes, resource_error, too_large)

# Every rule starts from an import of one of these, so a file whose bytes hold none of them has no finding.
# Searching bytes costs ~1 % of a parse and needs no decoding; the engine's own text gate follows.
_LIBRARY_BYTES = (b"requests", b"httpx", b"aiohttp", b"urllib", b"niquests", b"gevent")


class Located(NamedTuple):
    """A finding and its columns counted in characters (SARIF wants them; `Finding` counts UTF-8 bytes)."""

    finding: Finding
    col_chars: int
    end_col_chars: int


class FileResult(NamedTuple):
    """What checking one file gave: its findings (selected codes only), or the reason it could not be checked."""

    path: str
    findings: Tuple[Located, ...] = ()
    error: Optional[str] = None
    where: Optional[Tuple[int, int]] = None  # set for a source error in flake8's shape (see SourceError)


def mentions_a_library(data: bytes, text: Optional[str] = None) -> bool:
    """The bytes-level gate: False when no HTTP library's name occurs anywhere in the file.

    A file with non-ASCII bytes is searched again as the parser reads its identifiers (NFKC, see
    `as_parser_reads`), in `text` (the decoded source) when given, else in the bytes taken as UTF-8.
    """
    if any(name in data for name in _LIBRARY_BYTES):
        return True
    if data.isascii():
        return False
    folded = as_parser_reads(text) if text is not None else bytes_as_parser_reads(data).decode("utf-8", "replace")
    return any(name.decode("ascii") in folded for name in _LIBRARY_BYTES)


def check_file(path: str, kind: str, options: Options, codes: FrozenSet[str],
               seeds: Optional[Any] = None) -> FileResult:
    """Check one file; never raises for anything the file holds (bad bytes, bad syntax, deep nesting).
    `seeds`: what the project model found about it because of other modules (engine.ModuleSeeds)."""
    try:
        data = read_bytes(path, options.max_file_size)
    except SourceError as error:
        return FileResult(path, error=error.reason, where=error.where)
    return check_source(path, data, kind, options, codes, seeds)


def check_file_parsed(path: str, options: Options, codes: FrozenSet[str], seeds: Optional[Any] = None) -> FileResult:
    """check_file for a Python file that must be parsed whatever the gate says (the project model read it)."""
    try:
        data = read_bytes(path, options.max_file_size)
    except SourceError as error:
        return FileResult(path, error=error.reason, where=error.where)
    return check_source(path, data, PYTHON, options, codes, seeds, parse_anyway=True)


def check_source(path: str, data: bytes, kind: str, options: Options, codes: FrozenSet[str],
                 seeds: Optional[Any] = None, on_analysis: Optional[Callable[[Any], None]] = None,
                 parse_anyway: bool = False,
                 on_found: Optional[Callable[[str, List[Finding]], None]] = None) -> FileResult:
    """Check a file's bytes (read from disk, or standard input shown as `path`); never raises for what they hold.
    `on_analysis` receives the module's Analysis when the engine walks it (engine.analyze), and `on_found` the
    text walked and every finding of the walk (all codes, `# noqa` not applied). A file the gate passes over is
    not parsed unless `parse_anyway` (its syntax error is then reported)."""
    refused = too_large(len(data), options.max_file_size)  # standard input has no size to fstat
    if refused is not None:
        return FileResult(path, error=refused.reason)
    try:
        # Decoding every file (not only those past the gate) is what lets undecodable and NUL-holding files
        # be reported; it costs about as little as the gate itself.
        text = decode_source(data)
        if kind == DEPENDENCIES:
            from .dependency_files import check_dependency_file

            found = check_dependency_file(path, text)
        elif (not options.unpooled_calls and not (seeds is not None and seeds.reach_other_files())
              and not (mentions_a_library(data, text) and may_have_findings(text, options))):
            # (A call of a client factory or a blocking helper of another module, a base class's client: findings
            # in a file naming no library.)
            # Nothing to find here: not parsed either (a syntax error in such a file is flake8's and ruff's to
            # report; parsing every file cost check most of its time). Decoding still reports undecodable bytes.
            if parse_anyway:
                parse_source(text, path)
            return FileResult(path)
        else:
            tree = parse_source(text, path)
            found = analyze(tree, options, source=text, seeds=seeds, on_analysis=on_analysis)
            if on_found is not None:
                on_found(text, found)
    except SourceError as error:
        return FileResult(path, error=error.reason, where=error.where)
    except RecursionError as error:
        return FileResult(path, error=f"E999 SyntaxError: {resource_error(error, 'check', len(data))}", where=(1, 1))
    except MemoryError as error:  # not the source's fault: no E999, and never called "nested too deeply"
        return FileResult(path, error=resource_error(error, "check", len(data)))
    except Exception as error:  # an engine bug must cost one file, not the run
        return FileResult(path, error=f"internal error while checking ({type(error).__name__}: {error})")
    # `# noqa` as flake8 honours it; dependency files have no tokens, so their physical line is searched.
    wanted = unsuppressed([f for f in found if f.code in codes], text, python=kind != DEPENDENCIES)
    return FileResult(path, tuple(_locate(wanted, text)))


def _locate(findings: Sequence[Finding], text: str) -> List[Located]:
    if not findings:
        return []
    lines = text.splitlines(keepends=True)
    return [
        Located(f, _char_col(lines, f.line, f.col), _char_col(lines, f.end_line, f.end_col)) for f in findings
    ]


def _char_col(lines: Sequence[str], line: int, byte_col: int) -> int:
    if not 1 <= line <= len(lines):
        return byte_col
    return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "ignore"))

