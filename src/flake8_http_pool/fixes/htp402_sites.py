"""Which HTP402 findings the move-the-patch fix can rewrite, and what it moves (stdlib only, no libcst).

A late monkey-patch is moved, with the imports it is reached through, to the top of the module (after the
docstring and the `from __future__` imports). Only module-level statements that do nothing but patch are
moved: a patch inside a function or an `if` runs when its author chose, and moving it would change that.
It only moves within the module's leading block of imports: it never jumps a statement that is not an import
(`sys.path.insert(...)`, `os.environ[...] = ...`), which may change what the imports below it load.
"""

from __future__ import annotations

import ast
from typing import List, NamedTuple, Optional, Sequence, Set, Tuple

from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from .positions import char_column

# Modules a moved import may bring along: importing them before the patch is what gevent itself asks for.
_PATCH_MODULES = ("gevent", "grequests")


class PatchMove(NamedTuple):
    """The module-level statements to move to the top, in source order (libcst units: line, character column)."""

    starts: Tuple[Tuple[int, int], ...]
    reported: Tuple[Tuple[int, int], ...]  # the moved statements that are findings (not the imports they need)


def _is_patch_module(name: Optional[str]) -> bool:
    return bool(name) and any(name == m or name.startswith(m + ".") for m in _PATCH_MODULES)  # type: ignore[union-attr]


def _only_patch_imports(stmt: ast.stmt) -> bool:
    """An import statement that imports gevent / grequests and nothing else (moving it moves nothing more)."""
    if isinstance(stmt, ast.Import):
        return all(_is_patch_module(alias.name) for alias in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return stmt.level == 0 and _is_patch_module(stmt.module)
    return False


def _is_import(stmt: ast.stmt) -> bool:
    """An import, or an `if` / `try` that only imports (`try: import ujson as json except ImportError: ...`,
    `if TYPE_CHECKING: ...`): the only statements a patch may be moved above. Anything else may change what the
    imports after it find (`sys.path.insert(...)`, `os.environ[...] = ...`, a config call)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, (ast.If, ast.Try)) or type(stmt).__name__ == "TryStar":
        if isinstance(stmt, ast.If) and not _plain_test(stmt.test):
            return False
        handlers = getattr(stmt, "handlers", [])
        if any(h.type is not None and not _plain_test(h.type) for h in handlers):
            return False
        inner = [sub for sub in ast.walk(stmt) if isinstance(sub, ast.stmt) and sub is not stmt]
        return all(
            isinstance(sub, (ast.Import, ast.ImportFrom, ast.Pass))
            or (isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Constant)
                and all(isinstance(t, ast.Name) for t in sub.targets))
            for sub in inner
        )
    return False


def _plain_test(expr: ast.expr) -> bool:
    """A test or exception type that runs no code: names, attributes and constants (`TYPE_CHECKING`,
    `sys.version_info >= (3, 8)`, `ImportError`), no call."""
    return not any(isinstance(node, (ast.Call, ast.NamedExpr, ast.Await)) for node in ast.walk(expr))


def _bound_names(stmt: ast.stmt) -> Set[str]:
    names: Set[str] = set()
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            names.add(alias.asname or alias.name.split(".", 1)[0])
    return names


def _base_name(func: ast.expr) -> Optional[str]:
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else None


def _literal_arguments(call: ast.Call) -> bool:
    """`patch_all(thread=False)`: arguments that need no name, so the call can run before anything else."""
    try:
        for arg in [*call.args, *(kw.value for kw in call.keywords)]:
            if isinstance(arg, ast.Starred):
                return False
            ast.literal_eval(arg)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return all(kw.arg is not None for kw in call.keywords)


def _module_rebinds(tree: ast.Module, name: str, imports: Sequence[ast.stmt]) -> bool:
    """Whether anything at module level but `imports` binds `name` (then which binding the call sees may change)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name and node in tree.body:
                return True
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.id == name:
            return True
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and node not in imports and name in _bound_names(node):
            return True
        elif isinstance(node, ast.Global) and name in node.names:
            return True
    return False


def _header_length(tree: ast.Module) -> int:
    """How many statements open the module and stay first: the docstring and the `from __future__` imports."""
    count = 0
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            count = 1
    while count < len(body) and isinstance(body[count], ast.ImportFrom) and body[count].module == "__future__":
        count += 1
    return count


def _shares_a_line(tree: ast.Module, moved: Sequence[ast.stmt]) -> bool:
    """A moved statement sharing a line with one that stays (`import os; import grequests`) cannot move alone."""
    lines = {line for stmt in moved for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)}
    for stmt in tree.body:
        if stmt in moved:
            continue
        if any(line in lines for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)):
            return True
    return False


def plan_patch_moves(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str],
    facts: FixFacts = NO_FACTS,
) -> List[PatchMove]:
    """One move for the module when every reported patch can move; nothing when any of them cannot.

    Moving only some of the patches would leave the others where they were, so the module is either fixed
    as a whole or left to the reader.
    """
    body = tree.body
    by_start = {(stmt.lineno, stmt.col_offset): stmt for stmt in body}
    moved: List[ast.stmt] = []
    reported: List[ast.stmt] = []
    for finding in findings:
        if finding.code != "HTP402":
            continue
        stmt = by_start.get((finding.line, finding.col))
        if stmt is None:
            return []  # inside a function, an `if`, a `try`: it runs when its author chose
        reported.append(stmt)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if not _only_patch_imports(stmt):
                return []
            if stmt not in moved:
                moved.append(stmt)
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not _literal_arguments(call):
            return []  # `x = patch_all()`, `patch_all(**cfg)`: the statement does more than patch
        name = _base_name(call.func)
        if name is None:
            return []
        imports = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom)) and name in _bound_names(s)]
        if not imports or not all(_only_patch_imports(s) for s in imports) or _module_rebinds(tree, name, imports):
            return []
        for s in imports:
            if s not in moved:
                moved.append(s)
        moved.append(stmt)
    if not moved:
        return []
    header = _header_length(tree)
    if any(body.index(stmt) < header for stmt in moved) or _shares_a_line(tree, moved):
        return []
    last = max(body.index(stmt) for stmt in moved)
    if not all(_is_import(stmt) for stmt in body[header:last] if stmt not in moved):
        return []  # the patch would jump over `sys.path.insert(...)` / `os.environ[...] = ...`: report only
    moved.sort(key=lambda s: (s.lineno, s.col_offset))

    def start(stmt: ast.stmt) -> Tuple[int, int]:
        return (stmt.lineno, char_column(lines, stmt.lineno, stmt.col_offset))

    return [PatchMove(tuple(start(s) for s in moved), tuple(start(s) for s in reported))]
