"""What `check` adds to a file's findings for its report: each finding's source line and its fix class.

The fix class says what `fix` would do with the site: "safe" (plain `fix` rewrites it), "unsafe" (only
`fix --unsafe-fixes`), or None (report only). It comes from the fixes' planners, which are stdlib `ast` only,
so `check` never imports libcst; and it is worked out only for a file that has findings, so a tree without
any costs nothing more than before.
"""

from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from .fix_facts import NO_FACTS, FixFacts
from .rule import FIX_SAFE, FIX_UNSAFE


class Reported(NamedTuple):
    """One finding as reported: where it is (Located), what `fix` would do with it, and its source line."""

    located: Any  # checking.Located
    fix: Optional[str] = None  # "safe", "unsafe" or None
    source_line: str = ""  # the text of the finding's line, without its line end


class FileReport(NamedTuple):
    """A FileResult with its findings as Reported items (empty for a file that could not be checked)."""

    result: Any  # checking.FileResult
    reported: Tuple[Reported, ...] = ()


def annotate(result: Any, kind: str, settings: FixFacts = NO_FACTS, data: Optional[bytes] = None,
             facts_path: Optional[str] = None, classes_of: Optional[Any] = None) -> FileReport:
    """The report of one checked file: `data` is its bytes when they did not come from disk (standard input).

    `facts_path` is the real path to gather the project's fix facts from (None: the file's own text only).
    `classes_of(compute)`: where the fix classes come from, given the function that works them out (a cache
    of them: project_check); None works them out. Anything that goes wrong here costs the marks, never the
    findings.
    """
    if result.error is not None or not result.findings:
        return FileReport(result)
    findings = [item.finding for item in result.findings]
    text = _text(result.path, data)
    if text is None:
        return FileReport(result, tuple(Reported(item) for item in result.findings))
    from .discovery import DEPENDENCIES
    from .fixes.positions import source_lines

    lines = source_lines(text)
    classes: List[Optional[str]] = [None] * len(findings)
    if kind != DEPENDENCIES:
        def compute() -> List[Optional[str]]:
            try:
                return fix_classes(text, result.path, findings, settings, facts_path)  # type: ignore[arg-type]
            except Exception:  # a planner's bug must not cost the report; the sites then show no mark
                return [None] * len(findings)

        classes = compute() if classes_of is None else list(classes_of(compute))
        # A finding whose reason lies in another module is planned like any other: `fix` runs with the same
        # project model, edits this file alone for it (HTP102's shared session in the wrapper's module, HTP103's
        # hoist of another module's factory), and marks it as it marks the same edit anywhere. HTP104's new
        # parameter is the exception: it is threaded through callers in other files (fix_across.py), all of them
        # or none, which this one file's plan cannot promise.
        classes = [None if f.code == "HTP104" and f.details.get("hot_file") else c
                   for f, c in zip(findings, classes)]
    return FileReport(result, tuple(
        Reported(item, fix, lines[item.finding.line - 1] if 1 <= item.finding.line <= len(lines) else "")
        for item, fix in zip(result.findings, classes)
    ))


def _text(path: str, data: Optional[bytes]) -> Optional[str]:
    from .source_files import SourceError, decode_source, read_bytes

    try:
        return decode_source(data if data is not None else read_bytes(path))
    except SourceError:
        return None  # changed under us since the check: report without the extras


def fix_classes(text: str, path: str, findings: Sequence[Any], settings: FixFacts = NO_FACTS,
                facts_path: Optional[str] = None) -> List[Optional[str]]:
    """Per finding, the best fix `fix` has for it: "safe", "unsafe" or None.

    Each finding is planned on its own by every fix of its rule (`fix` plans a rule's findings together, but a
    plan item is one site's edit, so a site the planner takes alone it takes in company too), and the item's
    safety is decided as `fix` decides it (`Fix.site_safety`, with the project's patches and the config's
    extend-safe-fixes / extend-unsafe-fixes).
    """
    from .fix_facts import facts_for_file
    from .fixes import FIXES
    from .fixes.positions import source_lines
    from .source_files import parse_source

    tree = parse_source(text, path)
    facts = facts_for_file(facts_path, settings) if facts_path else settings
    facts = facts.with_module(facts.module, tree)
    lines = source_lines(text)
    return _classes(findings, tree, lines, facts, FIXES)


def _classes(findings: Sequence[Any], tree: Any, lines: Sequence[str], facts: FixFacts,
             fixes: Any) -> List[Optional[str]]:
    FIXES = fixes
    out: List[Optional[str]] = []
    for finding in findings:
        best: Optional[str] = None
        for fix in FIXES.values():
            if fix.rule_code != finding.code:
                continue
            best = _better(best, _best_safety(fix, fix.plan([finding], tree, lines, facts), facts))
            if best is None:
                # Some plans take a rule's sites together (HTP402 moves every late patch or none; a mount serves
                # every pool of a session): the site counts as fixed when the plan of all the rule's findings
                # differs from the plan without it, and takes the safety of what it adds.
                mine = [f for f in findings if f.code == finding.code]
                if len(mine) > 1:
                    together = fix.plan(mine, tree, lines, facts)
                    without = fix.plan([f for f in mine if f is not finding], tree, lines, facts)
                    added = [item for item in together if item not in without]
                    best = _better(best, _best_safety(fix, added, facts))
            if best == FIX_SAFE:
                break
        out.append(best)
    return out


def _best_safety(fix: Any, items: Sequence[Any], facts: FixFacts) -> Optional[str]:
    best: Optional[str] = None
    for item in items:
        best = _better(best, fix.site_safety(item, facts))
    return best


def _better(one: Optional[str], other: Optional[str]) -> Optional[str]:
    """The more useful of two fix classes: safe over unsafe over none."""
    for wanted in (FIX_SAFE, FIX_UNSAFE):
        if wanted in (one, other):
            return wanted
    return None


class Tally:
    """Counts of the findings reported, per code and per fix class, for --statistics, --count and the summary."""

    def __init__(self) -> None:
        self.per_code: "dict[str, int]" = {}
        self.safe_per_code: "dict[str, int]" = {}
        self.total = 0
        self.safe = 0
        self.unsafe = 0

    def add(self, reported: Sequence[Reported]) -> None:
        for item in reported:
            code = item.located.finding.code
            self.per_code[code] = self.per_code.get(code, 0) + 1
            self.total += 1
            if item.fix == FIX_SAFE:
                self.safe += 1
                self.safe_per_code[code] = self.safe_per_code.get(code, 0) + 1
            elif item.fix == FIX_UNSAFE:
                self.unsafe += 1

    def statistics(self, names: "dict[str, str]") -> List[str]:
        """One line per code, most frequent first: `3  HTP101  [*] unpooled-call-in-loop` (the mark: some of
        them `fix` fixes), counts right-aligned as ruff aligns them."""
        ordered = sorted(self.per_code.items(), key=lambda pair: (-pair[1], pair[0]))
        if not ordered:
            return []
        width = len(str(ordered[0][1]))
        code_width = max(len(code) for code, _ in ordered)
        return [
            f"{count:>{width}}  {code:<{code_width}}  {'[*]' if self.safe_per_code.get(code) else '   '} "
            f"{names.get(code, '')}".rstrip()
            for code, count in ordered
        ]

    def summary(self) -> str:
        """`Found 3 findings. [*] 2 fixable with `flake8-http-pool fix` (1 more with `fix --unsafe-fixes`).`
        -- a line no flake8-style parser takes for a finding (no `path:line:col:` head)."""
        text = f"Found {self.total} finding{'s' if self.total != 1 else ''}."
        if self.safe:
            text += f" [*] {self.safe} fixable with `flake8-http-pool fix`"
            text += f" ({self.unsafe} more with `fix --unsafe-fixes`)." if self.unsafe else "."
        elif self.unsafe:
            text += f" {self.unsafe} fixable with `flake8-http-pool fix --unsafe-fixes`."
        return text
