"""HTP401 on dependency files: gevent or grequests declared together with an automatic pyOpenSSL injection.

RULES.md: where `grequests` or `gevent` is declared together with `requests[security]`, `urllib3[secure]`, or
`pyopenssl` beside a `requests` pinned or capped below 2.24, in `requirements*.txt`, `pyproject.toml`,
`setup.cfg` or `setup.py`, HTP401 is reported once per file at the line of the injecting requirement.
Files are parsed (TOML, INI, `ast`), never executed.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import sys
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import Specifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .bindings import callee_name
from .finding import Finding
from .source_files import SourceError, parse_source, read_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

CODE = "HTP401"
_GEVENT = frozenset({"gevent", "grequests"})
# requests stopped injecting pyOpenSSL by itself in 2.24 (it injects only where `ssl` lacks SNI).
_FIRST_SAFE_REQUESTS = Version("2.24")


class Declared(NamedTuple):
    """One requirement string of a dependency file, with the line it is written on."""

    requirement: Requirement
    line: int


def check_dependency_file(path: str, text: str) -> List[Finding]:
    """HTP401 findings of a dependency file (at most one). Raises SourceError for a file that does not parse."""
    finding = _gevent_with_injection(_declared(path, text))
    return [finding] if finding is not None else []


def _declared(path: str, text: str) -> List[Declared]:
    name = os.path.basename(path)
    if name == "pyproject.toml":
        return list(_from_pyproject(text))
    if name == "setup.cfg":
        return list(_from_setup_cfg(text))
    if name == "setup.py":
        return list(_from_setup_py(text, path))
    return list(_from_requirements_txt(text))


def declared_requirements(path: str) -> List[Requirement]:
    """The requirements a dependency file declares; none for a file that cannot be read or parsed."""
    try:
        text = read_bytes(path, 4 * 1024 * 1024).decode("utf-8", "replace")
        return [item.requirement for item in _declared(path, text)]
    except SourceError:
        return []  # unreadable, over 4 MB, or no regular file (a FIFO committed as requirements.txt)


def _gevent_with_injection(declared: List[Declared]) -> Optional[Finding]:
    names = {canonicalize_name(d.requirement.name) for d in declared}
    if not names & _GEVENT:
        return None
    old_requests = any(
        canonicalize_name(d.requirement.name) == "requests" and _capped_below(d.requirement.specifier, _FIRST_SAFE_REQUESTS)
        for d in declared
    )
    injecting: List[Tuple[int, str]] = []
    for item in declared:
        req = item.requirement
        name = canonicalize_name(req.name)
        extras = {canonicalize_name(extra) for extra in req.extras}
        if name == "requests" and "security" in extras:
            injecting.append((item.line, "requests[security]"))
        elif name == "urllib3" and "secure" in extras:
            injecting.append((item.line, "urllib3[secure]"))
        elif name == "pyopenssl" and old_requests:
            injecting.append((item.line, "pyopenssl beside requests < 2.24"))
    if not injecting:
        return None
    line, what = min(injecting)
    gevent = sorted(names & _GEVENT)[0]
    message = (
        f"{what} with {gevent} injects pyOpenSSL into urllib3, and under gevent every HTTPS read then blocks the "
        "whole hub; drop the injecting requirement (requests >= 2.24 needs no pyOpenSSL)"
    )
    return Finding(CODE, line, 0, line, 0, message, {"requirement": what, "gevent": gevent})


def _capped_below(specifiers: SpecifierSet, limit: Version) -> bool:
    """True when no version >= `limit` satisfies `specifiers` (a pin `==2.23.0`, a cap `<2.24`, `~=2.22.0`)."""
    for spec in specifiers:
        bound = _upper_bound(spec)
        if bound is not None and bound <= limit:
            return True
    return False


def _upper_bound(spec: Specifier) -> Optional[Version]:
    """An exclusive upper bound the specifier puts on versions, or None where it puts none."""
    operator, version = spec.operator, spec.version
    try:
        if operator in ("==", "===") and version.endswith(".*"):
            release = Version(version[:-2]).release
            return Version(".".join(map(str, release[:-1] + (release[-1] + 1,))))
        parsed = Version(version)
    except InvalidVersion:
        return None
    if operator == "<":
        return parsed
    if operator in ("<=", "==", "==="):
        # Anything above a pin or an inclusive cap is excluded: the next release bounds it.
        return Version(".".join(map(str, parsed.release[:-1] + (parsed.release[-1] + 1,)))) if parsed.release else None
    if operator == "~=":
        release = parsed.release[:-1]
        return Version(".".join(map(str, release[:-1] + (release[-1] + 1,)))) if release else None
    return None


def _requirement(text: str) -> Optional[Requirement]:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None  # a URL, a local path or a typo: not one of the names this rule looks for
    except RecursionError:
        return None  # markers nested thousands deep: a recent packaging refuses them, an older one may recurse


# -- requirements*.txt -------------------------------------------------------------------------------
_COMMENT = re.compile(r"(^|\s)#.*$")


def _from_requirements_txt(text: str) -> Iterator[Declared]:
    """Requirements of a pip requirements file: comments, continuations and option lines handled."""
    logical = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not logical:
            start = number
        line = _COMMENT.sub("", raw)
        if line.endswith("\\"):
            logical += line[:-1]
            continue
        logical += line
        item = logical.strip()
        logical = ""
        if not item or item.startswith("-"):  # -r, -c, -e, --index-url ...: not a requirement of this file
            continue
        # pip accepts per-requirement options after the specifier (`--hash=...`); they are not PEP 508.
        item = re.split(r"\s--?[a-z]", item, maxsplit=1)[0].strip()
        req = _requirement(item)
        if req is not None:
            yield Declared(req, start)


# -- pyproject.toml ----------------------------------------------------------------------------------
def _from_pyproject(text: str) -> Iterator[Declared]:
    """`[project] dependencies`, `[project.optional-dependencies]` and `[dependency-groups]`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SourceError(f"invalid TOML: {error}") from None
    except RecursionError:  # the parser recurses per nested array or table: `a = [[[...]]]` 3,000 deep
        raise SourceError("invalid TOML: nested too deeply (recursion limit reached)") from None
    project = data.get("project", {})
    strings: List[str] = []
    if isinstance(project, dict):
        strings += _strings(project.get("dependencies"))
        optional = project.get("optional-dependencies", {})
        if isinstance(optional, dict):
            for group in optional.values():
                strings += _strings(group)
    groups = data.get("dependency-groups", {})
    if isinstance(groups, dict):
        for group in groups.values():
            strings += _strings(group)
    yield from _located(strings, text)


def _strings(value: object) -> List[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _located(strings: List[str], text: str) -> Iterator[Declared]:
    """Each requirement string with the first line that holds it (TOML and INI parsers give no lines)."""
    lines = text.splitlines()
    for item in strings:
        req = _requirement(item)
        if req is None:
            continue
        number = next((i for i, line in enumerate(lines, start=1) if item in line), 1)
        yield Declared(req, number)


# -- setup.cfg ---------------------------------------------------------------------------------------
def _from_setup_cfg(text: str) -> Iterator[Declared]:
    """`[options] install_requires` and every `[options.extras_require]` entry."""
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as error:
        raise SourceError(f"invalid setup.cfg: {error.message if hasattr(error, 'message') else error}") from None
    values: List[str] = []
    if parser.has_option("options", "install_requires"):
        values.append(parser.get("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        values += [value for _, value in parser.items("options.extras_require")]
    strings: List[str] = []
    for value in values:
        # setuptools' rule: a multi-line value holds one requirement per line (markers may use ";"),
        # a one-line value is a ";"-separated list.
        value = value.strip()
        parts = value.splitlines() if "\n" in value else value.split(";")
        strings += [part.strip() for part in parts if part.strip() and not part.strip().startswith("#")]
    yield from _located(strings, text)


# -- setup.py ----------------------------------------------------------------------------------------
def _from_setup_py(text: str, path: str) -> Iterator[Declared]:
    """String literals of `install_requires=[...]` / `extras_require={...: [...]}` in a `setup(...)` call.

    A name is followed to a module-level assignment of a literal list; anything computed is left alone,
    since the file is never run.
    """
    tree = parse_source(text, path)
    assigned: Dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            assigned[stmt.targets[0].id] = stmt.value
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or callee_name(node.func) != "setup":
            continue
        for keyword in node.keywords:
            value = keyword.value
            if isinstance(value, ast.Name):
                value = assigned.get(value.id, value)
            if keyword.arg == "install_requires":
                yield from _literal_requirements(value)
            elif keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                for group in value.values:
                    if isinstance(group, ast.Name):
                        group = assigned.get(group.id, group)
                    yield from _literal_requirements(group)


def _literal_requirements(value: ast.expr) -> Iterator[Declared]:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):  # "a\nb" (setuptools accepts it)
        elements: List[ast.expr] = [value]
    elif isinstance(value, (ast.List, ast.Tuple)):
        elements = list(value.elts)
    else:
        return
    for element in elements:
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            for offset, line in enumerate(element.value.splitlines()):
                req = _requirement(line.strip()) if line.strip() else None
                if req is not None:
                    yield Declared(req, element.lineno + offset)
