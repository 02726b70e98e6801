"""Generated file trees: whatever the names, links, depths and sizes, every file ends in a finding, a clean pass,
or one line on stderr with exit 2; every output format parses; nothing outside the tree is opened (issue 11).

Each example builds a tree under a fresh folder beside an `outside/` folder that holds a finding of its own, with
symlinks into it. The command runs under an audit hook that records every file and folder it opens, so "nothing
outside the tree is read" is checked on what the process did, not on what it printed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, NamedTuple

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

LOOP = b"import requests\nfor u in urls:\n    requests.get(u)\n"
CLEAN = b"import requests\nsession = requests.Session()\n"
BROKEN = b"import requests\ndef f(:\n"

# The launcher: an audit hook writes every path the run opens (files, folder listings) to a log, then the command
# runs as `python -m flake8_http_pool` would. `--jobs 1` keeps the work in this process, under the hook.
LAUNCH = """
import os, sys
log = open(os.environ["HTP_OPEN_LOG"], "w", encoding="utf-8", errors="backslashreplace")
def hook(event, args):
    if event in ("open", "os.scandir", "os.listdir") and args and isinstance(args[0], (str, bytes)):
        path = os.fsdecode(args[0])
        log.write(os.path.abspath(path) + "\\n")
        log.flush()
sys.addaudithook(hook)
from flake8_http_pool.cli import main
sys.exit(main(sys.argv[1:]))
"""

ODD = st.sampled_from([
    "plain", "with space", "ünïcode", "日本", "tab\there", "new\nline", "-dash", "bad\udcffbyte", "semi;colon",
    "quote'\"", "percent%2C", "colon:comma,", "back\\slash", "emoji\U0001F600", "a" * 120,
])


class Entry(NamedTuple):
    kind: str  # finding / clean / broken / dir / link_in / link_out / dangling / loop / fifo / big
    name: str
    depth: int


ENTRIES = st.lists(
    st.builds(Entry, st.sampled_from(["finding", "clean", "broken", "dir", "link_in", "link_out", "dangling",
                                      "loop", "fifo", "big", "finding", "finding"]), ODD, st.integers(0, 3)),
    min_size=1, max_size=10,
)


MAX_SIZE = 2048  # the runs' --max-file-size, so a "big" file stays small on disk


class Tree(NamedTuple):
    root: Path
    outside: Path
    expected: Dict[str, str]  # token -> "HTP101" / "E999" / "big" / "" for each file the walk must reach


def _build(base: Path, entries: List[Entry]) -> Tree:
    root, outside = base / "tree", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.py").write_bytes(LOOP)
    expected: Dict[str, str] = {}
    folders = [root]
    for index, entry in enumerate(entries):
        token = f"t{index}x"
        folder = folders[min(entry.depth, len(folders) - 1)]
        name = os.fsencode(f"{token}_{entry.name}")
        where = os.path.join(os.fsencode(folder), name)
        if entry.kind == "dir":
            os.mkdir(where)
            folders.append(Path(os.fsdecode(where)))
            continue
        target = where + b".py"
        if entry.kind in ("finding", "clean", "broken"):
            with open(target, "wb") as handle:
                handle.write({"finding": LOOP, "clean": CLEAN, "broken": BROKEN}[entry.kind])
            expected[token] = {"finding": "HTP101", "clean": "", "broken": "E999"}[entry.kind]
        elif entry.kind == "link_in":
            with open(target, "wb") as handle:
                handle.write(LOOP)
            os.symlink(target, where + b"_alias.py")  # the same file twice: checked once, under either name
            expected[token] = "HTP101"
        elif entry.kind == "link_out":
            os.symlink(os.fsencode(outside), where)  # a folder link leading out of the tree: not followed
            os.symlink(os.fsencode(outside / "secret.py"), target)
        elif entry.kind == "dangling":
            os.symlink(os.fsencode(base / "nowhere.py"), target)
        elif entry.kind == "loop":
            os.symlink(target, target)
        elif entry.kind == "fifo":
            os.mkfifo(target)  # named like source, but reading it would block: never opened
        elif entry.kind == "big":
            with open(target, "wb") as handle:  # over the run's --max-file-size: skipped unread, one line
                handle.write(LOOP + b"# padding\n" * (MAX_SIZE // 10 + 1))
            expected[token] = "big"
    return Tree(root, outside, expected)


def _run(tree: Tree, fmt: str, log: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HTP_OPEN_LOG=str(log), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, "check", "-q", "--isolated", "--jobs", "1",
         "--max-file-size", str(MAX_SIZE), "--format", fmt, "."],
        cwd=tree.root, capture_output=True, timeout=120, env=env,
    )


FINDING_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+):(?P<col>\d+): (?P<code>HTP\d{3}|E999) ")


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ENTRIES)
def test_every_path_ends_in_a_finding_a_pass_or_one_line(entries: List[Entry]) -> None:
    base = Path(tempfile.mkdtemp(prefix="htp-tree-"))
    try:
        tree = _build(base, entries)
        log = base / "opened.log"
        text = _run(tree, "text", log)
        stdout = text.stdout.decode("utf-8")  # the report is UTF-8 whatever the names hold
        stderr = text.stderr.decode("utf-8")
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr

        # Text: every line is one finding (a newline in a name must not forge a second), of a file we made.
        seen: Dict[str, List[str]] = {}
        for line in stdout.splitlines():
            match = FINDING_LINE.match(line)
            assert match, f"not a finding line: {line!r}"
            tokens = re.findall(r"t\d+x", match["path"])  # the file's own token is the last (folders have theirs)
            assert tokens, f"a finding outside the tree's files: {line!r}"
            seen.setdefault(tokens[-1], []).append(match["code"])
        for token, code in tree.expected.items():
            assert seen.get(token, []) == ([code] if code in ("HTP101", "E999") else []), (token, code, stdout)
        assert set(seen) <= set(tree.expected), stdout
        # A file over the size limit: one line on stderr naming it; links, loops and FIFOs are skipped silently.
        big = sorted(token for token, code in tree.expected.items() if code == "big")
        lines = stderr.splitlines()
        assert len(lines) == len(big), stderr
        for token, line in zip(big, sorted(lines, key=lambda line: re.findall(r"t\d+x", line)[-1])):
            assert re.findall(r"t\d+x", line)[-1] == token and "--max-file-size" in line, line
        failed = any(code in ("E999", "big") for code in tree.expected.values())
        found = any(code == "HTP101" for code in tree.expected.values())
        assert text.returncode == (2 if failed else 1 if found else 0), (stdout, stderr)

        # Nothing outside the tree was opened (the interpreter's own files aside).
        opened = log.read_text(encoding="utf-8").splitlines()
        outside = str(tree.outside)
        assert not [path for path in opened if path.startswith(outside)], opened

        # The machine formats parse, and carry the same findings.
        as_json = json.loads(_run(tree, "json", log).stdout.decode("utf-8"))
        assert sum(1 for item in as_json if item.get("code", "").startswith("HTP")) == stdout.count(": HTP")
        sarif = json.loads(_run(tree, "sarif", log).stdout.decode("utf-8"))
        jsonschema.validate(sarif, SCHEMA)
        assert len(sarif["runs"][0]["results"]) == stdout.count(": HTP")
        gitlab = json.loads(_run(tree, "gitlab", log).stdout.decode("utf-8"))
        assert sum(1 for issue in gitlab if issue["check_name"].startswith("HTP")) == stdout.count(": HTP")
        assert len({issue["fingerprint"] for issue in gitlab}) == len(gitlab)  # GitLab keeps one per fingerprint
        github = _run(tree, "github", log).stdout.decode("utf-8").splitlines()
        assert all(re.match(r"^::(warning|error) file=[^,\n:]+(,line=\d+|,title=E\d+::)", line) for line in github), github
        assert sum(1 for line in github if "title=HTP" in line) == stdout.count(": HTP")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_name_that_is_not_utf8_keeps_every_format_whole(tmp_path: Path, fmt: str) -> None:
    (tmp_path / os.fsdecode(b"bad\xff.py")).write_bytes(LOOP)
    (tmp_path / "new\nline.py").write_bytes(LOOP)
    result = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "-q", "--isolated", "--format", fmt, "."],
                            cwd=tmp_path, capture_output=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert result.returncode == 1, result.stderr
    out = result.stdout.decode("utf-8")
    if fmt == "text":
        lines = out.splitlines()
        assert len(lines) == 2 and all(FINDING_LINE.match(line) for line in lines), lines
        assert "bad\\xff.py" in out and "new\\nline.py" in out
    else:
        document = json.loads(out)
        if fmt == "sarif":
            jsonschema.validate(document, SCHEMA)
            assert len(document["runs"][0]["results"]) == 2
        else:
            assert len(document) == 2


# -- trees with a project root: the project model, its cache and flake8 (issue 32) --------------------------------
# Each example is a project (a pyproject.toml at its root) that a hostile repository could hold: callers with odd
# names (newlines, escapes) that make a wrapper in another module hot, so the wrapper's message names them; FIFOs
# and links to devices named like modules; links to files outside; a cache folder, lock or entry that is a link
# or a FIFO; entries of the right form and the wrong shape. Every door ends within its time, opens and writes
# nothing outside the tree, and prints only whole escaped lines: the findings of the same project without the
# hostile parts (a committed cache may hide findings; it is never allowed to add or break any).
FORGING = st.sampled_from(["plain", "new\nline", "esc\x1b[2Jape", "cr\rret", "tab\there", "bell\x07", "ünï",
                           "bad\udcffbyte", "del\x7f", "csi\x9bx"])
HOSTILE = st.sampled_from(["fifo", "device", "link_out", "cache_link", "cache_fifo", "lock_link", "lock_fifo",
                           "entry_link", "entry_fifo", "wrong_shape", "caller", "caller"])
PROJECTS = st.lists(st.tuples(HOSTILE, FORGING), min_size=1, max_size=6)

PROJECT_LAUNCH = """
import os, sys
log = open(os.environ["HTP_OPEN_LOG"], "w", encoding="utf-8", errors="backslashreplace")
def hook(event, args):
    if event in ("open", "os.scandir", "os.listdir", "os.mkdir", "os.rename", "os.remove", "os.symlink") and args \\
            and isinstance(args[0], (str, bytes)):
        log.write(os.path.abspath(os.fsdecode(args[0])) + "\\n")
        log.flush()
sys.addaudithook(hook)
if sys.argv[1] == "flake8":
    from flake8.main.cli import main
    sys.exit(main(sys.argv[2:]))
from flake8_http_pool.cli import main
sys.exit(main(sys.argv[1:]))
"""
WRAPPER = "import requests\n\n\ndef fetch_{n}(u):\n    return requests.get(u)\n"
CALLER = "from wrap_{n} import fetch_{n}\n\nfor u in urls:\n    fetch_{n}(u)\n"
CACHE = ".flake8-http-pool-cache"
# A line of our output: a finding, or an error, warning or note naming a file or the command; escaped whole.
OUTPUT_LINE = re.compile(r"^(?:[^\x00-\x1f\x7f-\x9f]+:\d+:\d+: (?:HTP\d{3}|E999) [^\x00-\x1f\x7f-\x9f]*"
                         r"|[^\x00-\x1f\x7f-\x9f]+)$")


def _hostile_project(base: Path, entries: List[tuple], hostile: bool) -> Path:
    """The project of `entries`; without `hostile`, only its callers and wrappers (the reference)."""
    root = base / ("hostile" if hostile else "reference")
    root.mkdir()
    (root / "pyproject.toml").write_bytes(b'[project]\nname = "victim"\n')
    (root / "app.py").write_bytes(LOOP)  # a finding of its own, so no example is empty
    outside = base / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.py").write_bytes(b"from wrap_0 import fetch_0\nfor u in urls:\n    fetch_0(u)\n")
    for n, (kind, name) in enumerate(entries):
        odd = os.fsencode(f"t{n}x_{name}")
        where = os.path.join(os.fsencode(root), odd)
        if kind == "caller":
            (root / f"wrap_{n}.py").write_bytes(WRAPPER.format(n=n).encode())
            with open(where + b".py", "wb") as handle:
                handle.write(CALLER.format(n=n).encode())
        elif not hostile:
            continue
        elif kind == "fifo":
            os.mkfifo(where + b".py")
        elif kind == "device":
            os.symlink(b"/dev/zero", where + b".py")
        elif kind == "link_out":
            os.symlink(os.fsencode(outside / "secret.py"), where + b".py")
    if hostile:
        kinds = {kind for kind, _ in entries}
        cache = root / CACHE
        if "cache_link" in kinds:
            (outside / "cache").mkdir(exist_ok=True)
            os.symlink(outside / "cache", cache)
        elif "cache_fifo" in kinds:
            os.mkfifo(cache)
        else:
            cache.mkdir()
            if "lock_link" in kinds:
                os.symlink(outside / "made-by-lock", cache / "lock")
            elif "lock_fifo" in kinds:
                os.mkfifo(cache / "lock")
    return root


def _poison(root: Path, entries: List[tuple], outside: Path) -> None:
    """After a first run filled the cache: entries turned into links, FIFOs or data of the wrong shape."""
    import pickle

    kinds = {kind for kind, _ in entries}
    cache = root / CACHE
    if not cache.is_dir() or cache.is_symlink():
        return
    wrong = [7, "x", [None], {"a": 1}, (1, 2, 3), None, b"\x00"]
    for n, entry in enumerate(sorted(p for p in cache.rglob("*") if p.is_file() and p.parent != cache)):
        if "entry_link" in kinds and n % 2 == 0:
            entry.unlink()
            os.symlink("/dev/zero" if n % 4 == 0 else str(outside / "secret.py"), entry)
        elif "entry_fifo" in kinds and n % 2 == 1:
            entry.unlink()
            os.mkfifo(entry)
        elif "wrong_shape" in kinds:
            try:
                value = pickle.loads(entry.read_bytes())
            except Exception:  # noqa: BLE001 - not ours to reshape
                continue
            if isinstance(value, dict):
                value = {key: (item if key in ("hash", "path") else wrong[(n + len(key)) % len(wrong)])
                         for key, item in value.items()}
            elif isinstance(value, tuple) and len(value) == 2:
                value = (value[0], wrong[n % len(wrong)])
            entry.write_bytes(pickle.dumps(value))


def _door(root: Path, args: List[str], log: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HTP_OPEN_LOG=str(log), NO_COLOR="1")
    env.pop("PYTHONPATH", None)
    env.pop("FLAKE8_HTTP_POOL_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-c", PROJECT_LAUNCH, *args], cwd=root, capture_output=True,
                          timeout=90, env=env)


def _findings(stdout: bytes) -> List[str]:
    return sorted(line for line in stdout.decode("utf-8").splitlines() if re.search(r":\d+:\d+: HTP", line))


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROJECTS)
def test_a_hostile_project_never_hangs_escapes_the_tree_or_forges_a_line(entries: List[tuple]) -> None:
    base = Path(tempfile.mkdtemp(prefix="htp-project-"))
    try:
        reference = _hostile_project(base, entries, hostile=False)
        root = _hostile_project(base, entries, hostile=True)
        outside = base / "outside"
        before = sorted(os.listdir(outside))
        (outside / "cache").exists() and before.extend(f"cache/{n}" for n in sorted(os.listdir(outside / "cache")))
        log = base / "opened.log"
        # flake8 itself opens every file it is given, FIFOs included: it is given the modules, as pre-commit and
        # editors give them, and its plugin's project model meets the rest.
        modules = sorted(entry.name for entry in os.scandir(reference) if entry.name.endswith(".py"))
        doors = [["check", "--jobs", "1", "."], ["fix", "--jobs", "1", "--unsafe-fixes", "--diff", "."],
                 ["flake8", "--isolated", "--select", "HTP", "-j", "1", *modules]]
        for round_ in range(2):  # cold, then with whatever the first run left in the cache (poisoned)
            for args in doors:
                expected = _door(reference, args, base / "reference.log")
                got = _door(root, args, log)
                stdout, stderr = got.stdout.decode("utf-8"), got.stderr.decode("utf-8")
                assert "Traceback" not in stderr and "internal error" not in stderr, (args, stderr)
                for line in (stdout + stderr).splitlines():
                    if args[0] == "fix" and line[:1] in "+- @":
                        continue  # a diff's lines are the file's own text (its header names are escaped)
                    assert OUTPUT_LINE.match(line), (args, line)
                if args[0] != "fix":
                    assert _findings(got.stdout) == _findings(expected.stdout), (args, stdout, stderr)
                opened = log.read_text(encoding="utf-8").splitlines()
                assert not [path for path in opened if path.startswith(str(outside))], (args, opened)
            if round_ == 0:
                _poison(root, entries, outside)
        after = sorted(os.listdir(outside))
        (outside / "cache").exists() and after.extend(f"cache/{n}" for n in sorted(os.listdir(outside / "cache")))
        assert after == before, "a run wrote outside the tree"
    finally:
        shutil.rmtree(base, ignore_errors=True)
