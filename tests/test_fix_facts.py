"""The project facts a fix is planned with: what the project patches or rebinds, and the requests it pins."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flake8_http_pool.fix_facts import (
    FixFacts,
    find_project_root,
    gather_fix_facts,
    module_name,
    patch_targets,
    pins_requests_232,
)

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs fix over a
# project twice, in and out of its workers
pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "source, target",
    [
        ('from unittest import mock\nmock.patch("pkg.mod.requests.get")\n', "pkg.mod.requests.get"),
        ('from unittest.mock import patch\n@patch("pkg.mod.get")\ndef test(m): pass\n', "pkg.mod.get"),
        ("from unittest import mock\nfrom pkg import mod\nmock.patch.object(mod, 'get')\n", "pkg.mod.get"),
        ("import requests\ndef test(monkeypatch):\n    monkeypatch.setattr(requests, 'get', f)\n", "requests.get"),
        ('def test(monkeypatch):\n    monkeypatch.setattr("pkg.mod.requests.get", f)\n', "pkg.mod.requests.get"),
        ("def test(mocker):\n    mocker.patch('app.client.requests.post')\n", "app.client.requests.post"),
        ("import requests as rq\n_orig = rq.get\nrq.get = lambda *a, **k: _orig(*a, timeout=5, **k)\n", "requests.get"),
        ("import requests\ndef setup():\n    requests.Session.request = wrapped\n", "requests.Session.request"),
    ],
)
def test_patch_targets_found(source: str, target: str) -> None:
    assert target in set(patch_targets(ast.parse(source)))


def test_a_name_imported_from_two_modules_gives_a_target_through_each() -> None:
    """`try: import winreg` / `except ImportError: import _winreg as winreg`: the patch lands on whichever is
    imported at run time, so both count (a report-only site too many, never a mock bypassed)."""
    source = ("from unittest import mock\ntry:\n    import winreg\nexcept ImportError:\n    import _winreg as winreg\n"
              "mock.patch.object(winreg, 'OpenKey')\n")
    assert {"winreg.OpenKey", "_winreg.OpenKey"} <= set(patch_targets(ast.parse(source)))


def test_an_import_below_the_patch_still_resolves_it() -> None:
    source = "def test(monkeypatch):\n    monkeypatch.setattr(requests, 'get', f)\n\nimport requests\n"
    assert set(patch_targets(ast.parse(source))) == {"requests.get"}


@pytest.mark.parametrize(
    "source, passes",
    [
        ("from unittest import mock\nmock.patch('a.b')\n", True),
        ("def test(monkeypatch):\n    import app.net\n    app.net.get = fake\n", True),
        ("def test(mocker):\n    import app.net\n    app.net.get = fake\n", True),
        ("setattr(obj, 'x', 1)\n", True),
        ("import requests\nrequests.get = wrapped\n", True),
        ("import events\nevents.dispatch(e)\nevents.handler = h\n", False),  # `dispatch` is not `patch`
        ("import app\nresult = app.patches_applied\n", False),
    ],
)
def test_the_patch_gate_takes_whole_words(source: str, passes: bool) -> None:
    from flake8_http_pool.fix_facts import may_patch

    assert may_patch(source.encode()) is passes


def test_attribute_stores_on_local_objects_are_not_patches() -> None:
    source = "class A: pass\na = A()\na.get = 1\nself_x = object()\n"
    assert not set(patch_targets(ast.parse(source)))


@pytest.mark.parametrize(
    "patched, module, names, expected",
    [
        ({"pkg.mod.requests.get"}, "pkg.mod", ("requests.get",), True),
        ({"pkg.mod.requests.get"}, "pkg.other", ("requests.get",), False),
        ({"pkg.mod.get"}, "pkg.mod", ("get",), True),
        ({"requests.get"}, "anything", ("requests.get",), True),
        ({"mod.requests.get"}, "", ("requests.get",), False),
        ({"pkg.mod.requests.get"}, "mod", ("requests.get",), True),  # module name known only by its file
        (set(), "pkg.mod", ("requests.get",), False),
    ],
)
def test_is_patched(patched: set, module: str, names: tuple, expected: bool) -> None:
    assert FixFacts(patched=frozenset(patched), module=module).is_patched(*names) is expected


@pytest.mark.parametrize(
    "patched, module, names, expected",
    [
        ({"pkg.mod.requests.get"}, "pkg.mod", ("requests.get",), True),
        ({"requests.post"}, "pkg.mod", ("requests.get",), False),
        ({"pkg.mod.requests.get"}, "mod", ("requests.get",), True),
    ],
)
def test_a_question_asked_before_the_projects_patches_are_known_is_answered_later(
        patched: set, module: str, names: tuple, expected: bool) -> None:
    """While a root's patches are pending, a question the module's own patches do not answer yes is noted and
    answered no; the project's patches, once known, answer it as the whole set would have."""
    from flake8_http_pool.fix_facts import answered_yes, asked_patches

    asked_patches()
    own = FixFacts(patched=frozenset({"other.thing"}), module=module, pending="/root")
    assert own.is_patched(*names) is False
    assert own.is_patched(*names) is False  # asked twice, noted once
    asked = asked_patches()
    assert asked == (("/root", module, names),)
    assert asked_patches() == ()
    assert answered_yes(asked, {"/root": (frozenset(patched), False)}) is expected
    assert FixFacts(patched=frozenset(patched) | own.patched, module=module).is_patched(*names) is expected
    assert answered_yes(asked, {}) is True  # a root with no answer: planned again
    # A yes from the module's own patches is final: nothing is noted.
    assert FixFacts(patched=frozenset({f"{module}.{names[0]}"}), module=module, pending="/root").is_patched(*names)
    assert asked_patches() == ()


def test_moves_follow_the_config_and_unsafe_wins_a_tie() -> None:
    facts = FixFacts(extend_safe=("HTP1",), extend_unsafe=("HTP101",))
    assert facts.moves("HTP103", "unsafe") == "safe"
    assert facts.moves("HTP101", "unsafe") == "unsafe"
    assert facts.moves("HTP101", "safe") == "unsafe"
    assert facts.moves("HTP203", "safe") == "safe"
    assert facts.moves("HTP401", "none") == "none"


def test_project_root_module_name_and_gathered_patches(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\ndependencies = ['requests>=2.32.3']\n")
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("import requests\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_mod.py").write_text('from unittest import mock\n\n@mock.patch("pkg.mod.requests.get")\ndef t(m): pass\n')
    (tests / "broken.py").write_text("mock.patch(\n")  # passed over, not fatal
    assert find_project_root(str(package / "mod.py")) == str(tmp_path)
    assert module_name(str(package / "mod.py")) == "pkg.mod"
    facts = gather_fix_facts(str(tmp_path))
    assert "pkg.mod.requests.get" in facts.patched
    assert facts.requests_232


@pytest.mark.parametrize(
    "requirements, expected",
    [("requests>=2.32\n", True), ("requests==2.31.0\n", False), ("requests\n", False), ("httpx\n", False),
     ("requests>=2.32\nrequests[socks]>=2.28\n", False)],
)
def test_requests_pin(tmp_path: Path, requirements: str, expected: bool) -> None:
    (tmp_path / "requirements.txt").write_text(requirements)
    assert pins_requests_232(str(tmp_path)) is expected


def test_each_file_gets_its_own_projects_patches(tmp_path: Path) -> None:
    """Two projects in one folder: one's test patch of `requests.get` must not hold back the other's fix."""
    from cli_support import run_cli

    loop = "import requests\n\nfor url in URLS:\n    requests.get(url)\n"
    for name in ("patched", "plain"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "setup.py").write_text("")
        (tmp_path / name / "client.py").write_text(loop)
    (tmp_path / "patched" / "test_client.py").write_text('from unittest import mock\nmock.patch("requests.get")\n')
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "."], cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # the report-only site is left: ruff's exit 1
    assert (tmp_path / "patched" / "client.py").read_text() == loop  # report only: the tests patch requests.get
    assert "session.get(url)" in (tmp_path / "plain" / "client.py").read_text()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_project_is_gathered_once_however_many_of_its_modules_are_fixed(tmp_path: Path, jobs: str) -> None:
    """Each module has its own `named_elsewhere`; the project's patches are the same for all of them, so the
    patching test file is read once, not once per module (on a 10,000-file tree that was hours), nor once per
    worker: the run gathers them before it fixes any file."""
    import os
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("")
    for index in range(4):
        (tmp_path / f"client_{index}.py").write_text(
            f"import requests\n\n\ndef fetch_{index}(urls):\n    for url in urls:\n        requests.get(url)\n")
    (tmp_path / "main.py").write_text("".join(f"from client_{i} import fetch_{i}\n" for i in range(4)))
    (tmp_path / "test_clients.py").write_text('from unittest import mock\nmock.patch("client_0.requests.get")\n')
    log = tmp_path.parent / f"{tmp_path.name}-parsed.txt"
    environment = dict(os.environ, FLAKE8_HTTP_POOL_PARSE_LOG=str(log))
    done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "fix", "--check", "--unsafe-fixes", "--isolated",
                           "--no-cache", "--jobs", jobs, "."], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=environment)
    assert done.returncode == 1, done.stdout + done.stderr  # client_1..3 would change; client_0 is patched
    parsed = [os.path.basename(line) for line in log.read_text().splitlines()]
    # Once for the fix facts (the project model's gate passes it over), not once per module planned.
    assert parsed.count("test_clients.py (patches)") == 1, parsed


def _parse_log_of_check(tmp_path: Path, *arguments: str) -> tuple:
    import os
    import subprocess
    import sys

    log = tmp_path.parent / f"{tmp_path.name}-check-parsed.txt"
    log.unlink(missing_ok=True)
    environment = dict(os.environ, FLAKE8_HTTP_POOL_PARSE_LOG=str(log))
    done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "--no-cache", *arguments],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=environment)
    parsed = [os.path.basename(line) for line in log.read_text().splitlines()] if log.exists() else []
    return done, parsed


def test_check_reads_a_projects_tests_for_patches_once_across_its_workers(tmp_path: Path) -> None:
    """check's fix marks need the project's patches: the run gathers them once, shared out among its workers
    (each worker gathering the whole project was a second pass over every test file per worker)."""
    (tmp_path / "pyproject.toml").write_text("")
    for index in range(6):
        (tmp_path / f"client_{index}.py").write_text(
            f"import requests\n\n\ndef fetch_{index}(urls):\n    for url in urls:\n        requests.get(url)\n")
    (tmp_path / "test_clients.py").write_text('from unittest import mock\nmock.patch("client_0.requests.get")\n')
    done, parsed = _parse_log_of_check(tmp_path, "--jobs", "2", "--output-format", "json", ".")
    assert done.returncode == 1, done.stdout + done.stderr
    # Once for the patches (each of two workers gathered them: twice).
    assert parsed.count("test_clients.py (patches)") == 1, parsed
    import json

    fixes = {record["path"]: record["fix"] for record in json.loads(done.stdout)}
    # The patched module's site is report only; the others keep their (unsafe) fix: the facts reached the
    # worker that marked each file.
    assert fixes.pop("./client_0.py") is None, fixes
    assert set(fixes.values()) == {"unsafe"}, fixes


def test_a_clean_project_is_not_read_for_patches(tmp_path: Path) -> None:
    """Patches only change what a finding's mark says: with no finding, no test file is read for them."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "client.py").write_text("import requests\n\nrequests.get(URL, timeout=5)\n")
    (tmp_path / "test_client.py").write_text('from unittest import mock\nmock.patch("client.requests.get")\n')
    done, parsed = _parse_log_of_check(tmp_path, ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_client.py (patches)" not in parsed, parsed


def test_reading_the_projects_tests_for_patches_prints_no_parser_warning(tmp_path: Path) -> None:
    """check's marks read the project's test files for patches; a test's `1if x else 0` (a SyntaxWarning since
    Python 3.10) is that file's business, not a line on this run's stderr."""
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "client.py").write_text("import requests\n\nfor url in URLS:\n    requests.get(url)\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_client.py").write_text(
        'from unittest import mock\nmock.patch("client.requests.get")\nx = 1if True else 0\n')
    done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "--no-cache", "client.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "HTP101" in done.stdout, done.stdout + done.stderr
    assert done.stderr == ""


def test_a_test_file_naming_no_library_and_no_module_of_the_project_is_not_read_for_patches(tmp_path: Path) -> None:
    """What a file patches can matter to a fix only through a library's name or the fixed module's own name:
    a test file whose text holds neither (here `setattr(os, ...)`) is not parsed for patches; one naming a
    module of the project by its module's name is, and its patch still makes that module's site report only."""
    import json

    (tmp_path / "pyproject.toml").write_text("")
    for name in ("billing", "shipping"):
        (tmp_path / f"{name}.py").write_text(
            "from requests import get\n\n\ndef pull(urls):\n    for url in urls:\n        get(url)\n")
    (tmp_path / "test_env.py").write_text("import os\n\ndef test(monkeypatch):\n    setattr(os, 'sep', '/')\n")
    (tmp_path / "test_billing.py").write_text('from unittest import mock\nmock.patch("billing.get")\n')
    done, parsed = _parse_log_of_check(tmp_path, "--output-format", "json", ".")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_env.py (patches)" not in parsed and "test_billing.py (patches)" in parsed, parsed
    fixes = {record["path"]: record["fix"] for record in json.loads(done.stdout)}
    assert fixes == {"./billing.py": None, "./shipping.py": "unsafe"}, fixes


def test_a_module_added_under_a_name_a_test_patches_is_seen_on_a_warm_cache(tmp_path: Path) -> None:
    """The targets kept for each file are kept under the project's words: a test patching `billing.get` before
    any billing module exists is passed over, and once billing.py is added the warm run reads it again."""
    import json
    import os
    import subprocess
    import sys
    import time

    from flake8_http_pool.project_cache import RACY_NS

    def check() -> dict:
        done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "--output-format",
                               "json", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={k: v for k, v in os.environ.items() if k != "FLAKE8_HTTP_POOL_CACHE_DIR"})
        assert done.returncode == 1, done.stdout + done.stderr
        return {record["path"]: record["fix"] for record in json.loads(done.stdout)}

    loop = "from requests import get\n\n\ndef pull(urls):\n    for url in urls:\n        get(url)\n"
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "shipping.py").write_text(loop)
    (tmp_path / "test_billing.py").write_text('from unittest import mock\nmock.patch("billing.get")\n')
    time.sleep(RACY_NS / 1e9 + 0.2)  # old enough for the stat index to vouch for each file next time
    assert check() == {"./shipping.py": "unsafe"}
    (tmp_path / "billing.py").write_text(loop)
    assert check() == {"./billing.py": None, "./shipping.py": "unsafe"}


def test_a_root_that_is_itself_a_package_keeps_its_own_name_among_the_project_s_words(tmp_path: Path) -> None:
    """`mypkg/__init__.py` at the root is the module `mypkg`: a test patching `mypkg.get` names it."""
    from flake8_http_pool.fix_facts import module_name, project_words

    root = tmp_path / "mypkg"
    root.mkdir()
    (root / "__init__.py").write_text("from requests import get\n")
    (root / "test_it.py").write_text('from unittest import mock\nmock.patch("mypkg.get")\n')
    files = [str(root / "__init__.py"), str(root / "test_it.py")]
    assert module_name(files[0]) == "mypkg"
    assert b"mypkg" in project_words(str(root), files)


@pytest.mark.parametrize("files", [6, 240], ids=["in-process", "workers"])
@pytest.mark.parametrize("patcher", ["in-the-run", "outside-the-run"])
def test_fix_check_takes_the_projects_patches_from_the_reads_of_its_first_phase(tmp_path: Path, files: int,
                                                                                patcher: str) -> None:
    """`fix --check` without a cache takes each file's patches from the read its project model's phase 1
    makes, and reads the project's other files for them afterwards; a plan that asked about a patch before
    they were all known is made again when the answer is yes. It must say what `fix --diff` does (which
    gathers them before it fixes anything), and read the patching file once."""
    import os
    import re
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("")
    app = tmp_path / "app"
    app.mkdir()
    for index in range(files):
        (app / f"client_{index}.py").write_text(
            f"import requests\n\n\ndef fetch_{index}(urls):\n    for url in urls:\n        requests.get(url)\n")
    tests = tmp_path / "tests" if patcher == "outside-the-run" else app
    tests.mkdir(exist_ok=True)
    # client_0's call is patched by its full path, client_1's as `requests.get` seen from its module.
    (tests / "test_clients.py").write_text('from unittest import mock\nmock.patch("app.client_0.requests.get")\n'
                                           'from app import client_1\nmock.patch.object(client_1.requests, "get")\n')
    log = tmp_path.parent / f"{tmp_path.name}-parsed.txt"

    def run(*arguments: str) -> subprocess.CompletedProcess:
        log.unlink(missing_ok=True)
        return subprocess.run([sys.executable, "-m", "flake8_http_pool", "fix", "--unsafe-fixes", "--isolated",
                               "--no-cache", "--no-progress", "--jobs", "2", *arguments, "app"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, FLAKE8_HTTP_POOL_PARSE_LOG=str(log)))

    checked = run("--check")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    parsed = [os.path.basename(line) for line in log.read_text().splitlines()]
    assert parsed.count("test_clients.py (patches)") == 1, parsed
    would = set(re.findall(r"^would fix (\S+)", checked.stdout, re.MULTILINE))
    diffed = run("--diff")
    assert set(re.findall(r"^\+\+\+ (\S+)", diffed.stdout, re.MULTILINE)) == would
    expected = {os.path.join("app", f"client_{index}.py") for index in range(2, files)}
    assert would == expected, sorted(would ^ expected)


@pytest.mark.parametrize("gathered", ["up-front", "after-phase-1"])
def test_a_file_whose_worker_dies_reading_it_for_patches_is_read_in_the_main_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gathered: str) -> None:
    """A worker that dies reading a file for patches (a crash in C, the OOM killer) cost that file's patches:
    taken as none, a fix the file's mock would no longer see was offered. The file is read again here."""
    import os

    from flake8_http_pool import ondisk, project_check

    (tmp_path / "pyproject.toml").write_text("")
    for index in range(project_check._POOL_AT_FILES + 20):  # enough files for a pool of workers
        (tmp_path / f"client_{index}.py").write_text(f"import requests\n\nrequests.get({index})\n")
    (tmp_path / "test_clients.py").write_text('from unittest import mock\nmock.patch("client_0.requests.get")\n')
    main, real = os.getpid(), project_check.patch_job

    def dies_on_the_test_file(shared: tuple, item: tuple) -> tuple:
        if os.getpid() != main and item[0].endswith("test_clients.py"):
            os._exit(1)
        return real(shared, item)

    monkeypatch.setattr(project_check, "patch_job", dies_on_the_test_file)
    root = str(tmp_path)
    if gathered == "up-front":
        facts = project_check.gather_roots([root], None, 2)
    else:  # fix --check's: nothing read in phase 1 here, so every file is read for its patches afterwards
        facts = project_check.PendingPatches(ondisk.database(), [root], 2).facts()
    assert "client_0.requests.get" in facts[root][0]
