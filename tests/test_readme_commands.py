"""The README's commands and snippets: every `flake8-http-pool ...` in a console block parses, every config parses.

Each `flake8-http-pool` command in a ```console block (also after a pipe, `&&` or a `.venv/bin/` prefix) goes
through the real argument parser, so a README line with a flag or a subcommand that does not exist fails here.
The YAML, JSON, TOML and INI snippets are parsed as their tools would read them.
"""

from __future__ import annotations

import configparser
import json
import re
import shlex
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from flake8_http_pool.cli import build_parser

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

README = Path(__file__).resolve().parents[1] / "README.md"
PROGRAM = "flake8-http-pool"
# Where one command ends and the next (or a redirection) begins.
SEPARATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "(", ")"}


def blocks(text: str, language: str) -> List[str]:
    """The bodies of the fenced blocks tagged `language`."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def commands(block: str) -> List[List[str]]:
    """Each `flake8-http-pool` invocation in a console block, as its argument list (comments dropped)."""
    found = []
    for line in block.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True  # words keep their globs, dots and slashes
        lexer.commenters = "#"
        tokens = list(lexer)
        for index, token in enumerate(tokens):
            if token == PROGRAM or token.endswith("/" + PROGRAM):
                args = []
                for word in tokens[index + 1:]:
                    if word in SEPARATORS:
                        break
                    args.append(word)
                found.append(args)
    return found


def readme_commands() -> List[Tuple[str, List[str]]]:
    text = README.read_text(encoding="utf-8")
    return [(" ".join([PROGRAM, *args]), args) for block in blocks(text, "console") for args in commands(block)]


def parses(args: List[str]) -> Tuple[bool, str]:
    """Whether the command's parser accepts `args` (argparse exits 2 on an unknown flag or subcommand)."""
    try:
        build_parser().parse_args(args)
    except SystemExit as stop:
        return stop.code in (0, None), f"argparse exit {stop.code}"
    return True, ""


def test_readme_has_the_commands_it_documents() -> None:
    found = readme_commands()
    subcommands = {args[0] for _, args in found if args}
    assert len(found) >= 10, found
    assert {"check", "fix", "rules", "explain"} <= subcommands, subcommands


@pytest.mark.parametrize("line,args", readme_commands(), ids=lambda value: value if isinstance(value, str) else "")
def test_each_readme_command_is_accepted_by_the_parser(line: str, args: List[str], capsys) -> None:
    ok, why = parses(args)
    assert ok, f"README: `{line}`: {why}: {capsys.readouterr().err.strip()}"


def test_the_check_itself_refuses_a_flag_that_does_not_exist() -> None:
    (args,) = commands("git ls-files | .venv/bin/flake8-http-pool check --no-such-flag src/ > out.txt  # note\n")
    assert args == ["check", "--no-such-flag", "src/"]
    assert not parses(args)[0]
    assert parses(["check", "--stdin-filename", "app/x.py", "-"])[0]


def test_readme_snippets_parse() -> None:
    yaml = pytest.importorskip("yaml")  # pre-commit (a test dependency) brings PyYAML
    text = README.read_text(encoding="utf-8")
    for body in blocks(text, "yaml"):
        assert isinstance(yaml.safe_load(body), dict), body
    for body in blocks(text, "json"):
        json.loads(body)
    for body in blocks(text, "toml"):
        tomllib.loads(body)
    for body in blocks(text, "ini"):
        configparser.ConfigParser().read_string(body)
