"""CODEOWNERS as GitHub reads it (codeowners.py): the file's place, its lines, and the pattern rules.

The pattern cases follow GitHub's "About code owners" examples and gitignore's pattern format, with the two
exceptions GitHub documents (no `!` negation, no `[ ]` ranges).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from flake8_http_pool.codeowners import find_codeowners, parse_codeowners, pattern_regex, repository_root

# pattern -> {repository-relative file path: owned?}
PATTERNS: Dict[str, Dict[str, bool]] = {
    # no slash: a name at any depth, and everything below it when it is a folder
    "setup.py": {"setup.py": True, "pkg/setup.py": True, "setup.pyc": False, "xsetup.py": False,
                 "setup.py/inner.py": True},
    "*.py": {"a.py": True, "deep/er/a.py": True, "a.pyi": False, "a.py.txt": False},
    "apps": {"apps": True, "apps/x.py": True, "web/apps/x.py": True, "apps.py": False, "myapps/x.py": False},
    # a leading slash anchors at the root
    "/apps": {"apps/x.py": True, "apps/a/b.py": True, "web/apps/x.py": False, "apps.py": False},
    # a slash in the middle anchors too
    "apps/web": {"apps/web/x.py": True, "apps/web": True, "src/apps/web/x.py": False, "apps/webby.py": False},
    # a trailing slash: a folder, so only what is below it, at any depth unless anchored
    "apps/": {"apps/x.py": True, "apps/a/b/c.py": True, "web/apps/x.py": True, "apps": False},
    "/build/logs/": {"build/logs/x.log": True, "build/logs/a/b.log": True, "src/build/logs/x.log": False,
                     "build/logs": False},
    # a lone `*` as the last part: the files directly in the folder, not deeper
    "docs/*": {"docs/a.md": True, "docs/guide/b.md": False, "x/docs/a.md": False, "docs": False},
    "/*": {"a.py": True, "pkg/a.py": False},
    "*": {"a.py": True, "pkg/deep/a.py": True},
    "/*/": {"pkg/a.py": True, "pkg/deep/a.py": True, "a.py": False},
    # `*` and `?` never cross a slash
    "docs/*.md": {"docs/a.md": True, "docs/sub/a.md": False},
    "src/*/views.py": {"src/web/views.py": True, "src/web/deep/views.py": False, "src/views.py": False},
    "a?.py": {"ab.py": True, "a.py": False, "abc.py": False, "a/.py": False},
    # a wildcard in a last part that is not a lone `*` still covers a folder's contents
    "/te*": {"tests/a.py": True, "tests/deep/a.py": True, "src/tests/a.py": False},
    # `**`: leading, middle, trailing
    "**/logs": {"logs/a": True, "build/logs/a": True, "deeply/nested/logs/a": True, "catalogs/a": False},
    "**/logs/x.py": {"logs/x.py": True, "a/b/logs/x.py": True, "logs/y/x.py": False},
    "src/**/views.py": {"src/views.py": True, "src/a/b/views.py": True, "lib/src/views.py": False},
    "src/**": {"src/a.py": True, "src/a/b.py": True, "src": False, "lib/src/a.py": False},
    "src/**/": {"src/a.py": True, "src/a/b.py": True},
    "**": {"a.py": True, "a/b.py": True},
    "a**b.py": {"ab.py": True, "axxb.py": True, "a/b.py": False},  # not a whole part: a plain `*`
    # escapes, and what GitHub does not support: `[ ]` is literal
    "f\\*o.py": {"f*o.py": True, "foo.py": False},
    "[ab].py": {"[ab].py": True, "a.py": False},
    "my\\ file.py": {"my file.py": True, "my": False},
    # case matters, as in git's paths
    "/Web/": {"Web/a.py": True, "web/a.py": False},
    # characters that mean something to a regular expression are literal
    "a+b.(x).py": {"a+b.(x).py": True, "aab.x.py": False},
}


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_pattern(pattern: str) -> None:
    regex = pattern_regex(pattern)
    wrong = {path: owned for path, owned in PATTERNS[pattern].items() if bool(regex.match(path)) != owned}
    assert not wrong, f"{pattern!r} ({regex.pattern}) disagrees on (path: expected) {wrong}"


def _owners(text: str, path: str) -> Tuple[str, ...]:
    from flake8_http_pool.codeowners import CodeOwners

    return CodeOwners("CODEOWNERS", tuple(parse_codeowners(text))).owners_of(path)


def test_the_last_matching_line_wins() -> None:
    text = "*.py @org/python\n/web/ @org/web\n/web/legacy/ @org/legacy\n*.py @org/python-late\n/api/ @org/api\n"
    assert _owners(text, "web/views.py") == ("@org/python-late",)  # the later `*.py` beats `/web/`
    assert _owners(text, "api/views.py") == ("@org/api",)
    assert _owners(text, "web/index.html") == ("@org/web",)
    assert _owners(text, "web/legacy/index.html") == ("@org/legacy",)
    assert _owners(text, "README") == ()


def test_a_pattern_without_owners_makes_its_files_unowned() -> None:
    text = "* @org/all\n/apps/ @octocat\n/apps/github\n"
    assert _owners(text, "apps/web/a.py") == ("@octocat",)
    assert _owners(text, "apps/github/a.py") == ()
    assert _owners(text, "apps/github") == ()
    assert _owners(text, "lib/a.py") == ("@org/all",)


def test_comments_blank_lines_owners_and_escapes() -> None:
    text = (
        "\ufeff# a comment line\n"
        "\n"
        "   \t\n"
        "  # an indented comment\n"
        "*.py   @org/a\t@user  dev@example.com   # why: the rest is a comment @org/not-an-owner\n"
        "docs/my\\ guide.md @org/docs\n"
    )
    rules = parse_codeowners(text.lstrip("\ufeff"))
    assert [(r.pattern, r.owners, r.line) for r in rules] == [
        ("*.py", ("@org/a", "@user", "dev@example.com"), 5),
        ("docs/my\\ guide.md", ("@org/docs",), 6),
    ]
    assert _owners(text, "docs/my guide.md") == ("@org/docs",)


def test_lines_github_rejects_are_skipped_with_a_warning() -> None:
    warnings: List[Tuple[int, str]] = []
    rules = parse_codeowners("* @org/all\n!/vendor/ @org/none\n/web/ org-web\n/api/ @org/api\n",
                             lambda line, why: warnings.append((line, why)))
    assert [r.pattern for r in rules] == ["*", "/api/"]
    assert [line for line, _ in warnings] == [2, 3]
    assert "negation" in warnings[0][1] and "not an owner" in warnings[1][1] and "org-web" in warnings[1][1]


def test_github_looks_in_dot_github_then_the_root_then_docs(tmp_path: Path) -> None:
    assert find_codeowners(str(tmp_path)) is None
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "CODEOWNERS").write_text("* @docs\n")
    assert find_codeowners(str(tmp_path)) == str(tmp_path / "docs" / "CODEOWNERS")
    (tmp_path / "CODEOWNERS").write_text("* @root\n")
    assert find_codeowners(str(tmp_path)) == str(tmp_path / "CODEOWNERS")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "CODEOWNERS").mkdir()  # a folder of that name is not the file
    assert find_codeowners(str(tmp_path)) == str(tmp_path / "CODEOWNERS")
    (tmp_path / ".github" / "CODEOWNERS").rmdir()
    (tmp_path / ".github" / "CODEOWNERS").write_text("* @github\n")
    assert find_codeowners(str(tmp_path)) == str(tmp_path / ".github" / "CODEOWNERS")


def test_the_repository_root_is_the_git_top_level_above_the_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "services" / "web").mkdir(parents=True)
    (repo / "services" / "web" / "pyproject.toml").write_text("")  # a sub-project's root is not the repository's
    (repo / "services" / "api").mkdir()
    web, api = repo / "services" / "web" / "a.py", repo / "services" / "api" / "b.py"
    assert repository_root([str(web)]) == str(repo)
    assert repository_root([str(web), str(api)]) == str(repo)
    alone = tmp_path / "alone" / "pkg"
    alone.mkdir(parents=True)
    (tmp_path / "alone" / "setup.cfg").write_text("")
    assert repository_root([str(alone / "x.py")]) == str(tmp_path / "alone")  # no git: the project root
