"""Which HTP103 findings (a client built in every iteration) can be hoisted above their loop (stdlib only).

The engine says `hoistable` when the constructor's arguments use no name the loop binds and the loop neither
configures the client (`s.auth = ...`, `s.headers[...] = ...`, `s.mount(...)`) nor rebinds it. The planner adds
what the rewrite needs: the loop is a `for`/`while` statement, the client is made by `with C() as s:` or
`s = C()` standing in that loop's own body (not in a nested function), an assigned client is never closed
in the loop (closing the one shared client would break the next iteration), and no client of the same library
is open around the loop already (hoisting would nest a second one: RULES.md, "Fix safety").
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from ..bindings import import_names
from .enclosing_clients import client_open_around, family_of
from .htp101_sites import _contains, _Index, _span
from .positions import Span, char_span

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_BARRIERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class Hoist(NamedTuple):
    """Move the client statement at `statement` out of the loop at `loop`."""

    loop: Span  # libcst units
    statement: Span  # the `with` or the assignment
    constructor: Span  # the constructor call (to find the `with` item)
    is_with: bool


def _inside_loop_body(index: _Index, node: ast.AST, loop: ast.stmt) -> bool:
    """`node` runs in the loop's body (not its `else`, header, or a nested function/class)."""
    current = node
    while True:
        parent = index.parents.get(current)
        if parent is None or isinstance(parent, _BARRIERS):
            return False
        if parent is loop:
            return current in loop.body
        current = parent


def _closed_or_rebound(loop: ast.stmt, name: str) -> bool:
    stores = 0
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            stores += 1
        elif isinstance(node, ast.Attribute) and node.attr in ("close", "aclose", "__exit__", "__aexit__") \
                and _rooted_at(node.value, name):
            return True  # `s.close()`, or a class factory's `holder.session.close()`
    return stores != 1


def _rooted_at(expr: ast.AST, name: str) -> bool:
    """`expr` is `name` or an attribute chain on it (`name.session`)."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name) and expr.id == name


def _in_header(loop: ast.stmt, name: str) -> bool:
    header = [loop.test] if isinstance(loop, ast.While) else [loop.target, loop.iter]  # type: ignore[attr-defined]
    return any(isinstance(n, ast.Name) and n.id == name for part in header for n in ast.walk(part))


def plan_hoists(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str],
    facts: FixFacts = NO_FACTS,
) -> List[Hoist]:
    """One hoist per loop this round; a loop inside another planned loop waits for the next round."""
    index = _Index.of(tree)
    imports = import_names(tree)
    chosen: Dict[Tuple[int, int, int, int], Hoist] = {}
    for finding in sorted(findings, key=lambda f: (f.line, f.col)):
        details = finding.details or {}
        if finding.code != "HTP103" or not details.get("hoistable"):
            continue
        loop_span, stmt_span = details.get("loop"), details.get("statement")
        loop = index.statements.get(tuple(loop_span)) if loop_span else None  # type: ignore[arg-type]
        statement = index.statements.get(tuple(stmt_span)) if stmt_span else None  # type: ignore[arg-type]
        call = index.calls.get((finding.line, finding.col, finding.end_line, finding.end_col))
        if not isinstance(loop, _LOOPS) or statement is None or call is None or tuple(loop_span) in chosen:
            continue
        if not _inside_loop_body(index, statement, loop):
            continue
        variable: Optional[str] = None
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            item = next((i for i in statement.items if i.context_expr is call), None)
            if item is None or (item.optional_vars is not None and not isinstance(item.optional_vars, ast.Name)):
                continue
            variable = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
            is_with = True
        elif isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            variable = statement.targets[0].id
            if _closed_or_rebound(loop, variable):
                continue
            is_with = False
        else:
            continue
        if variable is not None and _in_header(loop, variable):
            continue
        family = family_of(call, details.get("library"), imports)
        if family is None or client_open_around(loop, index.parents, family, imports):
            continue  # a client of that library is open around the loop already: hoisting would nest a second
        chosen[_span(loop)] = Hoist(
            char_span(lines, _span(loop)), char_span(lines, _span(statement)), char_span(lines, _span(call)), is_with
        )
    return [h for span, h in chosen.items() if not any(_contains(other, span) for other in chosen)]
