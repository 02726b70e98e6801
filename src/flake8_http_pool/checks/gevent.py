"""HTP401-HTP402: gevent monkey-patching that pyOpenSSL, or a patch that comes too late, undoes."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, AbstractSet, Iterator, List, Optional, Tuple

from ..finding import Hit
from ..libraries import canonical
from ..walk import Ctx, ImportSite

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

_PATCHES = frozenset({"gevent.monkey.patch_all", "gevent.monkey.patch_socket", "gevent.monkey.patch_ssl"})
_PYOPENSSL = "urllib3.contrib.pyopenssl"
_INJECT = _PYOPENSSL + ".inject_into_urllib3"
_EXTRACT = _PYOPENSSL + ".extract_from_urllib3"
_IMPORT_MODULE = frozenset({"importlib.import_module"})
# Modules that keep blocking objects when imported before gevent patches (RULES.md names them; submodules count).
_BLOCKING_MODULES = ("requests", "urllib3", "httpx", "ssl", "socket", "http.client", "urllib.request")

Pos = Tuple[int, int]
Site = Tuple[Pos, ast.AST, str]


def _pos(node: ast.AST) -> Pos:
    return (node.lineno, node.col_offset)


def _is_module(name: str, module: str) -> bool:
    """`name` is `module` or one of its submodules (`requests_toolbelt` is not `requests`)."""
    name = canonical(name)
    return name == module or name.startswith(module + ".")


def _imports(site: ImportSite, module: str) -> bool:
    return any(_is_module(m, module) for m in site.modules)


def _alias_positions(site: ImportSite, module: str) -> List[Pos]:
    """Where, inside one import statement, `module` is imported: `import os, socket` imports socket at its alias.

    `from m import a, b` imports `m` before binding any name, so the statement's own start counts.
    Python 3.9's aliases carry no position: there the statement's column plus the alias's index keeps the
    aliases in order (each alias takes at least one character, so this never passes the statement's end).
    """
    node = site.node
    if isinstance(node, ast.Import):
        return [
            (getattr(alias, "lineno", node.lineno), getattr(alias, "col_offset", node.col_offset + index))
            for index, alias in enumerate(node.names)
            if _is_module(alias.name, module)
        ]
    return [_pos(node)] if _imports(site, module) else []


def _lib_calls(analysis: "Analysis", names: AbstractSet[str]) -> List[Tuple[ast.Call, str, Ctx]]:
    out = []
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call.func, ctx.scope)
        if meaning is not None and meaning.kind == "lib" and meaning.qual in names:
            out.append((call, meaning.qual, ctx))
    return out


def _dynamic_imports(analysis: "Analysis", module: str) -> List[ast.Call]:
    """`importlib.import_module("urllib3.contrib.pyopenssl")` imports the module as surely as a statement."""
    out = []
    for call, _, _ in _lib_calls(analysis, _IMPORT_MODULE):
        arg = call.args[0] if call.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _is_module(arg.value, module):
            out.append(call)
    return out


def _patch_sites(analysis: "Analysis") -> List[Site]:
    """Every gevent monkey-patch: a `patch_all/patch_socket/patch_ssl` call, or an import of grequests."""
    if not any(_imports(site, m) for site in analysis.facts.imports for m in ("gevent", "grequests", "importlib")):
        return []  # nothing can reach gevent: skip resolving every call of the module
    sites: List[Site] = [(_pos(call), call, f"{qual}()") for call, qual, _ in _lib_calls(analysis, _PATCHES)]
    for site in analysis.facts.imports:
        for pos in _alias_positions(site, "grequests"):
            sites.append((pos, site.node, "import grequests"))
    return sorted(sites, key=lambda s: s[0])


def _injection_sites(analysis: "Analysis") -> List[Site]:
    """Every pyOpenSSL import (statement or importlib) and every `inject_into_urllib3()` call, in source order."""
    sites: List[Site] = []
    for site in analysis.facts.imports:
        if _imports(site, _PYOPENSSL):
            sites.append((_pos(site.node), site.node, "importing urllib3.contrib.pyopenssl"))
    for call in _dynamic_imports(analysis, _PYOPENSSL):
        sites.append((_pos(call), call, "importing urllib3.contrib.pyopenssl"))
    for call, _, _ in _lib_calls(analysis, {_INJECT}):
        sites.append((_pos(call), call, "inject_into_urllib3()"))
    return sorted(sites, key=lambda s: s[0])


def gevent_with_pyopenssl(analysis: "Analysis") -> Iterator[Hit]:
    """HTP401: once per module, at the first pyOpenSSL import or injection, when the module also patches with gevent.

    `extract_from_urllib3()` undoes the injection only when it comes after the last injection in the module;
    one written before an injection (or an import that injects) leaves pyOpenSSL in place.
    """
    if not _patch_sites(analysis):
        return
    injections = _injection_sites(analysis)
    if not injections:
        return
    extracts = [_pos(call) for call, _, _ in _lib_calls(analysis, {_EXTRACT})]
    if extracts and max(extracts) > injections[-1][0]:
        return
    _, node, what = injections[0]
    yield Hit(node, {"what": what}, {})


def _in_type_checking_body(analysis: "Analysis", node: ast.AST) -> bool:
    """`node` sits in the body of an `if TYPE_CHECKING:` (its `else` runs, so it does not count)."""
    child = node
    parent = analysis.parent(node)
    while parent is not None and not isinstance(parent, ast.Module):
        if isinstance(parent, ast.If) and any(stmt is child for stmt in parent.body):
            test = parent.test
            name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
            if name == "TYPE_CHECKING":
                return True
        child = parent
        parent = analysis.parent(parent)
    return False


def _first_blocking_import(analysis: "Analysis") -> Optional[Tuple[Pos, str]]:
    """The first module-level import of a module that keeps blocking objects, with that module's name."""
    first: Optional[Tuple[Pos, str]] = None
    for site in analysis.facts.imports:
        if site.ctx.func is not None or site.ctx.scope.kind != "module":
            continue
        if _in_type_checking_body(analysis, site.node):
            continue
        for module in _BLOCKING_MODULES:
            for pos in _alias_positions(site, module):
                if first is None or pos < first[0]:
                    first = (pos, module)
    return first


def late_monkey_patch(analysis: "Analysis") -> Iterator[Hit]:
    """HTP402: every monkey-patch when the module imported a blocking module at module level before patching."""
    patches = _patch_sites(analysis)
    if not patches:
        return
    blocking = _first_blocking_import(analysis)
    if blocking is None:
        return
    import_pos, module = blocking
    if patches[0][0] < import_pos:
        return  # patched before anything blocking was imported
    for pos, node, what in patches:
        if pos > import_pos:
            yield Hit(node, {"patch": what, "module": module, "line": import_pos[0]}, {"import_line": import_pos[0]})
