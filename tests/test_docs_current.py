"""The committed docs/rules/*.md pages and the README rule table are what the rule modules render now."""

from __future__ import annotations

import pytest

from flake8_http_pool import docs
from flake8_http_pool.rules import ALL_RULES

ROOT = docs.repository_root()
_FILES = docs.expected_files(ROOT)
_HOW = f"stale: run `{docs.REGENERATE}` and commit what it writes"


@pytest.mark.parametrize(
    "path", sorted(_FILES), ids=[path.relative_to(ROOT).as_posix() for path in sorted(_FILES)]
)
def test_generated_file_is_current(path):
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing; {_HOW}"
    assert path.read_text(encoding="utf-8") == _FILES[path], f"{path.relative_to(ROOT)} is {_HOW}"


def test_no_page_for_an_unknown_code():
    stray = [path.relative_to(ROOT).as_posix() for path in docs.stray_pages(ROOT)]
    assert not stray, f"pages for no rule: {stray}; {_HOW}"


def test_readme_table_lists_every_rule_once():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split(docs.TABLE_START, 1)[1].split(docs.TABLE_END, 1)[0]
    for rule in ALL_RULES:
        assert table.count(f"[{rule.code}](docs/rules/{rule.code}.md)") == 1, rule.code


def test_every_page_has_the_sections_in_order():
    sections = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety", "## References"]
    for rule in ALL_RULES:
        page = docs.render_rule_page(rule)
        assert page.splitlines()[2] == f"# {rule.code} {rule.name}"
        positions = [page.index(title) for title in sections]
        assert positions == sorted(positions), rule.code
        assert ("## Options" in page) == bool(rule.options.strip()), rule.code
        assert page.count("```python") == 2, rule.code


def test_check_mode_writes_nothing_and_reports_stale(tmp_path, monkeypatch, capsys):
    (tmp_path / "README.md").write_text(f"# x\n\n{docs.TABLE_START}\nold\n{docs.TABLE_END}\n", encoding="utf-8")
    (tmp_path / "docs" / "rules").mkdir(parents=True)
    (tmp_path / "docs" / "rules" / "HTP999.md").write_text("gone\n", encoding="utf-8")
    monkeypatch.setattr(docs, "repository_root", lambda: tmp_path)
    assert docs.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "stale: README.md" in out and "stale: docs/rules/HTP101.md" in out and "docs/rules/HTP999.md" in out
    assert not (tmp_path / "docs" / "rules" / "HTP101.md").exists()
    assert docs.main([]) == 0
    assert docs.main(["--check"]) == 0
    assert not (tmp_path / "docs" / "rules" / "HTP999.md").exists()
    assert "| [HTP403](docs/rules/HTP403.md) |" in (tmp_path / "README.md").read_text(encoding="utf-8")


def test_plugin_path_does_not_import_the_generator():
    import subprocess
    import sys

    code = "import sys, flake8_http_pool.plugin, flake8_http_pool.engine; print('flake8_http_pool.docs' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
