"""CODEOWNERS as GitHub reads it: where the file is, its rules, and who owns a path (fix --split-by-owner).

GitHub's syntax (docs.github.com, "About code owners"): one rule a line, a gitignore-like pattern and then
owners (`@user`, `@org/team`, an e-mail address); `#` starts a comment line (and, after the owners, the rest of
the line); blank lines are skipped; the last rule that matches a path wins, and a rule with no owners makes its
paths unowned. Patterns, matched against a file's path relative to the repository root, with `/` separators:

- `/` at the start anchors the pattern at the root; so does a `/` in the middle (`docs/*`, `src/app`);
  a pattern with no `/` but a trailing one matches at any depth (`*.py`, `apps/`);
- a `/` at the end matches a directory only, so everything below it (`/build/logs/`);
- without one, a pattern that names a directory covers everything below it too (`/apps/github`), except when
  its last part is a lone `*`: `docs/*` owns `docs/a.md`, not `docs/guide/b.md`;
- `*` matches any characters but `/`, `?` one of them; `**/` at the start or `/**/` in the middle any number of
  directories (none included), `/**` at the end everything inside; `\\` escapes the next character.

What GitHub does not support is not supported here either: `!` negation (such a line is skipped, with a warning)
and `[ ]` ranges (the brackets are literal characters). Matching is case-sensitive, as git's paths are.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Iterable, List, NamedTuple, Optional, Pattern, Tuple

# Where GitHub looks, in its order: the first that exists is used.
PLACES = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")

# `@user`, `@org/team`, or an e-mail address: what GitHub accepts as an owner.
_OWNER = re.compile(r"@[^\s@/]+(?:/[^\s@/]+)?|[^\s@]+@[^\s@]+")


class Rule(NamedTuple):
    """One line of a CODEOWNERS file: its pattern, its owners (none: unowned) and where it was written."""

    pattern: str
    owners: Tuple[str, ...]
    line: int
    regex: Pattern[str]


class CodeOwners(NamedTuple):
    """A parsed CODEOWNERS file (`path` None: there was none, so every path is unowned)."""

    path: Optional[str]
    rules: Tuple[Rule, ...]

    def owners_of(self, relative: str) -> Tuple[str, ...]:
        """The owners of a repository-relative path (`/`-separated): the last matching rule's; () for none."""
        for rule in reversed(self.rules):
            if rule.regex.match(relative):
                return rule.owners
        return ()


NO_CODEOWNERS = CodeOwners(None, ())


def repository_root(paths: Iterable[str]) -> str:
    """The folder the patches and CODEOWNERS patterns are relative to: the git top-level above the folder
    common to `paths` (the nearest folder holding `.git`), else that folder's project root (project.py).
    `paths` is gone through twice at most, each time from the start (a list, or a view of a run's files)."""
    from .project import project_root

    common: Optional[str] = None
    last = None
    try:
        for path in paths:  # folder by folder as they come
            folder = os.path.dirname(os.path.abspath(path))
            if folder != last:
                last = folder
                common = folder if common is None else os.path.commonpath([common, folder])
    except ValueError:  # paths on different drives (Windows): no common folder
        return os.getcwd()
    here = common if common is not None else os.getcwd()
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return project_root(paths) if common is not None else os.getcwd()
        here = parent


def find_codeowners(root: str) -> Optional[str]:
    """The CODEOWNERS file GitHub would use for a repository at `root`, or None."""
    for place in PLACES:
        candidate = os.path.join(root, *place.split("/"))
        if os.path.isfile(candidate):
            return candidate
    return None


def read_codeowners(path: str, warn: Callable[[str], None]) -> CodeOwners:
    """Parse the CODEOWNERS file at `path`; `warn` gets one line per rule that is skipped and why.

    Raises OSError (or UnicodeDecodeError) when it cannot be read: it is read as every file of the tree is
    (source_files.read_bytes: a regular file, never blocking, at most 4 MB; GitHub reads at most 3 MB of it).
    """
    from .source_files import DEFAULT_MAX_FILE_SIZE, SourceError, read_bytes

    try:
        data = read_bytes(path, DEFAULT_MAX_FILE_SIZE)
    except SourceError as error:
        raise OSError(error.reason.replace("cannot read: ", "")) from None
    text = data.decode("utf-8-sig")
    return CodeOwners(path, tuple(parse_codeowners(text, lambda line, why: warn(f"{path}:{line}: {why}"))))


def parse_codeowners(text: str, warn: Callable[[int, str], None] = lambda line, why: None) -> List[Rule]:
    """The rules of a CODEOWNERS text, in order; a line GitHub would reject is skipped and passed to `warn`."""
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        words = _words(line)
        if not words:
            continue
        pattern, owners = words[0], words[1:]
        for index, owner in enumerate(owners):
            if owner.startswith("#"):  # a comment after the owners
                owners = owners[:index]
                break
        bad = [owner for owner in owners if not _OWNER.fullmatch(owner)]
        if pattern.startswith("!"):
            warn(number, f"skipped: `!` (negation) is not supported in CODEOWNERS: {pattern}")
        elif bad:
            warn(number, f"skipped: not an owner (`@user`, `@org/team` or an e-mail address): {bad[0]}")
        else:
            rules.append(Rule(pattern, tuple(owners), number, pattern_regex(pattern)))
    return rules


def _words(line: str) -> List[str]:
    """A line's whitespace-separated words, `\\ ` keeping a space in a word; [] for a blank or comment line.

    A backslash stays in the word (the pattern's own escape); only an escaped blank joins two words.
    """
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return []
    words: List[str] = []
    current = ""
    escaped = False
    for char in stripped:
        if escaped:
            current += char
            escaped = False
        elif char == "\\":
            current += char
            escaped = True
        elif char.isspace():
            if current:
                words.append(current)
            current = ""
        else:
            current += char
    if current:
        words.append(current)
    return words


def pattern_regex(pattern: str) -> Pattern[str]:
    """The regular expression matching the repository-relative file paths a CODEOWNERS pattern owns."""
    body = pattern[1:] if pattern.startswith("/") else pattern
    directory = body.endswith("/")
    if directory:
        body = body[:-1]
    anchored = pattern.startswith("/") or "/" in body
    parts = body.split("/")
    out = ["" if anchored else "(?:.*/)?"]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".+" if last else "(?:.*/)?")  # everything inside / any number of directories
            continue
        out.append(_part_regex(part) + ("" if last else "/"))
    if parts[-1] == "**":
        tail = ""
    elif directory:
        tail = "/.+"  # a directory: only what is below it
    elif parts[-1] == "*" and anchored:
        tail = ""  # `docs/*`: the files directly in docs/, not those further down
    else:
        tail = "(?:/.*)?"  # the path itself, or everything below it when it names a directory
    return re.compile("(?s)" + "".join(out) + tail + r"\Z")


def _part_regex(part: str) -> str:
    """One path component of a pattern: `*` and `?` stop at `/`, `\\x` is a literal x, the rest is literal."""
    out = []
    index = 0
    while index < len(part):
        char = part[index]
        if char == "\\" and index + 1 < len(part):
            out.append(re.escape(part[index + 1]))
            index += 2
            continue
        if char == "*":
            while index + 1 < len(part) and part[index + 1] == "*":  # `a**b` is `a*b`, as in gitignore
                index += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)
