"""Fix safety proved by running programs: each program of `tests/safety_programs/` runs against a real local
server before `fix`, after `fix` and after `fix --unsafe-fixes`, and what it observably did is compared.

A program is a file users could have written (or a folder of them). Its header says what RULES.md ("Fix
safety") requires of it, in comment lines the harness reads:

    # expect: <kind> <codes>      the kind, and the findings it is about (which `check` must report, or not)
    # after-unsafe: same|differs  how the program behaves after `fix --unsafe-fixes`, where that changed it
    # run: pytest                 run `python -m pytest` in its folder instead of the file as a script
    # needs: grequests            skip (with the reason) where these modules cannot be imported
    # also-without: requests      also run every version with these modules unimportable

The kinds:
- `safe`: `fix` rewrites it; stdout, exit code and the files it writes stay identical (connections may only
  drop). `--unsafe-fixes` must keep the behaviour too.
- `unsafe`: `fix` leaves every file byte-identical and its summary declares the unsafe fix not applied;
  `--unsafe-fixes` applies it.
- `report-only`: `fix` and `fix --unsafe-fixes` both leave every file byte-identical; `check` reports the codes.
- `never-safe`: `fix` leaves every file byte-identical; `--unsafe-fixes` may rewrite it or not (RULES.md lets a
  fix keep the import's scope or not be offered), and where it does, `after-unsafe` must hold.
- `untouched`: `check` reports none of the codes and neither run changes a byte (retry loops).

Two tests per program share its fix runs: `test_fix_keeps_behaviour` (the above) and
`test_fixed_code_is_clean_code`: after each fix that changed something, `check` no longer reports the codes it
fixed (safe fixes after `fix`, unsafe ones after `--unsafe-fixes`), reports no code more often than before,
still reports every HTP401/HTP403 (a fix never hides another rule's finding), and no pycodestyle or pyflakes
message (flake8's default checks, line length aside) nor blank line after a block header is counted more
often than in the original.

The programs in QUICK run by default; the others are marked slow. Each program is copied three times into a
temporary folder (nothing is written beside the sources), the two fixes run while the original runs, and a
module-scoped server on 127.0.0.1 counts the connections of each run.

Fixes that do not yet do what RULES.md requires are listed in KNOWN_FAILURES: strict expected failures, each
saying what is missing. Whoever makes a fix satisfy a program removes its line.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

import pytest

from safety_server import SafetyServer, running_server

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each program runs against a
# real server before and after fix
pytestmark = pytest.mark.slow


PROGRAMS = Path(__file__).parent / "safety_programs"
KINDS = ("safe", "unsafe", "report-only", "never-safe", "untouched")
FIXABLE = ("HTP101", "HTP102", "HTP103", "HTP104", "HTP201", "HTP202", "HTP203", "HTP301", "HTP402")
NEVER_FIXED = ("HTP401", "HTP403")  # no fix removes them: their count must survive every fix
LIBRARIES = ("requests", "httpx", "aiohttp", "urllib", "grequests")
_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".flake8-http-pool-cache"}  # caches, not what a program wrote

# The programs run by default: one or more per risk class of issue 9, within about a minute. Every other
# program is marked slow (run with `-m slow`, and by .ci/run).
QUICK = {
    "cookies_per_call_requests", "cookies_login_loop_requests", "mock_patch_module_path",
    "startup_wrapper_requests_get", "import_inside_loop", "optional_import_hot_function",
    "download_broken_skip_existing_requests", "download_append_retry", "stream_iter_lines_crlf",
    "stream_iter_content_written", "stream_iterators_stored", "stream_not_closed_pooled",
    "late_patch_after_sys_path", "pool_session_in_enclosing_function", "client_per_request_public_method",
    "client_in_loop_hoistable", "dropped_keepalive_requests", "cert_mixed_loop_requests", "retry_on_status_524",
    "hot_async_blocking", "getattr_verb_loop_requests", "urlretrieve_loop",
}

# The programs are fixed and checked as one project each (issue 12's project model): a multi-file program's
# loop may be in another module than its site (client_per_request_public_method). `fix` and `check` both get it,
# so the two always see the same findings.
PREVIEW = ("--preview",)

BEHAVIOUR = "behaviour"
CLEAN = "clean"

# -- today's expected failures: (program, test) -> what RULES.md requires that the fix does not yet do -------
KNOWN_FAILURES: Dict[Tuple[str, str], str] = {
    ("late_patch_imports_only", CLEAN):
        "moving the patch above the imports (RULES.md's HTP402 fix) makes every import below it pycodestyle E402; "
        "no placement of a call before imports avoids it",
}


class Program(NamedTuple):
    """A program of tests/safety_programs and what its header requires."""

    name: str
    source: Path  # the file, or the folder of a multi-file program
    entry: str  # the file with the header, relative to the program's folder
    kind: str
    codes: Tuple[str, ...]
    after_unsafe: Optional[str]  # "same", "differs", or None (not compared)
    runner: str  # "script" or "pytest"
    needs: Tuple[str, ...]
    without: Tuple[str, ...]


_HEADER = re.compile(r"^# (expect|after-unsafe|run|needs|also-without): *(.*?) *$")


def _header(path: Path) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _HEADER.match(line)
        if match:
            if match[1] in found:
                raise ValueError(f"{path}: `# {match[1]}:` given twice")
            found[match[1]] = match[2]
    return found


def load_program(source: Path) -> Program:
    """Read a program's header; a missing or malformed one is an error naming the file."""
    files = sorted(source.rglob("*.py")) if source.is_dir() else [source]
    headed = [(path, header) for path, header in ((p, _header(p)) for p in files) if "expect" in header]
    if len(headed) != 1:
        raise ValueError(f"{source}: {len(headed)} files with an `# expect:` line, want exactly one")
    path, header = headed[0]
    kind, *codes = header["expect"].split()
    if kind not in KINDS or not codes or any(code not in FIXABLE for code in codes):
        raise ValueError(f"{path}: bad `# expect: {header['expect']}` (kinds {KINDS}, codes {FIXABLE})")
    after = header.get("after-unsafe") or ("same" if kind == "safe" else None)
    if after not in (None, "same", "differs"):
        raise ValueError(f"{path}: bad `# after-unsafe: {after}` (same or differs)")
    runner = header.get("run", "script")
    if runner not in ("script", "pytest"):
        raise ValueError(f"{path}: bad `# run: {runner}` (pytest, or no line for a script)")
    return Program(
        name=source.stem if source.is_file() else source.name,
        source=source,
        entry=path.relative_to(source).as_posix() if source.is_dir() else path.name,
        kind=kind,
        codes=tuple(codes),
        after_unsafe=after,
        runner=runner,
        needs=tuple(header.get("needs", "").split()),
        without=tuple(header.get("also-without", "").split()),
    )


def all_programs() -> List[Program]:
    return [
        load_program(p) for p in sorted(PROGRAMS.iterdir())
        if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__")
    ]


def _params(test: str) -> List[object]:
    params = []
    for program in all_programs():
        marks = [] if program.name in QUICK else [pytest.mark.slow]
        reason = KNOWN_FAILURES.get((program.name, test))
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(program, id=program.name, marks=marks))
    return params


# -- running programs ---------------------------------------------------------------------------------------
class Observation(NamedTuple):
    """What one run of a program did that anyone could see."""

    stdout: str
    exit: int
    written: Tuple[Tuple[str, Optional[bytes]], ...]  # files created or changed (their bytes), deleted (None)
    connections: int
    stderr: str  # shown when a comparison fails; never compared

    def behaviour(self) -> Tuple[str, int, Tuple[Tuple[str, Optional[bytes]], ...]]:
        return (self.stdout, self.exit, self.written)


def _files(folder: Path) -> Dict[str, bytes]:
    """Every file under `folder` (bytecode caches aside), by relative path."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and not _IGNORED_PARTS.intersection(relative.parts):
            found[relative.as_posix()] = path.read_bytes()
    return found


def _clean_env() -> Dict[str, str]:
    """This environment less what could send a program's traffic elsewhere or change how it runs."""
    dropped = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "pythonpath", "pythonstartup")
    env = {k: v for k, v in os.environ.items() if k.lower() not in dropped and not k.startswith("PYTEST_")}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", PYTHONDONTWRITEBYTECODE="1",
               PYTHONHASHSEED="0")
    return env


class Runner:
    """Runs the copies of one program against the module's server."""

    def __init__(self, server: SafetyServer, program: Program, workdir: Path) -> None:
        self.server = server
        self.program = program
        self.workdir = workdir

    def _command(self) -> List[str]:
        if self.program.runner == "pytest":
            return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "."]
        args = [self.server.base, self.server.https_base, str(self.server.ca_path),
                str(self.server.client_cert("alice")), str(self.server.client_cert("bob"))]
        return [sys.executable, self.program.entry, *args]

    def _blocker(self, module: str) -> Path:
        """A folder whose `module` package refuses to be imported, to put first on PYTHONPATH."""
        folder = self.workdir / f"without-{module}"
        package = folder / module
        if not package.exists():
            package.mkdir(parents=True)
            (package / "__init__.py").write_text(f"raise ImportError('{module} is blocked by the harness')\n")
        return folder

    def run(self, folder: Path, blocked: Tuple[str, ...] = ()) -> Observation:
        """Run the program in `folder` once: what it printed, its exit code, what it wrote, its connections."""
        env = _clean_env()
        env.update(SAFETY_BASE=self.server.base, SAFETY_HTTPS_BASE=self.server.https_base,
                   SAFETY_CA=str(self.server.ca_path))
        if blocked:
            env["PYTHONPATH"] = os.pathsep.join(str(self._blocker(m)) for m in blocked)
        before_files = _files(folder)
        self.server.reset()
        opened = self.server.connections
        result = subprocess.run(self._command(), cwd=folder, capture_output=True, text=True, timeout=120, env=env)
        connections = self.server.connections - opened
        after_files = _files(folder)
        written = tuple(
            (name, after_files.get(name))
            for name in sorted(set(before_files) | set(after_files))
            if before_files.get(name) != after_files.get(name)
        )
        stdout = result.stdout.replace(str(folder), "<program>")
        if self.program.runner == "pytest":
            stdout = re.sub(r" in \d+(\.\d+)?s\b.*$", " in <time>", stdout, flags=re.MULTILINE)
        return Observation(stdout, result.returncode, written, connections, result.stderr)

    def run_all(self, folder: Path) -> Dict[Tuple[str, ...], Observation]:
        """A run as it is, then one per `also-without` module made unimportable."""
        variants = [()] + [(module,) for module in self.program.without]
        return {blocked: self.run(folder, blocked) for blocked in variants}


# -- running the tool -----------------------------------------------------------------------------------------
def _tool(folder: Path, *args: str) -> "subprocess.Popen[str]":
    """Start the real command line (`python -m flake8_http_pool ...`) in `folder`."""
    return subprocess.Popen(
        [sys.executable, "-m", "flake8_http_pool", *args], cwd=folder, env=_clean_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _finish(process: "subprocess.Popen[str]", timeout: float = 300) -> Tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"{process.args} did not finish in {timeout} s") from None
    return process.returncode, out, err


def _check(folder: Path) -> "subprocess.Popen[str]":
    return _tool(folder, "check", *PREVIEW, "--format", "json", ".")


def _codes(process: "subprocess.Popen[str]") -> "Counter[str]":
    """The finding codes a started `check --format json` reports, counted."""
    code, out, err = _finish(process)
    assert code in (0, 1), f"check failed ({code}): {err}"
    return Counter(str(finding["code"]) for finding in json.loads(out))


class Fixed(NamedTuple):
    """One fix run on a copy of the program."""

    folder: Path
    sources: Dict[str, bytes]  # every file of the copy after the fix, before the program runs
    exit: int
    summary: str  # fix's stderr


class FixOutcome(NamedTuple):
    """The original and both fix runs of one program (shared by its two tests)."""

    original: Path
    sources: Dict[str, bytes]
    findings: "Counter[str]"
    safe: Fixed
    unsafe: Fixed


class _PendingFixes:
    """`fix`, `fix --unsafe-fixes` and `check` started on fresh copies; `outcome()` waits for them."""

    def __init__(self, program: Program, workdir: Path) -> None:
        self.program = program
        self.folders = {label: self._copy(workdir / label) for label in ("original", "safe", "unsafe")}
        self.sources = _files(self.folders["original"])
        self.processes = {
            "safe": _tool(self.folders["safe"], "fix", *PREVIEW, "--no-progress", "--exit-zero", "."),
            "unsafe": _tool(self.folders["unsafe"], "fix", *PREVIEW, "--no-progress", "--exit-zero", "--unsafe-fixes",
                            "."),
            "check": _check(self.folders["original"]),
        }
        self._outcome: Optional[FixOutcome] = None

    def _copy(self, folder: Path) -> Path:
        source = self.program.source
        if source.is_dir():
            shutil.copytree(source, folder, ignore=shutil.ignore_patterns(*_IGNORED_PARTS))
        else:
            folder.mkdir(parents=True)
            shutil.copy2(source, folder / source.name)
        return folder

    def outcome(self) -> FixOutcome:
        if self._outcome is None:
            fixed = {}
            for label in ("safe", "unsafe"):
                code, _, err = _finish(self.processes[label])
                fixed[label] = Fixed(self.folders[label], _files(self.folders[label]), code, err)
            findings = _codes(self.processes["check"])
            self._outcome = FixOutcome(self.folders["original"], self.sources, findings,
                                       fixed["safe"], fixed["unsafe"])
        return self._outcome


class _FixCache:
    """One set of fix runs per program for the whole module."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.pending: Dict[str, _PendingFixes] = {}

    def start(self, program: Program) -> _PendingFixes:
        if program.name not in self.pending:
            self.pending[program.name] = _PendingFixes(program, self.factory.mktemp(program.name))
        return self.pending[program.name]

    def close(self) -> None:
        """Wait for every process still running (a test that failed early left them)."""
        for pending in self.pending.values():
            for process in pending.processes.values():
                if process.poll() is None:
                    _finish(process)


# -- reading results --------------------------------------------------------------------------------------------
def _lint_counts(text: bytes, name: str) -> "Counter[str]":
    """What a linter would flag in a source: pycodestyle codes and pyflakes message kinds (flake8's default
    checks) and blank lines right after a block header (issue 9: after the new `with`).

    Line length (E501) is left out: whether a rewritten line still fits in 79 columns depends on the room the
    program left, and RULES.md does not ask a fix to re-wrap lines.
    """
    import pycodestyle
    import pyflakes.api
    import pyflakes.reporter

    source = text.decode("utf-8")
    counts: "Counter[str]" = Counter()
    style = pycodestyle.Checker(name, lines=source.splitlines(keepends=True), quiet=True)
    style.check_all()
    counts.update({code: n for code, n in style.report.counters.items()
                   if re.match(r"^[EW]\d+$", code) and code != "E501"})
    lines = source.splitlines()
    counts["blank line after a block header"] = sum(
        1 for line, following in zip(lines, lines[1:])
        if re.match(r"^\s*(async\s+)?(with|for|while|if|else|elif|try|except|finally|def|class)\b.*:\s*$", line)
        and not following.strip()
    )

    class _Collect(pyflakes.reporter.Reporter):
        def flake(self, message: object) -> None:
            counts[f"pyflakes {type(message).__name__}"] += 1

    pyflakes.api.check(source, name, _Collect(io.StringIO(), io.StringIO()))
    return counts


def _describe(label: str, observation: Observation) -> str:
    written = ", ".join(f"{n} ({'deleted' if b is None else f'{len(b)} bytes'})" for n, b in observation.written)
    return (f"--- {label}: exit {observation.exit}, {observation.connections} connections, wrote [{written}]\n"
            f"{observation.stdout}--- its stderr:\n{observation.stderr[-3000:]}")


def _diff(original: Dict[str, bytes], fixed: Dict[str, bytes]) -> str:
    out = []
    for name in sorted(set(original) | set(fixed)):
        before, after = original.get(name, b""), fixed.get(name, b"")
        if before != after:
            out.extend(difflib.unified_diff(before.decode(errors="replace").splitlines(True),
                                            after.decode(errors="replace").splitlines(True), name, name))
    return "".join(out)


def _declared_unsafe(summary: str) -> Dict[str, str]:
    """The codes `fix`'s summary declares as unsafe fixes not applied: `N unsafe fixes not applied (HTP101: 1)`."""
    declared = re.search(r"unsafe fix(?:es)? not applied \(([^)]*)\)", summary)
    if not declared:
        return {}
    return dict(part.split(": ", 1) for part in declared[1].split(", ") if ": " in part)


def _skip_unless_importable(program: Program) -> None:
    for module in program.needs:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")


# -- fixtures ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def safety_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SafetyServer]:
    with running_server(tmp_path_factory.mktemp("safety-server")) as server:
        yield server


@pytest.fixture(scope="module")
def fix_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_FixCache]:
    cache = _FixCache(tmp_path_factory)
    yield cache
    cache.close()


# -- the tests --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("program", _params(BEHAVIOUR))
def test_fix_keeps_behaviour(program: Program, safety_server: SafetyServer, fix_cache: _FixCache,
                             tmp_path: Path) -> None:
    _skip_unless_importable(program)
    pending = fix_cache.start(program)
    runner = Runner(safety_server, program, tmp_path)
    before = runner.run_all(pending.folders["original"])  # while the fixes run: they never touch the server
    outcome = pending.outcome()
    sources = outcome.sources

    # The program works, and `check` sees what its header says it is about.
    for blocked, observation in before.items():
        assert observation.exit == 0 and observation.stdout.strip(), _describe(f"original {blocked}", observation)
    found = outcome.findings
    if program.kind == "untouched":
        assert not [c for c in program.codes if found[c]], f"check reports {dict(found)} where nothing is to fix"
    else:
        missing = [c for c in program.codes if not found[c]]
        assert not missing, f"check does not report {missing} (it reports {dict(found)})"
    for label, fixed in (("fix", outcome.safe), ("fix --unsafe-fixes", outcome.unsafe)):
        assert fixed.exit == 0, f"{label} exited {fixed.exit}: {fixed.summary}"

    # `fix` applies safe fixes only, and says which unsafe ones it left.
    safe_changed = outcome.safe.sources != sources
    if program.kind == "safe":
        assert safe_changed, f"fix applied no safe fix; its summary: {outcome.safe.summary}"
    else:
        assert not safe_changed, (
            f"fix applied a fix that RULES.md does not class safe here ({program.kind} {' '.join(program.codes)}):"
            f"\n{_diff(sources, outcome.safe.sources)}\nits summary: {outcome.safe.summary}")
    if program.kind == "unsafe":
        declared = _declared_unsafe(outcome.safe.summary)
        assert all(code in declared for code in program.codes), (
            f"fix's summary does not declare the unsafe {program.codes} fix not applied: {outcome.safe.summary}")

    # `fix --unsafe-fixes` applies unsafe fixes, never report-only ones.
    unsafe_changed = outcome.unsafe.sources != sources
    if program.kind in ("report-only", "untouched"):
        assert not unsafe_changed, (
            f"fix --unsafe-fixes rewrote a {program.kind} site:\n{_diff(sources, outcome.unsafe.sources)}")
    if program.kind == "unsafe":
        assert unsafe_changed, f"fix --unsafe-fixes applied nothing; its summary: {outcome.unsafe.summary}"

    # Run what changed and compare. The unsafe copy reuses the safe copy's runs where their texts are the same.
    runs: Dict[str, Dict[Tuple[str, ...], Observation]] = {}
    if safe_changed:
        runs["safe"] = runner.run_all(outcome.safe.folder)
    if unsafe_changed:
        same_text = safe_changed and outcome.unsafe.sources == outcome.safe.sources
        runs["unsafe"] = runs["safe"] if same_text else runner.run_all(outcome.unsafe.folder)
    for label, observations in runs.items():
        fixed = outcome.safe if label == "safe" else outcome.unsafe
        expected = "same" if label == "safe" else program.after_unsafe
        for blocked, after in observations.items():
            original = before[blocked]
            variant = f" without {', '.join(blocked)}" if blocked else ""
            report = (f"{_diff(sources, fixed.sources)}\n{_describe('original' + variant, original)}\n"
                      f"{_describe(f'after the {label} fix{variant}', after)}")
            if expected == "same":
                assert after.behaviour() == original.behaviour(), f"the {label} fix changed behaviour:\n{report}"
            elif expected == "differs":
                assert after.behaviour() != original.behaviour(), f"the declared risk did not show:\n{report}"
            if label == "safe":
                assert after.connections <= original.connections, f"the safe fix opened more connections:\n{report}"
            print(f"{program.name} [{label}{variant}]: connections {original.connections} -> {after.connections}")


@pytest.mark.parametrize("program", _params(CLEAN))
def test_fixed_code_is_clean_code(program: Program, fix_cache: _FixCache) -> None:
    _skip_unless_importable(program)
    outcome = fix_cache.start(program).outcome()
    changed = [(label, fixed) for label, fixed in (("safe", outcome.safe), ("unsafe", outcome.unsafe))
               if fixed.exit == 0 and fixed.sources != outcome.sources]
    if not changed:
        pytest.skip("no fix changed this program")
    checks = {label: _check(fixed.folder) for label, fixed in changed}  # both at once
    for label, fixed in changed:
        diff = _diff(outcome.sources, fixed.sources)
        after = _codes(checks[label])
        before = outcome.findings
        if (label == "safe") == (program.kind == "safe") and program.kind in ("safe", "unsafe"):
            left = [code for code in program.codes if after[code]]
            assert not left, f"check still reports {left} after the {label} fix that claims them:\n{diff}"
        grew = {code: (before[code], n) for code, n in after.items() if n > before[code]}
        assert not grew, f"check reports more after the {label} fix (code: before, after) {grew}:\n{diff}"
        hidden = {code: (before[code], after[code]) for code in NEVER_FIXED if after[code] != before[code]}
        assert not hidden, f"the {label} fix hid findings no fix may remove (before, after) {hidden}:\n{diff}"
        for name, text in fixed.sources.items():
            if name.endswith(".py") and text != outcome.sources.get(name):
                lint_before = _lint_counts(outcome.sources.get(name, b""), name)
                worse = {c: (lint_before[c], n) for c, n in _lint_counts(text, name).items() if n > lint_before[c]}
                assert not worse, f"the {label} fix made {name} fail flake8's checks (before, after) {worse}:\n{diff}"


# -- the programs cover what issue 9 and RULES.md list ----------------------------------------------------------
def test_every_program_has_a_valid_header_and_table_entries_exist() -> None:
    programs = all_programs()
    names = {p.name for p in programs}
    assert len(names) == len(programs)
    unknown = {name for name, _ in KNOWN_FAILURES} - names
    assert not unknown, f"KNOWN_FAILURES names programs that do not exist: {unknown}"
    assert QUICK <= names, f"QUICK names programs that do not exist: {QUICK - names}"


def test_programs_cover_every_fix_kind_and_library() -> None:
    programs = all_programs()
    codes = {code for p in programs for code in p.codes}
    assert set(FIXABLE) <= codes, f"no program for {set(FIXABLE) - codes}"
    assert {p.kind for p in programs} == set(KINDS)
    imported = set()
    for program in programs:
        files = program.source.rglob("*.py") if program.source.is_dir() else [program.source]
        for path in files:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imported.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    imported.add(node.module.split(".")[0])
    assert set(LIBRARIES) <= imported, f"no program uses {set(LIBRARIES) - imported}"
