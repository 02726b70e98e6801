"""Which HTP104 findings (a client made per call of a hot function) can become a parameter (stdlib only).

The fix: the function takes the client as its first parameter (after self/cls) instead of making it, and
each call of the function in this module gets one client made around the caller's loop or `gather`
(`async with aiohttp.ClientSession() as session: await asyncio.gather(*(fetch(session, u) for u in urls))`).
Only where the engine says every use of the function is a call in this module (`all_uses_are_calls`) and the
function does not hand the client out (`factory`); the planner also needs: the client is made by a `with`
item or a plain assignment in the function body, or nested in its `with`/`try` bodies and `if` branches
(`async with sem: async with aiohttp.ClientSession() as session: ...`, the commonest shape) where its name is
used only inside that `with` or after the assignment in the same block; its arguments use none of the
function's own names; the client is never closed or rebound; and every call can be wrapped (a coroutine is
awaited, a generator consumed, within the wrapped statement).
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from ..libraries import FAMILIES
from ..bindings import import_names
from .enclosing_clients import client_open_around, family_of
from .htp101_sites import _contains, _Index, _span, free_name
from .htp103_sites import _closed_or_rebound
from .positions import Span, char_span

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Blocks whose body runs at most once each time it is reached (an `if` in either branch).
_ONCE_BLOCKS = (ast.With, ast.AsyncWith, ast.If, ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_EAGER = frozenset({"list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "min", "max", "any", "all", "join",
                    "gather"})


class CallerWrap(NamedTuple):
    """A statement of a caller to wrap in `[async] with <constructor> as <name>:`."""

    statement: Span  # libcst units
    name: str
    calls: Tuple[Span, ...]  # calls of the function inside it: each gets `<name>` as first argument


class ClientParameter(NamedTuple):
    """The function that stops making its own client, and its callers' new clients."""

    function: Span  # the def (libcst units)
    parameter: str
    position: int  # index in the def's parameters
    creation: Span  # the `with` or the assignment statement
    constructor: Span  # the constructor call
    constructor_code: str  # its source, copied into each caller's `with`
    is_with: bool
    is_async: bool  # the caller's `with` is `async with`
    wraps: Tuple[CallerWrap, ...]


def _text(lines: Sequence[str], span: Span) -> str:
    """The source between two `ast` positions (UTF-8 byte columns)."""
    line, col, end_line, end_col = span
    if line == end_line:
        return lines[line - 1].encode("utf-8")[col:end_col].decode("utf-8")
    parts = [lines[line - 1].encode("utf-8")[col:].decode("utf-8")]
    parts += lines[line:end_line - 1]
    parts.append(lines[end_line - 1].encode("utf-8")[:end_col].decode("utf-8"))
    return "\n".join(parts)


def _bound_in(function: ast.AST) -> Set[str]:
    """The names a function binds itself (parameters and local stores)."""
    names: Set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
    return names


def _parameter_position(index: _Index, function: ast.AST) -> Optional[int]:
    """Where the client goes: first, or after self/cls for a method; None for shapes left alone."""
    args = function.args  # type: ignore[attr-defined]
    if args.posonlyargs:
        return None
    decorator_list = function.decorator_list  # type: ignore[attr-defined]
    decorators = [d.id if isinstance(d, ast.Name) else None for d in decorator_list]
    if any(d not in ("staticmethod", "classmethod") for d in decorators):
        return None  # a decorator may change how the function is called
    if isinstance(index.parents.get(function), ast.ClassDef) and "staticmethod" not in decorators:
        return 1 if args.args else None
    return 0


def _wrap_target(index: _Index, call: ast.Call, caller: ast.AST, awaited: bool) -> Optional[ast.stmt]:
    """The statement of `caller` to wrap around `call`: its outermost loop there, else its own statement."""
    node: ast.AST = call
    statement: Optional[ast.stmt] = None
    saw_await = False
    target: Optional[ast.stmt] = None
    while node is not caller:
        parent = index.parents.get(node)
        if parent is None or isinstance(parent, (ast.Lambda, ast.ClassDef)):
            return None
        if isinstance(node, ast.Await):
            saw_await = True
        if isinstance(node, ast.GeneratorExp) and statement is None:
            # `*(...)` unpacks at once; a `for` iterates it before the statement ends.
            eager = isinstance(parent, ast.Starred) or (
                isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node
            )
            if isinstance(parent, ast.Call) and node in parent.args:
                func = parent.func
                eager = (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in _EAGER
            if not eager:
                return None
        if isinstance(node, ast.stmt):
            if statement is None:
                statement = node
                if awaited and not saw_await:
                    return None  # a coroutine made here may run after the statement ends
                target = node
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                target = node
        node = parent
    return target


def _enclosing_function(
    index: _Index, statement: ast.stmt
) -> Optional[Union[ast.FunctionDef, ast.AsyncFunctionDef]]:
    """The function whose body holds `statement`, directly or through `with` / `try` bodies and `if` branches.

    Those blocks run the statement at most once per call, so the client can move to the caller; a loop, an
    `except`/`finally` clause or a `match` case does not count (None).
    """
    node: ast.AST = statement
    while True:
        parent = index.parents.get(node)
        if isinstance(parent, _FUNCTIONS):
            return parent if node in parent.body else None
        if parent is None or not isinstance(parent, _ONCE_BLOCKS):
            return None
        body: List[ast.stmt] = parent.body  # type: ignore[attr-defined]  # every _ONCE_BLOCKS type has one
        blocks = [body, parent.orelse] if isinstance(parent, ast.If) else [body]
        if not any(node in block for block in blocks):
            return None
        node = parent


def _only_used_there(index: _Index, function: ast.AST, statement: ast.stmt, variable: str) -> bool:
    """A nested client's name is read only where it exists: inside its `with`, or after its assignment in
    the same block; nowhere else in the function (nested scopes included), and never declared global."""
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        region: List[ast.stmt] = [statement]
    else:
        parent = index.parents.get(statement)
        block = next(b for b in (getattr(parent, "body", []), getattr(parent, "orelse", [])) if statement in b)
        region = block[block.index(statement):]
    inside = {id(n) for part in region for n in ast.walk(part)}
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and variable in node.names:
            return False
        if isinstance(node, ast.Name) and node.id == variable and id(node) not in inside:
            return False
    return True


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _is_script(tree: ast.Module, facts: FixFacts) -> bool:
    """A module run as a program, not imported as a library: a `__main__.py`, one with an
    `if __name__ == "__main__":` block, or one whose module-level code calls its own functions
    (`main(sys.argv[1])`, `asyncio.run(main())`): importing that runs the program, so nobody does.

    Only a module outside any package (or of unknown name) counts: a package's module is importable by its
    dotted name whatever it runs at the bottom (`pkg/cli.py` with a main block is often the package's API
    too). And a module outside any package is not a script by that alone: a flat project imports its
    modules by their bare names, so their functions may have callers the fix cannot see.
    """
    if facts.module == "__main__" or facts.module.endswith(".__main__"):
        return True
    if "." in facts.module:
        return False  # a module of a package is importable by its dotted name, main block or not
    own = {stmt.name for stmt in tree.body if isinstance(stmt, _FUNCTIONS)}
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and len(stmt.test.comparators) == 1:
            sides = [stmt.test.left, stmt.test.comparators[0]]
            names = {n.id for n in sides if isinstance(n, ast.Name)}
            values = {n.value for n in sides if isinstance(n, ast.Constant)}
            if names == {"__name__"} and values == {"__main__"} and isinstance(stmt.test.ops[0], ast.Eq):
                return True
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack: List[ast.AST] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue  # runs when called, not at import
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in own:
                return True
            stack.extend(ast.iter_child_nodes(node))
    return False


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _no_outside_callers(index: _Index, function: ast.AST, script: bool, facts: FixFacts) -> bool:
    """RULES.md: the new parameter goes only on functions nobody outside the project can call: a private
    name (its own or its class's), a function nested in another, any function of a script, or any function
    at all when the config says `application = true`. A public function or method may have callers in other
    projects, whose calls the new parameter would break; and any function another module of the project names
    (facts.named_elsewhere, known when the project model runs) may have callers this plan cannot edit."""
    node: ast.AST = function
    if facts.named_elsewhere:
        # Another module of the project names the function (or its class): a caller there would break.
        while not isinstance(node, ast.Module):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name in facts.named_elsewhere:
                return False
            node = index.scope_of(node)
    if facts.application or script:
        return True
    node = function
    while not isinstance(node, ast.Module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(node.name):
            return True
        scope = index.scope_of(node)
        if node is function and isinstance(scope, _FUNCTIONS):
            return True  # a nested function: only its enclosing function reaches it
        node = scope
    return False


def _repeats(index: _Index, use: ast.Call, target: ast.stmt) -> bool:
    """The call runs many times in the wrapped statement (a loop, a comprehension, a `gather(...)`): one
    client there serves them all. Wrapping a single call only moves the per-call client to the caller."""
    if isinstance(target, (ast.For, ast.AsyncFor, ast.While)):
        return True
    node: ast.AST = use
    while node is not target:
        parent = index.parents.get(node)
        if parent is None:
            return False
        if isinstance(parent, _COMPREHENSIONS):
            return True
        if isinstance(parent, ast.Call) and node is not parent.func:
            func = parent.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "gather":
                return True
        node = parent
    return False


class FunctionSide(NamedTuple):
    """An HTP104 finding's function, when it can take its client as a parameter (its callers aside)."""

    function: Union[ast.FunctionDef, ast.AsyncFunctionDef]
    statement: ast.stmt  # the `with` or the assignment making the client
    call: ast.Call  # the constructor call
    variable: str
    library: str
    family: Optional[str]
    is_with: bool
    is_async: bool
    position: int  # where the parameter goes among the def's
    base_name: str  # the name the constructor starts from (`requests` in `requests.Session()`)


def function_side(index: _Index, imports: Dict[str, str], finding: Finding) -> Optional[FunctionSide]:
    """The function side of HTP104's fix for `finding`, or None when its shape is left alone (see the module
    docstring): shared by the in-module plan and the plan across modules (fix_across.py)."""
    details = finding.details or {}
    if finding.code != "HTP104" or details.get("factory") or not details.get("all_uses_are_calls"):
        return None
    library = str(details.get("library", ""))
    variable = details.get("variable")
    stmt_span = details.get("statement")
    statement = index.statements.get(tuple(stmt_span)) if stmt_span else None  # type: ignore[arg-type]
    call = index.calls.get((finding.line, finding.col, finding.end_line, finding.end_col))
    if statement is None or call is None or not isinstance(variable, str) or not variable \
            or library not in FAMILIES:
        return None
    function = _enclosing_function(index, statement)
    if function is None:
        return None
    family = family_of(call, details.get("library"), imports)
    if statement not in function.body and not _only_used_there(index, function, statement, variable):
        return None
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        item = next((i for i in statement.items if i.context_expr is call), None)
        if item is None or not (isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == variable):
            return None
        if _closed_or_rebound(function, variable):
            return None  # closing a client the callers now share ends it for them too
        is_with = True
    elif isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == variable:
        if _closed_or_rebound(function, variable):
            return None
        is_with = False
    else:
        return None
    own = _bound_in(function)
    if any(isinstance(n, ast.Name) and n.id in own for n in ast.walk(call)):
        return None  # the constructor uses the function's own names: callers cannot build it
    if variable in {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}:
        return None
    position = _parameter_position(index, function)
    if position is None:
        return None
    is_async = FAMILIES[library].is_async or isinstance(statement, ast.AsyncWith)
    base = call.func
    while isinstance(base, ast.Attribute):
        base = base.value
    base_name = base.id if isinstance(base, ast.Name) else ""
    return FunctionSide(function, statement, call, variable, library, family, is_with, is_async, position,
                        base_name)


def plan_client_parameters(
    findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str], facts: FixFacts = NO_FACTS
) -> List[ClientParameter]:
    """The functions to give a client parameter this round (one finding per function)."""
    index = _Index.of(tree)
    imports = import_names(tree)
    script = _is_script(tree, facts)
    plans: List[ClientParameter] = []
    used_functions: Set[ast.AST] = set()
    wrapped: List[Tuple[int, int, int, int]] = []
    for finding in sorted(findings, key=lambda f: (f.line, f.col)):
        details = finding.details or {}
        if details.get("hot_path"):
            # Hot because of a call in another module (the project model's seed): its callers there are
            # threaded by fix_across.py, which edits every file involved or none.
            continue
        side = function_side(index, imports, finding)
        if side is None or side.function in used_functions:
            continue
        if not _no_outside_callers(index, side.function, script, facts):
            continue  # a public signature: report only
        function, statement, call, variable, library, family, is_with, is_async, position, base_name = side

        targets: Dict[ast.stmt, List[ast.Call]] = {}
        # Fixed code is clean code: a caller that is itself hot would get a client per call (HTP104 again).
        ok = bool(details.get("calls")) and not details.get("hot_calls")
        for call_span in details.get("calls") or ():
            use = index.calls.get(tuple(call_span))  # type: ignore[arg-type]
            caller = index.scope_of(use) if use is not None else None
            if use is None or caller is function or isinstance(caller, (ast.ClassDef, ast.Lambda)):
                ok = False
                break
            func = use.func
            is_method = position == 1 or isinstance(index.parents.get(function), ast.ClassDef)
            if not isinstance(func, ast.Attribute if is_method else ast.Name):
                ok = False
                break
            if is_async and not isinstance(caller, ast.AsyncFunctionDef):
                ok = False
                break
            if not isinstance(caller, ast.Module) and base_name in _bound_in(caller):
                ok = False
                break
            if isinstance(index.scope_of(caller), _FUNCTIONS):
                ok = False  # a nested caller runs per call of its enclosing function: a per-call client again
                break
            target = _wrap_target(index, use, caller, isinstance(function, ast.AsyncFunctionDef))
            if target is None or not _repeats(index, use, target):
                ok = False
                break
            if family is None or client_open_around(target, index.parents, family, imports):
                ok = False  # a client of that library is open there already: a second one would nest in it
                break
            targets.setdefault(target, []).append(use)
        spans = [_span(t) for t in targets]
        if not ok or any(_contains(a, b) for a in spans + wrapped for b in spans) \
                or any(_contains(b, a) for a in spans for b in wrapped):
            continue
        where = _span(function)
        if where in spans or any(_contains(s, where) or _contains(where, s) for s in spans):
            continue  # the function sits inside a statement to wrap (or holds one): wait for a simpler shape
        wraps = []
        for target, uses in targets.items():
            scope = index.scope_of(target)
            name = free_name(index.names_in(scope) | {base_name}, FAMILIES[library].variable)
            calls = tuple(char_span(lines, _span(u)) for u in uses)
            wraps.append(CallerWrap(char_span(lines, _span(target)), name, calls))
        used_functions.add(function)
        wrapped.extend(spans)
        plans.append(
            ClientParameter(
                char_span(lines, _span(function)), variable, position, char_span(lines, _span(statement)),
                char_span(lines, _span(call)), _text(lines, _span(call)), is_with, is_async, tuple(wraps),
            )
        )
    return plans
