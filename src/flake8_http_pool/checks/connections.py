"""HTP101-HTP104: connections thrown away by unpooled calls, and clients made per iteration or per call."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from ..bindings import ASSIGN, DEF, PARAM, WITH, FunctionInfo, Scope, dotted_name, lookup
from ..finding import Hit
from ..libraries import (ANY_ATTRIBUTE, CLIENT_CONSTRUCTORS, CLIENT_REQUEST_METHODS, FAMILIES, ROOT_MODULES,
                         constructor_family, shown)
from ..walk import CallSite, Ctx, NameUse

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis, UnpooledSite

# Decorators that make a function hand out the same result on every call (a factory so decorated is none).
_CACHE_DECORATORS = frozenset({"cache", "lru_cache", "cached_property", "cached", "memoize", "memoized",
                               "singleton"})
_CONTAINER_METHODS = frozenset({"append", "add", "insert", "extend", "setdefault", "put", "put_nowait", "update"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_RETURNS = (ast.Return, ast.Yield, ast.YieldFrom)
_LOOP_NODES = (ast.For, ast.AsyncFor, ast.While) + _COMPREHENSIONS
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)


def span(node: Optional[ast.AST]) -> Optional[Tuple[int, int, int, int]]:
    if node is None:
        return None
    return (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _remedy(family: str, verb: str) -> str:
    info = FAMILIES[family]
    if family == "grequests":
        return "create one requests.Session() and pass session=session"
    if family == "urllib.request":
        return "send them through one urllib3.PoolManager() (or requests.Session())"
    if family == "aiohttp":
        return f"open one aiohttp.ClientSession() around them and call session.{verb}()"
    return f"create one {info.client}() around them and call {info.variable}.{verb}()"


def _unpooled_fields(site: "UnpooledSite", where: str) -> Dict[str, Any]:
    verb = site.qual.rsplit(".", 1)[-1]
    if site.family == "urllib.request" or verb == ANY_ATTRIBUTE:
        verb = "request"  # `getattr(requests, m)(u)`: `session.request(m, u)` takes the verb as data
    return {"call": shown(site.qual), "where": where, "remedy": _remedy(site.family, verb),
            "client": FAMILIES[site.family].client}


def _unpooled_details(analysis: "Analysis", site: "UnpooledSite") -> Dict[str, Any]:
    info = FAMILIES[site.family]
    return {
        "library": site.family,
        "qualname": site.qual,
        "verb": site.qual.rsplit(".", 1)[-1],
        "client": info.client,
        "variable": info.variable,
        "async": site.ctx.async_body,
        "function": site.ctx.func.qualname if site.ctx.func is not None else None,
        "deferred": site.ctx.deferred,
        "passed": site.passed_to is not None,
        "passed_to": span(site.passed_to),  # the call a callable is handed to (`executor.map(...)`)
        "mapping": site.mapping,
        "statement": span(site.ctx.stmt),
        "loop": span(analysis.outermost_loop_statement(site.ctx, site.node)),
    }


_SPAWNERS = frozenset({"submit", "spawn", "spawn_later", "to_thread", "start_new_thread"})


def _runs_the_callable(site: "UnpooledSite") -> bool:
    """A callable handed on (not mapped) counts only where RULES.md says it runs: `submit`, `gevent.spawn`,
    `Thread(target=...)` (and their kin); `assertRaises(E, urlopen, u)` or `callbacks.append(requests.get)` do not."""
    call = site.passed_to
    if call is None:
        return True
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in _SPAWNERS:
        return True
    return any(kw.arg == "target" and kw.value is site.node for kw in call.keywords) or any(
        kw.arg == "target" and isinstance(kw.value, ast.Call) and site.node in kw.value.args for kw in call.keywords
    )


def unpooled_call_in_loop(analysis: "Analysis") -> Iterator[Hit]:
    for site in analysis.unpooled_sites():
        if site.mapping:
            where = "mapped over items"
        elif analysis.in_loop(site.ctx, site.node) and _runs_the_callable(site):
            where = "in a loop" if site.passed_to is None else "handed to a call in a loop"
        else:
            continue
        details = _unpooled_details(analysis, site)
        # A session written around the loop inside a hot function would itself be HTP104: the fix needs to know.
        details["hot"] = site.ctx.func is not None and site.ctx.func in analysis.hot
        yield Hit(site.node, _unpooled_fields(site, where), details)


def unpooled_call_in_hot_function(analysis: "Analysis") -> Iterator[Hit]:
    hot = analysis.hot
    for site in analysis.unpooled_sites():
        func = site.ctx.func
        if func is None or func not in hot or site.mapping or analysis.in_loop(site.ctx, site.node):
            continue
        fields = _unpooled_fields(site, "")
        fields.update(function=func.qualname, reason=hot[func])
        fields["remedy"] = f"share one {FAMILIES[site.family].client}() between calls"
        details = _unpooled_details(analysis, site)
        details["hot_reason"] = hot[func]
        _add_hot_place(analysis, func, details)
        yield Hit(site.node, fields, details)


def _add_hot_place(analysis: "Analysis", func: Any, details: Dict[str, Any]) -> None:
    """`hot_path` / `hot_line`: where in another module the reason the function is hot lies (JSON, SARIF);
    `hot_file`: the same path made absolute, for SARIF's related location."""
    place = analysis.hot_place(func)
    if place is not None:
        details["hot_path"], details["hot_line"], details["hot_file"] = place


def client_constructions(analysis: "Analysis") -> List[Tuple[ast.Call, str, Ctx]]:
    """Every client constructor call of the module: (call, canonical constructor, ctx), computed once."""
    cached = getattr(analysis, "_client_constructions", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    out = []
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call.func, ctx.scope)
        if meaning is not None and meaning.kind == "lib" and meaning.qual in CLIENT_CONSTRUCTORS:
            out.append((call, meaning.qual, ctx))
    setattr(analysis, "_client_constructions", out)
    return out


# Keywords through which a new client is handed an existing pool to share instead of opening its own:
# `FuturesSession(session=s)`, `aiohttp.ClientSession(connector=shared)`, `httpx.Client(transport=shared)`.
_SHARED_POOL_KEYWORDS = frozenset({"session", "connector", "transport"})


def _shares_pool(call: ast.Call) -> bool:
    """The client wraps a pool made elsewhere (a fresh one built inline is a new pool, reported with it)."""
    return any(
        kw.arg in _SHARED_POOL_KEYWORDS and not isinstance(kw.value, ast.Call)
        and not (isinstance(kw.value, ast.Constant) and kw.value.value is None)
        for kw in call.keywords
    )


def _client_name(qual: str) -> str:
    return "requests_futures.FuturesSession" if qual.endswith("FuturesSession") else qual


def _factory_calls(analysis: "Analysis") -> List[Tuple[ast.Call, str, Ctx]]:
    """Calls of client factories defined in other modules (the project model's, `check` only): each counts as
    a constructor call of the client it returns, for HTP103 and HTP104."""
    if not analysis.extra_factories:
        return []
    return [(call, analysis.extra_factories[(call.lineno, call.col_offset)][0], ctx)
            for call, ctx in analysis.facts.calls if (call.lineno, call.col_offset) in analysis.extra_factories]


def _made_by(analysis: "Analysis", call: ast.Call, qual: str, details: Dict[str, Any]) -> str:
    """The message's name for what the call makes: the constructor, or the client factory (of this module, or
    of another whose def is then in `details`: factory_name, factory_path, factory_line, factory_file)."""
    local = _local_factory_calls(analysis).get((call.lineno, call.col_offset))
    if local is not None:
        # No factory_path / factory_file: the reason is in this module, so `fix` sees it (HTP103's hoist).
        details.update(factory_name=local[1], factory_line=local[2])
        return local[1]
    made = analysis.extra_factories.get((call.lineno, call.col_offset)) if analysis.extra_factories else None
    if made is None:
        return _client_name(qual)
    details.update(factory_name=made[1], factory_path=made[2], factory_line=made[3], factory_file=made[4])
    return made[1]


def _builds_the_same_client(analysis: "Analysis", call: ast.Call) -> bool:
    """Whether a call builds the same client every time it runs (`same_every_call`), so one call above the loop
    can stand for all of them: a constructor does; a factory of this module or of another (the project model
    read that one in its own module's summary) does only when its body makes nothing else happen per call."""
    where = (call.lineno, call.col_offset)
    local = _local_factory_calls(analysis).get(where)
    if local is not None:
        return local[3]
    made = analysis.extra_factories.get(where) if analysis.extra_factories else None
    return made is None or (len(made) > 5 and made[5] is True)


# -- client factories of this module (RULES.md, "Client factory") ---------------------------------------

class Factory(NamedTuple):
    qual: str  # the client constructor it ends in
    name: str  # the name a message gives it: `make_session`, `Service._client`, `SessionHolder` (a class)
    line: int  # the line of its def (a class factory's `__init__`, as the project model reports it)


def local_factories(analysis: "Analysis") -> Dict[FunctionInfo, Factory]:
    """The client factories of this module, by function (a class factory by its `__init__`), computed once.

    A function is one when a client it constructs, or one a factory of this module makes for it, flows to its
    `return` / `yield` (a context-manager factory), is not also kept (a module global, `lru_cache`), and every
    value it returns is such a client (`_always_fresh`): each call of it is then a new client. A class is one
    when its `__init__` only builds and stores clients (see `_only_builds`): each instantiation is a new client. A fixpoint, so a factory behind a factory is one too."""
    cached = getattr(analysis, "_local_factories", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    found: Dict[FunctionInfo, Factory] = {}
    setattr(analysis, "_local_factories", found)  # `_local_factory_calls` below reads the partial map
    constructions = client_constructions(analysis)
    for _ in range(8):  # each round can only add a factory one call further out; real chains are short
        added = False
        calls = [(call, found[func].qual, ctx) for call, ctx, func in _factory_call_sites(analysis)]
        sites = [*constructions, *calls]
        for call, qual, ctx in sites:
            func = ctx.func
            if func is None or func in found or _is_cached(func) or _shares_pool(call):
                continue
            if func.name == "__init__" and func.cls is not None:
                if _only_builds(analysis, func, found):
                    found[func] = Factory(qual, func.cls.name, func.node.lineno)
                    added = True
                continue
            fate = _fate(analysis, call, ctx)
            if fate.feeds_client or not _flows_to_return(analysis, call, ctx, fate):
                continue
            if kept_for_reuse(analysis, call, ctx, names_count=True, fate=fate):
                continue
            if not _always_fresh(analysis, func, found):
                continue  # sometimes hands out a client it keeps: not a factory (its constructor stays HTP104's)
            found[func] = Factory(qual, func.qualname, func.node.lineno)
            added = True
        # A subclass whose `__init__` only hands on to a factory base (`super().__init__(url)`) builds no
        # client itself, so no call above names it.
        for func in analysis.facts.functions:
            if func.name == "__init__" and func.cls is not None and func not in found \
                    and _base_is_factory(func, found) and _only_builds(analysis, func, found):
                base = next(a.methods["__init__"] for a in func.cls.ancestors()[1:] if "__init__" in a.methods)
                found[func] = Factory(found[base].qual, func.cls.name, func.node.lineno)
                added = True
        if not added:
            break
    setattr(analysis, "_factory_calls_index", None)
    return found


def _always_fresh(analysis: "Analysis", func: FunctionInfo, found: Dict[FunctionInfo, Factory]) -> bool:
    """Every value `func` returns or yields (but `None`) is a client made there: a constructor or factory call,
    a name bound to one, or an expression holding one (`Wrapper(s)`). A function that on another path hands out
    a client it keeps (`return util.per_thread("s", lambda: Session())`, `return self.session`) is no factory:
    its callers usually get the kept one."""
    outputs: List[Any] = []
    stack: List[ast.AST] = list(func.node.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, _RETURNS) and node.value is not None:
            outputs.append(node)
        stack.extend(ast.iter_child_nodes(node))
    if not outputs:
        return False
    for output in outputs:
        value = output.value
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if not _holds_fresh(analysis, func, value, (output.lineno, output.col_offset), found):
            return False
    return True


def _holds_fresh(analysis: "Analysis", func: FunctionInfo, value: ast.AST, pos: Tuple[int, int],
                 found: Dict[FunctionInfo, Factory]) -> bool:
    """`value` (returned at `pos`) holds a client made in `func`: a fresh call, or a name bound to one."""
    stack: List[ast.AST] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda,) + _COMPREHENSIONS):
            continue  # made later, or many: not the one client handed out here
        if isinstance(node, ast.Call) and _fresh_call(analysis, func, node, found):
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            binding = lookup(node.id, func.scope, pos)
            if binding is not None and binding.kind in (ASSIGN, WITH) and isinstance(binding.value, ast.Call) \
                    and _fresh_call(analysis, func, binding.value, found):
                return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _fresh_call(analysis: "Analysis", func: FunctionInfo, call: ast.Call,
                found: Dict[FunctionInfo, Factory]) -> bool:
    """`call` makes a new client: a client constructor, or a factory of this module found so far."""
    meaning = analysis.meaning(call.func, func.scope)
    if meaning is not None and meaning.kind == "lib" and meaning.qual in CLIENT_CONSTRUCTORS:
        return True
    for node, ctx in func.calls:
        if node is call:
            target = analysis.function_target(call.func, ctx)
            return target is not None and target in found
    return False


def client_behind(analysis: "Analysis", call: ast.Call,
                  scope: Scope) -> Optional[Tuple[str, Optional[FunctionInfo]]]:
    """When `call` is a request method (`get`, `send`, ...) of a name that the engine's bindings leave unknown but
    RULES.md counts as a known client: (its constructor, the function the name is bound in, None at module level).

    - what a client factory of this module returned (`session = make_session()`: a call reaches "what a
      module-level name holds"); a class factory's instance is its own object, not a client;
    - a parameter that a call of its function in this module passes a client to ("a client parameter the
      project passes one to")."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in CLIENT_REQUEST_METHODS \
            or not isinstance(func.value, ast.Name):
        return None
    name = func.value
    binding = lookup(name.id, scope, (name.lineno, name.col_offset))
    if binding is None:
        return None
    if binding.kind == PARAM:
        return _passed_client(analysis, name.id, binding.scope)
    if binding.kind != ASSIGN or not isinstance(binding.value, ast.Call):
        return None
    site = analysis.call_site(binding.value)
    target = analysis.function_target(binding.value.func, site.ctx) if site is not None else None
    if target is None or target.name == "__init__":
        return None
    factory = local_factories(analysis).get(target)
    return (factory.qual, site.ctx.func) if factory is not None and site is not None else None


def positional_parameters(func: FunctionInfo) -> List[ast.arg]:
    """The parameters of `func` a call fills by position, in order: a method's `self` / `cls` takes none."""
    args = func.node.args
    positional = [*getattr(args, "posonlyargs", ()), *args.args]
    decorators = {getattr(d, "id", "") for d in func.node.decorator_list}
    if func.cls is not None and func.parent is None and "staticmethod" not in decorators and positional:
        positional = positional[1:]
    return positional


def _passed_client(analysis: "Analysis", name: str, scope: Scope) -> Optional[Tuple[str, Optional[FunctionInfo]]]:
    """The client some call of this module passes to the parameter `name` of the function whose scope is `scope`."""
    owner = next((func for func in analysis.facts.functions if func.scope is scope), None)
    if owner is None:
        return None
    names = [arg.arg for arg in positional_parameters(owner)]
    position = names.index(name) if name in names else -1
    for site in _call_sites_of(analysis, owner):
        passed = [k.value for k in site.node.keywords if k.arg == name]
        if 0 <= position < len(site.node.args) and \
                not any(isinstance(arg, ast.Starred) for arg in site.node.args[:position + 1]):
            passed.append(site.node.args[position])
        for value in passed:
            meaning = analysis.meaning(value, site.ctx.scope)
            if meaning is not None and meaning.kind == "client" and meaning.qual in CLIENT_CONSTRUCTORS:
                return meaning.qual, owner
    return None


def _factory_call_sites(analysis: "Analysis") -> List[Tuple[ast.Call, Ctx, FunctionInfo]]:
    """The calls of this module that call one of its client factories found so far (a class: its instantiations)."""
    found: Dict[FunctionInfo, Factory] = getattr(analysis, "_local_factories", None) or {}
    out = [(site.node, site.ctx, func) for func in found for site in _call_sites_of(analysis, func)]
    return sorted(out, key=lambda item: (item[0].lineno, item[0].col_offset))


def _local_factory_calls(analysis: "Analysis") -> Dict[Tuple[int, int], Tuple[str, str, int, bool]]:
    """(line, column) of each call of a client factory of this module -> (constructor, factory name, def line,
    whether every call of it builds the same client: `same_every_call`)."""
    index = getattr(analysis, "_factory_calls_index", None)
    if index is None:
        factories = local_factories(analysis)
        index = {}
        for call, _, func in _factory_call_sites(analysis):
            factory = factories[func]
            name = factory.name
            if func.name == "__init__":
                name = dotted_name(call.func) or name  # the class called: a subclass builds the base's client
            index[(call.lineno, call.col_offset)] = (factory.qual, name, factory.line,
                                                     same_every_call(analysis, func, factories, set()))
        setattr(analysis, "_factory_calls_index", index)
    return index  # type: ignore[no-any-return]


def same_every_call(analysis: "Analysis", func: FunctionInfo, factories: Dict[FunctionInfo, Factory],
                     seen: Set[FunctionInfo]) -> bool:
    """Whether every call of the factory builds the same client from the same arguments, so hoisting its call
    out of a loop changes only how many are made (HTP103's fix): a class factory (`_only_builds` says so), or a
    function whose calls are all client constructors, HTTP-library calls, pure factories of this module, or
    methods of the client it builds (`s.mount(...)`), and whose names are its parameters, its own locals,
    library names and module constants. A factory that reads changing state (`next(TOKENS)`, a counter, a
    global), logs or prints does something per call that one hoisted call would do once."""
    if func.name == "__init__" or func in seen:
        return func.name == "__init__"
    seen.add(func)
    params = {a.arg for a in ast.walk(func.node.args) if isinstance(a, ast.arg)}
    local = set(func.scope.bindings) - params
    for stmt in func.node.body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Global,
                                 ast.Nonlocal, ast.Await, ast.NamedExpr) + _COMPREHENSIONS):
                return False
            if isinstance(node, ast.Call) and not _pure_call(analysis, func, node, local, factories, seen):
                return False
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in params \
                    and node.id not in local:
                meaning = analysis.meaning(node, func.scope)
                if meaning is None or meaning.kind not in ("lib", "function", "class"):
                    binding = lookup(node.id, func.scope, (node.lineno, node.col_offset))
                    if binding is None or binding.kind != ASSIGN or not isinstance(binding.value, ast.Constant):
                        return False
            if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
                base = node.value
                while isinstance(base, (ast.Attribute, ast.Subscript)):
                    base = base.value
                if not (isinstance(base, ast.Name) and base.id in local):
                    return False  # a store outside what it builds
    return True


def _pure_call(analysis: "Analysis", func: FunctionInfo, call: ast.Call, local: Set[str],
               factories: Dict[FunctionInfo, Factory], seen: Set[FunctionInfo]) -> bool:
    meaning = analysis.meaning(call.func, func.scope)
    if meaning is not None and meaning.kind == "lib" and meaning.qual.split(".", 1)[0] in ROOT_MODULES:
        return True
    if meaning is not None and meaning.kind == "method":
        return True  # a method of a client (`s.mount(...)`, `s.headers.update(...)`)
    base = call.func
    while isinstance(base, (ast.Attribute, ast.Subscript)):
        base = base.value
    if isinstance(call.func, ast.Attribute) and isinstance(base, ast.Name) and base.id in local:
        return True  # a method of what it builds
    for node, ctx in func.calls:
        if node is call:
            target = analysis.function_target(call.func, ctx)
            return target is not None and target in factories \
                and same_every_call(analysis, target, factories, seen)
    return False


def _factory_calls_here(analysis: "Analysis") -> List[Tuple[ast.Call, str, Ctx]]:
    """Calls of this module's client factories, each as a constructor call of the client it returns."""
    factories = local_factories(analysis)
    return [(call, factories[func].qual, ctx) for call, ctx, func in _factory_call_sites(analysis)]


def _only_builds(analysis: "Analysis", init: FunctionInfo, found: Dict[FunctionInfo, Factory]) -> bool:
    """Whether a class's `__init__` only builds and stores a client, so the class is a client factory.

    "Only": every statement of its body is a docstring, `super().__init__(...)` (or `Base.__init__(self, ...)`),
    `pass`, an assignment to `self.<attribute>` of a parameter, a constant, a client constructor or a call of a
    factory of this module, or configures a client it stored (`self.session.mount(...)`,
    `self.session.headers["X"] = token`, `self.session.headers.update(...)`) with values built from parameters,
    constants and HTTP-library calls (`HTTPAdapter(max_retries=3)`); at least one statement stores a client.
    Anything else (opening a file, starting a thread, calling another function, a branch) is other work: the
    class is then an object that happens to hold a client, not a factory."""
    node = init.node
    args = node.args
    positional = [*getattr(args, "posonlyargs", ()), *args.args]
    if not positional:
        return False
    me = positional[0].arg
    params = {a.arg for a in ast.walk(args) if isinstance(a, ast.arg)} - {me}
    stored: Set[str] = set()
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    for stmt in body:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if _is_super_init(call, me) and _plain(analysis, call, init, params, me):
                if _base_is_factory(init, found):
                    stored.add("")  # the base's `__init__` builds and stores one (`super().__init__(url)`)
                continue
            owner = dotted_name(call.func.value) if isinstance(call.func, ast.Attribute) else None
            if owner is not None and _on_stored(owner, me, stored) \
                    and _plain(analysis, call, init, params, me, vetted=call):
                continue
            return False
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) != 1:
                return False
            target = targets[0]
            value = stmt.value
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                if _makes_client(analysis, value, init, found) \
                        and _plain(analysis, value, init, params, me, vetted=value):
                    stored.add(target.attr)
                    continue
                if isinstance(value, ast.Constant) or (isinstance(value, ast.Name) and value.id in params):
                    continue
                return False
            base = target
            while isinstance(base, ast.Subscript):
                base = base.value
            key = dotted_name(base)
            if key is not None and _on_stored(key, me, stored, strict=True) \
                    and _plain(analysis, value, init, params, me):
                continue
            return False
        return False
    return bool(stored)


def _base_is_factory(init: FunctionInfo, found: Dict[FunctionInfo, Factory]) -> bool:
    """The class's first base of this module with an `__init__` (what `super().__init__` runs) is a factory."""
    cls = init.cls
    if cls is None:
        return False
    for ancestor in cls.ancestors()[1:]:
        own = ancestor.methods.get("__init__")
        if own is not None:
            return own in found
    return False


def _is_super_init(call: ast.Call, me: str) -> bool:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__"):
        return False
    owner = func.value
    if isinstance(owner, ast.Call) and getattr(owner.func, "id", "") == "super":
        return True
    # `Base.__init__(self, ...)`
    return isinstance(owner, ast.Name) and bool(call.args) and isinstance(call.args[0], ast.Name) \
        and call.args[0].id == me


def _on_stored(key: str, me: str, stored: Set[str], strict: bool = False) -> bool:
    """`key` (a dotted name) is a client stored on `me` earlier, or something inside it (strict: inside only)."""
    parts = key.split(".")
    if len(parts) < 2 or parts[0] != me or parts[1] not in stored:
        return False
    return len(parts) > 2 or not strict


def _makes_client(analysis: "Analysis", value: ast.AST, init: FunctionInfo,
                  found: Dict[FunctionInfo, Factory]) -> bool:
    """A client constructor call (not one handed an existing pool) or a call of a factory of this module."""
    return isinstance(value, ast.Call) and not _shares_pool(value) and _fresh_call(analysis, init, value, found)


def _plain(analysis: "Analysis", expr: ast.AST, init: FunctionInfo, params: Set[str], me: str,
           vetted: Optional[ast.AST] = None) -> bool:
    """`expr` reads only parameters, constants, `self` and library names, and calls only HTTP-library names
    (`HTTPAdapter(...)`, `Retry(...)`), `super().__init__(...)`, or `vetted` (the method call on a stored
    client, or the constructor / factory call, that the caller is vetting: its callee is its own)."""
    callee = {id(n) for n in ast.walk(vetted.func)} if isinstance(vetted, ast.Call) else set()
    for node in ast.walk(expr):
        if id(node) in callee:
            continue
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda) + _COMPREHENSIONS):
            return False
        if isinstance(node, ast.Call) and node is not vetted and not _is_super_init(node, me) \
                and not (isinstance(node.func, ast.Name) and node.func.id == "super"):
            meaning = analysis.meaning(node.func, init.scope)
            if meaning is None or meaning.kind != "lib" or meaning.qual.split(".", 1)[0] not in ROOT_MODULES:
                return False
        if isinstance(node, ast.Name) and node.id not in params and node.id not in (me, "super"):
            meaning = analysis.meaning(node, init.scope)
            if meaning is None or meaning.kind != "lib":
                return False
    return True


def _constructions_and_factory_calls(analysis: "Analysis") -> List[Tuple[ast.Call, str, Ctx]]:
    """What HTP103/HTP104 look at: client constructors, and calls of client factories of this module and of
    others (each as a constructor call of the client it returns)."""
    return [*client_constructions(analysis), *_factory_calls_here(analysis), *_factory_calls(analysis)]


def client_created_in_loop(analysis: "Analysis") -> Iterator[Hit]:
    """HTP103: a client constructor in a loop scope that is not kept for later iterations."""
    for call, qual, ctx in _constructions_and_factory_calls(analysis):
        if not analysis.in_loop(ctx, call) or _shares_pool(call):
            continue
        fate = _fate(analysis, call, ctx)
        if fate.feeds_client or kept_for_reuse(analysis, call, ctx, names_count=True, fate=fate):
            continue
        loop_stmt = analysis.outermost_loop_statement(ctx, call)
        handle = _handle(fate)
        loops = analysis.loops(ctx, call)
        hoistable = (
            loop_stmt is not None
            and not ctx.deferred
            and not _uses_loop_names(call, loops[0] if loops else loop_stmt)
            and not (handle is not None and _configured_in(handle, loop_stmt))
            # Hoisted inside a function that runs many times, the client would be made per call: HTP104.
            and not (ctx.func is not None and ctx.func in analysis.hot)
            # A factory that does something per call (reads a token pool, counts, logs) stays in the loop.
            and _builds_the_same_client(analysis, call)
        )
        details = _construction_details(qual, ctx, fate)
        details.update(loop=span(loop_stmt), hoistable=hoistable)
        yield Hit(call, {"client": _made_by(analysis, call, qual, details)}, details)


def client_per_request(analysis: "Analysis") -> Iterator[Hit]:
    """HTP104: a client constructor in a hot function, not kept for reuse (one HTP103 reports is left to it)."""
    hot = analysis.hot
    for call, qual, ctx in _constructions_and_factory_calls(analysis):
        func = ctx.func
        if func is None or func not in hot or _shares_pool(call) or _is_cached(func):
            continue
        fate = _fate(analysis, call, ctx)
        if fate.feeds_client:
            continue
        if analysis.in_loop(ctx, call) and not _stored(analysis, fate, ctx, True, looping=True, depth=0):
            continue  # HTP103's
        # Kept across the iterations of a loop (`if s is None: s = Client()`) is still one client per call.
        if _stored(analysis, fate, ctx, True, looping=False, depth=0):
            continue
        returned = _flows_to_return(analysis, call, ctx, fate)
        if returned:
            if func in local_factories(analysis):
                if not _runs_unseen(analysis, func):
                    continue  # a factory's own client: reported at the factory's calls (RULES.md, "Client factory")
            elif not _factory_used_per_item(analysis, func):
                # Not a factory (on another path it hands out a client it keeps): its constructor is reported
                # where some caller uses the client per item.
                continue
        callers = _call_sites_of(analysis, func)
        details = _construction_details(qual, ctx, fate)
        details.update(
            factory=returned,
            hot_reason=hot[func],
            all_uses_are_calls=_all_uses_are_calls(analysis, func, callers),
            calls=[span(site.node) for site in callers],
            # A client written around such a call runs per call of its own hot function: HTP104 again.
            hot_calls=[span(site.node) for site in callers if site.ctx.func is not None and site.ctx.func in hot],
        )
        _add_hot_place(analysis, func, details)
        made = _made_by(analysis, call, qual, details)
        if "factory_name" in details:
            # A factory called in a hot function: report only (RULES.md, HTP104); the caller's client would be
            # the factory's, which the parameter fix cannot build in the callers.
            details["all_uses_are_calls"] = False
        yield Hit(call, {"client": made, "function": func.qualname, "reason": hot[func]}, details)


def _construction_details(qual: str, ctx: Ctx, fate: "_Fate") -> Dict[str, Any]:
    """What a fix needs about the construction: the client, how it is bound, and the statement holding it."""
    holder = fate.holder
    if isinstance(holder, ast.withitem):
        # The walk makes the `with` statement the innermost statement of its items.
        statement = ctx.stmt
        binding = "async with" if isinstance(statement, ast.AsyncWith) else "with"
    elif isinstance(holder, (ast.Assign, ast.AnnAssign)):
        statement, binding = holder, "assign"
    else:
        statement, binding = ctx.stmt, "inline"
    handle = _handle(fate)
    return {
        "client": qual,
        "library": constructor_family(qual),
        "function": ctx.func.qualname if ctx.func is not None else None,
        "async": ctx.async_body,
        "binding": binding,
        "variable": dotted_name(handle) if handle is not None else None,
        "statement": span(statement),
    }


def _is_cached(func: FunctionInfo) -> bool:
    return any(_decorator_name(decorator) in _CACHE_DECORATORS for decorator in func.node.decorator_list)


# -- where a client's value goes -------------------------------------------------------------------------

class _Fate(NamedTuple):
    value: ast.AST  # the outermost expression still holding the client (itself, or a wrapper object)
    holder: Optional[ast.AST]  # what receives that value: a statement, a call, a withitem, a comprehension
    feeds_client: bool  # handed to another client constructor, which is reported instead


# Calls that return the argument they are given (a context entered on a stack, a cast, `closing`).
_PASS_THROUGH = frozenset({"enter_context", "enter_async_context", "closing", "aclosing", "cast"})


def _stores_argument(call: ast.Call) -> bool:
    """A call that keeps its argument beyond the statement: a container method (`sessions.append(s)`),
    `setattr(obj, name, s)`, a setter (`self.set_session(s)`), a base `__init__` (`super().__init__(session=s)`)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in _CONTAINER_METHODS or func.attr == "__init__" or func.attr.startswith("set_")
    return isinstance(func, ast.Name) and func.id == "setattr"


def _wraps(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> bool:
    """Whether a call keeps its arguments inside the object it returns (a class instantiation, `closing`)
    rather than using them and letting them go (a plain function)."""
    meaning = analysis.meaning(call.func, ctx.scope)
    if meaning is not None:
        if meaning.kind == "class":
            return True
        if meaning.kind == "function":
            return False
        if meaning.kind == "lib":
            last = meaning.qual.rsplit(".", 1)[-1]
            return last[:1].isupper() or last in _PASS_THROUGH
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return last[:1].isupper() or last in _PASS_THROUGH


def _fate(analysis: "Analysis", node: ast.AST, ctx: Ctx) -> _Fate:
    """Climb from an expression through what passes its value on, and say what finally receives it."""
    current = node
    parent = analysis.parent(current)
    while parent is not None:
        if isinstance(parent, (ast.BoolOp, ast.IfExp, ast.Await, ast.Starred, ast.keyword, ast.NamedExpr)):
            if isinstance(parent, ast.IfExp) and current is parent.test:
                return _Fate(current, parent, False)
            if isinstance(parent, ast.NamedExpr):
                return _Fate(current, parent, False)
        elif isinstance(parent, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            pass
        elif isinstance(parent, ast.Call) and current is not parent.func:
            if _stores_argument(parent):
                return _Fate(current, parent, False)
            meaning = analysis.meaning(parent.func, ctx.scope)
            if meaning is not None and meaning.kind == "lib" and meaning.qual in CLIENT_CONSTRUCTORS:
                return _Fate(current, parent, True)
            if not _wraps(analysis, parent, ctx):
                return _Fate(current, parent, False)  # used by a function and let go
        else:
            return _Fate(current, parent, False)
        current = parent
        parent = analysis.parent(current)
    return _Fate(current, None, False)


def _handle(fate: _Fate) -> Optional[ast.expr]:
    """The name or attribute the client is bound to (`s` in `with C() as s`, `self.s` in `self.s = C()`)."""
    holder = fate.holder
    target: Optional[ast.AST] = None
    if isinstance(holder, ast.withitem):
        target = holder.optional_vars
    elif isinstance(holder, ast.Assign) and len(holder.targets) == 1 and holder.value is fate.value:
        target = holder.targets[0]
    elif isinstance(holder, (ast.AnnAssign, ast.NamedExpr)) and holder.value is fate.value:
        target = holder.target
    if isinstance(target, (ast.Name, ast.Attribute)) and dotted_name(target) is not None:
        return target
    return None


def _frame(scope: Scope) -> Scope:
    """The function or module scope a comprehension's scope belongs to."""
    while scope.kind == "comprehension" and scope.parent is not None:
        scope = scope.parent
    return scope


def kept_for_reuse(analysis: "Analysis", call: ast.Call, ctx: Ctx, names_count: bool,
                   fate: Optional[_Fate] = None) -> bool:
    """Whether the client is stored where it outlives the statement: in a container, on an attribute, in a
    global (and, with `names_count`, through a local name that is then stored so). In a loop scope a store
    to the same place every iteration (`self.session = ...`) only keeps the last one, unless it is a lazy
    creation guarded by a test of that place (`if self.session is None:`, `s = s or Client()`)."""
    if fate is None:
        fate = _fate(analysis, call, ctx)
    looping = analysis.in_loop(ctx, call)
    return _stored(analysis, fate, ctx, names_count, looping, depth=0)


def _stored(analysis: "Analysis", fate: _Fate, ctx: Ctx, names_count: bool, looping: bool, depth: int) -> bool:
    value, holder = fate.value, fate.holder
    if holder is None or depth > 4:
        return False
    if isinstance(holder, ast.Call):
        return _stores_argument(holder)
    if isinstance(holder, ast.Lambda):
        # `lambda: requests.Session()` handed on is a lazy factory: whoever calls it (a cache, a per-thread
        # helper, `defaultdict`) decides how often, and those keep what it makes.
        return value is holder.body
    if isinstance(holder, _COMPREHENSIONS):
        # The element of a comprehension: a list (dict, set) of clients is a pool, kept by whoever holds it.
        return value is getattr(holder, "elt", None) or value is getattr(holder, "value", None)
    targets: List[ast.AST] = []
    if isinstance(holder, ast.Assign) and holder.value is value:
        targets = list(holder.targets)
    elif isinstance(holder, (ast.AnnAssign, ast.NamedExpr)) and holder.value is value:
        targets = [holder.target]
    for target in targets:
        if isinstance(target, ast.Subscript):
            return True
        if isinstance(target, ast.Attribute):
            if not looping or _varies_per_iteration(analysis, target, ctx) or _lazy(analysis, holder, target):
                return True
            continue
        if isinstance(target, ast.Name):
            frame = _frame(ctx.scope)
            if looping:
                if _lazy(analysis, holder, target):
                    return True
            elif target.id in frame.globals or target.id in frame.nonlocals or frame.kind in ("module", "class"):
                return True
            if names_count and _name_stored(analysis, target.id, ctx, holder.value, looping, depth):
                return True
    return False


def _varies_per_iteration(analysis: "Analysis", target: ast.Attribute, ctx: Ctx) -> bool:
    """`w.session = ...` with `w` bound in the loop stores one client per object; `self.session` does not."""
    loops = ctx.loops
    if not loops:
        return False
    bound = _bound_names(loops[0])
    return any(isinstance(n, ast.Name) and n.id in bound for n in ast.walk(target.value))


def _lazy(analysis: "Analysis", holder: ast.AST, target: ast.AST) -> bool:
    """The store only happens now and then, and later iterations use what it stored: `if x is None: x = C()`,
    `x = x or C()`, `if k not in pool: pool[k] = C()`, `if not hasattr(local, "s"): local.s = C()`, or a
    client replaced only on failure (`except ConnectionError: s = C()`) that the loop read before."""
    key = dotted_name(target)
    if key is None:
        return False
    value = getattr(holder, "value", None)
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        if any(dotted_name(v) == key for v in value.values[:-1]):
            return True
    base_key = dotted_name(target.value) if isinstance(target, ast.Attribute) else None
    conditional = False
    current: Optional[ast.AST] = holder
    while current is not None and not isinstance(current, _SCOPE_NODES + _LOOP_NODES):
        parent = analysis.parent(current)
        if isinstance(parent, ast.If) and current is not parent.test:
            for node in ast.walk(parent.test):
                if dotted_name(node) == key:
                    return True
                if (
                    base_key is not None
                    and isinstance(node, ast.Call)
                    and getattr(node.func, "id", "") == "hasattr"
                    and len(node.args) == 2
                    and dotted_name(node.args[0]) == base_key
                ):
                    return True
        if isinstance(parent, (ast.If, ast.ExceptHandler)):
            conditional = True
        current = parent
    if conditional and isinstance(current, _LOOP_NODES):
        # The loop reads the place before this store: the stored client serves the iterations after it.
        before = (holder.lineno, holder.col_offset)
        for node in ast.walk(current):
            if (
                isinstance(node, (ast.Name, ast.Attribute))
                and isinstance(node.ctx, ast.Load)
                and (node.lineno, node.col_offset) < before
                and dotted_name(node) == key
            ):
                return True
    return False


def _uses_of_binding(analysis: "Analysis", name: str, ctx: Ctx, value: ast.AST) -> Iterator[NameUse]:
    """The loads of `name` in the same function that the binding of `value` reaches."""
    frame = _frame(ctx.scope)
    for use in analysis.name_uses(name):
        if _frame(use.ctx.scope) is not frame:
            continue
        binding = lookup(name, use.ctx.scope, (use.node.lineno, use.node.col_offset))
        if binding is None or binding.kind not in (ASSIGN, WITH) or binding.value is not value:
            continue
        yield use


def _name_stored(analysis: "Analysis", name: str, ctx: Ctx, value: ast.AST, looping: bool, depth: int) -> bool:
    """A local name holding the client is stored later (in a container, on an attribute, in a global)."""
    for use in _uses_of_binding(analysis, name, ctx, value):
        fate = _fate(analysis, use.node, use.ctx)
        if fate.feeds_client:
            continue
        if _stored(analysis, fate, use.ctx, True, looping, depth + 1):
            return True
    return False


def _flows_to_return(analysis: "Analysis", call: ast.Call, ctx: Ctx, fate: Optional[_Fate] = None) -> bool:
    """Whether the function hands the client (or an object wrapping it) to its caller: a factory."""
    if fate is None:
        fate = _fate(analysis, call, ctx)
    if isinstance(fate.holder, _RETURNS):
        return True
    handle = _handle(fate)
    if isinstance(handle, ast.Name):
        value = fate.holder.context_expr if isinstance(fate.holder, ast.withitem) else getattr(fate.holder, "value", None)
        if value is None:
            return False
        for use in _uses_of_binding(analysis, handle.id, ctx, value):
            if isinstance(_fate(analysis, use.node, use.ctx).holder, _RETURNS):
                return True
    return False


def _call_sites_of(analysis: "Analysis", func: FunctionInfo) -> List[CallSite]:
    """The calls of `func` in this module (its name, `self.name`, or the class for `__init__`)."""
    index = getattr(analysis, "_calls_by_function", None)
    if index is None:
        index = {}
        for site in analysis.facts.calls:
            target = analysis.function_target(site.node.func, site.ctx)
            if target is not None:
                index.setdefault(target, []).append(site)
        setattr(analysis, "_calls_by_function", index)
    return list(index.get(func, ()))


def _factory_used_per_item(analysis: "Analysis", func: FunctionInfo) -> bool:
    """A factory is a problem when some caller uses its client per item instead of keeping it. A caller
    that returns the factory's client is a factory too: its own callers decide."""
    queue = [func]
    seen = {func}
    while queue:
        current = queue.pop()
        if _is_cached(current):
            continue
        callers = _call_sites_of(analysis, current)
        if not callers and current in analysis.hot:
            return True  # run many times by something else (a mapping call, a framework)
        for site in callers:
            fate = _fate(analysis, site.node, site.ctx)
            if kept_for_reuse(analysis, site.node, site.ctx, names_count=True, fate=fate):
                continue
            outer = site.ctx.func
            if outer is not None and outer not in seen and _flows_to_return(analysis, site.node, site.ctx, fate):
                seen.add(outer)
                queue.append(outer)
                continue
            if analysis.in_loop(site.ctx, site.node) or outer in analysis.hot:
                return True
    return False


def _runs_unseen(analysis: "Analysis", func: FunctionInfo) -> bool:
    """A factory's own client is reported at its calls; but a factory (or a factory returning its result, up the
    chain) that is hot with no call in this module is run many times by something else (a mapping call, a
    framework): there is no call to report, so its constructor is."""
    queue = [func]
    seen = {func}
    while queue:
        current = queue.pop()
        if _is_cached(current):
            continue
        callers = _call_sites_of(analysis, current)
        if not callers and current in analysis.hot:
            return True
        for site in callers:
            outer = site.ctx.func
            if outer is not None and outer not in seen and _flows_to_return(analysis, site.node, site.ctx):
                seen.add(outer)
                queue.append(outer)
    return False


def _all_uses_are_calls(analysis: "Analysis", func: FunctionInfo, callers: List[CallSite]) -> bool:
    """Every reference to `func` in this module calls it: then the fix may add a parameter and pass it."""
    if not callers or any(_decorator_name(d) not in _PLAIN_METHOD_DECORATORS for d in func.node.decorator_list):
        return False
    if _passed_as_callable(analysis, func):
        return False
    # A name that reaches the def without calling it hands it on: to anyone (`callbacks = [fetch]`), or, in a
    # class body, under another name (`__call__ = translate`) that callers outside this module may use.
    for use in analysis.name_uses(func.name):
        binding = analysis.binding_of(use.node, use.ctx.scope)
        if binding is None or binding.kind != DEF or binding.value is not func:
            continue
        parent = analysis.parent(use.node)
        if not (isinstance(parent, ast.Call) and parent.func is use.node):
            return False
    return True


_PLAIN_METHOD_DECORATORS = frozenset({"staticmethod", "classmethod"})


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def _passed_as_callable(analysis: "Analysis", func: FunctionInfo) -> List[ast.Call]:
    """The calls `func` is handed to as an argument (`pool.map(func, ...)`, `Thread(target=func)`)."""
    out = []
    for site in analysis.facts.calls:
        for arg in [*site.node.args, *(kw.value for kw in site.node.keywords)]:
            if isinstance(arg, (ast.Name, ast.Attribute, ast.Call)) and analysis.function_target(arg, site.ctx) is func:
                out.append(site.node)
    return out


# -- hoisting a client out of its loop (HTP103's fix) --------------------------------------------------

# Attributes of a client that carry per-use configuration, and the calls that change them.
_CONFIG_ATTRS = frozenset(
    {"auth", "headers", "cookies", "params", "proxies", "hooks", "verify", "cert", "adapters", "trust_env",
     "max_redirects", "cookie_jar", "timeout", "base_url", "event_hooks"}
)
_MUTATORS = frozenset(
    {"update", "set", "setdefault", "clear", "pop", "popitem", "append", "extend", "insert", "remove",
     "update_cookies", "clear_domain", "set_cookie", "add", "discard", "__setitem__", "__delitem__"}
)


def _bound_names(loop: ast.AST) -> frozenset:
    """Names (and attribute chains) a loop binds in its target(s) and body: they change every iteration."""
    parts: List[ast.AST] = []
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        parts = [loop.target, *loop.body]
    elif isinstance(loop, ast.While):
        parts = list(loop.body)
    else:
        parts = [loop]
    names = set()
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                key = dotted_name(node)
                if key is not None:
                    names.add(key)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".", 1)[0])
    return frozenset(names)


def _uses_loop_names(call: ast.Call, loop: Optional[ast.AST]) -> bool:
    """The constructor's arguments read something the loop rebinds every iteration."""
    if loop is None:
        return True
    bound = _bound_names(loop)
    for arg in [*call.args, *(kw.value for kw in call.keywords)]:
        for node in ast.walk(arg):
            key = dotted_name(node)
            if isinstance(node, (ast.Name, ast.Attribute)) and key is not None and key in bound:
                return True
    return False


def _configured_in(handle: ast.expr, loop: ast.AST) -> bool:
    """The loop sets the client's auth, headers, cookies (...) or mounts adapters on it: per-iteration state."""
    key = dotted_name(handle)
    if key is None:
        return True
    prefix = key + "."
    for node in ast.walk(loop):
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            target_key = dotted_name(target)
            if target_key is not None and target_key.startswith(prefix):
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = dotted_name(node.func.value)
            # `holder.session.mount(...)`, `holder.session.headers.update(...)`: a class factory's instance
            # holds its client one attribute down.
            if (owner == key or (owner or "").startswith(prefix)) and node.func.attr == "mount":
                return True
            if owner is not None and owner.startswith(prefix) and node.func.attr in _MUTATORS:
                if any(part in _CONFIG_ATTRS for part in owner[len(prefix):].split(".")):
                    return True
    return False
