"""Which names mean what: scopes, the bindings in them, and the meaning of an expression.

A name is only the library when the binding that reaches the use is that import. Within one scope the
latest binding before the use wins (a loop target, parameter, assignment or `def` called `requests`
shadows the import); from an enclosing scope, which runs later, the last binding in the scope wins.
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Set, Tuple, Union

from .libraries import CLIENT_CONSTRUCTORS, CLIENT_REQUEST_METHODS, ROOT_MODULES, canonical, unpooled_family

Pos = Tuple[int, int]
_LATE: Pos = (1 << 30, 0)

# Binding kinds
IMPORT = "import"  # value: the qualified name (str)
ASSIGN = "assign"  # value: the assigned expression
WITH = "with"  # value: the context expression of `with ... as name`
DEF = "def"  # value: FunctionInfo
CLASS = "class"  # value: ClassInfo
PARAM = "param"  # value: the annotation (or None)
OTHER = "other"  # value: None


class Binding(NamedTuple):
    pos: Pos
    kind: str
    value: object
    scope: "Scope"


class Scope:
    """A Python scope: module, class, function, lambda or comprehension."""

    __slots__ = ("kind", "node", "parent", "bindings", "globals", "nonlocals", "function")

    def __init__(self, kind: str, node: ast.AST, parent: Optional["Scope"]) -> None:
        self.kind = kind
        self.node = node
        self.parent = parent
        self.bindings: Dict[str, List[Binding]] = {}
        self.globals: Set[str] = set()
        self.nonlocals: Set[str] = set()
        self.function: Optional[FunctionInfo] = None

    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def bind(self, name: str, pos: Pos, kind: str, value: object = None) -> None:
        target: Scope = self
        if name in self.globals:
            target = self.module()
        elif name in self.nonlocals:
            parent = self.parent
            while parent is not None and (parent.kind == "class" or name not in parent.bindings):
                parent = parent.parent
            if parent is not None:
                target = parent
        target.bindings.setdefault(name, []).append(Binding(pos, kind, value, target))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Scope {self.kind} {getattr(self.node, 'name', '')}>"


class ClassInfo:
    __slots__ = ("node", "name", "scope", "methods", "bases")

    def __init__(self, node: ast.ClassDef, scope: Scope) -> None:
        self.node = node
        self.name = node.name
        self.scope = scope  # the class body's own scope
        self.methods: Dict[str, FunctionInfo] = {}
        self.bases = node.bases


class FunctionInfo:
    """A `def` / `async def` of the module."""

    __slots__ = ("node", "name", "scope", "parent", "cls", "is_async", "in_loop", "calls", "hot_reason")

    def __init__(self, node: Union[ast.FunctionDef, ast.AsyncFunctionDef], scope: Scope,
                 parent: Optional["FunctionInfo"], cls: Optional[ClassInfo], in_loop: bool) -> None:
        self.node = node
        self.name = node.name
        self.scope = scope
        self.parent = parent
        self.cls = cls
        self.is_async = isinstance(node, ast.AsyncFunctionDef)
        self.in_loop = in_loop  # written inside a loop scope
        self.calls: List = []  # the CallSites directly in its body (walk.CallSite)
        self.hot_reason: Optional[str] = None

    @property
    def qualname(self) -> str:
        if self.cls is not None:
            return f"{self.cls.name}.{self.name}"
        return self.name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<FunctionInfo {self.qualname}>"


def _is_placeholder(binding: Binding) -> bool:
    """`requests = None` in an `except ImportError:` does not hide the import."""
    return binding.kind == ASSIGN and isinstance(binding.value, ast.Constant)


def _pick(bindings: List[Binding], pos: Optional[Pos]) -> Optional[Binding]:
    candidates = [b for b in bindings if not _is_placeholder(b)] or bindings
    if pos is None:
        return max(candidates, key=lambda b: b.pos)
    before = [b for b in candidates if b.pos <= pos]
    if before:
        return max(before, key=lambda b: b.pos)
    return min(candidates, key=lambda b: b.pos)


def lookup(name: str, scope: Scope, pos: Optional[Pos]) -> Optional[Binding]:
    """The binding of `name` that reaches a use at `pos` in `scope` (LEGB; class bodies do not enclose)."""
    current: Optional[Scope] = scope
    first = True
    while current is not None:
        if current.kind == "class" and not first:
            current = current.parent
            continue
        if name in current.globals:
            module = current.module()
            found = module.bindings.get(name)
            return _pick(found, None) if found else None
        found = current.bindings.get(name)
        if found:
            return _pick(found, pos if first else None)
        first = False
        current = current.parent
    return None


class Meaning(NamedTuple):
    """What an expression evaluates to, as far as the rules care.

    kind: "lib" (a library object by qualified name), "client" (a client instance; qual: its constructor),
    "method" (a client's bound method; qual: constructor, attr: method name), "response" (the result of a
    request; qual: library or constructor), "function" (a def of this module), "class" (a class of this module),
    "pool" (a thread pool instance; qual: constructor), "instance" (an instance of a class of this module;
    node: its ClassInfo).
    """

    kind: str
    qual: str = ""
    node: object = None
    attr: str = ""


THREAD_POOLS = frozenset(
    {
        "concurrent.futures.ThreadPoolExecutor",
        "concurrent.futures.thread.ThreadPoolExecutor",
        "multiprocessing.pool.ThreadPool",
        "multiprocessing.dummy.Pool",
    }
)


def resolve(expr: ast.AST, scope: Scope, depth: int = 0) -> Optional[Meaning]:
    """The meaning of `expr` evaluated in `scope` (at its own position), or None when the rules know nothing of it."""
    if depth > 12:
        return None
    if isinstance(expr, ast.Name):
        binding = lookup(expr.id, scope, (expr.lineno, expr.col_offset))
        return binding_meaning(binding, depth) if binding is not None else None
    if isinstance(expr, ast.Attribute):
        base = resolve(expr.value, scope, depth + 1)
        if base is None:
            return None
        if base.kind == "lib":
            return Meaning("lib", canonical(f"{base.qual}.{expr.attr}"))
        if base.kind == "client":
            return Meaning("method", base.qual, base.node, expr.attr)
        if base.kind in ("class", "instance"):
            # `Fetcher.fetch` and `Fetcher().fetch` / `fetcher.fetch` name the def of this module.
            method = class_method(base.node, expr.attr) if isinstance(base.node, ClassInfo) else None
            return Meaning("function", node=method) if method is not None else None
        if base.kind == "pool":
            return Meaning("pool_method", base.qual, base.node, expr.attr)
        return None
    if isinstance(expr, ast.Call):
        return _call_meaning(expr, scope, depth)
    if isinstance(expr, ast.Await):
        return resolve(expr.value, scope, depth + 1)
    if isinstance(expr, ast.NamedExpr):
        return resolve(expr.value, scope, depth + 1)
    return None


def _call_meaning(call: ast.Call, scope: Scope, depth: int) -> Optional[Meaning]:
    callee = resolve(call.func, scope, depth + 1)
    if callee is None:
        return None
    if callee.kind == "lib":
        qual = callee.qual
        if qual in CLIENT_CONSTRUCTORS:
            return Meaning("client", qual, call)
        if qual in THREAD_POOLS:
            return Meaning("pool", qual, call)
        family = unpooled_family(qual)
        if family is not None:
            return Meaning("response", family, call)
        if qual in ("functools.partial", "contextlib.closing") and call.args:
            return resolve(call.args[0], scope, depth + 1)
        if qual == "importlib.import_module" and call.args:
            arg = call.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if arg.value.split(".", 1)[0] in ROOT_MODULES:
                    return Meaning("lib", canonical(arg.value))
        return None
    if callee.kind == "method" and callee.attr in CLIENT_REQUEST_METHODS:
        return Meaning("response", callee.qual, call)
    if callee.kind == "class":
        return Meaning("instance", node=callee.node)
    return None


def class_method(cls: ClassInfo, name: str, depth: int = 0) -> Optional["FunctionInfo"]:
    """The def `name` of a class of this module, or of one of its bases defined in this module."""
    found = cls.methods.get(name)
    if found is not None or depth > 8:
        return found
    outer = cls.scope.parent or cls.scope
    for base in cls.bases:
        meaning = resolve(base, outer, depth + 1)
        if meaning is not None and meaning.kind == "class" and isinstance(meaning.node, ClassInfo):
            found = class_method(meaning.node, name, depth + 1)
            if found is not None:
                return found
    return None


def binding_meaning(binding: Binding, depth: int = 0) -> Optional[Meaning]:
    kind = binding.kind
    if kind == IMPORT:
        return Meaning("lib", canonical(str(binding.value)))
    if kind in (ASSIGN, WITH):
        value = binding.value
        if isinstance(value, ast.AST):
            return resolve(value, binding.scope, depth + 1)
        return None
    if kind == DEF:
        return Meaning("function", node=binding.value)
    if kind == CLASS:
        return Meaning("class", node=binding.value)
    if kind == PARAM and isinstance(binding.value, ast.AST):
        # `session: requests.Session` — a parameter annotated with a client class holds such a client.
        annotation = binding.value
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            return None
        meaning = resolve(annotation, binding.scope, depth + 1)
        if meaning is not None and meaning.kind == "lib" and meaning.qual in CLIENT_CONSTRUCTORS:
            return Meaning("client", meaning.qual, None)
    return None
