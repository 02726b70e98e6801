"""Which HTP301 findings the adapter fix can rewrite, and where the mounts go (stdlib only, no libcst).

The fix mounts `HTTPAdapter(pool_connections=N, pool_maxsize=N)` for `http://` and `https://` on the shared
session right after the statement that binds it (first in the body of a `with ... as session:`), N the most
workers any reported pool runs on it.
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from .positions import char_column
from .htp101_sites import identifiers_in

# The adapter module of each session library (requests_futures' FuturesSession is a requests.Session).
# Not niquests: its Session mounts adapters configured from the session (retries, resolver, HTTP/3 cache,
# disabled protocol versions), and a plain HTTPAdapter would silently drop that configuration.
_ADAPTER_MODULES = {"requests.Session": "requests.adapters"}
_ADAPTER = "HTTPAdapter"


class AdapterMount(NamedTuple):
    """Mounts to add for one session: after its binding statement, or first in its `with` body."""

    statement: Tuple[int, int]  # the binding statement's start (libcst units: line, character column)
    in_with_body: bool
    target: str  # the session as written (`session`, `self.session`)
    workers: int
    adapter_module: str  # where HTTPAdapter comes from
    adapter_name: str  # the name the adapter class is reached through
    import_needed: bool  # `from <adapter_module> import HTTPAdapter [as adapter_name]` is to be added
    findings: int  # how many findings these mounts fix


def _dotted(expr: ast.expr) -> Optional[str]:
    """`session`: a target the mounts can name. Not `self.session`: the engine reads mounts on plain names
    only, so it would go on reporting the site after the fix."""
    if isinstance(expr, ast.Name):
        return expr.id
    return None


def _binding_count(tree: ast.Module, name: str) -> int:
    """How many places bind `name` (imports, assignments, defs, parameters) anywhere in the module."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".", 1)[0]) == name:
            count += 1
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.id == name:
            count += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            count += 1
        elif isinstance(node, ast.arg) and node.arg == name:
            count += 1
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            count += 1
    return count


def adapter_reference(tree: ast.Module, module: str) -> Tuple[str, bool]:
    """The name to call HTTPAdapter by, and whether to import it: an existing module-level
    `from <module> import HTTPAdapter [as X]` whose name nothing else binds, else a free name to import."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module == module:
            for alias in stmt.names:
                if alias.name == _ADAPTER:
                    name = alias.asname or alias.name
                    if _binding_count(tree, name) == 1:
                        return name, False
    taken = identifiers_in(tree)
    for name in (_ADAPTER, "PoolAdapter", "SizedHTTPAdapter"):
        if name not in taken:
            return name, True
    number = 2
    while f"{_ADAPTER}_{number}" in taken:
        number += 1
    return f"{_ADAPTER}_{number}", True


def _span(node: ast.AST) -> Tuple[int, int, int, int]:
    line, col = getattr(node, "lineno"), getattr(node, "col_offset")
    return (line, col, getattr(node, "end_lineno", None) or line, getattr(node, "end_col_offset", None) or 0)


class _Sites:
    """Statements and calls by their `ast` span, and each node's parent."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.statements: Dict[Tuple[int, int, int, int], ast.stmt] = {}
        self.calls: Dict[Tuple[int, int, int, int], ast.Call] = {}
        self.parents: Dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            if isinstance(node, ast.stmt):
                self.statements[_span(node)] = node
            elif isinstance(node, ast.Call):
                self.calls[_span(node)] = node


def _session_passed(sites: _Sites, finding: Finding) -> bool:
    """`FuturesSession(session=s)` (or its third positional argument): the pool to size is `s`'s."""
    call = sites.calls.get((finding.line, finding.col, finding.end_line, finding.end_col))
    if call is None:
        return True
    passed = [kw.value for kw in call.keywords if kw.arg == "session"]
    passed += call.args[2:3]
    return any(not (isinstance(v, ast.Constant) and v.value is None) for v in passed)


def _binding_scope(sites: _Sites, stmt: ast.stmt, target: str) -> ast.AST:
    """Where the session's name lives: the function whose body binds it (nested defs included, as they may
    mount on it), or the whole module for a module-level or `global` binding. Another function's session of
    the same name is another session: its mounts say nothing of this one."""
    node: ast.AST = stmt
    while node in sites.parents:
        node = sites.parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            declared = any(
                isinstance(sub, (ast.Global, ast.Nonlocal)) and target in sub.names for sub in ast.walk(node)
            )
            return sites.tree if declared else node
    return sites.tree


def _mounted_already(scope_body: Sequence[ast.AST], target: str) -> bool:
    """Whether the session is mounted on anywhere: an adapter mounted later would replace ours, and
    replacing the user's adapter (retries, its own sizes) would change what the program does."""
    for root in scope_body:
        for node in ast.walk(root):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "mount":
                if _dotted(node.func.value) == target:
                    return True
    return False


def _starts_its_line(lines: Sequence[str], stmt: ast.stmt) -> bool:
    """The statement starts its own line (not `if x: s = Session()`, not after a `;`)."""
    text = lines[stmt.lineno - 1] if 0 < stmt.lineno <= len(lines) else ""
    return text.encode("utf-8")[: stmt.col_offset].decode("utf-8", errors="ignore").strip() == ""


def _session_target(stmt: ast.stmt, finding: Finding) -> Tuple[Optional[str], bool]:
    """The session as the mounts name it, and whether the statement is a `with` (mounts go into its body)."""
    details = finding.details
    wanted = details.get("session_name")
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        if isinstance(stmt, ast.AsyncWith):
            return None, False
        for item in stmt.items:
            name = _dotted(item.optional_vars) if item.optional_vars is not None else None
            if name is not None and (wanted is None or name == wanted):
                return name, True
        return None, False
    if isinstance(stmt, ast.Assign):
        targets = [_dotted(t) for t in stmt.targets]
        names = [t for t in targets if t is not None]
        if wanted is not None:
            return (wanted, False) if wanted in names else (None, False)
        if len(names) == 1:
            return names[0], False
        return None, False
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        name = _dotted(stmt.target)
        if name is not None and (wanted is None or name == wanted):
            return name, False
    return None, False


def plan_adapter_mounts(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str],
    facts: FixFacts = NO_FACTS,
) -> List[AdapterMount]:
    """The mounts to add, one entry per session; sites whose binding statement cannot be used are left alone."""
    sites = _Sites(tree)
    grouped: Dict[Tuple[Tuple[int, int], str], List[Tuple[Finding, bool, str]]] = {}
    statements: Dict[Tuple[int, int], ast.stmt] = {}
    for finding in findings:
        details = finding.details
        span = details.get("session_statement") if details else None
        if finding.code != "HTP301" or not span:
            continue
        if details.get("futures_session") and _session_passed(sites, finding):
            continue  # its requests go through the session handed to it, which the finding does not name
        stmt = sites.statements.get(tuple(span))  # type: ignore[arg-type]
        if stmt is None or not _starts_its_line(lines, stmt):
            continue
        target, in_with = _session_target(stmt, finding)
        if target is None:
            continue
        if in_with and isinstance(stmt, ast.With) and stmt.body[0].lineno == stmt.lineno:
            continue  # `with S() as s: work(s)`: no block to put the mounts in
        client = str(details.get("client") or "requests.Session")
        module = _ADAPTER_MODULES.get(client)
        if module is None:
            continue
        key = ((stmt.lineno, stmt.col_offset), target)
        statements[key[0]] = stmt
        grouped.setdefault(key, []).append((finding, in_with, module))
    plans: List[AdapterMount] = []
    for (start, target), entries in grouped.items():
        stmt = statements[start]
        modules = {module for _, _, module in entries}
        if len(modules) != 1:
            continue
        module = modules.pop()
        if _mounted_already([_binding_scope(sites, stmt, target)], target):
            continue
        workers = max(int(f.details["workers"]) for f, _, _ in entries)
        name, needed = adapter_reference(tree, module)
        plans.append(
            AdapterMount(
                (start[0], char_column(lines, start[0], start[1])),
                entries[0][1],
                target,
                workers,
                module,
                name,
                needed,
                len(entries),
            )
        )
    return plans
