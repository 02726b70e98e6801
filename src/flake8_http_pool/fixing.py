"""`fix`'s core: rewrite a source text until no allowed fix applies, verify it, and write files atomically.

libcst is imported only here, and only for a text with something to fix.
"""

from __future__ import annotations

import ast
import io
import os
import re
import stat
import tempfile
import tokenize
from collections import Counter
from typing import Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from .engine import analyze, may_have_findings
from .finding import Finding
from .fixes import FIXES
from .fixes.positions import source_lines
from .options import DEFAULT_OPTIONS, Options
from .rule import FIX_SAFE, FIX_UNSAFE
from .source_files import SourceError, parse_source

MAX_ROUNDS = 8


class FixResult(NamedTuple):
    """What `fix_source` did: the new text (the original on error), fixes applied and unsafe ones left, per code."""

    text: str
    applied: "Counter[str]"
    unsafe_left: "Counter[str]"
    error: Optional[str] = None


def fixable_codes(codes: Optional[Iterable[str]], unsafe: bool) -> List[str]:
    """The codes among `codes` (all when None) whose fix may be applied (safe ones, and unsafe with `unsafe`)."""
    from .rules import RULES_BY_CODE

    wanted = None if codes is None else set(codes)
    out = []
    for code, fix in FIXES.items():
        if wanted is not None and fix.rule_code not in wanted:
            continue
        safety = fix.safety or RULES_BY_CODE[fix.rule_code].fix
        if safety == FIX_SAFE or (safety == FIX_UNSAFE and unsafe):
            out.append(code)
    return out


def _comments(text: str) -> "Counter[str]":
    """The comments of a source text (a fix may move them, never drop them)."""
    found: "Counter[str]" = Counter()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found[token.string.rstrip()] += 1
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def _compiles(text: str, filename: str) -> Optional[str]:
    """None if `text` parses and compiles, else the reason."""
    try:
        compile(ast.parse(text, filename=filename), filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    except (RecursionError, MemoryError) as error:
        return f"{type(error).__name__}"
    return None


def _same_newlines(original: str, new: str) -> str:
    """New lines a fix wrote take the file's newline style when the file uses CRLF throughout."""
    if "\r\n" in original and re.search(r"(?<!\r)\n", original) is None:
        new = re.sub(r"(?<!\r)\n", "\r\n", new)
    return new


def fix_source(
    text: str,
    options: Options = DEFAULT_OPTIONS,
    codes: Optional[Iterable[str]] = None,
    unsafe: bool = False,
    filename: str = "<unknown>",
) -> FixResult:
    """Apply the allowed fixes to `text` until nothing changes (a few rounds at most).

    `codes` limits the rules (the selection after --select/--ignore; all when None). Each round runs the
    engine, plans the first fix that has work, carries it out with libcst, and checks that the result parses,
    compiles and keeps every comment. On any failure the original text comes back with `error` set.
    """
    selected, allowed, unsafe_codes = _split_codes(codes, unsafe)
    applied: "Counter[str]" = Counter()
    unsafe_left: "Counter[str]" = Counter()
    if not (allowed or unsafe_codes) or not may_have_findings(text, options):
        return FixResult(text, applied, unsafe_left)
    original_compiles = _compiles(text, filename) is None
    comments = _comments(text)
    current = text
    for _ in range(MAX_ROUNDS):
        analysed = _analyse(current, options, selected, filename)
        if isinstance(analysed, str):
            if current is text:
                return FixResult(text, Counter(), Counter(), analysed)  # the same words as `check`
            return FixResult(text, Counter(), Counter(), f"a fix produced code that does not parse: {analysed}")
        tree, findings = analysed
        lines = source_lines(current)
        unsafe_left = _planned(findings, unsafe_codes, tree, lines)
        step = _one_fix(current, findings, allowed, tree, lines, filename)
        if isinstance(step, _Failure):
            return FixResult(text, Counter(), Counter(), step.reason)
        if step is None or step[0] == current:
            break
        new_text, code, count = step
        reason = _compiles(new_text, filename)
        if reason is not None and (original_compiles or _compiles_parse_only(new_text) is not None):
            return FixResult(text, Counter(), Counter(), f"{code} fix produced code that does not compile ({reason})")
        lost = comments - _comments(new_text)
        if lost:
            return FixResult(text, Counter(), Counter(), f"{code} fix would drop a comment: {next(iter(lost))}")
        applied[code] += count
        current = new_text
    if current != text:
        current = _same_newlines(text, current)
    return FixResult(current, applied, unsafe_left)


def planned_fixes(
    text: str,
    options: Options = DEFAULT_OPTIONS,
    codes: Optional[Iterable[str]] = None,
    unsafe: bool = False,
    filename: str = "<unknown>",
) -> FixResult:
    """What `fix --check` needs: which fixes would apply, judged by the stdlib planners alone (no libcst).

    `applied` counts the findings of each code whose fix has work planned; the text is never changed. It runs
    the engine once, so it answers "would anything change" at the cost of a check, where `fix_source` pays for
    libcst. A file `fix_source` would leave alone (its plan fails verification) is still counted here: the
    golden and corpus tests hold the two to the same verdict.
    """
    selected, allowed, unsafe_codes = _split_codes(codes, unsafe)
    if not (allowed or unsafe_codes) or not may_have_findings(text, options):
        return FixResult(text, Counter(), Counter())
    analysed = _analyse(text, options, selected, filename)
    if isinstance(analysed, str):
        return FixResult(text, Counter(), Counter(), analysed)
    tree, findings = analysed
    lines = source_lines(text)
    return FixResult(text, _planned(findings, allowed, tree, lines), _planned(findings, unsafe_codes, tree, lines))


def _split_codes(codes: Optional[Iterable[str]], unsafe: bool) -> Tuple[Optional[Set[str]], List[str], List[str]]:
    """The selected codes (None: all), the fix keys that may be applied, and the unsafe ones held back."""
    selected = None if codes is None else set(codes)
    allowed = fixable_codes(selected, unsafe)
    return selected, allowed, [code for code in fixable_codes(selected, True) if code not in allowed]


def _analyse(text: str, options: Options, selected: Optional[Set[str]],
             filename: str) -> "Tuple[ast.Module, List[Finding]] | str":
    """The tree and the engine's findings, or why the text cannot be analysed."""
    try:
        tree = parse_source(text, filename)
        return tree, analyze(tree, options, codes=selected, source=text)
    except SourceError as error:
        return error.reason
    except RecursionError:
        return "cannot fix: nested too deeply"


def _compiles_parse_only(text: str) -> Optional[str]:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return str(error)
    return None


class _Failure(NamedTuple):
    reason: str


def _planned(
    findings: Sequence[Finding], fix_keys: Sequence[str], tree: ast.Module, lines: List[str]
) -> "Counter[str]":
    """Per rule code, the findings of the fixes in `fix_keys` whose planner has work for them."""
    left: "Counter[str]" = Counter()
    for code in fix_keys:
        mine = [f for f in findings if f.code == FIXES[code].rule_code]
        if mine and FIXES[code].plan(mine, tree, lines):
            left[FIXES[code].rule_code] += len(mine)
    return left


def _one_fix(text: str, findings: Sequence[Finding], allowed: Sequence[str], tree: ast.Module, lines: List[str],
             filename: str) -> "Optional[tuple] | _Failure":
    """Plan and apply the first allowed fix with work to do: (new text, code, fixes applied), None if none has."""
    for code in allowed:
        mine = [f for f in findings if f.code == FIXES[code].rule_code]
        if not mine:
            continue
        plan = FIXES[code].plan(mine, tree, lines)
        if not plan:
            continue
        import libcst as cst  # only here: a file with nothing to fix never pays for it
        from libcst.codemod import CodemodContext

        try:
            module = cst.parse_module(text)
            command = FIXES[code].command_class()(CodemodContext(filename=filename), plan)
            module = command.transform_module(module)
        except cst.ParserSyntaxError as error:
            return _Failure(f"libcst cannot parse it: {str(error).splitlines()[0]}")
        except Exception as error:  # a bug in a fix must not lose the file: report it and leave it alone
            return _Failure(f"{code} fix failed: {type(error).__name__}: {error}")
        if command.applied:
            return module.code, FIXES[code].rule_code, command.applied
    return None


# -- writing ---------------------------------------------------------------------------------------------
def source_encoding(data: bytes) -> str:
    """The encoding the interpreter reads `data` with ("utf-8-sig" when it starts with a BOM)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding


def encode_like(new_text: str, original_bytes: bytes) -> bytes:
    """`new_text` in the original file's encoding, BOM included when the original had one."""
    return new_text.encode(source_encoding(original_bytes))


def write_atomically(path: str, new_text: str, original_bytes: bytes) -> bool:
    """Replace the file at `path` with `new_text`; False (and no write at all) when the bytes would not change.

    The text is encoded as the original was (PEP 263 cookie, BOM), written to a temporary file beside the
    original with its mode bits, flushed to disk, and moved over it with `os.replace`, so a crash or Ctrl-C
    leaves either the old file or the new one, never half of one. A symlink is followed: its target is replaced.
    """
    data = encode_like(new_text, original_bytes)
    if data == original_bytes:
        return False
    target = os.path.realpath(path)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    directory, name = os.path.split(target)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".fix-tmp", dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return True
