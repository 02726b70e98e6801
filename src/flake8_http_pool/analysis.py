"""One module's analysis: the walked facts, plus what the rules ask of them (meanings, loop scopes, hot functions)."""

from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Set, Tuple

from .bindings import Binding, ClassInfo, FunctionInfo, Meaning, Scope, class_method, lookup, resolve
from .hot_functions import find_hot_functions
from .libraries import UNPOOLED_NAMES, unpooled_family
from .loop_scope import counting_loops
from .options import Options
from .walk import CallSite, Ctx, NameUse, collect, is_mapping_call

_LOOP_STMTS = (ast.For, ast.AsyncFor, ast.While)


class UnpooledSite(NamedTuple):
    """A call of an unpooled function, or such a function handed to another call as a callable."""

    node: ast.expr  # the call, or the reference passed (`requests.get` in `executor.map(requests.get, urls)`)
    qual: str  # canonical name: "requests.get"
    family: str  # "requests", "httpx", ... (see libraries.FAMILIES)
    ctx: Ctx
    passed_to: Optional[ast.Call]  # the call it is handed to, when passed as a callable
    mapping: bool  # handed to a mapping call (`map`, `executor.map`, ...)


class Analysis:
    """Facts of one module and the answers every rule shares, each computed once."""

    def __init__(self, tree: ast.Module, options: Options) -> None:
        self.facts = collect(tree)
        self.options = options
        self._meanings: Dict[int, Optional[Meaning]] = {}
        self._hot: Optional[Dict[FunctionInfo, str]] = None
        self._unpooled: Optional[List[UnpooledSite]] = None
        self._names: Optional[Dict[str, List[NameUse]]] = None
        self._names_by_func: Optional[Dict[Tuple[str, int], List[NameUse]]] = None
        self._site_of_call: Optional[Dict[int, CallSite]] = None
        self._bound: Optional[FrozenSet[str]] = None
        self._class_names: Optional[FrozenSet[str]] = None
        # In-house unpooled calls (option `unpooled-calls`): (line, byte column) of each matching call -> its
        # callee, found by custom_calls.find_custom_calls and set by the engine, which has the source text.
        self.custom_calls: Dict[Tuple[int, int], str] = {}
        # Functions of this module that the project model (project.py) found hot because of another module:
        # function key (hot_functions.function_key) -> the reason, and -> (path from the project root, line) of
        # the loop or registration behind it, and its absolute path. Seeds for find_hot_functions; empty on the
        # flake8 path.
        self.extra_hot: Dict[str, str] = {}
        self.extra_places: Dict[str, Tuple[str, int, str]] = {}
        # Calls of client factories defined in other modules: (line, byte column) -> (client constructor, factory
        # name, path from the project root, line, absolute path) (engine.ModuleSeeds.factories).
        self.extra_factories: Dict[Tuple[int, int], Tuple[str, str, str, int, str, bool]] = {}
        # Calls of synchronous functions of other modules that block on HTTP every run (engine.ModuleSeeds.blocking):
        # (line, byte column) -> (blocking call, its path from the project root, line, absolute path, the function
        # called, library). HTP403 where the call is in an async def; a sync def calling one blocks in turn.
        self.extra_blocking: Dict[Tuple[int, int], Tuple[str, str, int, str, str, str]] = {}
        # Calls of functions of other modules that write a parameter to a file (engine.ModuleSeeds.writers):
        # (line, byte column) -> (function name, path from the project root, line of its def, absolute path,
        # ((position or -1, parameter name, "body" or "response"), ...)). HTP201 when a whole body is handed in.
        self.extra_writers: Dict[Tuple[int, int], Tuple[str, str, int, str, Tuple[Tuple[int, str, str], ...]]] = {}

    # -- the tree ------------------------------------------------------------------------------------
    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self.facts.parents.get(id(node))

    def call_site(self, call: ast.Call) -> Optional[CallSite]:
        if self._site_of_call is None:
            self._site_of_call = {id(site.node): site for site in self.facts.calls}
        return self._site_of_call.get(id(call))

    def name_uses(self, name: str) -> List[NameUse]:
        if self._names is None:
            index: Dict[str, List[NameUse]] = {}
            for use in self.facts.names:
                index.setdefault(use.node.id, []).append(use)
            self._names = index
        return self._names.get(name, [])

    def name_uses_in(self, name: str, func: Any) -> List[NameUse]:
        """The uses of `name` whose `ctx.func` is `func`: a request's response is followed in its own function,
        and scanning every function's `r` for each request made a 4 MB module take minutes (quadratic)."""
        if self._names_by_func is None:
            index: Dict[Tuple[str, int], List[NameUse]] = {}
            for use in self.facts.names:
                index.setdefault((use.node.id, id(use.ctx.func)), []).append(use)
            self._names_by_func = index
        return self._names_by_func.get((name, id(func)), [])

    # -- meanings ------------------------------------------------------------------------------------
    def meaning(self, expr: ast.AST, scope: Scope) -> Optional[Meaning]:
        key = id(expr)
        if key not in self._meanings:
            if type(expr) is ast.Name and expr.id not in self.bound_names():
                return None  # bound nowhere in the module (a builtin, a typo): nothing the rules know
            self._meanings[key] = resolve(expr, scope)
        return self._meanings[key]

    def bound_names(self) -> FrozenSet[str]:
        """Every name the module binds in its own, its classes' and its defs' scopes. A name bound only in a
        lambda or a comprehension means nothing to the rules there (a parameter, a loop variable), and a name
        bound nowhere resolves to nothing: `meaning` answers None for either without a lookup."""
        if self._bound is None:
            facts = self.facts
            names: Set[str] = set(facts.module_scope.bindings)
            for info in facts.classes:
                names.update(info.scope.bindings)
            for func in facts.functions:
                names.update(func.scope.bindings)
            self._bound = frozenset(names)
        return self._bound

    def class_body_names(self) -> FrozenSet[str]:
        """Every name bound in a class body of the module: `obj.name` can name a def of the module only then."""
        if self._class_names is None:
            names: Set[str] = set()
            for info in self.facts.classes:
                names.update(info.scope.bindings)
            self._class_names = frozenset(names)
        return self._class_names

    def binding_of(self, name: ast.Name, scope: Scope) -> Optional[Binding]:
        return lookup(name.id, scope, (name.lineno, name.col_offset))

    # -- loops ---------------------------------------------------------------------------------------
    def loops(self, ctx: Ctx, node: ast.AST) -> Tuple[ast.AST, ...]:
        """The loops whose loop scope holds `node`, outermost first (retry loops left out)."""
        return counting_loops(ctx, node, self.parent)

    def in_loop(self, ctx: Ctx, node: ast.AST) -> bool:
        return ctx.deferred or bool(self.loops(ctx, node))

    def outermost_loop_statement(self, ctx: Ctx, node: ast.AST) -> Optional[ast.stmt]:
        """The statement a loop-scoped fix wraps: the outermost loop of the function, or the statement
        holding the outermost comprehension."""
        loops = self.loops(ctx, node)
        if not loops:
            return None
        first = loops[0]
        if isinstance(first, _LOOP_STMTS):
            return first  # type: ignore[return-value]
        current: Optional[ast.AST] = first
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parent(current)
        return current  # type: ignore[return-value]

    # -- unpooled calls ------------------------------------------------------------------------------
    def unpooled_sites(self) -> List[UnpooledSite]:
        if self._unpooled is None:
            self._unpooled = list(self._find_unpooled())
        return self._unpooled

    def _find_unpooled(self) -> Iterator[UnpooledSite]:
        unpooled_names = UNPOOLED_NAMES
        for site in self.facts.calls:
            call, ctx = site
            func = call.func
            # A library's function reached through an attribute keeps the attribute's name (`rq.api.get` is
            # `requests.get`): an attribute of no unpooled function's name needs no meaning here.
            meaning = None if type(func) is ast.Attribute and func.attr not in unpooled_names else \
                self.meaning(func, ctx.scope)
            if meaning is not None and meaning.kind == "lib":
                family = unpooled_family(meaning.qual)
                if family is not None and not _has_own_session(call, family):
                    yield UnpooledSite(call, meaning.qual, family, ctx, None, False)
            known = meaning is not None and meaning.kind == "lib" and unpooled_family(meaning.qual) is not None
            if not known and self.custom_calls and (call.lineno, call.col_offset) in self.custom_calls:
                # Treated as requests-like: a call that opens a connection and throws it away.
                callee = self.custom_calls[(call.lineno, call.col_offset)]
                yield UnpooledSite(call, callee, "requests", ctx, None, False)
            mapping: Optional[bool] = None
            for arg in _callable_arguments(call):
                target = _unwrap_partial(arg)
                if not isinstance(target, (ast.Name, ast.Attribute)):
                    continue
                if type(target) is ast.Attribute and target.attr not in unpooled_names:
                    continue
                passed = self.meaning(target, ctx.scope)
                if passed is None or passed.kind != "lib":
                    continue
                family = unpooled_family(passed.qual)
                if family is None or (family == "grequests" and arg is not target and _has_own_session(arg, family)):
                    continue
                if mapping is None:
                    mapping = is_mapping_call(call, ctx.scope)
                yield UnpooledSite(target, passed.qual, family, ctx, call, mapping)

    # -- hot functions -------------------------------------------------------------------------------
    @property
    def hot(self) -> Dict[FunctionInfo, str]:
        """Functions of this module that run many times, with the reason, as RULES.md defines them."""
        if self._hot is None:
            # The places and the unresolved sites are kept for the project model's summary of this same
            # Analysis (project.summarize), so a checked module is not searched for hot functions twice.
            self.hot_places: Dict[FunctionInfo, int] = {}
            self.unresolved_sites: List[Any] = []
            self._hot = find_hot_functions(self, self.hot_places, self.unresolved_sites)
        return self._hot

    def hot_place(self, func: FunctionInfo) -> Optional[Tuple[str, int, str]]:
        """Where, in another module, the reason `func` is hot lies (path from the project root, line, absolute
        path), when the project model seeded it."""
        if not self.extra_places:
            return None
        from .hot_functions import function_key

        if self.hot.get(func) != self.extra_hot.get(function_key(func)):
            return None  # hot for a reason of its own module
        return self.extra_places.get(function_key(func))

    def function_target(self, expr: ast.AST, ctx: Ctx) -> Optional[FunctionInfo]:
        """The def of this module that `expr` (a callee or a callable passed) names, if any."""
        expr = _unwrap_partial(expr)
        kind = type(expr)
        if kind is ast.Attribute and expr.attr not in self.class_body_names():  # type: ignore[attr-defined]
            return None  # only a class body's def (or a name of it) is a def reached through an attribute
        if kind is not ast.Name and kind is not ast.Attribute:
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            cls = _enclosing_class(ctx.func)
            if cls is not None and expr.value.id in _self_names(ctx.func):
                return self._method(cls, expr.attr)
        if not isinstance(expr, (ast.Name, ast.Attribute)):
            return None
        meaning = self.meaning(expr, ctx.scope)
        if meaning is None:
            return None
        if meaning.kind == "function" and isinstance(meaning.node, FunctionInfo):
            return meaning.node
        if meaning.kind == "class" and isinstance(meaning.node, ClassInfo):
            return self._method(meaning.node, "__init__")
        if meaning.kind == "instance" and isinstance(meaning.node, ClassInfo):
            return self._method(meaning.node, "__call__")  # `self(t)`, `fetcher(u)`
        return None

    def _method(self, cls: ClassInfo, name: str) -> Optional[FunctionInfo]:
        return class_method(cls, name)


def _enclosing_class(func: Optional[FunctionInfo]) -> Optional[ClassInfo]:
    while func is not None:
        if func.cls is not None:
            return func.cls
        func = func.parent
    return None


def _self_names(func: Optional[FunctionInfo]) -> Tuple[str, ...]:
    """`self`, `cls`, and whatever the enclosing method calls its first parameter."""
    names = ["self", "cls"]
    while func is not None:
        if func.cls is not None:
            args = func.node.args
            positional = [*getattr(args, "posonlyargs", ()), *args.args]
            if positional:
                names.append(positional[0].arg)
            break
        func = func.parent
    return tuple(names)


def _callable_arguments(call: ast.Call) -> Iterator[ast.expr]:
    for arg in call.args:
        yield arg
    for keyword in call.keywords:
        if keyword.arg is not None:
            yield keyword.value


def _unwrap_partial(expr: ast.AST) -> ast.AST:
    """`functools.partial(f, ...)` / `partial(f, ...)` hands `f` on."""
    if (
        isinstance(expr, ast.Call)
        and expr.args
        and (
            (isinstance(expr.func, ast.Name) and expr.func.id == "partial")
            or (isinstance(expr.func, ast.Attribute) and expr.func.attr == "partial")
        )
    ):
        return expr.args[0]
    return expr


def _has_own_session(call: ast.AST, family: str) -> bool:
    """grequests only opens a new Session per request without `session=` (or an unknown `**kwargs`)."""
    if family != "grequests" or not isinstance(call, ast.Call):
        return False
    return any(kw.arg in ("session", None) for kw in call.keywords)
