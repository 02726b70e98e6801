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
from .fix_facts import NO_FACTS, FixFacts
from .fixes import FIXES, Fix
from .fixes.positions import source_lines
from .options import DEFAULT_OPTIONS, Options
from .source_files import SourceError, parse_source

MAX_ROUNDS = 8


class FixResult(NamedTuple):
    """What `fix_source` did: the new text (the original on error), fixes applied and unsafe ones left, per code."""

    text: str
    applied: "Counter[str]"
    unsafe_left: "Counter[str]"
    error: Optional[str] = None


def fix_keys(codes: Optional[Iterable[str]]) -> List[str]:
    """The FIXES keys whose rule is among `codes` (all when None), in the order fixes are tried."""
    wanted = None if codes is None else set(codes)
    return [key for key, fix in FIXES.items() if wanted is None or fix.rule_code in wanted]


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
    facts: FixFacts = NO_FACTS,
) -> FixResult:
    """Apply the allowed fixes to `text` until nothing changes (a few rounds at most).

    `codes` limits the rules (the selection after --select/--ignore; all when None); `facts` are the project's
    (what it patches, what it pins; see fix_facts). Each round runs the engine, plans every fix, keeps the sites
    whose safety is allowed, carries out the first fix with such sites with libcst, and checks that the result
    parses, compiles and keeps every comment. On any failure the original text comes back with `error` set.
    """
    keys = fix_keys(codes)
    selected = None if codes is None else set(codes)
    applied: "Counter[str]" = Counter()
    unsafe_left: "Counter[str]" = Counter()
    if not keys or not may_have_findings(text, options):
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
        plans = _site_plans(findings, keys, tree, source_lines(current), facts.with_module(facts.module, tree), unsafe)
        unsafe_left = _held(plans)
        step = _one_fix(current, plans, filename)
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
    facts: FixFacts = NO_FACTS,
) -> FixResult:
    """What `fix --check` needs: which fixes would apply, judged by the stdlib planners alone (no libcst).

    `applied` counts, per code, the sites whose fix may be carried out; the text is never changed. It runs
    the engine once, so it answers "would anything change" at the cost of a check, where `fix_source` pays for
    libcst. A file `fix_source` would leave alone (its plan fails verification) is still counted here: the
    golden and corpus tests hold the two to the same verdict.
    """
    keys = fix_keys(codes)
    if not keys or not may_have_findings(text, options):
        return FixResult(text, Counter(), Counter())
    analysed = _analyse(text, options, None if codes is None else set(codes), filename)
    if isinstance(analysed, str):
        return FixResult(text, Counter(), Counter(), analysed)
    tree, findings = analysed
    plans = _site_plans(findings, keys, tree, source_lines(text), facts.with_module(facts.module, tree), unsafe)
    allowed: "Counter[str]" = Counter()
    for plan in plans:
        allowed[plan.fix.rule_code] += len(plan.allowed)
    return FixResult(text, +allowed, _held(plans))


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


class _SitePlan(NamedTuple):
    """One fix's plan for a round: the sites it may carry out, and the unsafe ones held back."""

    fix: Fix
    allowed: List[object]
    held: List[object]


def _site_plans(findings: Sequence[Finding], keys: Sequence[str], tree: ast.Module, lines: List[str],
                facts: FixFacts, unsafe: bool) -> List[_SitePlan]:
    """Every fix's plan for these findings, its sites split by their safety (RULES.md decides it per site)."""
    plans = []
    for key in keys:
        fix = FIXES[key]
        mine = [f for f in findings if f.code == fix.rule_code]
        if not mine:
            continue
        items = fix.plan(mine, tree, lines, facts)
        if items:
            plans.append(_SitePlan(fix, *fix.split_plan(items, facts, unsafe)))
    return plans


def _held(plans: Sequence[_SitePlan]) -> "Counter[str]":
    """Per rule code, the unsafe sites held back (the summary's "use --unsafe-fixes" count)."""
    held: "Counter[str]" = Counter()
    for plan in plans:
        held[plan.fix.rule_code] += len(plan.held)
    return +held


def _one_fix(text: str, plans: Sequence[_SitePlan], filename: str) -> "Optional[tuple] | _Failure":
    """Carry out the first plan with sites allowed: (new text, code, fixes applied), None if none has."""
    for plan in plans:
        if not plan.allowed:
            continue
        import libcst as cst  # only here: a file with nothing to fix never pays for it
        from libcst.codemod import CodemodContext

        code = plan.fix.rule_code
        try:
            module = cst.parse_module(text)
            command = plan.fix.command_class()(CodemodContext(filename=filename), plan.allowed)
            module = command.transform_module(module)
        except cst.ParserSyntaxError as error:
            return _Failure(f"libcst cannot parse it: {str(error).splitlines()[0]}")
        except Exception as error:  # a bug in a fix must not lose the file: report it and leave it alone
            return _Failure(f"{code} fix failed: {type(error).__name__}: {error}")
        if command.applied:
            return module.code, code, command.applied
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
