"""The detection engine: a cheap text gate, one walk, then every rule's predicate over the collected facts."""

from __future__ import annotations

import ast
import re
from typing import Callable, FrozenSet, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .escaping import shown
from .finding import Finding
from .options import DEFAULT_OPTIONS, Options
from .source_files import as_parser_reads, quiet_parse

# A file that imports none of these can hold no finding (every rule starts from such an import).
_KEYWORDS = ("requests", "httpx", "aiohttp", "urllib", "niquests", "gevent")
# A line importing an HTTP library: `import` or `from`, then (later on the line) the library's name at the start
# of a word. The names are searched with str.find and only their lines are matched: one regex over the whole
# text tried its alternation at every position (1.3 ms on a large module; the gate runs on every file).
_IMPORT_KEYWORD = re.compile(r"\b(?:import|from)\b")
_LIBRARY_WORDS = ("requests", "httpx", "aiohttp", "urllib", "niquests", "gevent", "grequests")
# Without the urllib package (urllib3 stays): of that package the rules know only urllib.request's urlopen and
# urlretrieve (and the responses urlopen returns), which cannot be reached without one of those words, so a
# module importing urllib.parse, or urllib.request for its Request class or its openers, needs no walk.
_LIBRARY_WORDS_BUT_URLLIB = tuple("urllib3" if word == "urllib" else word for word in _LIBRARY_WORDS)
_URLLIB_FUNCTIONS = ("urlopen", "urlretrieve")


def imports_a_library(text: str, words: Tuple[str, ...] = _LIBRARY_WORDS) -> bool:
    """Whether a line of `text` holds `import` or `from` (as words) and, after it, a word starting with one of
    `words` (`requests_futures` starts with `requests`)."""
    for word in words:
        start = text.find(word)
        while start != -1:
            before = text[start - 1] if start else " "
            if not (before.isalnum() or before == "_"):
                # `before` is no word character, so a keyword found up to `start` ends before it, as a word.
                if _IMPORT_KEYWORD.search(text, text.rfind("\n", 0, start) + 1, start):
                    return True
            start = text.find(word, start + 1)
    return False


def may_have_findings(text: str, options: Options = DEFAULT_OPTIONS) -> bool:
    """The text gate: False when the source imports no HTTP library, so no walk is needed."""
    if options.unpooled_calls:
        return True
    text = as_parser_reads(text)  # `import ｒｅｑｕｅｓｔｓ` imports requests
    if not any(keyword in text for keyword in _KEYWORDS):
        return False
    urllib = any(word in text for word in _URLLIB_FUNCTIONS)
    return imports_a_library(text, _LIBRARY_WORDS if urllib else _LIBRARY_WORDS_BUT_URLLIB)


class ModuleSeeds(NamedTuple):
    """What the project model (project.py, `check` only) hands the engine for one module: small and picklable.

    hot: function key (hot_functions.function_key) -> (reason, path from the project root, line, absolute path)
    of each function hot because of another module; factories: (line, byte column) of each call of a client
    factory defined in another module -> (client constructor, factory name, path from the project root, line of
    its def, absolute path, whether every call of it builds the same client, so HTP103 may hoist it): such a call
    is a client constructor call for HTP103/HTP104.
    """

    hot: Mapping[str, Tuple[str, str, int, str]]
    factories: Mapping[Tuple[int, int], Tuple[str, str, str, int, str, bool]]
    # blocking: (line, byte column) of each call of a synchronous function of another module that blocks on HTTP
    # every run -> (blocking call, its path from the project root, line, absolute path, function called, library)
    # (HTP403). writers: (line, byte column) of each call of a function of another module that writes a parameter
    # to a file -> (function name, path from the project root, line of its def, absolute path, ((position or -1,
    # parameter, "body" or "response"), ...)) (HTP201). inherited: top-level class name -> ((attribute, client
    # constructor), ...) that `self.<attribute>` holds through a base class of another module (HTP201/203/403).
    blocking: Mapping[Tuple[int, int], Tuple[str, str, int, str, str, str]] = {}
    writers: Mapping[Tuple[int, int], Tuple[str, str, int, str, Tuple[Tuple[int, str, str], ...]]] = {}
    inherited: Mapping[str, Tuple[Tuple[str, str], ...]] = {}
    # shadowed: the HTTP library names (`requests`) that this module's imports find among the project's own
    # files (a `requests.py` beside a script): those imports are the project's module, not the library.
    shadowed: FrozenSet[str] = frozenset()

    def reach_other_files(self) -> bool:
        """Findings may come from these seeds in a file that names no HTTP library (a client factory's call, an
        async def calling a blocking helper, a subclass using its base's `self.session`)."""
        return bool(self.factories or self.blocking or self.writers or self.inherited)


def analyze(
    tree: ast.Module, options: Options = DEFAULT_OPTIONS, codes: Optional[Iterable[str]] = None,
    source: Optional[str] = None, seeds: Optional[ModuleSeeds] = None,
    on_analysis: Optional[Callable[[object], None]] = None,
) -> List[Finding]:
    """Every finding in `tree`, sorted by position. `codes` limits the rules that run.

    `source` (the text `tree` was parsed from) is needed for the `unpooled-calls` patterns, which ast-grep
    matches on text; without it they are not applied. `seeds`: what the project model found about this module
    because of other modules (functions made hot there, calls of factories defined there). `on_analysis`
    receives the module's `Analysis` (the project model summarizes from the one the check built).
    """
    from .analysis import Analysis
    from .rules import ALL_RULES

    analysis = Analysis(tree, options)
    if seeds is not None:
        analysis.facts.module_scope.shadowed = frozenset(seeds.shadowed)
        analysis.extra_hot = {key: seed[0] for key, seed in seeds.hot.items()}
        analysis.extra_places = {key: (seed[1], seed[2], seed[3]) for key, seed in seeds.hot.items()}
        analysis.extra_factories = dict(seeds.factories)
        analysis.extra_blocking = dict(seeds.blocking)
        analysis.extra_writers = dict(seeds.writers)
        if seeds.inherited:
            from .checks.downloads import inherit_clients

            inherit_clients(analysis, seeds.inherited)
    if options.unpooled_calls and source is not None:
        from .custom_calls import find_custom_calls

        analysis.custom_calls = find_custom_calls(source, options.unpooled_calls)
    if on_analysis is not None:
        on_analysis(analysis)
    wanted = None if codes is None else set(codes)
    findings: List[Finding] = []
    for rule in ALL_RULES:
        if wanted is not None and rule.code not in wanted:
            continue
        seen = set()
        for hit in rule.check(analysis):
            node = hit.node
            key = (node.lineno, node.col_offset)
            if key in seen:
                continue
            seen.add(key)
            findings.append(
                Finding(
                    rule.code,
                    node.lineno,
                    node.col_offset,
                    getattr(node, "end_lineno", None) or node.lineno,
                    getattr(node, "end_col_offset", None) or node.col_offset,
                    # A message may name another module's file (HTP102's `called in a loop at c.py:4`): that
                    # name is the tree's and may hold any character, so it is escaped as a finding's own path.
                    shown(rule.message.format(**hit.fields)),
                    hit.details,
                )
            )
    findings.sort(key=lambda f: (f.line, f.col, f.code))
    return findings


def check_source(source: str, options: Options = DEFAULT_OPTIONS, filename: str = "<unknown>") -> List[Finding]:
    """Parse `source` and return its findings (raises SyntaxError / ValueError for code that does not parse)."""
    if not may_have_findings(source, options):
        return []
    tree = quiet_parse(source, filename)
    return analyze(tree, options, source=source)


def check_lines(tree: ast.Module, lines: Sequence[str], options: Options = DEFAULT_OPTIONS,
                seeds: Optional[ModuleSeeds] = None, text: Optional[str] = None) -> List[Finding]:
    """The flake8 path: reuse flake8's tree, gate on its lines. `seeds`: the project model's, for this file;
    `text`: the lines joined, when the caller has them already."""
    if text is None:
        text = "".join(lines)
    # A call of a client factory or a blocking helper of another module, a base class's client: findings in a
    # file naming no library (the same gate as checking.check_file's, so flake8 and `check` agree).
    if not may_have_findings(text, options) and not (seeds is not None and seeds.reach_other_files()):
        return []
    return analyze(tree, options, source=text, seeds=seeds)
