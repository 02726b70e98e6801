"""Which names mean what: scopes, the bindings in them, and the meaning of an expression.

A name is only the library when the binding that reaches the use is that import. Within one scope the
latest binding before the use wins (a loop target, parameter, assignment or `def` called `requests`
shadows the import); from an enclosing scope, which runs later, the last binding in the scope wins.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple, Union

from .libraries import (ANY_ATTRIBUTE, CLIENT_CONSTRUCTORS, CLIENT_REQUEST_METHODS, ROOT_MODULES, canonical,
                        unpooled_family)

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


def dotted_name(expr: Optional[ast.AST]) -> Optional[str]:
    """`app.route` for a name or an attribute chain on a name, else None."""
    parts: List[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def import_names(tree: ast.AST) -> Dict[str, str]:
    """Local name -> the module or object it imports, for every absolute import of the module, in any scope.

    `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`; `from a import b as c` binds `c` to `a.b`.
    Good for questions where a shadowed name is rare (what a patch target or a client constructor names).
    """
    names: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".", 1)[0]
                names[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def callee_name(func: ast.expr) -> str:
    """The last name a call is made by (`get` for `requests.get(...)` and `get(...)`), else ""."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


class Binding(NamedTuple):
    pos: Pos
    kind: str
    value: object
    scope: "Scope"


class AttributeStore(NamedTuple):
    """A store to an attribute: `obj.attr = value` (`setattr(obj, "attr", value)`), anywhere in the module.

    value: the expression stored, or None when the statement stores something the rules cannot follow
    (`obj.attr += 1`, `a, obj.attr = ...`, `for obj.attr in ...`, `setattr(obj, name, value)`; attr "*" then).
    """

    base: ast.expr
    attr: str
    value: Optional[ast.expr]
    scope: "Scope"


class Scope:
    """A Python scope: module, class, function, lambda or comprehension."""

    __slots__ = ("kind", "node", "parent", "bindings", "globals", "nonlocals", "function", "attribute_stores",
                 "shadowed")

    def __init__(self, kind: str, node: ast.AST, parent: Optional["Scope"]) -> None:
        self.kind = kind
        self.node = node
        self.parent = parent
        self.bindings: Dict[str, List[Binding]] = {}
        self.globals: Set[str] = set()
        self.nonlocals: Set[str] = set()
        self.function: Optional[FunctionInfo] = None
        # The module scope only: every attribute store of the module, by attribute name; and the top-level
        # module names the project's own files shadow for this module (a `requests.py` of the project beside a
        # script: its `import requests` is that file, not the library), from the project model's seeds.
        self.attribute_stores: Dict[str, List[AttributeStore]] = {}
        self.shadowed: FrozenSet[str] = frozenset()

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
    __slots__ = ("node", "name", "scope", "methods", "bases", "_ancestors", "_instance_attributes")

    def __init__(self, node: ast.ClassDef, scope: Scope) -> None:
        self.node = node
        self.name = node.name
        self.scope = scope  # the class body's own scope
        self.methods: Dict[str, FunctionInfo] = {}
        self.bases = node.bases
        self._ancestors: Optional[Tuple["ClassInfo", ...]] = None
        # attribute name -> what `self.<name>` holds (None: unknown), filled as asked
        self._instance_attributes: Dict[str, Optional["Meaning"]] = {}

    def ancestors(self) -> Tuple["ClassInfo", ...]:
        """This class and its bases defined in this module, transitively (a base named anything else is skipped)."""
        if self._ancestors is None:
            self._ancestors = (self,)  # a cycle through a rebound name stops here
            # Depth first, bases left to right: the order attribute lookup follows in simple hierarchies.
            found: List[ClassInfo] = []
            stack: List[ClassInfo] = [self]
            while stack and len(found) < 64:
                cls = stack.pop()
                if any(cls is f for f in found):
                    continue
                found.append(cls)
                outer = cls.scope.parent or cls.scope
                bases = []
                for base in cls.bases:
                    meaning = resolve(base, outer, 6)
                    if meaning is not None and meaning.kind == "class" and isinstance(meaning.node, ClassInfo):
                        bases.append(meaning.node)
                stack.extend(reversed(bases))
            self._ancestors = tuple(found)
        return self._ancestors

    def related(self, other: "ClassInfo") -> bool:
        """An instance of one may be an instance of the other: the same class, or one derives from the other."""
        return other in self.ancestors() or self in other.ancestors()


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
    if len(bindings) == 1:
        return bindings[0]  # most names are bound once: whatever the position, that binding is the one
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
            # `Fetcher.fetch` and `Fetcher().fetch` / `self.fetch` name the def of this module; `self.session`
            # a client when every store to it is a client constructor.
            return class_attribute(base.node, expr.attr, depth + 1) if isinstance(base.node, ClassInfo) else None
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
    func = call.func
    # The builtin `getattr`: a name the module binds itself is followed as any other.
    if type(func) is ast.Name and func.id == "getattr" \
            and lookup(func.id, scope, (func.lineno, func.col_offset)) is None:
        return _looked_up(call, scope, depth)
    callee = resolve(func, scope, depth + 1)
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


def _looked_up(call: ast.Call, scope: Scope, depth: int) -> Optional[Meaning]:
    """The unpooled function the builtin `getattr(module, name)` (or `getattr(module, name, default)`) looks up:
    `getattr(requests, "get")` is `requests.get`, and `getattr(requests, m)` any function of the module
    (libraries.ANY_ATTRIBUTE), which RULES.md counts as unpooled. Anything else it may find is left unknown, as
    before: a rule following a client constructor or a submodule reached this way would rewrite code it never
    saw spelled out."""
    args = call.args
    if call.keywords or not 2 <= len(args) <= 3 or any(isinstance(arg, ast.Starred) for arg in args):
        return None
    module = resolve(args[0], scope, depth + 1)
    if module is None or module.kind != "lib":
        return None
    name = args[1]
    if isinstance(name, ast.Constant):
        if not isinstance(name.value, str):
            return None
        qual = canonical(f"{module.qual}.{name.value}")
    else:
        qual = canonical(f"{module.qual}.{ANY_ATTRIBUTE}")
    return Meaning("lib", qual) if unpooled_family(qual) is not None else None


def class_method(cls: ClassInfo, name: str, depth: int = 0) -> Optional["FunctionInfo"]:
    """The def `name` of a class of this module, or of one of its bases defined in this module, also when the
    class body names it under another name (`__call__ = translate`, `fetch = get_page`)."""
    meaning = class_attribute(cls, name, depth)
    if meaning is not None and meaning.kind == "function" and isinstance(meaning.node, FunctionInfo):
        return meaning.node
    return None


def _class_body_binding(cls: ClassInfo, name: str) -> Optional[Binding]:
    """The binding of `name` in the body of the class or, failing that, of its first base (in this module) to
    have one: what `Cls.name` finds before any store from outside the body."""
    for owner in cls.ancestors():
        found = owner.scope.bindings.get(name)
        if found:
            return _pick(found, None)
    return None


def _is_none(expr: object) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def class_attribute(cls: ClassInfo, name: str, depth: int = 0) -> Optional[Meaning]:
    """What `Cls.name` / `instance.name` holds: a method (a def of the class body, or a name of it bound to
    one), else a client when every value the module gives the attribute — in the class body, and through
    `obj.name = ...` on anything that may be an instance of the class — is a client constructor of one kind
    (`None` placeholders aside); else None. Computed once per class and name."""
    binding = _class_body_binding(cls, name)
    if binding is not None:
        if binding.kind == DEF:
            return Meaning("function", node=binding.value)
        if binding.kind == ASSIGN and isinstance(binding.value, (ast.Name, ast.Attribute)):
            meaning = binding_meaning(binding, depth + 1)
            if meaning is not None and meaning.kind == "function":
                return meaning  # an alias of a method: `__call__ = translate`
    cache = cls._instance_attributes
    if name in cache:
        return cache[name]
    cache[name] = None  # a store that reads the attribute itself (`self.s = self.s or ...`) sees "unknown"
    cache[name] = _stored_client(cls, name, binding, depth)
    return cache[name]


def _stored_client(cls: ClassInfo, name: str, binding: Optional[Binding], depth: int) -> Optional[Meaning]:
    values: List[Tuple[ast.expr, Scope]] = []
    if binding is not None:
        if binding.kind != ASSIGN or not isinstance(binding.value, ast.expr):
            return None
        if not _is_none(binding.value):
            values.append((binding.value, binding.scope))
    stores = cls.scope.module().attribute_stores
    for store in (*stores.get(name, ()), *stores.get("*", ())):
        if not _may_store_on(store, cls, depth):
            continue
        if store.value is None:
            return None
        if not _is_none(store.value):
            values.append((store.value, store.scope))
    qual = ""
    for value, scope in values:
        meaning = resolve(value, scope, depth + 1)
        # Only a constructor: a client handed in (a parameter) may be anything its caller built.
        if meaning is None or meaning.kind != "client" or not isinstance(meaning.node, ast.Call):
            return None
        if qual and meaning.qual != qual:
            return None
        qual = meaning.qual
    return Meaning("client", qual, None) if qual else None


def _may_store_on(store: AttributeStore, cls: ClassInfo, depth: int) -> bool:
    """The store may change the attribute of `cls`'s instances: its object is one of them (or of a related
    class), the class itself, or something unknown."""
    meaning = resolve(store.base, store.scope, depth + 1)
    if meaning is None:
        return True
    if meaning.kind in ("instance", "class") and isinstance(meaning.node, ClassInfo):
        return cls.related(meaning.node)
    return False


# Methods whose first parameter is the class, without a decorator saying so.
_IMPLICIT_CLASSMETHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})


def _self_meaning(binding: Binding) -> Optional[Meaning]:
    """The first parameter of a method: an instance of its class (`self`), or the class (`cls`)."""
    scope = binding.scope
    func = scope.function
    if scope.kind != "function" or func is None or func.cls is None:
        return None
    args = func.node.args
    positional = [*getattr(args, "posonlyargs", ()), *args.args]
    if not positional or all(b is not binding for b in scope.bindings.get(positional[0].arg, ())):
        return None
    names = set()
    for decorator in func.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    if "staticmethod" in names:
        return None
    if "classmethod" in names or func.name in _IMPLICIT_CLASSMETHODS:
        return Meaning("class", node=func.cls)
    return Meaning("instance", node=func.cls)


def binding_meaning(binding: Binding, depth: int = 0) -> Optional[Meaning]:
    kind = binding.kind
    if kind == IMPORT:
        value = str(binding.value)
        if value.split(".", 1)[0] in binding.scope.module().shadowed:
            return None  # the project's own module of that name
        return Meaning("lib", canonical(value))
    if kind in (ASSIGN, WITH):
        value = binding.value
        if isinstance(value, ast.AST):
            return resolve(value, binding.scope, depth + 1)
        return None
    if kind == DEF:
        return Meaning("function", node=binding.value)
    if kind == CLASS:
        return Meaning("class", node=binding.value)
    if kind == PARAM:
        # `session: requests.Session` — a parameter annotated with a client class holds such a client.
        annotation = binding.value
        if isinstance(annotation, ast.AST) and not (
            isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)
        ):
            meaning = resolve(annotation, binding.scope, depth + 1)
            if meaning is not None and meaning.kind == "lib" and meaning.qual in CLIENT_CONSTRUCTORS:
                return Meaning("client", meaning.qual, None)
        return _self_meaning(binding)
    return None
