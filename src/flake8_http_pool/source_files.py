"""Reads a file to check: bytes, then text (PEP 263 cookie, BOM), then an `ast` tree, each failure one clear reason."""

from __future__ import annotations

import ast
import io
import os
import stat
import tokenize

# Non-blocking so that opening a FIFO never waits for a writer.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class SourceError(Exception):
    """A file that could not be checked; `reason` is the text after `path: error: `."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
        raise SourceError(f"contains a NUL byte (line {line})")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceError(f"cannot decode: {error.msg if hasattr(error, 'msg') else error}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SourceError(f"cannot decode as {encoding} (line {line}): {error.reason}") from None
    except LookupError:
        raise SourceError(f"cannot decode: unknown encoding {encoding!r}") from None
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
        raise SourceError(syntax_error_reason(error)) from None
    except (ValueError, TypeError) as error:  # e.g. a source the compiler refuses outright
        raise SourceError(f"cannot parse: {error}") from None
    except RecursionError:
        raise SourceError("cannot parse: nested too deeply (recursion limit reached)") from None
    except MemoryError:
        raise SourceError("cannot parse: out of memory (input too large or nested too deeply)") from None


def syntax_error_reason(error: SyntaxError) -> str:
    """`syntax error at line 3, column 7: invalid syntax` (column counted from 1, as Python reports it)."""
    where = ""
    if error.lineno:
        where = f" at line {error.lineno}"
        if error.offset:
            where += f", column {error.offset}"
    return f"syntax error{where}: {error.msg}"

