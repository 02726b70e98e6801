"""Differential fuzz of `fix`: generated programs run before and after the fix against stand-in `requests`/`httpx`
that record what a server would see. A safe fix must leave stdout, the exception, the files written and the record
exactly as they were; an unsafe one may only change what RULES.md lets it (the cookies a shared session sends back,
where the program passes none of its own; the chunks and lines of a requests iter_lines()/iter_content(None) under
stream=True), and never how the program ends or which requests it makes. Every fixed text must compile and be left
alone by a second fix, and a few programs are also fixed through the real command, which must agree.

Each run starts with the fixed regression programs in ANCHORS (one per kind of change seen so far), then generates.
Knobs: `HTP_FUZZ_EXAMPLES` (generated programs in the quick run, default 100); `HTP_FUZZ_SLOW_EXAMPLES` (the `slow`
run, default 1000); `--hypothesis-seed` or `HTP_FUZZ_SEED` (default: a fixed seed, so the quick run is
reproducible); `HTP_FUZZ_SHRINK=N` (the test of a kind that occurred asks hypothesis for up to N minimal programs
of that kind and shows them); `HTP_FUZZ_REPORT=path` (the summary is also written there). The summary is printed
(`-s` shows it) and attached to the report with `record_property`.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Tuple

import pytest
from cli_support import run_cli
from differential_programs import (
    CONTEXTS,
    IMPORT_FORMS,
    LIBRARIES,
    LOOPS,
    PLACEMENTS,
    ProgramSpec,
    describe,
    hidden_modules,
    program_specs,
    render,
)
from hypothesis import HealthCheck, Phase, find, given, seed, settings

from flake8_http_pool.fixing import fix_source

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): the survey runs fix over every
# fixture before its cases
pytestmark = pytest.mark.slow

STANDINS = Path(__file__).parent / "standins"
RUNNER = STANDINS / "run_programs.py"
DEFAULT_SEED = 9009
QUICK_EXAMPLES = int(os.environ.get("HTP_FUZZ_EXAMPLES", "50"))
SLOW_EXAMPLES = int(os.environ.get("HTP_FUZZ_SLOW_EXAMPLES", "1000"))
SHRINK = int(os.environ.get("HTP_FUZZ_SHRINK", "0"))
CLI_SAMPLES = 3  # programs also fixed through the real command, which must agree with fix_source
FILENAME = "prog.py"


# -- running programs -----------------------------------------------------------------------------------------
def run_programs(jobs: List[Tuple[str, List[str]]]) -> List[Dict[str, Any]]:
    """Run (source, hidden modules) jobs in one subprocess, the stand-ins first on its path; their results."""
    with tempfile.TemporaryDirectory(prefix="htp-fuzz-") as folder:
        jobs_path = os.path.join(folder, "jobs.json")
        results_path = os.path.join(folder, "results.json")
        with open(jobs_path, "w", encoding="utf-8") as handle:
            json.dump([{"source": source, "hide": hide} for source, hide in jobs], handle)
        env = dict(os.environ)
        env["PYTHONPATH"] = str(STANDINS)  # also first by being the runner's folder; nothing else from the caller
        env["PYTHONHASHSEED"] = "0"  # a set of strings prints in one order
        done = subprocess.run([sys.executable, str(RUNNER), jobs_path, results_path, os.path.join(folder, "work")],
                              capture_output=True, text=True, timeout=60 + 15 * len(jobs), env=env)
        assert done.returncode == 0, done.stderr
        with open(results_path, encoding="utf-8") as handle:
            results: List[Dict[str, Any]] = json.load(handle)
        return results


def _short(exception: Optional[str]) -> str:
    if exception is None:
        return "nothing"
    return exception[len("builtins."):] if exception.startswith("builtins.") else exception


def _without_cookies(record: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{k: v for k, v in entry.items() if k != "cookies"} for entry in record]


def behaviour_change(before: Dict[str, Any], after: Dict[str, Any], allowed: FrozenSet[str]) -> Optional[str]:
    """The kind of difference between two runs of a program, None when they behave the same.

    `allowed` names what an unsafe fix may change here (RULES.md, Fix safety): "cookies" (a shared session sends
    back the cookies the server set) lets the cookies sent differ, and "chunks" (HTP202's stream=True under
    iter_lines() or iter_content(chunk_size=None)) lets the chunks and lines differ; with either, what the program
    prints or writes may differ too (the server echoes the cookies). How the program ends and the requests it makes
    may never differ.
    """
    if before["exception"] != after["exception"]:
        if before["exception"] is None:
            return f"raises {_short(after['exception'])}"
        return f"ends with {_short(after['exception'])} instead of {_short(before['exception'])}"
    if before["record"] != after["record"]:
        if _without_cookies(before["record"]) != _without_cookies(after["record"]):
            return "sends different requests"
        if "cookies" not in allowed:
            return "sends different cookies"
    if allowed:
        return None
    if before["stdout"] != after["stdout"]:
        return "prints different output"
    if before["files"] != after["files"]:
        return "writes different files"
    return None


def allowed_differences(spec: ProgramSpec, mode: str, before: Dict[str, Any]) -> FrozenSet[str]:
    """What RULES.md lets the fix of this program change: nothing for a safe fix; for an unsafe one, the cookies
    where the server set some (not where the program passes its own: there HTP101 must stay report-only) and the
    chunks and lines of a requests iter_lines() / iter_content(chunk_size=None)."""
    if mode == "safe":
        return frozenset()
    allowed = set()
    if before["cookies_set"] > 0 and not spec.passes_cookies():
        allowed.add("cookies")
    if spec.library == "requests" and spec.use in ("iter_lines", "iter_chunk_sizes"):
        allowed.add("chunks")
    return frozenset(allowed)


def _record_difference(before: List[Dict[str, Any]], after: List[Dict[str, Any]]) -> str:
    """The first request that differs, field by field (the records are long)."""
    for number, (old, new) in enumerate(zip(before, after)):
        if old != new:
            fields = ", ".join(f"{key}: {old[key]!r} -> {new.get(key)!r}" for key in old if old[key] != new.get(key))
            return f"request {number + 1} ({old['method']} {old['url']}): {fields}"
    return f"{len(before)} requests before, {len(after)} after"


# -- one program, through both fix modes -----------------------------------------------------------------------
class Example(NamedTuple):
    """A program that showed a problem, with what made it one."""

    spec: ProgramSpec
    source: str
    fixed: str
    detail: str
    fixes: str = ""  # the rules whose fixes were applied ("HTP101+HTP202")


class Outcome(NamedTuple):
    """What the fuzz learnt from one program."""

    source: str
    changed: Dict[str, bool]
    refused: Dict[str, Optional[str]]
    problems: List[Tuple[str, Example]]  # (kind, example); the kind starts with the mode ("safe: ...")
    original: Dict[str, Any]  # what the original program did


def _compiles(text: str) -> Optional[str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, FILENAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    return None


def examine(spec: ProgramSpec) -> Outcome:
    """Fix the program safely and unsafely, run all versions, and name every difference the contract forbids."""
    source = render(spec)
    hide = hidden_modules(spec)
    problems: List[Tuple[str, Example]] = []
    fixed: Dict[str, str] = {}
    fixes: Dict[str, str] = {}
    refused: Dict[str, Optional[str]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mode, unsafe in (("safe", False), ("unsafe", True)):
            result = fix_source(source, unsafe=unsafe, filename=FILENAME)
            refused[mode] = result.error
            fixed[mode] = result.text
            fixes[mode] = "+".join(sorted(result.applied))
            if result.error is not None or result.text == source:
                continue
            reason = _compiles(result.text)
            if reason is not None:
                problems.append((f"{mode}: fixed text does not compile", Example(spec, source, result.text, reason)))
                continue
            again = fix_source(result.text, unsafe=unsafe, filename=FILENAME)
            if again.text != result.text or again.error is not None:
                problems.append((f"{mode}: a second fix changes the text",
                                 Example(spec, source, result.text, again.error or again.text)))
    changed = {mode: fixed[mode] != source for mode in fixed}
    versions = [source] + sorted({fixed[mode] for mode in ("safe", "unsafe") if changed[mode]})
    runs = dict(zip(versions, run_programs([(text, hide) for text in versions])))
    before = runs[source]
    by_mode = {mode: runs[fixed[mode]] for mode in ("safe", "unsafe") if changed[mode]}
    for mode, after in by_mode.items():
        kind = behaviour_change(before, after, allowed_differences(spec, mode, before))
        if kind is not None:
            detail = (f"before: {_short(before['exception'])} {before['detail']} | stdout {before['stdout']!r}\n"
                      f"after:  {_short(after['exception'])} {after['detail']} | stdout {after['stdout']!r}")
            if kind.startswith("sends different"):
                detail += "\n" + _record_difference(before["record"], after["record"])
            problems.append((f"{mode}: {kind}", Example(spec, source, fixed[mode], detail, fixes[mode])))
    return Outcome(source, changed, refused, problems, before)


# -- the survey: many programs, counted ------------------------------------------------------------------------
class Survey:
    """Counts over the programs run, and the problems found, by kind."""

    def __init__(self, seed_value: int) -> None:
        self.seed = seed_value
        self.seen: set = set()
        self.programs = 0
        self.anchors = 0
        self.changed: Counter = Counter()
        self.refused: Counter = Counter()
        self.problems: Dict[str, List[Example]] = {}
        self.cli_checked = 0
        self.placements: Counter = Counter()
        self.original_endings: Counter = Counter()
        self.requests_made = 0

    def add(self, spec: ProgramSpec, anchor: bool = False) -> None:
        key = (render(spec), tuple(hidden_modules(spec)))
        if key in self.seen:
            return
        self.seen.add(key)
        outcome = examine(spec)
        self.programs += 1
        self.anchors += anchor
        self.placements[describe(spec)["placement"]] += 1
        self.original_endings[_short(outcome.original["exception"])] += 1
        self.requests_made += len(outcome.original["record"])
        for mode, changed in outcome.changed.items():
            self.changed[mode] += changed
        for mode, error in outcome.refused.items():
            self.refused[mode] += error is not None
        for kind, example in outcome.problems:
            self.problems.setdefault(kind, []).append(example)
        if self.cli_checked < CLI_SAMPLES and outcome.changed["unsafe"]:
            self.cli_checked += 1
            for kind, example in cli_agrees(spec, outcome.source):
                self.problems.setdefault(kind, []).append(example)

    def behaviour_changes(self, mode: str) -> int:
        return sum(len(examples) for kind, examples in self.problems.items()
                   if kind.startswith(mode + ":") and kind not in _not_behaviour(mode))

    def summary(self) -> str:
        lines = [
            f"differential fuzz of fix (seed {self.seed}): {self.programs} programs run ({self.anchors} fixed "
            f"regression programs, {self.programs - self.anchors} generated); the safe fix changed "
            f"{self.changed['safe']}, the unsafe fix {self.changed['unsafe']}; left alone with an error: safe "
            f"{self.refused['safe']}, unsafe {self.refused['unsafe']}; {self.cli_checked} also fixed through the "
            f"command line",
            f"behaviour changes: safe fix {self.behaviour_changes('safe')} of {self.changed['safe']} changed programs, "
            f"unsafe fix {self.behaviour_changes('unsafe')} of {self.changed['unsafe']}",
            "import placements: " + ", ".join(f"{k} {v}" for k, v in sorted(self.placements.items())),
            f"the original programs made {self.requests_made} requests and ended with: "
            + ", ".join(f"{k} {v}" for k, v in self.original_endings.most_common()),
        ]
        for kind in sorted(self.problems):
            examples = self.problems[kind]
            by_fixes = Counter(e.fixes for e in examples if e.fixes)
            applied = ", ".join(f"{k} {v}" for k, v in by_fixes.most_common())
            applied = f" (fixes applied: {applied})" if applied else ""
            lines.append(f"  {kind}: {len(examples)}{applied}")
            example = min(examples, key=lambda e: len(e.source))
            lines.append(f"    shortest program ({_header(example.spec)}):\n" + _indent_block(example.source, 6))
            lines.append("    after the fix:\n" + _indent_block(example.fixed, 6))
            lines.append("    " + example.detail.replace("\n", "\n    "))
        return "\n".join(lines)


def _not_behaviour(mode: str) -> Tuple[str, ...]:
    """The problem kinds that are not a behaviour change of a fixed program."""
    return (f"{mode}: fixed text does not compile", f"{mode}: a second fix changes the text",
            f"{mode}: the command and fix_source disagree")


def _indent_block(text: str, width: int) -> str:
    return "\n".join(" " * width + line for line in text.rstrip("\n").splitlines())


def cli_agrees(spec: ProgramSpec, source: str) -> List[Tuple[str, Example]]:
    """The real `fix` command on a copy gives the text fix_source gave, in both modes."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="htp-fuzz-cli-") as folder:
        for mode, flags in (("safe", []), ("unsafe", ["--unsafe-fixes"])):
            path = Path(folder) / FILENAME
            path.write_text(source, encoding="utf-8")
            done = run_cli(["fix", "--isolated", "--no-progress", "--exit-zero", *flags, FILENAME], cwd=Path(folder))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = fix_source(source, unsafe=mode == "unsafe", filename=FILENAME)
            got = path.read_text(encoding="utf-8")
            if done.returncode != 0 or got != expected.text:
                problems.append((f"{mode}: the command and fix_source disagree",
                                 Example(spec, source, got, f"exit {done.returncode}: {done.stderr.strip()}")))
    return problems


def _seed_value(config: pytest.Config) -> int:
    given_seed = config.getoption("hypothesis_seed", None) or os.environ.get("HTP_FUZZ_SEED")
    return int(given_seed) if given_seed not in (None, "") else DEFAULT_SEED


# Left to itself, hypothesis explores near the examples it already has: 80 examples held one `from` import and six
# functions called once. The structural knobs are therefore dealt from a shuffled deck of all their combinations
# (shuffled by the seed), and hypothesis draws the rest of each program. A module-level import, the commonest in
# real code and the one the fixes act on most, is dealt four times as often as each other placement.
STRUCTURAL_KNOBS = ("placement", "context", "import_form", "library", "loop")
_DEALT_PLACEMENTS = ("module",) * 3 + PLACEMENTS


def _deck(seed_value: int) -> List[Dict[str, str]]:
    combinations = list(itertools.product(_DEALT_PLACEMENTS, CONTEXTS, IMPORT_FORMS, LIBRARIES, LOOPS))
    random.Random(seed_value).shuffle(combinations)
    return [dict(zip(STRUCTURAL_KNOBS, combination)) for combination in combinations]


def _anchor(**knobs: Any) -> ProgramSpec:
    """A program with every knob at its simplest choice but those given."""
    simplest: Dict[str, Any] = dict(
        library="requests", import_form="plain", placement="module", installed=True, context="module", loop="for",
        urls=("http://a.test/items/1",), method="get", call_form="assigned", kwargs=(), use="status",
        names_taken=False)
    simplest.update(knobs)
    return ProgramSpec(**simplest)


# Run first in every survey, whatever the seed: the simplest program of each kind of change seen (every knob at its
# first choice but those the kind needs; hypothesis shrinks the generated ones to these), fixed or not, so a known
# kind is found by every run until it is fixed and stays fixed after; and programs each fix must keep the same.
ANCHORS = (
    _anchor(placement="loop_body", context="function_once"),  # UnboundLocalError: import in the loop body
    _anchor(placement="if_before_loop", context="function_once", urls=()),  # UnboundLocalError: `if urls: import`
    _anchor(placement="if_module", urls=()),  # NameError: `if URLS: import` at module level, the branch not taken
    _anchor(placement="if_module", context="function_once", urls=()),  # NameError: the same, the loop in a function
    _anchor(placement="loop_body", installed=False, urls=()),  # ModuleNotFoundError: a lazy import made eager
    _anchor(placement="try_module", import_form="alias", installed=False, urls=()),  # the same, an optional one
    _anchor(urls=("http://a.test/login", "http://a.test/items/1")),  # the session sends back the server's cookie
    _anchor(urls=("http://a.test/login", "http://a.test/items/1"), kwargs=("cookies",)),  # a per-call cookie loses
    _anchor(use="iter_lines"),  # stream=True: a CRLF split over two transfer chunks makes an extra empty line
    _anchor(use="iter_content_file"),  # HTP202, safe: stream=True under iter_content(chunk_size=8) written out
    _anchor(context="function_loop"),  # HTP101 in a function called in a loop
)


def run_survey(seed_value: int, examples: int) -> Survey:
    """Run `examples` generated programs (hypothesis, from `seed_value`) and count what the fixes did to them."""
    survey = Survey(seed_value)
    for spec in ANCHORS:
        survey.add(spec, anchor=True)
    deck = _deck(seed_value)
    dealt = itertools.count()
    errors: List[BaseException] = []

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(program_specs())
    def explore(spec: ProgramSpec) -> None:
        # replaced after the draw, so hypothesis sees the same draws whatever the deck deals
        spec = spec._replace(**deck[next(dealt) % len(deck)])
        try:
            survey.add(spec)
        except Exception as error:  # the harness itself failed: report it after the run, not as a shrinkable case
            errors.append(error)

    explore()
    if errors:
        raise errors[0]
    return survey


_OUTCOMES: Dict[ProgramSpec, Outcome] = {}


def _kinds(spec: ProgramSpec) -> List[str]:
    """The problem kinds of one program (cached: shrinking asks again and again)."""
    if spec not in _OUTCOMES:
        _OUTCOMES[spec] = examine(spec)
    return [kind for kind, _ in _OUTCOMES[spec].problems]


def minimal_programs(kind: str, examples: List[Example], wanted: int) -> List[str]:
    """Up to `wanted` programs showing `kind`, each shrunk by hypothesis from a different import placement and
    library among `examples` (the survey's)."""
    groups: List[Dict[str, Any]] = []
    for example in examples:
        group = {"placement": example.spec.placement, "library": example.spec.library}
        if group not in groups:
            groups.append(group)
    found = []
    for group in groups[:wanted]:
        try:
            spec = find(program_specs(**group), lambda s: kind in _kinds(s),
                        settings=settings(max_examples=300, deadline=None, database=None,
                                          suppress_health_check=list(HealthCheck)))
        except Exception as error:  # NoSuchExample: this group's failure was rarer than the budget
            found.append(f"# {group}: none found ({type(error).__name__})")
            continue
        fixed = next(e.fixed for k, e in _OUTCOMES[spec].problems if k == kind)
        found.append(f"# {_header(spec)}\n{render(spec)}# -- fixed:\n{fixed}")
    return found


def _header(spec: ProgramSpec) -> str:
    """The knobs a reader cannot see in the program text."""
    hidden = hidden_modules(spec)
    missing = f"; run without {hidden[0]} installed" if hidden else ""
    return f"import placement {describe(spec)['placement']}{missing}"


def _publish(survey: Survey, record_property: Any) -> None:
    text = survey.summary()
    print("\n" + text)
    record_property("differential_fuzz", text)
    report = os.environ.get("HTP_FUZZ_REPORT")
    if report:
        Path(report).write_text(text + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def survey(request: pytest.FixtureRequest) -> Survey:
    return run_survey(_seed_value(request.config), QUICK_EXAMPLES)


def test_survey_summary(survey: Survey, record_property: Any) -> None:
    _publish(survey, record_property)
    # the generator must make distinct programs, and programs the fixes have work in
    assert survey.programs >= 0.9 * QUICK_EXAMPLES
    assert survey.changed["safe"] > 0 and survey.changed["unsafe"] > 0


def _problems_message(kind: str, examples: List[Example]) -> str:
    shortest = min(examples, key=lambda e: len(e.source))
    message = (f"{len(examples)} programs: {kind}; the shortest ({_header(shortest.spec)}):\n{shortest.source}"
               f"-- fixed:\n{shortest.fixed}"
               f"{shortest.detail}")
    if SHRINK:
        message += "\n\nminimal programs (hypothesis):\n" + "\n".join(minimal_programs(kind, examples, SHRINK))
    return message


# Kinds of behaviour change the fixes are known to make today; each marker goes when the fix engineers land the
# fix for it (strict: the test then passes, and pytest reports the marker as stale).
# Kinds of behaviour change the fix still makes, each with what RULES.md requires (strict: a pass fails).
# The last one, `if URLS: import requests` at module level with the loop in a function (NameError), is gone.
KNOWN_CHANGES: Dict[str, str] = {}


@pytest.mark.parametrize("kind", [
    pytest.param(kind, marks=pytest.mark.xfail(strict=True, reason=reason)) for kind, reason in KNOWN_CHANGES.items()
])
def test_known_kind_of_change_is_gone(survey: Survey, kind: str) -> None:
    examples = survey.problems.get(kind, [])
    assert not examples, _problems_message(kind, examples)


def test_no_other_problem(survey: Survey) -> None:
    """Any behaviour change, broken fixed text, second-fix change or command/fix_source disagreement not known."""
    others = {kind: examples for kind, examples in survey.problems.items() if kind not in KNOWN_CHANGES}
    assert not others, "\n\n".join(_problems_message(kind, examples) for kind, examples in others.items())


@pytest.mark.slow
def test_large_run(request: pytest.FixtureRequest, record_property: Any) -> None:
    """The same contract over many more programs (HTP_FUZZ_SLOW_EXAMPLES, default 1000): a kind not known fails;
    known kinds still present make it an xfail, which goes once they are fixed."""
    large = run_survey(_seed_value(request.config), SLOW_EXAMPLES)
    _publish(large, record_property)
    unknown = {kind: examples for kind, examples in large.problems.items() if kind not in KNOWN_CHANGES}
    assert not unknown, "\n\n".join(_problems_message(kind, examples) for kind, examples in unknown.items())
    if large.problems:
        pytest.xfail("known kinds of change still made: " + ", ".join(sorted(large.problems)))
