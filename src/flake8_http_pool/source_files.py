"""Reads a file to check: bytes, then text (PEP 263 cookie, BOM), then an `ast` tree, each failure one clear reason."""

from __future__ import annotations

import ast
import io
import os
import stat
import sys
import tokenize
from typing import Optional, Tuple

# Non-blocking so that opening a FIFO never waits for a writer.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class SourceError(Exception):
    """A file that could not be checked.

    `where` is None for a file that could not be read (`reason` is the text after `path: error: `); for a
    source Python would refuse to compile it is the (line, column) flake8 reports its E999 at, and `reason`
    is the text after `path:line:col: `, in flake8's shape (`E999 SyntaxError: ...`), so editors' problem
    matchers place it.
    """

    def __init__(self, reason: str, where: "Optional[Tuple[int, int]]" = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = where


def e999(message: str, line: int, column: int = 1) -> SourceError:
    """A source error in flake8's E999 shape at `line`:`column` (both counted from 1)."""
    return SourceError(f"E999 SyntaxError: {message}", (max(line, 1), max(column, 1)))


def _os_reason(error: OSError) -> str:
    return (error.strerror or str(error)).lower()


def read_bytes(path: str) -> bytes:
    """The file's bytes. Raises SourceError for a file that cannot be opened or is not a regular file.

    The file is opened non-blocking and checked with `fstat` on the open descriptor, so a FIFO put in a
    file's place between discovery and reading can never hang the run.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as error:
        raise SourceError(f"cannot read: {_os_reason(error)}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SourceError("not a regular file")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as error:
        raise SourceError(f"cannot read: {_os_reason(error)}") from None
    finally:
        os.close(fd)


def decode_source(data: bytes) -> str:
    """Python source bytes as text, honouring a UTF-8 BOM and a PEP 263 coding cookie, as the interpreter does.

    Raises SourceError for NUL bytes (the interpreter refuses them), an unknown or contradictory encoding
    declaration, and bytes that are not valid in the declared encoding.
    """
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise e999("source contains a NUL byte", line)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise e999(f"cannot decode: {error.msg if hasattr(error, 'msg') else error}",
                   getattr(error, "lineno", None) or 1) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise e999(f"cannot decode as {encoding}: {error.reason}", line) from None
    except LookupError:
        raise e999(f"cannot decode: unknown encoding {encoding!r}", 1) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def parse_source(text: str, filename: str) -> ast.Module:
    """`ast.parse`, with every way it can fail on hostile input turned into a SourceError.

    Deep input makes the parser raise RecursionError or MemoryError (a 3000-term `1 + 1 + ...`), or a
    SyntaxError such as "too many nested parentheses"; none of them may escape as a traceback.
    """
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as error:
        raise syntax_error(error) from None
    except (ValueError, TypeError) as error:  # e.g. a source the compiler refuses outright
        raise e999(f"cannot parse: {error}", 1) from None
    except RecursionError:
        raise e999("cannot parse: nested too deeply (recursion limit reached)", 1) from None
    except MemoryError:
        raise e999("cannot parse: out of memory (input too large or nested too deeply)", 1) from None


def syntax_error(error: SyntaxError) -> SourceError:
    """flake8's E999 for a SyntaxError: `E999 SyntaxError: msg` at its line and Python's offset plus one.

    flake8 prints Python's 1-based offset plus one (its column arithmetic assumes 0-based offsets); the same
    column is printed here so both tools put the error in the same place.
    """
    # Measured: flake8 prints Python's offset plus one from Python 3.10 on, and the offset itself on 3.9.
    shift = 1 if sys.version_info >= (3, 10) else 0
    return SourceError(f"E999 {type(error).__name__}: {error.msg}", (error.lineno or 1, (error.offset or 0) + shift))
