"""HTP401 on dependency files (RULES.md): gevent/grequests declared with an automatic pyOpenSSL injection."""

from __future__ import annotations

import pytest

from cli_support import run_cli
from flake8_http_pool.dependency_files import check_dependency_file


def _lines(path: str, text: str):
    return [(f.line, f.code) for f in check_dependency_file(path, text)]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("gevent==21.1\nrequests[security]==2.22\n", [(2, "HTP401")]),
        ("grequests\n# urllib3 pinned\nurllib3[secure]>=1.25  # old\n", [(3, "HTP401")]),
        ("gevent\npyOpenSSL>=19\nrequests==2.23.0\n", [(2, "HTP401")]),
        ("gevent\npyopenssl\nrequests<2.24\n", [(2, "HTP401")]),
        ("gevent\npyopenssl\nrequests~=2.23.0\n", [(2, "HTP401")]),
        ("gevent\npyopenssl\nrequests<=2.23.9\n", [(2, "HTP401")]),
        ("gevent\npyopenssl \\\n  --hash=sha256:abc\nrequests==2.20.*\n", [(2, "HTP401")]),
        # negatives
        ("gevent\npyopenssl\nrequests>=2.20\n", []),  # a new requests injects nothing
        ("gevent\npyopenssl\nrequests~=2.23\n", []),  # ~=2.23 allows 2.99
        ("gevent\npyopenssl\n", []),
        ("requests[security]\n", []),  # no gevent
        ("gevent\nrequests\n-r other.txt\n--index-url https://x\n", []),
        ("gevent\n# requests[security]\n", []),
    ],
)
def test_requirements_txt(text, expected):
    assert _lines("requirements-dev.txt", text) == expected


def test_pyproject_dependencies_and_optional_dependencies():
    text = (
        '[project]\nname = "x"\ndependencies = [\n  "gevent>=20",\n]\n\n'
        '[project.optional-dependencies]\nssl = [\n  "requests[security]<2.24",\n]\n'
    )
    assert _lines("pyproject.toml", text) == [(9, "HTP401")]
    assert _lines("pyproject.toml", '[project]\ndependencies = ["gevent"]\n') == []


def test_setup_cfg_install_requires_and_extras():
    text = "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    grequests\n    urllib3[secure]\n"
    assert _lines("setup.cfg", text) == [(7, "HTP401")]
    text = "[options]\ninstall_requires = gevent; requests[security]\n"
    assert _lines("setup.cfg", text) == [(2, "HTP401")]


def test_setup_py_literal_lists_are_read_never_run():
    text = (
        "import os\nos.system('touch pwned')\nfrom setuptools import setup\n"
        "REQUIRES = [\n    'gevent',\n    'requests[security]',\n]\n"
        "setup(name='x', install_requires=REQUIRES)\n"
    )
    assert _lines("setup.py", text) == [(6, "HTP401")]
    inline = "from setuptools import setup\nsetup(install_requires=['gevent'], extras_require={'s': ['urllib3[secure]']})\n"
    assert _lines("setup.py", inline) == [(2, "HTP401")]


def test_check_reports_dependency_files_in_a_tree(tmp_path):
    (tmp_path / "requirements.txt").write_text("gevent\nrequests[security]\n")
    (tmp_path / "requirements-ok.txt").write_text("gevent\nrequests>=2.28\n")
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(install_requires=['grequests', 'urllib3[secure]'])\n"
    )
    (tmp_path / "notes.txt").write_text("gevent\nrequests[security]\n")
    result = run_cli(["check", "--isolated", "-q", "."], cwd=tmp_path)
    assert [line.split(": ")[0] for line in result.stdout.splitlines()] == ["./requirements.txt:2:1", "./setup.py:2:1"]
    assert result.returncode == 1
    assert not (tmp_path / "pwned").exists()
    ignored = run_cli(["check", "--isolated", "--ignore", "HTP401", "."], cwd=tmp_path)
    assert ignored.returncode == 0
