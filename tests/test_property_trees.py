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
