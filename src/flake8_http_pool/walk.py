"""The one walk over a module's `ast`: scopes, bindings, calls and loop context, collected for every rule.

The walk is iterative (an explicit stack), so a 900-term `1 + 1 + ...` that `ast.parse` accepts never
meets Python's recursion limit here.
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Tuple

from .bindings import (
    ASSIGN, CLASS, DEF, IMPORT, OTHER, PARAM, WITH, AttributeStore, ClassInfo, FunctionInfo, Scope, lookup,
)
from .libraries import STAR_EXPORTS, canonical

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_LOOP_STMTS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# `match` patterns that bind names exist from Python 3.10; on 3.9 no tree holds them, so the tuples are empty.
_MATCH_CAPTURES = tuple(getattr(ast, name) for name in ("MatchAs", "MatchStar") if hasattr(ast, name))
_MATCH_MAPPING = tuple(getattr(ast, name) for name in ("MatchMapping",) if hasattr(ast, name))
_MATCH_CAPTURE_TYPES = frozenset(_MATCH_CAPTURES)
_MATCH_MAPPING_TYPES = frozenset(_MATCH_MAPPING)
_COMPREHENSION_TYPES = frozenset(_COMPREHENSIONS)


class Ctx(NamedTuple):
    """Where a node stands."""

    scope: Scope
    func: Optional[FunctionInfo]  # the innermost def around it (lambdas do not count)
    loops: Tuple[ast.AST, ...]  # loops of the current function frame whose loop scope holds the node, outermost first
    deferred: bool  # inside a lambda / def written in a loop scope, or a lambda handed to a mapping call
    async_body: bool  # directly in an `async def` body, not in a nested sync def or lambda
    stmt: Optional[ast.stmt]  # the innermost statement holding the node
    main_guard: bool  # under `if __name__ == "__main__":` at module level


class CallSite(NamedTuple):
    node: ast.Call
    ctx: Ctx


class NameUse(NamedTuple):
    node: ast.Name
    ctx: Ctx


class ImportSite(NamedTuple):
    node: ast.stmt  # ast.Import or ast.ImportFrom
    modules: Tuple[str, ...]  # every module path the statement imports (`from a import b` gives a.b too)
    ctx: Ctx


class ModuleFacts:
    """Everything the rules need about one module, from one walk."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.module_scope = Scope("module", tree, None)
        self.functions: List[FunctionInfo] = []
        self.classes: List[ClassInfo] = []
        self.calls: List[CallSite] = []
        self.names: List[NameUse] = []
        self.imports: List[ImportSite] = []
        self.parents: Dict[int, ast.AST] = {}
        self.lambdas: List[Tuple[ast.Lambda, Ctx]] = []
        self.function_by_node: Dict[int, FunctionInfo] = {}

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self.parents.get(id(node))


_MAPPING_METHODS = frozenset(
    {"map", "imap", "imap_unordered", "starmap", "map_async", "starmap_async", "apply_async", "run_in_executor"}
)


# Builtins that call a function once per item (`filter` runs its predicate on every item, like `map`).
_MAPPING_BUILTINS = frozenset({"map", "filter"})


def is_mapping_call(call: ast.Call, scope: Scope) -> bool:
    """`map(f, xs)`, `filter(f, xs)`, `executor.map(f, xs)`, `pool.imap_unordered(...)`, `loop.run_in_executor(...)`."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in _MAPPING_METHODS
    if isinstance(func, ast.Name) and func.id in _MAPPING_BUILTINS:
        # The builtin, unless the module binds the name itself (`from multiprocessing.dummy import Pool; map = ...`).
        return lookup(func.id, scope, (func.lineno, func.col_offset)) is None
    return False


def _end(node: ast.AST) -> Tuple[int, int]:
    return (getattr(node, "end_lineno", None) or node.lineno, getattr(node, "end_col_offset", None) or 0)


def _start(node: ast.AST) -> Tuple[int, int]:
    return (node.lineno, node.col_offset)


def _bind_target(target: ast.AST, scope: Scope, pos: Tuple[int, int], kind: str, value: object) -> None:
    """Bind the names a target assigns; unpacking binds them to nothing the rules know."""
    if isinstance(target, ast.Name):
        scope.bind(target.id, pos, kind, value)
        return
    stack = [target]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Name):
            scope.bind(item.id, pos, OTHER)
        elif isinstance(item, (ast.Tuple, ast.List)):
            stack.extend(item.elts)
        elif isinstance(item, ast.Starred):
            stack.append(item.value)


def _bind_arguments(args: ast.arguments, scope: Scope, pos: Tuple[int, int]) -> None:
    for arg in (*getattr(args, "posonlyargs", ()), *args.args, *args.kwonlyargs):
        scope.bind(arg.arg, pos, PARAM, arg.annotation)
    for arg in (args.vararg, args.kwarg):
        if arg is not None:
            scope.bind(arg.arg, pos, OTHER)


def _is_main_guard(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = (test.left, test.comparators[0])
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return bool(names and consts)


def _bind_import(node: ast.stmt, scope: Scope, pos: Tuple[int, int]) -> Tuple[str, ...]:
    modules: List[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            modules.append(alias.name)
            if alias.asname:
                scope.bind(alias.asname, pos, IMPORT, alias.name)
            else:
                top = alias.name.split(".", 1)[0]
                scope.bind(top, pos, IMPORT, top)
    elif isinstance(node, ast.ImportFrom):
        if node.level:  # relative: the project's own module, never the library
            for alias in node.names:
                if alias.name != "*":
                    scope.bind(alias.asname or alias.name, pos, OTHER)
            return ()
        base = node.module or ""
        modules.append(base)
        for alias in node.names:
            if alias.name == "*":
                for name in STAR_EXPORTS.get(canonical(base), ()):
                    scope.bind(name, pos, IMPORT, f"{base}.{name}")
                continue
            modules.append(f"{base}.{alias.name}")
            scope.bind(alias.asname or alias.name, pos, IMPORT, f"{base}.{alias.name}")
    return tuple(modules)


# Values the walk never descends into: contexts and operators (one shared object each in a parsed tree) and
# the plain values some fields hold (`global a, b`'s names, `{**x}`'s missing key).
_NOT_NODES = frozenset(
    {str, bytes, int, float, complex, bool, type(None), type(...)}
    | {cls for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
       for cls in base.__subclasses__()}
)
# Fields that never hold a node to walk, of every node type.
_PLAIN_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind", "id", "attr", "level", "module",
                           "is_async", "simple", "conversion", "names"})
_STATEMENTS = frozenset(ast.stmt.__subclasses__())
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _child_fields(kind: type) -> Tuple[str, ...]:
    """The fields of a node type that may hold nodes to walk (`Constant.value` never does; `names` holds
    strings or aliases, which the walk does not visit)."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        plain = _PLAIN_FIELDS | ({"value"} if kind is ast.Constant else set())
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in plain)
    return fields


def collect(tree: ast.Module) -> ModuleFacts:
    """Walk `tree` once and return its facts."""
    facts = ModuleFacts(tree)
    parents = facts.parents
    calls, names = facts.calls, facts.names
    module_ctx = Ctx(facts.module_scope, None, (), False, False, None, False)
    stack: List[Tuple[ast.AST, Ctx]] = [(stmt, module_ctx) for stmt in reversed(tree.body)]
    for stmt in tree.body:
        parents[id(stmt)] = tree
    push = stack.append
    pop = stack.pop
    not_nodes = _NOT_NODES
    constant = ast.Constant
    child_fields = _CHILD_FIELDS
    new = tuple.__new__  # a NamedTuple's own __new__ is a Python function: one frame per node saved

    def push_children(node: ast.AST, ctx: Ctx) -> None:
        kind = type(node)
        fields = child_fields.get(kind) or _child_fields(kind)
        children: List[ast.AST] = []
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                children.extend(v for v in value if type(v) not in not_nodes)
            elif type(value) not in not_nodes:
                children.append(value)
        for child in reversed(children):
            parents[id(child)] = node
            if type(child) is not constant:  # a constant has nothing to walk and nothing to record
                push((child, ctx))

    def push_list(nodes: List[ast.AST], parent: ast.AST, ctx: Ctx) -> None:
        for child in reversed(nodes):
            parents[id(child)] = parent
            push((child, ctx))

    def push_one(child: Optional[ast.AST], parent: ast.AST, ctx: Ctx) -> None:
        if child is not None:
            parents[id(child)] = parent
            push((child, ctx))

    while stack:
        node, ctx = pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:
                names.append(new(NameUse, (node, ctx)))
            continue
        if kind in _STATEMENTS and node is not ctx.stmt:
            ctx = new(Ctx, (ctx.scope, ctx.func, ctx.loops, ctx.deferred, ctx.async_body, node, ctx.main_guard))
        if kind is ast.Attribute:
            if type(node.ctx) is ast.Store:
                holder = parents.get(id(node))
                if isinstance(holder, ast.Assign) and any(t is node for t in holder.targets):
                    _record_store(facts, node.value, node.attr, holder.value, ctx.scope)
                elif isinstance(holder, ast.AnnAssign) and holder.target is node:
                    if holder.value is not None:  # `self.s: Session` alone declares, stores nothing
                        _record_store(facts, node.value, node.attr, holder.value, ctx.scope)
                else:  # `+=`, unpacking, a `for` / `with` target: a value the rules cannot follow
                    _record_store(facts, node.value, node.attr, None, ctx.scope)
            parents[id(node.value)] = node
            if type(node.value) is not constant:
                push((node.value, ctx))
            continue
        if kind is ast.Call:
            site = new(CallSite, (node, ctx))
            calls.append(site)
            if ctx.func is not None:
                ctx.func.calls.append(site)
            mapping = is_mapping_call(node, ctx.scope)
            for arg in node.args + [kw.value for kw in node.keywords]:
                parents[id(arg)] = node
                if mapping and type(arg) is ast.Lambda:
                    # A lambda mapped over items runs once per item.
                    push((arg, ctx._replace(deferred=True)))
                elif type(arg) is not constant:
                    push((arg, ctx))
            parents[id(node.func)] = node
            push((node.func, ctx))
            for kw in node.keywords:
                parents[id(kw)] = node
            if type(node.func) is ast.Name and node.func.id == "setattr" and len(node.args) == 3:
                name = node.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    _record_store(facts, node.args[0], name.value, node.args[2], ctx.scope)
                else:
                    _record_store(facts, node.args[0], "*", None, ctx.scope)  # any attribute: unknown
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            _enter_function(node, ctx, facts, push_list, push_one)
            continue
        if kind is ast.Lambda:
            scope = Scope("lambda", node, ctx.scope)
            _bind_arguments(node.args, scope, _start(node))
            push_children(node.args, ctx)
            parents[id(node.args)] = node
            in_loop = bool(ctx.loops) or ctx.deferred
            facts.lambdas.append((node, ctx))
            push_one(node.body, node, Ctx(scope, ctx.func, (), in_loop, False, ctx.stmt, False))
            continue
        if kind is ast.ClassDef:
            push_list(node.decorator_list, node, ctx)
            push_list(node.bases, node, ctx)
            push_list(node.keywords, node, ctx)
            scope = Scope("class", node, ctx.scope)
            info = ClassInfo(node, scope)
            facts.classes.append(info)
            ctx.scope.bind(node.name, _start(node), CLASS, info)
            push_list(node.body, node, Ctx(scope, None, ctx.loops, ctx.deferred, False, None, ctx.main_guard))
            continue
        if kind is ast.For or kind is ast.AsyncFor:
            _bind_target(node.target, ctx.scope, _end(node.target), OTHER, None)
            push_one(node.iter, node, ctx)
            push_one(node.target, node, ctx)
            push_list(node.body, node, ctx._replace(loops=ctx.loops + (node,)))
            push_list(node.orelse, node, ctx)
            continue
        if kind is ast.While:
            looping = ctx._replace(loops=ctx.loops + (node,))
            push_one(node.test, node, looping)
            push_list(node.body, node, looping)
            push_list(node.orelse, node, ctx)
            continue
        if kind in _COMPREHENSION_TYPES:
            _enter_comprehension(node, ctx, parents, push)
            continue
        if kind is ast.If:
            push_one(node.test, node, ctx)
            body_ctx = ctx
            if ctx.scope.kind == "module" and ctx.func is None and _is_main_guard(node.test):
                body_ctx = ctx._replace(main_guard=True)
            push_list(node.body, node, body_ctx)
            push_list(node.orelse, node, ctx)
            continue
        if kind is ast.Assign:
            pos = _end(node)
            for target in node.targets:
                _bind_target(target, ctx.scope, pos, ASSIGN, node.value)
        elif kind is ast.AnnAssign:
            if node.value is not None and node.simple:
                _bind_target(node.target, ctx.scope, _end(node), ASSIGN, node.value)
        elif kind is ast.AugAssign:
            _bind_target(node.target, ctx.scope, _end(node), OTHER, None)
        elif kind is ast.NamedExpr:
            scope = ctx.scope
            while scope.kind == "comprehension" and scope.parent is not None:
                scope = scope.parent
            _bind_target(node.target, scope, _end(node), ASSIGN, node.value)
        elif kind is ast.Import or kind is ast.ImportFrom:
            modules = _bind_import(node, ctx.scope, _end(node))
            facts.imports.append(ImportSite(node, modules, ctx))
            continue
        elif kind is ast.withitem:
            if node.optional_vars is not None:
                _bind_target(node.optional_vars, ctx.scope, _end(node.optional_vars), WITH, node.context_expr)
        elif kind is ast.ExceptHandler:
            if node.name:
                ctx.scope.bind(node.name, _start(node), OTHER)
        elif kind is ast.Global:
            ctx.scope.globals.update(node.names)
            continue
        elif kind is ast.Nonlocal:
            ctx.scope.nonlocals.update(node.names)
            continue
        elif kind in _MATCH_CAPTURE_TYPES:
            if node.name:  # type: ignore[attr-defined]
                ctx.scope.bind(node.name, _start(node), OTHER)  # type: ignore[attr-defined]
        elif kind in _MATCH_MAPPING_TYPES:
            if node.rest:  # type: ignore[attr-defined]
                ctx.scope.bind(node.rest, _start(node), OTHER)
        elif kind is ast.Delete:
            continue
        push_children(node, ctx)
    return facts


def _record_store(facts: ModuleFacts, base: ast.expr, attr: str, value: Optional[ast.expr], scope: Scope) -> None:
    stores = facts.module_scope.attribute_stores
    stores.setdefault(attr, []).append(AttributeStore(base, attr, value, scope))


def _enter_function(node, ctx: Ctx, facts: ModuleFacts, push_list, push_one) -> None:
    push_list(node.decorator_list, node, ctx)
    args = node.args
    push_list([d for d in args.defaults if d is not None], args, ctx)
    push_list([d for d in args.kw_defaults if d is not None], args, ctx)
    facts.parents[id(args)] = node
    for arg in (*getattr(args, "posonlyargs", ()), *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if arg is not None and arg.annotation is not None:
            push_one(arg.annotation, arg, ctx)
    push_one(node.returns, node, ctx)
    cls = None
    if ctx.scope.kind == "class":
        cls = next(c for c in reversed(facts.classes) if c.scope is ctx.scope)
    scope = Scope("function", node, ctx.scope)
    info = FunctionInfo(node, scope, ctx.func, cls, bool(ctx.loops) or ctx.deferred)
    scope.function = info
    ctx.scope.bind(node.name, _start(node), DEF, info)
    if cls is not None:
        cls.methods[node.name] = info
    facts.functions.append(info)
    facts.function_by_node[id(node)] = info
    _bind_arguments(args, scope, _start(node))
    body_ctx = Ctx(scope, info, (), bool(ctx.loops) or ctx.deferred, isinstance(node, ast.AsyncFunctionDef), None, False)
    push_list(node.body, node, body_ctx)


def _enter_comprehension(node, ctx: Ctx, parents, push) -> None:
    scope = Scope("comprehension", node, ctx.scope)
    inner = ctx._replace(scope=scope, loops=ctx.loops + (node,))
    order: List[Tuple[ast.AST, Ctx]] = []
    for index, gen in enumerate(node.generators):
        # The first iterable runs once, in the enclosing scope; everything else runs per item.
        order.append((gen.iter, ctx if index == 0 else inner))
        _bind_target(gen.target, scope, _end(gen.target), OTHER, None)
        order.append((gen.target, inner))
        order.extend((cond, inner) for cond in gen.ifs)
        parents[id(gen)] = node
    if isinstance(node, ast.DictComp):
        order.append((node.key, inner))
        order.append((node.value, inner))
    else:
        order.append((node.elt, inner))
    for child, child_ctx in reversed(order):
        parents[id(child)] = node
        push((child, child_ctx))
