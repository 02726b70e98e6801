"""`fix --check` answers from the planners alone; it must give the same verdict as really fixing the file."""

from __future__ import annotations

from pathlib import Path
import pytest

from flake8_http_pool.fixing import fix_source, planned_fixes
from flake8_http_pool.source_files import decode_source

from conftest import fixture_params

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): fix --check against fix over
# every fixture
pytestmark = pytest.mark.slow



@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("path", fixture_params("", "fixes"))
def test_planned_verdict_matches_the_fix(path: Path, unsafe: bool) -> None:
    text = decode_source(path.read_bytes())
    planned = planned_fixes(text, unsafe=unsafe, filename=str(path))
    fixed = fix_source(text, unsafe=unsafe, filename=str(path))
    assert planned.error == fixed.error
    assert bool(planned.applied) == (fixed.text != text), (dict(planned.applied), dict(fixed.applied))
    if fixed.applied:  # later rounds may fix what the first fix uncovered, but the first is planned here
        assert set(fixed.applied) & set(planned.applied)


_FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.slow
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_plans_made_in_the_model_s_first_phase_are_the_ones_made_after_it(tmp_path: Path, monkeypatch, capsys,
                                                                          unsafe: bool, cache: bool) -> None:
    """`fix --check` plans each file in the project model's phase 1, and keeps that plan for a file the model
    seeds nothing in (fix_command._planning_first). Over every fixture file and the golden projects across
    modules (seeded files among them), the run says what it says with every file planned after the solve; with
    the cache, whether its summaries were written by this path (cold) or read by it (warm)."""
    import shutil

    from flake8_http_pool import cli, fix_command

    shutil.copytree(_FIXTURES, tmp_path / "tree", ignore=shutil.ignore_patterns("__pycache__", "after"))
    (tmp_path / "tree" / "pyproject.toml").write_text("")
    arguments = ["fix", "--check", "--isolated", "--jobs", "1", "--no-progress", "--preview",
                 *(["--unsafe-fixes"] if unsafe else []), *([] if cache else ["--no-cache"]), "."]
    monkeypatch.chdir(tmp_path / "tree")
    made: list = []
    planning_first = fix_command._planning_first
    monkeypatch.setattr(fix_command, "_planning_first", lambda *a: made.append(1) or planning_first(*a))
    early = cli.main(arguments), capsys.readouterr()
    warm = cli.main(arguments), capsys.readouterr()
    monkeypatch.setattr(fix_command, "_planning_first", lambda *a: None)
    late = cli.main(arguments), capsys.readouterr()
    assert made, "the plans were not made in phase 1"
    assert early == warm == late
    assert (tmp_path / "tree" / ".flake8-http-pool-cache").is_dir() == cache
    assert "would fix" in early[1].out and early[0] in (1, 2)
