"""HTP401-HTP402: gevent monkey-patching that pyOpenSSL, or a patch that comes too late, undoes."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, List, Optional, Tuple

from ..finding import Hit
from ..libraries import canonical
from ..walk import Ctx, ImportSite

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

_PATCHES = frozenset({"gevent.monkey.patch_all", "gevent.monkey.patch_socket", "gevent.monkey.patch_ssl"})
_PYOPENSSL = "urllib3.contrib.pyopenssl"
_INJECT = _PYOPENSSL + ".inject_into_urllib3"
_EXTRACT = _PYOPENSSL + ".extract_from_urllib3"
# Modules that keep blocking objects when imported before gevent patches.
_BLOCKING_MODULES = ("requests", "urllib3", "httpx", "ssl", "socket", "http.client", "urllib.request")

Site = Tuple[Tuple[int, int], ast.AST, str]


def _imports(site: ImportSite, module: str) -> bool:
    return any(m == module or m.startswith(module + ".") for m in (canonical(x) for x in site.modules))


def _lib_calls(analysis: "Analysis", names) -> List[Tuple[ast.Call, str, Ctx]]:
    out = []
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call.func, ctx.scope)
        if meaning is not None and meaning.kind == "lib" and meaning.qual in names:
            out.append((call, meaning.qual, ctx))
    return out


def _patch_sites(analysis: "Analysis") -> List[Site]:
    sites: List[Site] = [
        ((call.lineno, call.col_offset), call, f"{qual}()") for call, qual, _ in _lib_calls(analysis, _PATCHES)
    ]
    for site in analysis.facts.imports:
        if _imports(site, "grequests"):
            sites.append(((site.node.lineno, site.node.col_offset), site.node, "import grequests"))
    return sorted(sites, key=lambda s: s[0])


def gevent_with_pyopenssl(analysis: "Analysis") -> Iterator[Hit]:
    if not _patch_sites(analysis):
        return
    if _lib_calls(analysis, {_EXTRACT}):
        return
    injections: List[Site] = []
    for site in analysis.facts.imports:
        if _imports(site, _PYOPENSSL):
            injections.append(((site.node.lineno, site.node.col_offset), site.node, "importing urllib3.contrib.pyopenssl"))
    for call, _, _ in _lib_calls(analysis, {_INJECT}):
        injections.append(((call.lineno, call.col_offset), call, "inject_into_urllib3()"))
    if injections:
        _, node, what = min(injections, key=lambda s: s[0])
        yield Hit(node, {"what": what}, {})


def _under_type_checking(analysis: "Analysis", node: ast.AST) -> bool:
    parent = analysis.parent(node)
    while parent is not None and not isinstance(parent, ast.Module):
        if isinstance(parent, ast.If):
            test = parent.test
            name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
            if name == "TYPE_CHECKING":
                return True
        parent = analysis.parent(parent)
    return False


def _first_blocking_import(analysis: "Analysis") -> Optional[Tuple[Tuple[int, int], str]]:
    first: Optional[Tuple[Tuple[int, int], str]] = None
    for site in analysis.facts.imports:
        if site.ctx.func is not None or site.ctx.scope.kind != "module":
            continue
        for module in _BLOCKING_MODULES:
            if _imports(site, module) and not _under_type_checking(analysis, site.node):
                pos = (site.node.lineno, site.node.col_offset)
                if first is None or pos < first[0]:
                    first = (pos, module)
                break
    return first


def late_monkey_patch(analysis: "Analysis") -> Iterator[Hit]:
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
        yield Hit(node, {"patch": what, "module": module, "line": import_pos[0]}, {"import_line": import_pos[0]})
