"""Whether a client of a library is already open around a statement (stdlib only).

HTP103 and HTP104 hoist a client above a loop; where one of the same library is open there already (a `with
requests.Session() as s:` around the loop, or `s = requests.Session()` earlier in the function) the hoisted
client would be a second, nested one: two pools, cookies split between them, and nothing gained. RULES.md says
such sites get no fix.
"""

from __future__ import annotations

import ast
from typing import Mapping, Optional

from ..bindings import dotted_name
from ..libraries import CLIENT_CONSTRUCTORS, canonical

_BARRIERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# A client class that is another library's client underneath counts as that library.
_FAMILY = {"requests_futures": "requests"}


def client_family(expr: Optional[ast.AST], imports: Mapping[str, str]) -> Optional[str]:
    """The library of the client `expr` constructs (`requests.Session()` -> "requests"), or None."""
    if not isinstance(expr, ast.Call):
        return None
    name = dotted_name(expr.func)
    if not name:
        return None
    head, _, rest = name.partition(".")
    if head not in imports:
        return None
    qualified = canonical(imports[head] + ("." + rest if rest else ""))
    if qualified not in CLIENT_CONSTRUCTORS:
        return None
    root = qualified.split(".", 1)[0]
    return _FAMILY.get(root, root)


def family_of(call: ast.Call, library: object, imports: Mapping[str, str]) -> Optional[str]:
    """The library of the client a finding's call makes: the constructor's, else the one the engine names
    (a factory call, `make_session()`, whose constructor sits in another function)."""
    family = client_family(call, imports)
    if family is None and isinstance(library, str) and library:
        root = library.split(".", 1)[0]
        family = _FAMILY.get(root, root)
    return family


def client_open_around(node: ast.AST, parents: Mapping[ast.AST, ast.AST], family: str,
                       imports: Mapping[str, str]) -> bool:
    """Whether a client of `family` is open where `node` runs: an enclosing `with` of one, or a statement
    binding one earlier in an enclosing block of the same function (or of the module, at module level)."""
    current: ast.AST = node
    while True:
        parent = parents.get(current)
        if parent is None:
            return False
        if isinstance(parent, (ast.With, ast.AsyncWith)) and current in parent.body:
            if any(client_family(item.context_expr, imports) == family for item in parent.items):
                return True
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and current in block:
                for earlier in block[: block.index(current)]:
                    if _binds_client(earlier, family, imports):
                        return True
        if isinstance(parent, _BARRIERS):
            return False  # the function's own body was the last block to look in
        current = parent


def _binds_client(stmt: ast.stmt, family: str, imports: Mapping[str, str]) -> bool:
    """`s = requests.Session()` (or annotated) as a statement of its own."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return client_family(stmt.value, imports) == family
    return False
