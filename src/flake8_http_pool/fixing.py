"""`fix`'s core: rewrite a source text until no allowed fix applies, and verify it (writing is `writing`'s).

libcst is imported only here, and only for a text with something to fix.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from .engine import ModuleSeeds, analyze, may_have_findings
from .finding import Finding
from .noqa import unsuppressed
from .fix_facts import NO_FACTS, FixFacts
from .fixes import FIXES, Fix
from .fixes.positions import source_lines
from .options import DEFAULT_OPTIONS, Options
from .source_files import SourceError, parse_source, quiet_compiler, quiet_parse

MAX_ROUNDS = 8


class FixResult(NamedTuple):
    """What `fix_source` did: the new text (the original on error), fixes applied and unsafe ones left, per code."""

    text: str
    applied: "Counter[str]"
    unsafe_left: "Counter[str]"
    error: Optional[str] = None
    where: Optional[Tuple[int, int]] = None  # set with a source error in flake8's shape (see SourceError)
    seeds: Optional[ModuleSeeds] = None  # the project model's seeds, re-located in the returned text


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
        with quiet_compiler():
            compile(ast.parse(text, filename=filename), filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    except (RecursionError, MemoryError) as error:
        return f"{type(error).__name__}"
    return None


_LINE_END = re.compile(r"(\r\n|\r|\n)")
# The whitespace before a line's first token, up to its last form feed (the tokenizer restarts the indent there).
_FORM_FEED_PREFIX = re.compile(r"^[ \t\f]*\f")


def _lines_with_ends(text: str) -> List[Tuple[str, str]]:
    """(line, its end) pairs, ends as the tokenizer sees them (\r\n, \r, \n; the last line's may be "")."""
    parts = _LINE_END.split(text)
    pairs = list(zip(parts[0::2], parts[1::2] + [""]))
    if pairs and pairs[-1] == ("", ""):
        pairs.pop()
    return pairs


def _same_newlines(original: str, new: str) -> str:
    """`new` with the original's line ends and form feeds, which libcst does not always keep.

    libcst writes the lines a fix adds with the file's first line end, drops a final bare \r, and drops a form
    feed at the start of a line (even of a line no fix touched). The lines of the two texts are matched by
    content: each line of `new` ends as the original line it comes from; a line a fix wrote ends as the
    original line it replaces, or the line it was inserted after (before, at the top); a file that ended its
    last line keeps it ended. A lost form feed goes back in front of its line, or of the code that replaced
    that line, when the tree stays the same (form feeds are whitespace; a changed tree means a misplaced one).
    """
    if "\r" not in original and "\r" not in new and "\f" not in original:
        return new  # \n throughout, no form feed: the common case, kept cheap
    old_lines = _lines_with_ends(original)
    new_lines = _lines_with_ends(new)
    styles = {end for _, end in old_lines if end}
    if len(styles) <= 1:
        style = styles.pop() if styles else "\n"
        ends = [style if end else "" for _, end in new_lines]
    else:
        ends = _matched_ends(old_lines, new_lines)
    for index in range(len(ends) - 1):  # only the last line may go without an end
        if not ends[index]:
            ends[index] = ends[index - 1] if index else "\n"
    if ends and not ends[-1] and old_lines and old_lines[-1][1]:
        ends[-1] = old_lines[-1][1]
    bodies = [line for line, _ in new_lines]
    if new.count("\f") < original.count("\f"):
        bodies = _form_feeds_back([line for line, _ in old_lines], bodies)
    return "".join(line + end for line, end in zip(bodies, ends))


def _opcodes(old: Sequence[str], new: Sequence[str]) -> List[Tuple[str, int, int, int, int]]:
    """difflib's opcodes turning `old` into `new`, the common head and tail matched first (a fix is local)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    codes: List[Tuple[str, int, int, int, int]] = [("equal", 0, head, 0, head)] if head else []
    matcher = difflib.SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        codes.append((tag, head + i1, head + i2, head + j1, head + j2))
    if tail:
        codes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return codes


def _matched_ends(old: List[Tuple[str, str]], new: List[Tuple[str, str]]) -> List[str]:
    """For a file of mixed line ends: the end each line of `new` takes, from the original lines around it."""
    ends: List[str] = []
    for tag, i1, i2, j1, j2 in _opcodes([line for line, _ in old], [line for line, _ in new]):
        for k in range(j2 - j1):
            if tag in ("equal", "replace"):
                source = min(i1 + k, i2 - 1)
            else:  # inserted: the end of the line it follows (at the very top, of the line it precedes)
                source = max(i1 - 1, 0)
            ends.append(old[source][1] if source < len(old) else "\n")
    if len(ends) != len(new):  # cannot happen; never make the text worse than libcst's
        return [end for _, end in new]
    return ends


def _form_feeds_back(old: List[str], new: List[str]) -> List[str]:
    """`new` with the leading form feeds of `old` that libcst dropped put back; `new` itself if that fails."""
    prefixes = [match.group() if match else "" for match in map(_FORM_FEED_PREFIX.match, old)]
    keys = [line[len(prefix):] for line, prefix in zip(old, prefixes)]
    out = list(new)
    for tag, i1, i2, j1, j2 in _opcodes(keys, new):
        if tag == "equal":
            for k in range(i2 - i1):
                if prefixes[i1 + k]:
                    out[j1 + k] = prefixes[i1 + k] + out[j1 + k]
        elif tag == "replace":
            for i in range(i1, i2):
                if not prefixes[i]:
                    continue
                # The code that replaced that line: the line with the same text, re-indented, else the first.
                same = [j for j in range(j1, j2) if new[j].strip() == keys[i].strip() and "\f" not in out[j]]
                j = same[0] if same else j1 if i == i1 else -1
                if j >= 0 and "\f" not in out[j]:
                    out[j] = prefixes[i] + out[j]
    before, after = "\n".join(new), "\n".join(out)
    try:
        if ast.dump(quiet_parse(before)) != ast.dump(quiet_parse(after)):
            return new
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return new
    return out


def fix_source(
    text: str,
    options: Options = DEFAULT_OPTIONS,
    codes: Optional[Iterable[str]] = None,
    unsafe: bool = False,
    filename: str = "<unknown>",
    facts: FixFacts = NO_FACTS,
    seeds: Optional[ModuleSeeds] = None,
) -> FixResult:
    """Apply the allowed fixes to `text` until nothing changes (a few rounds at most).

    `seeds` are what the project model found about this module because of others (engine.ModuleSeeds): a
    wrapper hot because of a loop in another module is fixed here as if its loop were in this module.

    `codes` limits the rules (the selection after --select/--ignore; all when None); `facts` are the project's
    (what it patches, what it pins; see fix_facts). Each round runs the engine, plans every fix, keeps the sites
    whose safety is allowed, carries out the first fix with such sites with libcst, and checks that the result
    parses, compiles and keeps every comment. On any failure the original text comes back with `error` set.
    """
    keys = fix_keys(codes)
    selected = None if codes is None else set(codes)
    applied: "Counter[str]" = Counter()
    unsafe_left: "Counter[str]" = Counter()
    if not keys or not _worth_analysing(text, options, seeds):
        return FixResult(text, applied, unsafe_left, seeds=seeds)
    # What the original text is held to, worked out for the first rewrite (most files get none).
    original: Optional[Tuple[bool, "Counter[str]"]] = None
    current = text
    for _ in range(MAX_ROUNDS):
        analysed = _analyse(current, options, selected, filename, seeds)
        if isinstance(analysed, SourceError):
            if current is text:  # the same words and place as `check`
                return FixResult(text, Counter(), Counter(), analysed.reason, analysed.where)
            return FixResult(text, Counter(), Counter(), f"a fix produced code that does not parse: {analysed.reason}")
        tree, findings = analysed
        plans = _site_plans(findings, keys, tree, source_lines(current), facts.with_module(facts.module, tree), unsafe)
        unsafe_left = _held(plans)
        step = _one_fix(current, plans, filename)
        if isinstance(step, _Failure):
            return FixResult(text, Counter(), Counter(), step.reason)
        if step is None or step[0] == current:
            break
        new_text, code, count = step
        seeds = relocated_seeds(seeds, tree, new_text)
        if original is None:
            original = (_compiles(text, filename) is None, _comments(text))
        original_compiles, comments = original
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
    return FixResult(current, applied, unsafe_left, seeds=seeds)


def planned_fixes(
    text: str,
    options: Options = DEFAULT_OPTIONS,
    codes: Optional[Iterable[str]] = None,
    unsafe: bool = False,
    filename: str = "<unknown>",
    facts: FixFacts = NO_FACTS,
    seeds: Optional[ModuleSeeds] = None,
    on_analysis: Optional[Callable[[object], None]] = None,
) -> FixResult:
    """What `fix --check` needs: which fixes would apply, judged by the stdlib planners alone (no libcst).

    `applied` counts, per code, the sites whose fix may be carried out; the text is never changed. It runs
    the engine once, so it answers "would anything change" at the cost of a check, where `fix_source` pays for
    libcst. A file `fix_source` would leave alone (its plan fails verification) is still counted here: the
    golden and corpus tests hold the two to the same verdict. `on_analysis` receives the engine's Analysis of
    the text when it is analysed (engine.analyze's).
    """
    keys = fix_keys(codes)
    if not keys or not _worth_analysing(text, options, seeds):
        return FixResult(text, Counter(), Counter())
    analysed = _analyse(text, options, None if codes is None else set(codes), filename, seeds, on_analysis)
    if isinstance(analysed, SourceError):
        return FixResult(text, Counter(), Counter(), analysed.reason, analysed.where)
    tree, findings = analysed
    plans = _site_plans(findings, keys, tree, source_lines(text), facts.with_module(facts.module, tree), unsafe)
    allowed: "Counter[str]" = Counter()
    for plan in plans:
        allowed[plan.fix.rule_code] += len(plan.allowed)
    return FixResult(text, +allowed, _held(plans))


def _worth_analysing(text: str, options: Options, seeds: Optional[ModuleSeeds]) -> bool:
    """The engine's text gate, less strict for a module calling another module's client factory: such a call
    is a finding in a file that names no HTTP library (as `checking.check_source` lets it through)."""
    return may_have_findings(text, options) or bool(seeds is not None and seeds.factories)


def relocated_seeds(seeds: Optional[ModuleSeeds], tree: ast.Module, new_text: str) -> Optional[ModuleSeeds]:
    """`seeds` for `new_text`, a fix's rewrite of the text `tree` was parsed from.

    Functions made hot are named by key and survive an edit; factory calls are named by (line, column), which
    an edit above them moves. Each is found again as the same call in the new text: the n-th call of the same
    callee (its source, e.g. `helpers.make_session`) in both texts. When the number of such calls changed, its
    seeds are dropped: a finding lost is a fix not made, never a wrong one.
    """
    if seeds is None or not seeds.factories:
        return seeds
    try:
        new_tree = quiet_parse(new_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return seeds._replace(factories={})
    old_calls = _calls_by_callee(tree)
    new_calls = _calls_by_callee(new_tree)
    moved: Dict[Tuple[int, int], Any] = {}
    for callee, places in old_calls.items():
        again = new_calls.get(callee, [])
        if len(again) != len(places):
            continue
        for old, new in zip(places, again):
            if old in seeds.factories:
                moved[new] = seeds.factories[old]
    return seeds._replace(factories=moved)


def _calls_by_callee(tree: ast.Module) -> Dict[str, List[Tuple[int, int]]]:
    """Every call's (line, column), by the source of its callee, in source order."""
    found: Dict[str, List[Tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found.setdefault(ast.dump(node.func, include_attributes=False), []).append((node.lineno, node.col_offset))
    for places in found.values():
        places.sort()
    return found


def _analyse(text: str, options: Options, selected: Optional[Set[str]], filename: str,
             seeds: Optional[ModuleSeeds] = None, on_analysis: Optional[Callable[[object], None]] = None
             ) -> "Tuple[ast.Module, List[Finding]] | SourceError":
    """The tree and the engine's findings, or why the text cannot be analysed."""
    try:
        tree = parse_source(text, filename)
        # A site flake8 would not report is not fixed either, and does not count as an unsafe fix left.
        return tree, unsuppressed(analyze(tree, options, codes=selected, source=text, seeds=seeds,
                                          on_analysis=on_analysis), text)
    except SourceError as error:
        return error
    except RecursionError:
        return SourceError("cannot fix: nested too deeply")


def _compiles_parse_only(text: str) -> Optional[str]:
    try:
        quiet_parse(text)
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

        from .fixes.base import new_context, transform_parsed

        code = plan.fix.rule_code
        try:
            module = cst.parse_module(text)
            command = plan.fix.command_class()(new_context(filename), plan.allowed)
            module = transform_parsed(command, module)
        except cst.ParserSyntaxError as error:
            return _Failure(f"libcst cannot parse it: {str(error).splitlines()[0]}")
        except Exception as error:  # a bug in a fix must not lose the file: report it and leave it alone
            from .source_files import no_memory_to_load
            from .time_budget import over_budget_in

            if isinstance(error, MemoryError):  # the machine's, not the fix's: said for the file as that
                raise
            if no_memory_to_load(error):  # libcst's parser not loaded for want of memory: said as that
                raise MemoryError(str(error)) from None
            budget = over_budget_in(error)
            if budget is not None:  # the file's time ran out, and unwinding libcst failed on the way
                raise budget
            return _Failure(f"{code} fix failed: {type(error).__name__}: {error}")
        if command.applied:
            return module.code, code, command.applied
    return None
