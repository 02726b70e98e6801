"""The flake8 plugin with the project model, through flake8's own command line: findings whose reason is in
another module, one file at a time as an editor runs it and on the whole tree; an editor's buffer on standard
input under its file's name; the file alone when it comes on standard input unnamed, has no project root or is
excluded; a warm cache parses nothing; libcst is never imported."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List, Optional

from project_trees import (CACHE, LOOP as _LOOP, WRAPPER as _WRAPPER, age_tree, edit_keeping_size_and_mtime,
                           write_tree as _write)

_FOUND = "app/http.py:5:12: HTP102 requests.get() in get_json(), which runs many times (called in a loop at app/sync.py:6)"


def _project(root: Path) -> Path:
    _write(root, {"pyproject.toml": "", "app/__init__.py": "", "app/http.py": _WRAPPER, "app/sync.py": _LOOP})
    return root


def _flake8(root: Path, *args: str, stdin: Optional[str] = None,
            parse_log: Optional[Path] = None) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment.pop("FLAKE8_HTTP_POOL_CACHE_DIR", None)
    if parse_log is not None:
        environment["FLAKE8_HTTP_POOL_PARSE_LOG"] = str(parse_log)
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", *args], cwd=root,
                          input=stdin if stdin is not None else "", capture_output=True, text=True, timeout=180,
                          env=environment)


def _parsed(log: Path) -> List[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_one_file_at_a_time_reports_the_finding_whose_loop_is_in_another_module(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = _flake8(root, "app/http.py")
    assert done.stdout.startswith(_FOUND), done.stdout + done.stderr
    assert (root / CACHE / "CACHEDIR.TAG").exists()
    # The whole tree, in two flake8 processes at once: the same finding, once.
    tree = _flake8(root, "--jobs", "2", ".")
    assert tree.stdout.count("HTP102") == 1 and ("./" + _FOUND) in tree.stdout, tree.stdout + tree.stderr


def test_a_warm_cache_parses_nothing_and_an_edit_is_seen(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _write(root, {"app/sync.py": "from app.http import get_json\n\n\ndef sync(url):\n    return get_json(url)\n"})
    assert _flake8(root, "app/http.py").stdout == ""
    log = tmp_path / "parsed.txt"
    assert _flake8(root, "app/http.py", parse_log=log).stdout == ""
    assert _parsed(log) == []
    _write(root, {"app/sync.py": _LOOP})
    edited = _flake8(root, "app/http.py", parse_log=log)
    assert edited.stdout.startswith(_FOUND), edited.stdout + edited.stderr
    assert [os.path.basename(path) for path in _parsed(log)] == ["sync.py"]  # only the module that changed


def test_standard_input_is_alone_unless_its_display_name_is_a_file_of_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path)
    # pylsp's `flake8 -`: no name, no project.
    alone = _flake8(root, "-", stdin=_WRAPPER)
    assert (alone.returncode, alone.stdout) == (0, ""), alone.stdout + alone.stderr
    # ALE's `--stdin-display-name app/http.py -`: the buffer of app/http.py, whose caller's loop is on disk.
    named = _flake8(root, "--stdin-display-name", "app/http.py", "-", stdin=_WRAPPER)
    assert named.stdout.startswith(_FOUND), named.stdout + named.stderr
    # An unsaved edit of the buffer keeps what names the module's functions: get_json is still hot.
    edited = _flake8(root, "--stdin-display-name", "app/http.py", "-", stdin="# unsaved\n" + _WRAPPER)
    assert edited.stdout.startswith(_FOUND.replace(":5:12:", ":6:12:")), edited.stdout + edited.stderr


def test_without_a_project_root_or_excluded_the_file_is_alone(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "pyproject.toml").unlink()
    # No marker anywhere above (a folder of /tmp): the plugin sees one module.
    if not any((parent / marker).exists() for parent in root.parents
               for marker in ("pyproject.toml", "setup.cfg", "setup.py", ".git")):
        assert _flake8(root, "app/http.py").stdout == ""
        assert not (root / CACHE).exists()
    (root / "setup.cfg").write_text("")
    assert _flake8(root, "app/http.py").stdout.startswith(_FOUND)
    # flake8's exclude takes the module with the loop out of the project too.
    assert _flake8(root, "--extend-exclude", "sync.py", "app/http.py").stdout == ""


def test_a_broken_cache_or_project_never_breaks_flake8(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / CACHE).write_text("a file where the folder goes\n")  # no cache: the model still runs
    done = _flake8(root, "app/http.py")
    assert done.stdout.startswith(_FOUND) and done.stderr == "", done.stdout + done.stderr
    _write(root, {"app/broken.py": "def (:\n", "app/nul.py": "x = 1\x00\n"})  # modules that do not parse
    done = _flake8(root, "app/http.py")
    assert done.stdout.startswith(_FOUND) and "Traceback" not in done.stderr, done.stdout + done.stderr


def test_the_project_path_leaves_libcst_ast_grep_and_hashlib_unimported(tmp_path: Path) -> None:
    """libcst and ast-grep-py are `fix`'s and the unpooled-calls patterns'; hashlib loads OpenSSL, which flake8
    alone never does (an editor's lint paid it for a hash CPython builds in). Cold (the project solved) and warm."""
    root = _project(tmp_path)
    probe = textwrap.dedent(
        """
        import sys
        from flake8.main.cli import main
        try:
            main(["--isolated", "--select", "HTP", "--jobs", "1", "app/http.py"])
        except SystemExit:
            pass
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("libcst", "ast_grep_py", "hashlib", "_hashlib")))
        """
    )
    for run in ("cold", "warm"):
        done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=180)
        assert _FOUND in done.stdout, run + ": " + done.stdout + done.stderr
        assert done.stdout.strip().splitlines()[-1] == "[]", run + ": " + done.stdout
        assert (root / CACHE).is_dir()


def test_a_tree_over_the_project_limit_is_checked_module_by_module(tmp_path: Path) -> None:
    """A root holding more files than FLAKE8_HTTP_POOL_PROJECT_LIMIT (a pyenv root, a monorepo) is not solved
    by every flake8 process: its files are checked alone, and nothing is cached."""
    root = _project(tmp_path)
    environment = dict(os.environ, FLAKE8_HTTP_POOL_PROJECT_LIMIT="2")
    done = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", "app/http.py"], cwd=root,
                          capture_output=True, text=True, timeout=180, env=environment)
    assert (done.stdout, done.stderr) == ("", "")
    assert not (root / CACHE).exists()
    assert _flake8(root, "app/http.py").stdout.startswith(_FOUND)


def test_flake8_s_main_process_solves_nothing_and_its_workers_share_their_solve(
        tmp_path: Path, monkeypatch) -> None:
    """The plugin starts no process of its own and solves nothing in flake8's main process: there it only loads
    a solve the cache holds, for the workers it forks to inherit. Each worker solves a cold project itself,
    reading the summaries another has cached: a solve after another parses nothing."""
    import argparse

    from flake8_http_pool import plugin_project
    from flake8_http_pool.options import Options
    from flake8_http_pool.plugin import HttpPoolChecker

    root = _project(tmp_path)
    _write(root, {f"app/extra{index}.py": "import requests\n\n\ndef f(u):\n    return requests.get(u)\n"
                  for index in range(6)})
    log = tmp_path / "parsed.txt"
    monkeypatch.chdir(root)
    monkeypatch.setenv("FLAKE8_HTTP_POOL_PARSE_LOG", str(log))
    monkeypatch.delenv("FLAKE8_HTTP_POOL_CACHE_DIR", raising=False)
    monkeypatch.setattr(plugin_project, "_SOLVED", {})
    options = argparse.Namespace(filenames=["."], http_pool_hot_decorators="", http_pool_unpooled_calls="",
                                 http_pool_cache_dir="", exclude=[], extend_exclude=[])
    HttpPoolChecker.parse_options(options)  # as flake8's main process does, the project cold
    assert _parsed(log) == [] and plugin_project._SOLVED == {}
    done = _flake8(root, "--jobs", "2", ".", parse_log=log)
    assert done.stdout.count("HTP102") == 1, done.stdout + done.stderr
    assert {os.path.basename(path) for path in _parsed(log)} >= {f"extra{index}.py" for index in range(6)}
    HttpPoolChecker.parse_options(options)  # warm: the solve is loaded here, for the workers to inherit
    assert list(plugin_project._SOLVED)
    # The solve dropped from the cache, the modules' summaries kept: a second solve parses nothing.
    shutil.rmtree(root / CACHE / "s")
    log.unlink()
    plugin_project._SOLVED.clear()
    assert plugin_project.solved_project(str(root), Options()) and _parsed(log) == []


def test_the_cache_folder_is_the_one_the_project_or_flake8_names(tmp_path: Path) -> None:
    # `check` and the plugin share one cache: the plugin reads `cache-dir` from the project's config, as check
    # does; flake8's own --http-pool-cache-dir (or `http-pool-cache-dir` in [flake8]) names it too.
    root = _project(tmp_path / "a")
    _write(root, {"pyproject.toml": '[tool.flake8-http-pool]\ncache-dir = ".lint/htp"\n'})
    environment = {key: value for key, value in os.environ.items() if key != "FLAKE8_HTTP_POOL_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-m", "flake8", "--select", "HTP", "app/http.py"], cwd=root,
                          capture_output=True, text=True, timeout=180, env=environment)
    assert done.stdout.startswith(_FOUND), done.stdout + done.stderr
    assert (root / ".lint" / "htp" / "CACHEDIR.TAG").exists() and not (root / CACHE).exists()

    other = _project(tmp_path / "b")
    _write(other, {"setup.cfg": "[flake8]\nhttp-pool-cache-dir = .lint/cfg\n"})
    done = subprocess.run([sys.executable, "-m", "flake8", "--select", "HTP", "app/http.py"], cwd=other,
                          capture_output=True, text=True, timeout=180, env=environment)
    assert done.stdout.startswith(_FOUND), done.stdout + done.stderr
    assert (other / ".lint" / "cfg" / "CACHEDIR.TAG").exists() and not (other / CACHE).exists()
    # check reads the same key from the same section, so both tools share that folder.
    checked = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "."], cwd=other,
                             capture_output=True, text=True, timeout=180, env=environment)
    assert "HTP102" in checked.stdout and "unknown key" not in checked.stderr, checked.stdout + checked.stderr
    assert not (other / CACHE).exists()

    named = _flake8(root, "--http-pool-cache-dir", str(tmp_path / "elsewhere"), "app/http.py")
    assert named.stdout.startswith(_FOUND) and (tmp_path / "elsewhere" / "CACHEDIR.TAG").exists()
    # Where the cache lives changes no finding: under --isolated the project's folder is still the one used.
    assert _flake8(root, "app/http.py").stdout.startswith(_FOUND) and not (root / CACHE).exists()


def test_a_folder_listing_kept_in_the_cache_follows_files_added_removed_and_renamed(tmp_path: Path) -> None:
    # The plugin keeps each folder's listing beside the folder's times: adding, removing or renaming a module
    # changes the folder, so the next run lists it again.
    from flake8_http_pool.cache_shapes import folder_listing
    from flake8_http_pool.plugin_project import project_files
    from flake8_http_pool.project_cache import ProjectCache, StatMemo

    root = tmp_path / "proj"
    (root / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/a.py", "pkg/sub/b.py", "top.py"):
        (root / name).write_text("x = 1\n")
    cache = ProjectCache.open(str(root / ".cache"))
    then = os.stat(root).st_mtime - 600
    for folder in (root, root / "pkg", root / "pkg" / "sub"):
        os.utime(folder, (then, then))
    time.sleep(2.2)  # past the racy window (project_cache.RACY_NS)

    def listed() -> List[str]:
        memo = StatMemo(cache, "s", "folders-test", folder_listing)
        found = [os.path.relpath(path, root) for path in project_files(str(root), (), ".cache", memo)]
        memo.save()
        return found

    assert listed() == ["top.py", "pkg/a.py", "pkg/sub/b.py"] == listed()
    (root / "pkg" / "sub" / "c.py").write_text("y = 2\n")
    (root / "pkg" / "a.py").rename(root / "pkg" / "renamed.py")
    (root / "top.py").unlink()
    assert listed() == ["pkg/renamed.py", "pkg/sub/b.py", "pkg/sub/c.py"]
    (root / "pkg" / "sub" / "pyvenv.cfg").write_text("home = /usr\n")  # a venv made in a listed folder
    assert listed() == ["pkg/renamed.py"]


_IN_MODULE = "import requests\n\n\ndef pull(urls):\n    for url in urls:\n        requests.get(url, timeout=5)\n"


def _mark_kept_findings(root: Path) -> int:
    """Append " (kept)" to the message of every finding the project's cache keeps for flake8 (an entry's
    "findings": (hash of the text, findings)), so a report made from them tells itself apart; how many entries
    had findings to mark."""
    import pickle

    marked = 0
    for path in (root / CACHE / "m").rglob("*"):
        entry = pickle.loads(path.read_bytes()) if path.is_file() else None
        if isinstance(entry, dict) and entry.get("findings") and entry["findings"][1]:
            text_hash, findings = entry["findings"]
            entry["findings"] = (text_hash, [f._replace(message=f.message + " (kept)") for f in findings])
            path.write_bytes(pickle.dumps(entry))
            marked += 1
    return marked


def test_flake8_reports_what_the_solve_found_in_a_module_instead_of_walking_it_again(tmp_path: Path) -> None:
    """A cold flake8 solves the project first (every module with an HTTP import walked once, its summary and its
    unseeded findings kept); flake8's workers then report those findings instead of walking the module again.
    Proven by changing the kept message: flake8 then prints the changed one, and an edit to the file (a text the
    solve never saw) is walked again."""
    root = _project(tmp_path)
    _write(root, {"app/pull.py": _IN_MODULE})
    cold = _flake8(root, ".")
    assert "./app/pull.py:6:9: HTP101" in cold.stdout and "./" + _FOUND in cold.stdout, cold.stdout + cold.stderr
    # pull.py alone has findings of its own: http.py's HTP102 is seeded, so not kept.
    assert _mark_kept_findings(root) == 1
    warm = _flake8(root, ".")
    assert "(kept)" in warm.stdout and warm.stdout.count("HTP") == 2, warm.stdout + warm.stderr
    assert _flake8(root, ".").stdout == warm.stdout
    _write(root, {"app/pull.py": _IN_MODULE + "\n"})
    edited = _flake8(root, ".")
    assert "HTP101" in edited.stdout and "(kept)" not in edited.stdout, edited.stdout + edited.stderr


def test_a_cold_solve_in_any_process_s_order_gives_the_same_seeds_and_findings(
        tmp_path: Path, monkeypatch) -> None:
    """Each process goes through the modules in an order of its own (plugin_project._first_in_order), so that
    flake8's workers summarize different modules first: the seeds and the findings kept do not depend on it."""
    import random

    from flake8_http_pool import plugin_project
    from flake8_http_pool.engine import check_lines
    from flake8_http_pool.options import Options

    files = {"pyproject.toml": "", "app/__init__.py": "", "app/http.py": _WRAPPER, "app/sync.py": _LOOP,
             "app/pull.py": _IN_MODULE}
    files.update({f"app/plain_{i}.py": f"VALUE = {i}\n" for i in range(6)})
    names = sorted(files)
    orders = [random.Random(pid).sample(names, len(names)) for pid in (1, 2)]
    assert orders[0] != orders[1]
    solved = {}
    for pid in (1, 2):
        root = tmp_path / str(pid)
        _write(root, files)
        monkeypatch.setattr(plugin_project.os, "getpid", lambda: pid)
        plugin_project._SOLVED.clear()
        seeds = plugin_project.solved_project(str(root), Options())
        pull = root / "app" / "pull.py"
        text = pull.read_text(encoding="utf-8")
        kept = plugin_project.known_findings(str(pull), text, Options())
        lines = text.splitlines(keepends=True)
        import ast

        assert kept == check_lines(ast.parse(text), lines, Options()) and kept, kept
        assert plugin_project.known_findings(str(pull), text + "\n", Options()) is None  # another text
        solved[pid] = {os.path.relpath(path, root): repr(value).replace(str(root), "<root>")
                       for path, value in (seeds or {}).items()}
    assert solved[1] == solved[2] and "app/http.py" in solved[1]


def test_flake8_reports_what_check_found_in_a_module_it_walked(tmp_path: Path) -> None:
    """`check` and flake8 share the project's cache: a module `check` walked unseeded keeps its findings for
    flake8 as the plugin's own solve keeps them (changed here to tell them apart)."""
    root = _project(tmp_path)
    _write(root, {"app/pull.py": _IN_MODULE})
    environment = {k: v for k, v in os.environ.items() if k != "FLAKE8_HTTP_POOL_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "."], cwd=root,
                          capture_output=True, text=True, timeout=180, env=environment)
    assert "app/pull.py:6:9: HTP101" in done.stdout, done.stdout + done.stderr
    assert _mark_kept_findings(root) == 1
    flake8 = _flake8(root, "app/pull.py")
    assert "(kept)" in flake8.stdout and flake8.stdout.count("HTP101") == 1, flake8.stdout + flake8.stderr


def test_an_installed_standard_library_below_the_root_is_not_the_project(tmp_path: Path) -> None:
    """A pyenv root is one .git above every Python it installed: their standard libraries (a `pythonX.Y` folder
    holding `lib-dynload`) are not the project's code, whereas a copy of the sources (no `lib-dynload`) is."""
    from flake8_http_pool.plugin_project import project_files

    root = _project(tmp_path)
    _write(root, {"versions/3.11.7/lib/python3.11/os.py": "import sys\n",
                  "versions/3.11.7/lib/python3.11/lib-dynload/README": "",
                  "copy/python3.11/os.py": "import sys\n"})
    listed = sorted(os.path.relpath(path, root) for path in project_files(str(root)))
    assert listed == [os.path.join("app", "__init__.py"), os.path.join("app", "http.py"),
                      os.path.join("app", "sync.py"), os.path.join("copy", "python3.11", "os.py")]


def test_an_unchanged_project_is_known_from_one_digest_and_an_edit_still_breaks_it(tmp_path: Path) -> None:
    # A warm lint digests every file's path and stat signature at once and, when that digest is the one kept,
    # reads neither the stat index nor any file (an editor's lint of a 10,000-file tree). The index removed
    # proves which way it went: the quick way does not write it again.
    from flake8_http_pool.options import Options
    from flake8_http_pool.project_cache import _digest, options_fingerprint

    root = _project(tmp_path)
    age_tree(root)  # settled: only then is the digest kept
    # The tree (a folder named): the whole project is solved and kept. (A file or two named alone, cold, are
    # answered from the modules that matter to them, and nothing of the whole project is kept: test_focus.py.)
    assert ("./" + _FOUND) in _flake8(root, ".").stdout
    index = root / CACHE / "s" / _digest(f"index\0{root}\0{options_fingerprint(Options())}")
    assert index.exists()
    index.unlink()
    log = tmp_path / "parsed.txt"
    warm = _flake8(root, "app/http.py", parse_log=log)
    assert warm.stdout.startswith(_FOUND) and _parsed(log) == [], warm.stdout + warm.stderr
    assert not index.exists()
    # The same size and modification time, another text: the change time breaks the digest, and the file named
    # is answered from the modules that matter to it, the edited one read again.
    edit_keeping_size_and_mtime(root)
    log.unlink(missing_ok=True)
    edited = _flake8(root, "app/http.py", parse_log=log)
    assert (edited.returncode, edited.stdout) == (0, ""), edited.stdout + edited.stderr
    assert [os.path.basename(path) for path in _parsed(log)] == ["sync.py"]
    # The tree again: the whole project is hashed through its index, written again.
    assert _flake8(root, ".").stdout == ""
    assert index.exists()


# Files of every shape phase 1's gate reads differently from flake8 (bytes, a cookie, a BOM, "\r" newlines,
# names NFKC folds), with a finding of their own; and files that import no HTTP library though their bytes or
# text come close. No module's finding has its reason in another one, so a file checked alone reports the same.
_SHAPES = {
    "pyproject.toml": b"",
    "app/__init__.py": b"",
    "app/fullwidth.py": "import \uff52\uff45\uff51\uff55\uff45\uff53\uff54\uff53\n\n\ndef pull(urls):\n    for url in urls:\n"
                        "        \uff52\uff45\uff51\uff55\uff45\uff53\uff54\uff53.get(url, timeout=5)\n".encode("utf-8"),
    "app/cr_only.py": _IN_MODULE.replace("\n", "\r").encode("ascii"),
    "app/crlf.py": _IN_MODULE.replace("\n", "\r\n").encode("ascii"),
    "app/latin1.py": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + _IN_MODULE.encode("ascii"),
    "app/bom.py": b"\xef\xbb\xbf" + _IN_MODULE.encode("ascii"),
    "app/named_only.py": b'LIBRARY = "requests"\n\n\ndef pull(get, urls):\n    for url in urls:\n        get(url)\n',
    "app/accents.py": "# caf\u00e9, na\u0131ve\nVALUE = '\u2460'\n".encode("utf-8"),
    "app/cr_no_import.py": b"x = 'from'\rrequests = None\rfor url in []:\r    requests.get(url)\r",
    **{f"app/plain_{index}.py": f"VALUE = {index}\n".encode("ascii") for index in range(4)},
}


def _write_bytes(root: Path, files: dict) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_flake8_cold_reports_what_each_file_checked_alone_reports(tmp_path: Path) -> None:
    """A cold flake8 skips the files its solve's gate passed over (passed_over): on files of every shape, it
    reports exactly what flake8 reports with the project model off (the tree over the project limit)."""
    root = _write_bytes(tmp_path, _SHAPES)
    cold = _flake8(root, ".")
    assert cold.returncode == 1 and (root / CACHE).is_dir(), cold.stdout + cold.stderr
    alone = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", "."], cwd=root,
                           capture_output=True, text=True, timeout=180,
                           env={k: v for k, v in dict(os.environ, FLAKE8_HTTP_POOL_PROJECT_LIMIT="2").items()
                                if k != "FLAKE8_HTTP_POOL_CACHE_DIR"})
    assert sorted(cold.stdout.splitlines()) == sorted(alone.stdout.splitlines()), cold.stdout + alone.stdout
    found = {line.split(":")[0] for line in cold.stdout.splitlines()}
    assert found == {f"./app/{name}.py" for name in ("fullwidth", "cr_only", "crlf", "latin1", "bom")}, cold.stdout


def test_what_the_cold_solve_passed_over_fails_the_text_gate_on_what_flake8_reads(tmp_path: Path,
                                                                               monkeypatch) -> None:
    """passed_over may stand for the plugin's text gate only where that gate fails on the text flake8 reads
    (tokenize.open, falling back to Latin-1, as flake8's FileProcessor reads a file), on the shapes above and
    on a sample of the standard library."""
    import sysconfig
    import tokenize

    from flake8_http_pool import plugin_project
    from flake8_http_pool.engine import may_have_findings
    from flake8_http_pool.options import Options

    def as_flake8_reads(path: Path) -> str:
        try:
            with tokenize.open(path) as stream:
                return "".join(stream.readlines())
        except (SyntaxError, UnicodeError):
            with open(path, encoding="latin-1") as stream:
                return "".join(stream.readlines())

    library = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[::3]
    root = _write_bytes(tmp_path / "project", _SHAPES)
    (root / "stdlib").mkdir()
    for source in library:
        shutil.copyfile(source, root / "stdlib" / source.name)
    monkeypatch.setattr(plugin_project, "_PASSED_OVER", {})
    plugin_project._SOLVED.clear()
    plugin_project.solved_project(str(root), Options())
    files = sorted(root.rglob("*.py"))
    over = [path for path in files if plugin_project.passed_over(str(path), Options())]
    wrong = [path for path in over if may_have_findings(as_flake8_reads(path), Options())]
    assert not wrong, wrong
    names = {str(path.relative_to(root)) for path in over}
    assert {f"app/{name}.py" for name in ("named_only", "accents", "plain_0", "__init__")} <= names, names
    assert not names & {f"app/{name}.py" for name in ("fullwidth", "cr_only", "crlf", "latin1", "bom")}
    assert len(over) > len(library) // 2  # most of the library imports no HTTP library
    # A file edited since the solve read it is no longer passed over: its stat signature changed.
    plain = root / "app" / "plain_0.py"
    assert plugin_project.passed_over(str(plain), Options())
    plain.write_text("import requests\n\nfor url in []:\n    requests.get(url)\n", encoding="utf-8")
    assert not plugin_project.passed_over(str(plain), Options())
    plain.write_bytes(_SHAPES["app/plain_0.py"])
    # A warm solve decides nothing for the plugin: it walks as before.
    monkeypatch.setattr(plugin_project, "_PASSED_OVER", {})
    plugin_project._SOLVED.clear()
    plugin_project.solved_project(str(root), Options())
    assert not any(plugin_project.passed_over(str(path), Options()) for path in files)
