"""Golden tests of `fix`: each tests/fixtures/fixes/<CODE>_<case>.py is fixed into the .fixed.py beside it.

The output must compile, be stable under a second fix, carry none of the fixed code's findings at the sites
it rewrote, and keep unsafe fixes out unless asked. `pytest --update-golden` rewrites the expected files.
"""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import List

import pytest

from flake8_http_pool.engine import check_source
from flake8_http_pool.fixing import fix_source
from flake8_http_pool.rule import FIX_UNSAFE
from flake8_http_pool.rules import RULES_BY_CODE
from flake8_http_pool.source_files import decode_source
from flake8_http_pool.writing import encode_like, write_atomically

from conftest import fixture_files, fixture_params

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): every golden case fixed twice
pytestmark = pytest.mark.slow

CASES_DIR = Path(__file__).parent / "fixtures" / "fixes"
CASES: List[Path] = fixture_files("fixes")  # the cases the running Python parses


def _fixed_path(case: Path) -> Path:
    return case.with_name(case.stem + ".fixed.py")


@pytest.mark.parametrize("case", fixture_params("fixes", label=lambda p: p.stem))
def test_golden(case: Path, request: pytest.FixtureRequest) -> None:
    original = case.read_bytes()
    text = decode_source(original)
    # A case named <CODE>_unsafe_<what>, or of a rule whose fix is unsafe, is fixed with --unsafe-fixes, and must
    # stay unchanged without it.
    code = case.name.split("_", 1)[0]
    unsafe = "_unsafe_" in case.name or RULES_BY_CODE[code].fix == FIX_UNSAFE
    if unsafe:  # other rules' safe fixes may still apply to the case
        assert not fix_source(text, filename=str(case)).applied[code], "an unsafe fix applied without --unsafe-fixes"
    result = fix_source(text, filename=str(case), unsafe=unsafe)
    assert result.error is None, result.error
    produced = encode_like(result.text, original)
    expected_path = _fixed_path(case)
    if request.config.getoption("--update-golden"):
        expected_path.write_bytes(produced)
    assert expected_path.exists(), f"no expected output; run pytest --update-golden and review {expected_path.name}"
    assert produced == expected_path.read_bytes()

    compile(ast.parse(result.text), str(case), "exec", dont_inherit=True)
    again = fix_source(result.text, filename=str(case), unsafe=unsafe)
    assert again.error is None and again.text == result.text and not again.applied

    before = [f for f in check_source(text) if f.code == code]
    after = [f for f in check_source(result.text) if f.code == code]
    assert len(after) == len(before) - result.applied[code], "every fix applied removes one finding"
    if "report_only" not in case.name and "nested_function" not in case.name:
        assert not after, f"{code} left after fix: {after}"


def test_every_fixable_case_changes_something() -> None:
    changed = [case.stem for case in CASES if fix_source(decode_source(case.read_bytes())).applied]
    assert len(changed) >= 8
    report_only = CASES_DIR / "HTP101_report_only.py"
    assert fix_source(report_only.read_text()).text == report_only.read_text()


def test_unsafe_fixes_absent_without_unsafe() -> None:
    """Sites only an unsafe fix could change are left alone, and their findings stay."""
    text = (
        "import requests\n\n\ndef fetch(url):\n    return requests.get(url)\n\n\n"
        "for url in URLS:\n    fetch(url)\n"
    )
    assert [f.code for f in check_source(text)] == ["HTP102"]
    result = fix_source(text)
    assert result.text == text and not result.applied
    assert [f.code for f in check_source(result.text)] == ["HTP102"]


def test_selection_limits_the_fixes() -> None:
    text = "import requests\n\nfor url in URLS:\n    requests.get(url)\n"
    assert fix_source(text, codes={"HTP102"}, unsafe=True).text == text
    assert fix_source(text, codes={"HTP101"}, unsafe=True).applied == Counter({"HTP101": 1})


def test_a_broken_fix_leaves_the_text_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_http_pool import fixing

    text = "import requests\n\nfor url in URLS:\n    requests.get(url)\n"
    # Pretend the rewritten text (the only one holding `Session`) fails to compile.
    monkeypatch.setattr(fixing, "_compiles", lambda text, filename: None if "Session" not in text else "boom")
    result = fix_source(text, unsafe=True)
    assert result.text == text and result.error and "does not compile" in result.error


def test_libcst_not_imported_without_fixable_findings(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from flake8_http_pool.fixing import fix_source\n"
        "texts = ['import os\\nprint(1)\\n', 'import requests\\nrequests.get(URL)\\n',\n"
        "         'import urllib.request\\nfor u in U:\\n    urllib.request.urlopen(u)\\n']\n"
        "for text in texts:\n"
        "    assert fix_source(text).text == text\n"
        "print('libcst' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# -- write_atomically ---------------------------------------------------------------------------------
def test_write_keeps_mode_bits(tmp_path: Path) -> None:
    path = tmp_path / "tool.py"
    path.write_bytes(b"print(1)\n")
    os.chmod(path, 0o751)
    assert write_atomically(str(path), "print(2)\n", path.read_bytes())
    assert path.read_bytes() == b"print(2)\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["tool.py"]


def test_write_keeps_crlf_through_fix(tmp_path: Path) -> None:
    path = tmp_path / "crlf.py"
    original = b"import requests\r\n\r\nfor url in URLS:\r\n    requests.get(url)\r\n"
    path.write_bytes(original)
    result = fix_source(decode_source(original), unsafe=True)
    assert write_atomically(str(path), result.text, original)
    data = path.read_bytes()
    assert b"session.get" in data and data.count(b"\n") == data.count(b"\r\n") and data.endswith(b"\r\n")


def test_write_keeps_bom_and_cookie(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    original = "\ufeffimport requests\nname = 'café'\n".encode("utf-8")
    path.write_bytes(original)
    assert write_atomically(str(path), "import requests\nname = 'thé'\n", original)
    assert path.read_bytes() == "\ufeffimport requests\nname = 'thé'\n".encode("utf-8")

    latin = tmp_path / "latin.py"
    original = "# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1")
    latin.write_bytes(original)
    assert write_atomically(str(latin), "# -*- coding: latin-1 -*-\nname = 'thé'\n", original)
    assert latin.read_bytes() == "# -*- coding: latin-1 -*-\nname = 'thé'\n".encode("latin-1")


def test_write_keeps_missing_final_newline(tmp_path: Path) -> None:
    original = b"import requests\nfor url in URLS:\n    requests.get(url)"
    result = fix_source(original.decode(), unsafe=True)
    assert result.applied and not result.text.endswith("\n")


def test_no_write_when_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "same.py"
    path.write_bytes(b"x = 1\n")
    os.chmod(path, 0o444)  # a write attempt would fail loudly
    before = path.stat().st_mtime_ns
    assert write_atomically(str(path), "x = 1\n", path.read_bytes()) is False
    assert path.stat().st_mtime_ns == before


def test_write_follows_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_bytes(b"x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert write_atomically(str(link), "x = 2\n", b"x = 1\n")
    assert link.is_symlink() and real.read_bytes() == b"x = 2\n"


def test_interrupted_write_leaves_the_original(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "keep.py"
    path.write_bytes(b"x = 1\n")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(path), "x = 2\n", b"x = 1\n")
    assert path.read_bytes() == b"x = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.py"]


_BOTH_BASES = """
import sys
if sys.argv[1] == "codemod":
    import libcst.codemod  # loaded first, as libcst's own tool does: the commands stand on its codemod base
from pathlib import Path
from flake8_http_pool.fixing import fix_source
from flake8_http_pool.source_files import decode_source
from flake8_http_pool.fixes.base import FindingFixCommand

print(FindingFixCommand.__mro__[1].__name__)
for name in sys.argv[2:]:
    result = fix_source(decode_source(Path(name).read_bytes()), filename=name, unsafe=True)
    print(name, result.error, sorted(result.applied.items()), repr(result.text))
print("libcst.codemod" in sys.modules)
"""


@pytest.mark.slow
def test_every_golden_case_fixes_the_same_with_or_without_libcsts_codemod_package() -> None:
    # `fix` never loads libcst.codemod (it costs more than a small file's whole fix) and runs the commands on a
    # base of its own; under libcst's tool they are codemods proper. Both must write the same bytes.
    names = [str(case) for case in CASES]
    runs = {}
    for mode in ("light", "codemod"):
        done = subprocess.run([sys.executable, "-c", _BOTH_BASES, mode, *names], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[mode] = done.stdout.splitlines()
    assert runs["light"][0] == "_LightCommand" and runs["codemod"][0] == "VisitorBasedCodemodCommand"
    assert runs["light"][1:-1] == runs["codemod"][1:-1]
    assert sum(" None [(" in line for line in runs["light"]) >= len(names) // 2  # most cases apply a fix
    # Loaded only by the few fixes that add or drop an import, never for the rest.
    assert runs["codemod"][-1] == "True"


def test_a_fix_that_changes_no_import_never_loads_libcsts_codemod_package(tmp_path: Path) -> None:
    target = tmp_path / "client.py"
    target.write_text("import requests\n\n\ndef first_line(url):\n"
                      "    r = requests.Session().get(url, stream=True, timeout=10)\n"
                      "    for line in r.iter_lines():\n        return line\n")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "flake8_http_pool", "fix", "-q", "--no-cache",
                           str(target)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "with requests.Session().get(url, stream=True, timeout=10) as r:" in target.read_text()
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    assert "libcst" in imported and "libcst.codemod" not in imported and "libcst.matchers" not in imported
