"""Reads a file to check: bytes, then text (PEP 263 cookie, BOM), then an `ast` tree, each failure one clear reason."""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import os
import stat
import sys
import tokenize
import unicodedata
import warnings
from typing import Iterator, Optional, Tuple

# Non-blocking so that opening a FIFO never waits for a writer; never the controlling terminal (a link to /dev/tty
# in a cloned tree); never inherited by a worker started meanwhile.
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0))


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


# Files larger than this are skipped with one line (--max-file-size): a 50 MB file once took 643 s and 9 GB to
# check, and `fix` costs ~375 s of CPU and 1.4 GB per MB of source. Hand-written modules stay well below it.
DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024
_SIZE_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "M": 1024 ** 2, "MB": 1024 ** 2, "G": 1024 ** 3, "GB": 1024 ** 3}


def parse_size(text: str) -> int:
    """A size in bytes from `4194304`, `512K`, `4M`, `1G` (powers of 1024; `KB`, `MB`, `GB` too); 0: no limit.

    Raises ValueError with the reason for anything else.
    """
    value = text.strip().upper()
    digits = value.rstrip("KMGB")
    unit = value[len(digits):]
    if not digits.isdigit() or unit not in _SIZE_UNITS:
        raise ValueError(f"not a size: {text!r} (bytes, or with K, M or G: 512K, 4M)")
    return int(digits) * _SIZE_UNITS[unit]


def format_size(size: int) -> str:
    """`52 MB`, `4 MB`, `600 KB`, `12 bytes`: a size as messages show it (whole units, rounded down)."""
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if size >= scale:
            whole = size / scale
            return f"{whole:.1f} {unit}" if whole < 10 and size % scale else f"{int(whole)} {unit}"
    return f"{size} bytes"


def too_large(size: int, limit: Optional[int]) -> Optional[SourceError]:
    """The error for a file of `size` bytes over `limit` (None or 0: no limit), else None."""
    if not limit or size <= limit:
        return None
    return SourceError(f"skipped: {format_size(size)} is over the {format_size(limit)} limit (--max-file-size)")


def no_memory_to_load(error: BaseException) -> bool:
    """Whether `error` is memory running out in another guise, as met under `ulimit -v`: a C extension the
    loader could not map (`failed to map segment from shared object`: dlopen's words for ENOMEM), a package's
    folder it could not list (OSError ENOMEM), or an allocation in C that failed without setting an error
    (`SystemError: error return without exception set`). Not a missing module, nor a bug."""
    if isinstance(error, OSError):
        import errno

        return error.errno == errno.ENOMEM
    if isinstance(error, SystemError):
        return "without exception set" in str(error)
    return isinstance(error, ImportError) and "failed to map segment" in str(error)


def resource_error(error: BaseException, verb: str, size: Optional[int]) -> str:
    """Why a file could not be checked or fixed when Python ran out of stack (deep nesting) or of memory; `size`
    is None when memory ran out before the file was read."""
    if isinstance(error, RecursionError):
        return f"cannot {verb}: nested too deeply (recursion limit reached)"
    if size is None:
        return f"cannot {verb}: out of memory"
    return f"cannot {verb}: out of memory ({format_size(size)} of source)"


def as_parser_reads(text: str) -> str:
    """`text` with its characters NFKC-normalised, as Python's parser normalises identifiers (PEP 3131).

    For the cheap gates that search a file for library names: `import ｒｅｑｕｅｓｔｓ` (fullwidth letters)
    imports `requests`. ASCII text, nearly every file, comes back as it is at the cost of one scan, and so does
    text NFKC leaves alone (accents in comments and strings), at the cost of a check six times cheaper than
    normalizing it.
    """
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    # Line by line: NFKC never reorders or composes across "\n" (a starter that composes with nothing), so this
    # is the whole text's NFKC; normalizing only the lines that are not ASCII took a third of the time on the
    # standard library's files that need it (pydoc_data/topics.py, 756 KB, has a few such lines).
    return "\n".join(line if line.isascii() else unicodedata.normalize("NFKC", line) for line in text.split("\n"))


def bytes_as_parser_reads(data: bytes) -> bytes:
    """`as_parser_reads` for bytes taken as UTF-8 (a byte that is not UTF-8 is kept as it is)."""
    if data.isascii():
        return data
    return as_parser_reads(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def _os_reason(error: OSError) -> str:
    return (error.strerror or str(error)).lower()


def read_bytes(path: str, max_size: Optional[int] = None) -> bytes:
    """The file's bytes. Raises SourceError for a file that cannot be opened, is not a regular file, or is
    larger than `max_size` bytes (None or 0: no limit).

    THE reader of every file a checked tree holds (sources, configs, dependency files, CODEOWNERS, patches): a
    cloned repository may put a FIFO, a link to /dev/zero or a 1 GB sparse file where a file is expected, and
    none of them may hang a run or fill its memory.

    The file is opened non-blocking and checked with `fstat` on the open descriptor, so a FIFO put in a
    file's place between discovery and reading can never hang the run, and a file over the limit (a 1 GB
    sparse file) is refused before a byte of it is read; a file that grows after the `fstat` is read only
    up to the limit and one byte more.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as error:
        raise SourceError(f"cannot read: {_os_reason(error)}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise SourceError("not a regular file")
        refused = too_large(status.st_size, max_size)
        if refused is not None:
            raise refused
        chunks = []
        read = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
            refused = too_large(read, max_size)
            if refused is not None:
                raise refused  # it grew after the fstat
        return b"".join(chunks)
    except OSError as error:
        raise SourceError(f"cannot read: {_os_reason(error)}") from None
    finally:
        os.close(fd)


def read_or_none(path: str, max_size: Optional[int] = None) -> Optional[bytes]:
    """`read_bytes`, with None for a file it refuses (for readers that skip such a file silently: its own
    check reports it)."""
    try:
        return read_bytes(path, max_size)
    except SourceError:
        return None


def read_head(path: str, count: int) -> Optional[bytes]:
    """The first `count` bytes of a regular file (fewer if it is shorter), opened as `read_bytes` opens it; None
    for a file that cannot be opened or is no regular file."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while count > 0:
            chunk = os.read(fd, count)
            if not chunk:
                break
            chunks.append(chunk)
            count -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
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
    if data.isascii() and b"coding" not in data:
        return data.decode("ascii")  # no BOM, no cookie: UTF-8, which ASCII bytes always are (most files)
    try:
        encoding, lines = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise e999(f"cannot decode: {error.msg if hasattr(error, 'msg') else error}",
                   getattr(error, "lineno", None) or 1) from None
    if not _ascii_compatible(encoding):
        # The cookie was read as ASCII, so the file cannot be in the encoding it names: Python says "encoding
        # problem: utf-16", where decoding anyway would blame whatever character the bytes happened to make.
        raise e999(f"encoding problem: {encoding} (the coding cookie on line {max(len(lines), 1)} names an "
                   "encoding that is not ASCII-compatible, so it cannot be the file's)", max(len(lines), 1))
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


@functools.lru_cache(maxsize=64)
def _ascii_compatible(encoding: str) -> bool:
    """Whether ASCII bytes read in `encoding` are the same text (not so for UTF-16, UTF-32, EBCDIC code pages)."""
    sample = "# -*- coding: x -*-\nimport requests\n"
    try:
        return sample.encode("ascii").decode(encoding) == sample  # utf-8-sig: no BOM needed, so compatible
    except LookupError:
        return True  # unknown: decoding reports it in its own words
    except UnicodeError:
        return False


def quiet_parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse` without the parser's warnings on stderr (it raises what `ast.parse` raises)."""
    with quiet_compiler():
        return ast.parse(text, filename=filename)


@contextlib.contextmanager
def quiet_compiler() -> Iterator[None]:
    """A context in which the parser's and compiler's SyntaxWarnings (`1if x else y`, `x is 1`) and the invalid
    escapes 3.9-3.11 word as DeprecationWarnings are not printed: they are the interpreter's and flake8's to
    report, and a run that succeeds prints nothing it was not asked for."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def parse_source(text: str, filename: str) -> ast.Module:
    """`ast.parse`, with every way it can fail on hostile input turned into a SourceError.

    Deep input makes the parser raise RecursionError or MemoryError (a 3000-term `1 + 1 + ...`), or a
    SyntaxError such as "too many nested parentheses"; none of them may escape as a traceback.
    The parser's warnings are not printed (see `quiet_compiler`).
    """
    try:
        return quiet_parse(text, filename)
    except SyntaxError as error:
        raise syntax_error(error) from None
    except (ValueError, TypeError) as error:  # e.g. a source the compiler refuses outright
        raise e999(f"cannot parse: {error}", 1) from None
    except RecursionError:
        raise e999("cannot parse: nested too deeply (recursion limit reached)", 1) from None
    except MemoryError as error:
        raise _parser_memory_error(error, text) from None


def _parser_memory_error(error: MemoryError, text: str) -> SourceError:
    """Python's parser raises MemoryError both when its stack overflows (deep nesting) and when memory runs out.

    Python 3.13 says which ("Parser stack overflowed - Python source too complex to parse"); before, both are
    an empty MemoryError. Parsing a source under 1 MB takes a few hundred MB at most, so there an empty one is
    the stack; above, it is reported as what it more likely is, and never called "nested too deeply".
    """
    message = str(error).strip()
    if message:
        return e999(f"cannot parse: {message}", 1)
    if len(text) < _PARSER_OOM_SIZE:
        return e999("cannot parse: too complex for Python's parser (nested too deeply)", 1)
    return SourceError(f"cannot parse: out of memory ({format_size(len(text.encode('utf-8', 'surrogatepass')))} "
                       "of source)")


_PARSER_OOM_SIZE = 1024 * 1024


def syntax_error(error: SyntaxError) -> SourceError:
    """flake8's E999 for a SyntaxError: `E999 SyntaxError: msg` at its line and Python's offset plus one.

    flake8 prints Python's 1-based offset plus one (its column arithmetic assumes 0-based offsets); the same
    column is printed here so both tools put the error in the same place.
    """
    # Measured: flake8 prints Python's offset plus one from Python 3.10 on, and the offset itself on 3.9.
    shift = 1 if sys.version_info >= (3, 10) else 0
    return SourceError(f"E999 {type(error).__name__}: {error.msg}", (error.lineno or 1, (error.offset or 0) + shift))
