"""Loop scopes, and the retry loops that are not one.

A retry loop makes one request when things go well: right after the call succeeds, the loop is left
(`return`, `break`), and it goes round again only from an `except` handler or a failed status check.
A loop that leaves on a condition about the body (`if r.json()["state"] == "done": break`) polls, and
stays a loop scope.
"""

from __future__ import annotations

import ast
from http import HTTPStatus
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from .walk import Ctx

_STATUS_ATTRS = frozenset({"status_code", "status"})
_SUCCESS_FLAGS = frozenset({"ok", "is_success"})
_FAILURE_FLAGS = frozenset({"is_error", "is_client_error", "is_server_error"})

ParentOf = Callable[[ast.AST], Optional[ast.AST]]
Constants = Dict[str, List[int]]  # module-level names holding status codes
_HTTP_STATUS = {status.name: int(status) for status in HTTPStatus}

# Results of following the path after a successful call.
_EXIT = "exit"  # the loop is left
_AGAIN = "again"  # the loop goes round again (continue, or the end of the body)
_POLL = "poll"  # a branch leaves on a condition about the body: a polling loop
_NEXT = "next"  # fell off the end of a block: go on after it


def counting_loops(ctx: Ctx, node: ast.AST, parent_of: ParentOf) -> Tuple[ast.AST, ...]:
    """The loops of `ctx` whose loop scope really holds `node` (retry loops left out), outermost first."""
    out: List[ast.AST] = []
    for loop in ctx.loops:
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            if is_retry_loop(loop, node, ctx.stmt, parent_of):
                continue
        out.append(loop)
    return tuple(out)


def in_loop_scope(ctx: Ctx, node: ast.AST, parent_of: ParentOf) -> bool:
    """Whether `node` runs once per iteration of some loop (or in a def/lambda written in one)."""
    return ctx.deferred or bool(counting_loops(ctx, node, parent_of))


def _status_polarity(
    test: ast.expr,
    response: Optional[str],
    constants: Optional[Constants] = None,
    aliases: FrozenSet[str] = frozenset(),
) -> Optional[bool]:
    """True if `test` holds when the response succeeded, False if it holds when it failed, None if it is
    not a status check."""
    # Depth first through `not` and `and`/`or` with an explicit stack: the first status check found decides,
    # but a test that also asks about the body (`r.ok and r.json()["done"]`) is no status check.
    found: Optional[bool] = None
    stack: List[Tuple[ast.expr, bool]] = [(test, False)]
    while stack:
        expr, negated = stack.pop()
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            stack.append((expr.operand, not negated))
        elif isinstance(expr, ast.BoolOp):
            stack.extend((value, negated) for value in reversed(expr.values))
        elif _is_none_check(expr):
            continue  # `r is not None` says nothing either way
        else:
            polarity = _leaf_polarity(expr, response, constants, aliases)
            if polarity is None:
                return None
            if found is None:
                found = polarity != negated
    return found


def _is_none_check(expr: ast.expr) -> bool:
    """`r is None` / `r is not None`."""
    return (
        isinstance(expr, ast.Compare)
        and len(expr.ops) == 1
        and isinstance(expr.ops[0], (ast.Is, ast.IsNot))
        and isinstance(expr.comparators[0], ast.Constant)
        and expr.comparators[0].value is None
    )


def _retries_on_failure(loop: ast.AST, constants: Optional[Constants] = None) -> bool:
    """`while not r.ok:` / `while r.status_code != 200:`: the loop goes round only while the request fails."""
    return isinstance(loop, ast.While) and _status_polarity(loop.test, None, constants) is False


_RETRY_ITERATORS = frozenset({"Retrying", "AsyncRetrying", "retry_context"})


def _is_retry_iterator(loop: ast.AST) -> bool:
    """`for attempt in tenacity.Retrying(...)` / `stamina.retry_context(...)`: the iterator stops on success."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.iter, ast.Call):
        return False
    func = loop.iter.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _RETRY_ITERATORS


def _leaf_polarity(
    test: ast.expr,
    response: Optional[str],
    constants: Optional[Constants] = None,
    aliases: FrozenSet[str] = frozenset(),
) -> Optional[bool]:
    if isinstance(test, ast.Attribute):
        if test.attr in _SUCCESS_FLAGS:
            return True
        if test.attr in _FAILURE_FLAGS:
            return False
        return None
    if isinstance(test, ast.Name):
        return True if response is not None and test.id == response else None
    if isinstance(test, ast.Compare):
        sides = [test.left, *test.comparators]
        if not any(_is_status(side, aliases) for side in sides):
            return None
        op = test.ops[0]
        numbers = _status_numbers(sides, constants or {})
        number = numbers[0] if numbers else None
        status_left = _is_status(test.left, aliases)
        if isinstance(op, (ast.Eq, ast.In, ast.Is, ast.NotEq, ast.NotIn, ast.IsNot)):
            # `== 200` / `in {200, 201}` hold on success, `== 429` / `in {429, 503}` on failure;
            # a bare `== codes.ok` is taken as a success test. The negated operators flip it.
            equal = not numbers or all(200 <= n < 400 for n in numbers)
            if numbers and not equal and any(200 <= n < 400 for n in numbers):
                return None  # a mix of success and failure codes says nothing
            negated = isinstance(op, (ast.NotEq, ast.NotIn, ast.IsNot))
            if negated and not numbers:
                return False  # `!= codes.ok`
            return equal != negated
        if number is None or len(test.ops) > 1:
            return True
        # `status < 400` / `400 > status` succeed; `status >= 400` fails.
        less = isinstance(op, (ast.Lt, ast.LtE)) == status_left
        return number > 200 if less else number < 300
    return None


def _status_number(item: ast.expr) -> Optional[int]:
    """The status code an expression stands for: an integer literal, or a named code (`HTTPStatus.OK`,
    `requests.codes.gateway_timeout`, `httpx.codes.TOO_MANY_REQUESTS`)."""
    if isinstance(item, ast.Constant) and isinstance(item.value, int) and not isinstance(item.value, bool):
        return item.value
    if isinstance(item, ast.Attribute):
        member = _HTTP_STATUS.get(item.attr.upper())
        if member is not None:
            return member
    return None


def _status_numbers(sides: List[ast.expr], constants: Constants) -> List[int]:
    """The status codes a status is compared with, inside a set/tuple/list too, or through a module-level
    constant holding such a collection (`RETRY_CODES = {429, 503}`)."""
    out: List[int] = []
    for side in sides:
        if isinstance(side, ast.Name) and side.id in constants:
            out.extend(constants[side.id])
            continue
        items = side.elts if isinstance(side, (ast.Set, ast.Tuple, ast.List)) else [side]
        for item in items:
            number = _status_number(item)
            if number is not None:
                out.append(number)
    return out


def _collection_numbers(value: ast.expr) -> Optional[List[int]]:
    """The codes of `{429, 503}`, `(429, 503)`, `[...]`, `frozenset({...})`, or one code; None otherwise."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _COLLECTIONS:
        if len(value.args) != 1 or value.keywords:
            return None
        value = value.args[0]
    items = value.elts if isinstance(value, (ast.Set, ast.Tuple, ast.List)) else [value]
    numbers = [_status_number(item) for item in items]
    if not numbers or any(n is None for n in numbers):
        return None
    return [n for n in numbers if n is not None]


_COLLECTIONS = frozenset({"frozenset", "set", "tuple"})
# The last module's constants: a module's loops ask many times in a row. One entry, so no tree outlives its
# check (a process checking thousands of files must not keep their trees alive for the garbage collector).
_constants_cache: List[Tuple[ast.AST, Constants]] = []


def module_status_constants(module: ast.AST) -> Constants:
    """Names the module binds once, at top level, to status codes (`RETRY_CODES = {429, 503}`)."""
    if _constants_cache and _constants_cache[0][0] is module:
        return _constants_cache[0][1]
    found: Dict[str, List[int]] = {}
    assigned: Dict[str, int] = {}
    for node in ast.walk(module):
        targets: List[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                assigned[target.id] = assigned.get(target.id, 0) + 1
    for stmt in getattr(module, "body", []):
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if value is None or len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        name = targets[0].id
        numbers = _collection_numbers(value)
        if numbers is not None and assigned.get(name) == 1:
            found[name] = numbers
    _constants_cache[:] = [(module, found)]
    return found


class _ModuleConstants:
    """module_status_constants(module), worked out only when a status comparison names a constant (most loops
    compare with none, and the work is a walk of the whole module)."""

    __slots__ = ("module",)

    def __init__(self, module: ast.AST) -> None:
        self.module = module

    def __bool__(self) -> bool:
        return True

    def __contains__(self, name: object) -> bool:
        return name in module_status_constants(self.module)

    def __getitem__(self, name: str) -> List[int]:
        return module_status_constants(self.module)[name]


def _is_status(expr: ast.expr, aliases: FrozenSet[str] = frozenset()) -> bool:
    """`r.status_code` / `r.status`, or a local name assigned one in the loop (`status = r.status_code`)."""
    if isinstance(expr, ast.Name):
        return expr.id in aliases
    return isinstance(expr, ast.Attribute) and expr.attr in _STATUS_ATTRS


def _status_alias(stmt: Optional[ast.stmt]) -> Optional[str]:
    """`status = r.status_code`: the name now holding the status."""
    if isinstance(stmt, ast.Assign) and _is_status(stmt.value):
        return _assigned_name(stmt)
    return None


def _is_status_call(stmt: ast.stmt) -> bool:
    """`r.raise_for_status()` as a statement."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "raise_for_status"
    )


def _assigned_name(stmt: Optional[ast.stmt]) -> Optional[str]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return None


class _Follow:
    """Follows the statements that run after a successful call, up to the end of one loop's body."""

    def __init__(self, loop: ast.AST, response: Optional[str], constants: Optional[Constants] = None) -> None:
        self.loop = loop
        self.response = response
        self.constants = constants or {}
        self.aliases: FrozenSet[str] = frozenset()  # names assigned the status on the way
        self.flag = self._done_flag(loop)

    @staticmethod
    def _done_flag(loop: ast.AST) -> Optional[Tuple[str, bool]]:
        """`while not done:` is left when `done = True`: the name and the value that leaves."""
        if not isinstance(loop, ast.While):
            return None
        test = loop.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
            return (test.operand.id, True)
        if isinstance(test, ast.Name):
            return (test.id, False)
        return None

    def block(self, stmts: List[ast.stmt], depth: int = 0) -> str:
        """Run down `stmts` (inside the loop body, at `depth` loops below it)."""
        for stmt in stmts:
            result = self.stmt(stmt, depth)
            if result != _NEXT:
                return result
        return _NEXT

    def stmt(self, stmt: ast.stmt, depth: int) -> str:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return _EXIT
        if isinstance(stmt, ast.Break):
            return _EXIT if depth == 0 else _AGAIN
        if isinstance(stmt, ast.Continue):
            return _AGAIN
        if self.flag is not None and depth == 0 and isinstance(stmt, ast.Assign):
            name, leaving = self.flag
            if (
                _assigned_name(stmt) == name
                and isinstance(stmt.value, ast.Constant)
                and bool(stmt.value.value) == leaving
            ):
                return _EXIT
        alias = _status_alias(stmt)
        if alias is not None:
            self.aliases = self.aliases | {alias}
        if isinstance(stmt, ast.If):
            return self.branch(stmt, depth)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self.block(stmt.body, depth)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            result = self.block(stmt.body, depth)  # type: ignore[attr-defined]
            if result == _NEXT:
                result = self.block(stmt.orelse, depth)  # type: ignore[attr-defined]
            if result == _NEXT:
                result = self.block(stmt.finalbody, depth)  # type: ignore[attr-defined]
            return result
        return _NEXT

    def branch(self, stmt: ast.If, depth: int) -> str:
        polarity = _status_polarity(stmt.test, self.response, self.constants, self.aliases)
        if polarity is None:
            # A condition about the body: when its branches part ways (one leaves or goes round, the other
            # goes on), whether the loop ends depends on what the response said: a polling loop.
            results = {self.block(stmt.body, depth), self.block(stmt.orelse, depth)}
            if len(results) == 1:
                return results.pop()
            if _POLL in results or _EXIT in results or _AGAIN in results:
                return _POLL
            return _NEXT
        success = stmt.body if polarity else stmt.orelse
        return self.block(success, depth)


def _holder(parent: ast.AST, child: ast.AST) -> Tuple[Optional[str], int]:
    """The list field of `parent` that holds statement `child`, and its index."""
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        items = getattr(parent, field, None)
        if isinstance(items, list):
            for index, item in enumerate(items):
                if item is child:
                    return field, index
    return None, -1


def is_retry_loop(loop: ast.AST, node: ast.AST, stmt: Optional[ast.stmt], parent_of: ParentOf) -> bool:
    """Whether `loop` is a retry loop for the request `node` made in statement `stmt` of its body."""
    if stmt is None:
        return False
    if _is_retry_iterator(loop):
        return True
    top: ast.AST = loop
    while parent_of(top) is not None:
        top = parent_of(top)  # type: ignore[assignment]
    constants: Any = _ModuleConstants(top) if isinstance(top, ast.Module) else {}
    if stmt is loop:
        # In the loop's own `while` test: `while not requests.get(u).ok:` retries, `while requests.get(u).ok:` does not.
        return _retries_on_failure(loop, constants)
    follow = _Follow(loop, _assigned_name(stmt), constants)
    alias = _status_alias(stmt)  # `status = requests.get(u).status_code`
    if alias is not None:
        follow.aliases = frozenset({alias})
    # Going round again re-runs a `while` test that only holds on failure: on success the loop is left.
    again_leaves = _retries_on_failure(loop, constants)

    def leaves(result: str, depth: int = 0) -> bool:
        return result == _EXIT or (result == _AGAIN and depth == 0 and again_leaves)

    # The statement holding the call.
    if isinstance(stmt, (ast.Return, ast.Raise)):
        return True
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        return False  # the call is in an inner loop's header: that loop's body runs after it
    if isinstance(stmt, ast.If) and _contains(stmt.test, node):
        polarity = _status_polarity(stmt.test, None, constants)
        if polarity is None:
            return False
        result = follow.block(stmt.body if polarity else stmt.orelse)
        return leaves(result)
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(_contains(item, node) for item in stmt.items):
        result = follow.block(stmt.body)
        if result != _NEXT:
            return leaves(result)
    # Then the statements after it, climbing out block by block to the loop's body. A `break` in a loop
    # between the call and `loop` leaves only that inner loop (depth > 0): not a way out of `loop`.
    depth = _loops_between(stmt, loop, parent_of)
    current: ast.AST = stmt
    while True:
        parent = parent_of(current)
        if parent is None:
            return False
        field, index = _holder(parent, current)
        if field is None:
            # `current` is an except handler or match case: go on after its Try / Match.
            current = parent
            continue
        items = getattr(parent, field)
        result = follow.block(items[index + 1:], depth)
        if result != _NEXT:
            return leaves(result, depth)
        if parent is loop:
            return field == "orelse" or again_leaves
        if isinstance(parent, ast.Try) or type(parent).__name__ == "TryStar":
            if field == "body":
                result = follow.block(parent.orelse, depth)
                if result != _NEXT:
                    return leaves(result, depth)
            if field != "finalbody":
                result = follow.block(parent.finalbody, depth)
                if result != _NEXT:
                    return leaves(result, depth)
        elif isinstance(parent, (ast.For, ast.AsyncFor, ast.While)):
            if field == "body":
                # The end of an inner loop's body: it goes round again and requests again.
                return False
            depth -= 1
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module, ast.ClassDef, ast.Lambda)):
            return False
        current = parent


def _loops_between(stmt: ast.AST, loop: ast.AST, parent_of: ParentOf) -> int:
    count = 0
    current: Optional[ast.AST] = parent_of(stmt)
    while current is not None and current is not loop:
        if isinstance(current, (ast.For, ast.AsyncFor, ast.While)):
            count += 1
        current = parent_of(current)
    return count


def _contains(tree: ast.AST, node: ast.AST) -> bool:
    stack = [tree]
    while stack:
        item = stack.pop()
        if item is node:
            return True
        stack.extend(ast.iter_child_nodes(item))
    return False
