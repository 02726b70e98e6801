"""The project model: the tree's modules, per-module summaries, and the solver that finds hot functions across them.

`check` analyses the files it is given as one program (RULES.md, "The project"). The work is split so a later
cache can keep its expensive half:

- `summarize(tree, options)` reads ONE module's `ast` and returns plain data (dicts, lists, strings, ints:
  JSON-able and picklable): the module's functions with their own hot reasons (hot_functions.py's fixpoint,
  not a second copy of it), the calls each makes as unresolved references, and whether it makes unpooled
  calls, builds clients, is a request wrapper or a client factory;
- `ModuleMap` names the tree's modules from its layout and resolves references to (file, function key);
- `solve` joins the summaries: RULES.md's hot sources 1-4 as a fixpoint over the whole project, and for each
  function made hot because of another module, the reason and ONE place (path from the project root, line);
- `gather` is the two-phase byte gate: first the modules that import an HTTP library, then only the modules
  whose bytes name a project function that can matter. A file that can matter to nothing is never parsed.

Nothing outside the given files is read: an import of an installed package or of the standard library is unknown.
"""

from __future__ import annotations

import ast
import functools
import itertools
import os
import pickle
import re
import zlib
from array import array
from collections import OrderedDict
from typing import (AbstractSet, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, MutableMapping, NamedTuple,
                    Optional, Sequence, Set, Tuple, Union)

from .bindings import ASSIGN, IMPORT, OTHER, FunctionInfo, dotted_name, lookup
from .engine import ModuleSeeds
from .graphs import spread_to_callers
from .libraries import ROOT_MODULES
from .options import Options
from .project_cache import SUMMARY_VERSION

# A reference, as a summary stores it: ["local", function key] for a def of the same module, or
# ["import", module path, [attributes]] where the module path is absolute (`app.http`) or relative (`..http`),
# or ["verbs", import ref of a class]: the HTTP-verb methods of a class-based view (`path("x/", views.V.as_view())`).
# A call site is [ref, line, kind, column]; "factory" is the client constructor a client factory returns.
Ref = List[Any]
Summary = Dict[str, Any]
# Per file, what the engine gets (engine.ModuleSeeds): functions made hot and factory calls, from other modules.
Seeds = ModuleSeeds


# Call kinds in a summary: "call", a call of the function (an edge of the call graph); else the reason the site
# makes the function it names hot, as hot_functions.py words it ("called in a loop", "mapped over items",
# "passed as a callable in a loop", "registered with add_url_rule()", ...).
_CALLED_IN_A_LOOP = "called in a loop"
_WORD = re.compile(rb"[^\W\d]\w*")  # an identifier, in bytes (non-ASCII source is searched as UTF-8)
# An import statement, in bytes: `import a.b as c`, `from .a import b, c`, `from a import (\n b,\n c)`.
_IMPORT_STATEMENT = re.compile(rb"^[ \t]*(?:from[ \t]+[\w. \t]+?import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t][^\n]*)",
                               re.MULTILINE)
_ALIASED = re.compile(rb"(\w+)[ \t]+as[ \t]+\w")  # in an import statement: the name imported under an alias
_BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.BoolOp,
             ast.comprehension, ast.Lambda) + tuple(getattr(ast, n) for n in ("match_case",) if hasattr(ast, n))


# -- one module ------------------------------------------------------------------------------------------
def summarize(tree: ast.Module, options: Options, analysis: Any = None) -> Summary:
    """The module's summary, from its `ast` alone (see the module docstring).

    `analysis`: the unseeded `Analysis` the file's check already built from `tree` (the walk is most of the
    cost: a check and its summary share one); None builds one."""
    from .analysis import Analysis, _enclosing_class, _self_names, _unwrap_partial
    from .checks.connections import client_constructions, local_factories, same_every_call
    from .hot_functions import Unresolved, find_hot_functions, function_key, view_class

    if analysis is None:
        analysis = Analysis(tree, options)
    if not analysis.extra_hot:  # unseeded: the check's own search for hot functions is this module's alone
        hot = analysis.hot
        places: Dict[FunctionInfo, int] = analysis.hot_places
        unresolved: List[Unresolved] = analysis.unresolved_sites
    else:
        places, unresolved = {}, []
        hot = find_hot_functions(analysis, places, unresolved)

    relative: Dict[Tuple[Tuple[int, int], str], str] = {}  # (binding position, local name) -> ".mod.name"
    stars: List[str] = []
    library_roots: Set[str] = set()  # the HTTP library names this module imports (the project may own one)
    for site in analysis.facts.imports:
        node = site.node
        if isinstance(node, ast.Import):
            library_roots.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif not node.level and node.module:
            library_roots.add(node.module.split(".", 1)[0])
        if not isinstance(node, ast.ImportFrom):
            continue
        base = "." * node.level + (node.module or "")
        if any(alias.name == "*" for alias in node.names) and site.ctx.func is None:
            stars.append(base)
        if node.level:
            pos = (getattr(node, "end_lineno", None) or node.lineno, getattr(node, "end_col_offset", None) or 0)
            for alias in node.names:
                if alias.name != "*":
                    joined = base + alias.name if base.endswith(".") else f"{base}.{alias.name}"
                    relative[(pos, alias.asname or alias.name)] = joined

    def import_path(name: str, binding: Any) -> Optional[str]:
        if binding.kind == IMPORT and isinstance(binding.value, str):
            return binding.value
        if binding.kind == OTHER:
            return relative.get((binding.pos, name))
        return None

    def imported(expr: ast.AST, scope: Any) -> Optional[Ref]:
        """`expr` (a name or attribute chain) as a reference through an import, or through an instance of an
        imported class (`api = Api()` then `api.fetch`)."""
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        base = expr
        while isinstance(base, ast.Attribute):
            base = base.value
        assert isinstance(base, ast.Name)
        binding = lookup(base.id, scope, (base.lineno, base.col_offset))
        if binding is None:
            return None
        attrs = dotted.split(".")[1:]
        path = import_path(base.id, binding)
        if path is not None:
            return ["import", path, attrs]
        if binding.kind == ASSIGN and isinstance(binding.value, ast.Call) and attrs:
            made = imported(binding.value.func, binding.scope)  # `api.fetch` where `api = Api()`
            if made is not None:
                return ["import", made[1], made[2] + attrs]
        return None

    def ref_of(expr: ast.AST, ctx: Any) -> Optional[Ref]:
        view = view_class(expr) if isinstance(expr, ast.expr) else None
        if view is not None:  # a class-based view of another module: its HTTP-verb methods are the handlers
            ref = imported(view, ctx.scope)
            return ["verbs", ref] if ref is not None else None
        local = analysis.function_target(expr, ctx)
        if local is not None:
            return ["local", function_key(local)]
        expr = _unwrap_partial(expr)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            cls = _enclosing_class(ctx.func)
            if cls is not None and expr.value.id in _self_names(ctx.func):
                # `self.fetch()` with no such def in the module: a base class's, maybe one imported.
                for base in cls.bases:
                    ref = imported(base, cls.scope.parent)
                    if ref is not None:
                        return ["import", ref[1], ref[2] + [expr.attr]]
                return None
        return imported(expr, ctx.scope)

    functions: Dict[str, Dict[str, Any]] = {}
    for func in analysis.facts.functions:
        key = function_key(func)
        record: Dict[str, Any] = {"name": func.qualname, "line": func.node.lineno, "calls": [], "hot": None,
                                  "unpooled": False, "client": False, "wrapper": False, "factory": None}
        if func in hot:
            record["hot"] = [hot[func], places.get(func, func.node.lineno)]
        functions[key] = record
    module_calls: List[List[Any]] = []

    def add(owner: Optional[FunctionInfo], ref: Optional[Ref], line: int, kind: str, col: int) -> None:
        if ref is None:
            return
        if owner is None:
            # Module-level code outside loop scopes runs once; a local def looped over is in `hot` already.
            if kind != "call" and ref[0] != "local":
                module_calls.append([ref, line, kind, col])
            return
        functions[function_key(owner)]["calls"].append([ref, line, kind, col])

    # Every call is an edge of the call graph (source 4); the sites of sources 1-3 whose function is not a def
    # of this module come from find_hot_functions itself, with its reason, so both stay one list of forms.
    for call, ctx in analysis.facts.calls:
        if ctx.func is not None:
            add(ctx.func, ref_of(call.func, ctx), call.lineno, "call", call.col_offset)
    for expr, ctx, reason, line in unresolved:
        add(ctx.func, ref_of(expr, ctx), line, reason, getattr(expr, "col_offset", 0))

    for site in analysis.unpooled_sites():
        func = site.ctx.func
        if func is None or site.passed_to is not None:
            continue
        record = functions[function_key(func)]
        record["unpooled"] = True
        if not site.ctx.deferred and _unconditional(analysis, site.node, func):
            record["wrapper"] = True
    for call, _, ctx in client_constructions(analysis):
        if ctx.func is not None:
            functions[function_key(ctx.func)]["client"] = True
    # The engine's own reading of a client factory (checks/connections.py), so a factory is one whether its
    # callers are in its module or not: "factory" is the constructor, "factory_name" what a message calls it
    # (a class factory is its `__init__`, named by its class: `SessionHolder()`).
    # "factory_same": whether every call builds the same client (HTP103's hoist at a caller in another module).
    factories = local_factories(analysis)
    for func, factory in factories.items():
        record = functions[function_key(func)]
        record["factory"], record["factory_name"] = factory.qual, factory.name
        record["factory_same"] = same_every_call(analysis, func, factories, set())

    defs: Dict[str, str] = {}
    classes: Dict[str, Dict[str, str]] = {}
    for func in analysis.facts.functions:
        if func.parent is None and func.cls is None:
            defs[func.name] = function_key(func)
    for cls in analysis.facts.classes:
        if cls.scope.parent is analysis.facts.module_scope:
            classes[cls.name] = {name: function_key(method) for name, method in cls.methods.items()}
    exports: Dict[str, str] = {}
    for name, bindings in analysis.facts.module_scope.bindings.items():
        path = import_path(name, bindings[-1])
        if path is not None:
            exports[name] = path
    summary = {"version": SUMMARY_VERSION, "functions": functions, "module_calls": module_calls, "defs": defs,
               "classes": classes, "exports": exports, "stars": stars,
               "library_roots": sorted(library_roots & ROOT_MODULES)}
    _add_rule_facts(analysis, summary, ref_of, imported)
    _add_partial_factories(analysis, summary)
    return summary


def _add_partial_factories(analysis: Any, summary: Summary) -> None:
    """A module-level name bound to `functools.partial(<client constructor>, ...)` is a client factory too
    (RULES.md, "Client factory"): each call of it builds a new client, the same one every call (its arguments
    were evaluated once, when it was bound). It has no def, so it gets a record of its own under its name,
    calling nothing, which other modules reach as they reach a top-level def. This module's own calls of it are
    the engine's already (a name bound to a partial of a constructor means that constructor)."""
    from .analysis import _unwrap_partial
    from .checks.connections import _shares_pool
    from .libraries import CLIENT_CONSTRUCTORS

    top = analysis.facts.module_scope
    for name, bindings in top.bindings.items():
        binding = bindings[-1]
        value = binding.value
        if binding.kind != ASSIGN or not isinstance(value, ast.Call) or name in summary["defs"] \
                or name in summary["classes"] or name in summary["functions"] or _shares_pool(value):
            continue
        inner = _unwrap_partial(value)
        if inner is value:
            continue
        meaning = analysis.meaning(inner, top)
        if meaning is None or meaning.kind != "lib" or meaning.qual not in CLIENT_CONSTRUCTORS:
            continue
        summary["functions"][name] = {
            "name": name, "line": value.lineno, "calls": [], "hot": None, "unpooled": False, "client": True,
            "wrapper": False, "factory": meaning.qual, "factory_name": name, "factory_same": True, "blocks": None,
            "always": [], "writes": [], "handoffs": []}
        summary["defs"][name] = name


def _add_rule_facts(analysis: Any, summary: Summary, ref_of: Callable[[ast.AST, Any], Optional[Ref]],
                    imported: Callable[[ast.AST, Any], Optional[Ref]]) -> None:
    """The facts HTP403, HTP201 and HTP203 need across modules, added to a module's summary:

    - per function, "blocks": [blocking call, line, library] when it is a plain synchronous def that blocks on
      HTTP every run by this module alone (checks/async_blocking.py), and "always": the calls it makes every run
      ([ref, line, column]), through which it may block because of another module;
    - per function, "writes": the parameters it writes to a file ([position, name, "body" or "response"]), and
      "handoffs": the calls of other modules' functions it hands a whole body or a response to;
    - per top-level class, "class_facts": its bases as references, the client each `self.<attribute>` holds by
      this module's reading, and the attributes this module gives values of its own.
    """
    from .checks.async_blocking import blocking_functions, may_block_every_run, runs_every_time
    from .checks.downloads import _body_expressions, _argument_of, requests_made, writer_parameters
    from .hot_functions import function_key

    functions = summary["functions"]
    by_key = {function_key(func): func for func in analysis.facts.functions}
    blocking = blocking_functions(analysis)
    for key, record in functions.items():
        func = by_key[key]
        blocker = blocking.get(func)
        record["blocks"] = [blocker.call, blocker.line, blocker.family] if blocker is not None else None
        record["always"] = []
        record["writes"] = [list(param) for param in writer_parameters(analysis, func)]
        record["handoffs"] = []
    # The references summarize() already made of every call, by position: resolving them again costs as much.
    refs: Dict[Tuple[int, int], Ref] = {}
    for record in functions.values():
        for site in record["calls"]:
            if site[2] == "call":
                refs[(site[1], site[3])] = site[0]
    for call, ctx in analysis.facts.calls:
        func = ctx.func
        ref = refs.get((call.lineno, call.col_offset)) if func is not None else None
        if ref is None or functions[function_key(func)]["blocks"] or not may_block_every_run(func, analysis):
            continue
        if runs_every_time(analysis, call, ctx):
            functions[function_key(func)]["always"].append([ref, call.lineno, call.col_offset])
    for request in requests_made(analysis):
        if request.ctx.func is None:
            continue
        handed = [*_body_expressions(analysis, request), *request.uses]
        for expr in handed:
            found = _argument_of(analysis, expr)
            if found is None or analysis.function_target(found[0].func, request.ctx) is not None:
                continue  # not an argument, or a def of this module (the engine's)
            ref = ref_of(found[0].func, request.ctx)
            if ref is not None:
                site = [ref, found[0].lineno, found[0].col_offset]
                record = functions[function_key(request.ctx.func)]
                if site not in record["handoffs"]:
                    record["handoffs"].append(site)
    summary["class_facts"] = _class_facts(analysis, imported)
    # A module without `async def` holds no HTP403 for a blocking helper: its calls of one need no seed.
    summary["has_async"] = any(func.is_async for func in analysis.facts.functions)


def _class_facts(analysis: Any, imported: Callable[[ast.AST, Any], Optional[Ref]]) -> Dict[str, Any]:
    """Per top-level class: "bases" (references, None where a base is not an import or a class of this module),
    "clients" (attribute -> client constructor, as this module alone reads `self.<attribute>`) and "own" (the
    names its body binds); the module's "stored" attributes (any `obj.<attribute> = ...` here) are kept once,
    under "*": an inherited client overrides neither."""
    from .bindings import class_attribute, resolve

    top = analysis.facts.module_scope
    stores = top.attribute_stores
    # Only an attribute some value of which is a client constructor can hold a client: asking the others of
    # every class would cost classes x attributes on a big module.
    candidates: Set[str] = set()
    for name, found in stores.items():
        for store in found:
            if name != "*" and isinstance(store.value, ast.Call):
                meaning = resolve(store.value, store.scope)
                if meaning is not None and meaning.kind == "client":
                    candidates.add(name)
                    break
    out: Dict[str, Any] = {"*": {"stored": sorted(name for name in stores if name != "*")}}
    for cls in analysis.facts.classes:
        if cls.scope.parent is not top:
            continue
        bases: List[Optional[Ref]] = []
        for base in cls.bases:
            if isinstance(base, ast.Name) and any(c.name == base.id and c.scope.parent is top
                                                  for c in analysis.facts.classes):
                bases.append(["local", base.id])
            else:
                bases.append(imported(base, top))
        clients: Dict[str, str] = {}
        for name in sorted(candidates | set(cls.scope.bindings)):
            meaning = class_attribute(cls, name)
            if meaning is not None and meaning.kind == "client" and meaning.qual:
                clients[name] = meaning.qual
        out[cls.name] = {"bases": bases, "clients": clients, "own": sorted(cls.scope.bindings)}
    return out


def _unconditional(analysis: Any, node: ast.AST, func: FunctionInfo) -> bool:
    """The call runs every time `func` runs: no branch, loop or handler between it and the function's body."""
    current = analysis.parent(node)
    while current is not None and current is not func.node:
        if isinstance(current, _BRANCHES):
            return False
        current = analysis.parent(current)
    return current is func.node


def can_matter(summary: Summary) -> Set[str]:
    """The keys of the functions whose being hot can make a finding in their module: those that make an
    unpooled call or build a client, and the module's functions that call them (transitively); also those whose
    callers in other modules can have a finding (a blocking helper: HTP403 in an `async def` calling it), and
    `Cls.__init__` for a class holding a client on `self` (a subclass elsewhere uses it: HTP203/HTP403), so that
    modules naming them join the gate's second phase."""
    functions = summary["functions"]
    found = {key for key, record in functions.items()
             if record["unpooled"] or record["client"] or record.get("blocks")}
    found.update(f"{name}.__init__" for name, facts in summary.get("class_facts", {}).items()
                 if name != "*" and facts["clients"])
    changed = True
    while changed:
        changed = False
        for key, record in functions.items():
            if key not in found and any(site[0][0] == "local" and site[0][1] in found for site in record["calls"]):
                found.add(key)
                changed = True
    return found


# -- the tree's modules ----------------------------------------------------------------------------------
def project_root(paths: Iterable[str]) -> str:
    """The project root: the nearest folder holding pyproject.toml, setup.cfg, setup.py or .git at or above the
    folder common to `paths`, else that common folder."""
    common: Optional[str] = None
    last = None
    for path in paths:  # folder by folder as they come: no set of a big tree's folders
        folder = os.path.dirname(path)
        if folder != last:
            last = folder
            folder = os.path.abspath(folder)
            common = folder if common is None else os.path.commonpath([common, folder])
    if common is None:
        return os.getcwd()
    from .roots import find_project_root

    return find_project_root(common) or common


def _dotted(parts: List[str]) -> Optional[str]:
    return ".".join(parts) if parts and all(part.isidentifier() for part in parts) else None


def _module_parts(relative: str) -> List[str]:
    parts = relative.replace(os.sep, "/").split("/")
    parts[-1] = parts[-1][:-3] if parts[-1].endswith(".py") else parts[-1]
    if parts[-1] == "__init__":
        parts.pop()
    return parts


# The bits of ModuleMap's table of stems (128 KiB): few stems of a big project share one.
_STEM_BITS = 1 << 20


def _stem_bit(stem: str) -> int:
    """The bit of `stem` in ModuleMap's table: a CRC, the same in every process (str's hash is not)."""
    return zlib.crc32(stem.encode("utf-8", "surrogatepass")) % _STEM_BITS


def may_be_stem(stems: Union[bytes, bytearray], word: str) -> bool:
    """Whether `word` may be the last part of a module's name in `stems` (ModuleMap.stems): False surely names
    none (a word that is no identifier may be anything)."""
    if not word.isidentifier():
        return True
    bit = _stem_bit(word)
    return bool(stems[bit >> 3] >> (bit & 7) & 1)


class ModuleMap:
    """The project's modules by dotted name, from the tree's layout, and references resolved to functions.

    A file gets the name its packages give it (folders with `__init__.py` above it), and the names its path
    gives from the project root and from a `src/` folder there (namespace packages, scripts); the first
    claim on a name wins, package names first. A script's `import utils` also finds `utils.py` beside it.

    The files and their names are held on disk (ondisk.py): a big project's paths, names and the set of its
    files were most of what a run held per file. What the solve has looked up is kept in memory.
    """

    def __init__(self, paths: Iterable[str], root: str) -> None:
        from . import ondisk

        self.root = root
        self._db = self.db = ondisk.database()  # shared with the model's Summaries and the gate's _Rest
        self._db.execute("CREATE TABLE paths(n INTEGER PRIMARY KEY, path BLOB NOT NULL UNIQUE)")
        # One row per claim on a name: `prio` 0 for a package's or a `src/` layout's name, 1 for a name from the
        # project root; the first claim in (prio, seq) order wins, for the name and for the file alike.
        self._db.execute("CREATE TABLE claims(seq INTEGER PRIMARY KEY, prio INTEGER NOT NULL, name TEXT NOT NULL, "
                         "path BLOB NOT NULL)")
        self._packages_of: "OrderedDict[str, List[str]]" = OrderedDict()  # folder -> its packages, the recent ones
        # The last part of every name a module can be found by (a file's stem, a package's folder name): a name
        # ending otherwise names no module, told without a query or a walk of the folders (resolving a reference
        # tries every prefix of its dotted name, most of which name nothing: on an HTTP-dense project, walking
        # the folders above the importer for each of them was most of the solve). A bit per stem's CRC in a table
        # of fixed size, not a set of the stems: the main process holds nothing per file (a stem that shares a
        # bit with another is looked up as before).
        self._stems = bytearray(_STEM_BITS // 8)
        ondisk.insert_all(self._db, "INSERT OR IGNORE INTO paths(path) VALUES (?)",
                          ((ondisk.blob(path),) for path in self._claimed(absolute_path(p) for p in paths
                                                                          if p.endswith(".py"))))
        self._db.execute("CREATE INDEX claims_name ON claims(name, prio, seq)")
        self._db.execute("CREATE INDEX claims_path ON claims(path, prio, seq)")
        self._packages_of.clear()
        # The answers asked last are kept (a solve asks the same few names again and again); a big project's
        # every answer is not.
        self.known = functools.lru_cache(maxsize=_ANSWERS_KEPT)(self._known)  # type: ignore[method-assign]
        self.by_name = functools.lru_cache(maxsize=_ANSWERS_KEPT)(self._by_name)  # type: ignore[method-assign]
        self.name_of = functools.lru_cache(maxsize=_ANSWERS_KEPT)(self._name_of)  # type: ignore[method-assign]
        self._beside = functools.lru_cache(maxsize=_ANSWERS_KEPT)(self._beside_uncached)

    def _claimed(self, paths: Iterable[str]) -> Iterator[str]:
        """`paths`, each one's claims on names written on the way."""
        from . import ondisk

        claims: List[Tuple[int, str, str]] = []
        stems = self._stems
        # A path below the root is told from its start (both are normalized): os.path.relpath made absolute
        # paths of both, every time, and was a third of the map of a 770-file project, which a one-file answer
        # builds before anything else.
        below = self.root if self.root.endswith(os.sep) else self.root + os.sep
        for path in paths:
            data = ondisk.blob(path)
            folder, base = os.path.split(path)
            bit = _stem_bit(os.path.basename(folder) if base == "__init__.py" else base[:-3])
            stems[bit >> 3] |= 1 << (bit & 7)
            name = self._package_name(path)
            if name is not None:
                claims.append((0, name, data))
            rel = path[len(below):] if path.startswith(below) else os.path.relpath(path, self.root)
            if not rel.startswith(".."):
                parts = _module_parts(rel)
                name = _dotted(parts)
                if name is not None:
                    claims.append((1, name, data))
                if parts[:1] == ["src"]:
                    name = _dotted(parts[1:])
                    if name is not None:
                        claims.append((0, name, data))
            if len(claims) >= ondisk.BATCH:
                ondisk.insert_all(self._db, "INSERT INTO claims(prio, name, path) VALUES (?, ?, ?)", claims)
                claims = []
            yield path
        ondisk.insert_all(self._db, "INSERT INTO claims(prio, name, path) VALUES (?, ?, ?)", claims)

    def _package_name(self, path: str) -> Optional[str]:
        folder, base = os.path.split(path)
        return _dotted(self._packages(folder) + ([] if base == "__init__.py" else [base[:-3]]))

    def _packages(self, folder: str) -> List[str]:
        """The packages holding a module of `folder`, outermost first (memoised for the folders seen last: a
        folder's files come together, and its parents' answers are asked again)."""
        known = self._packages_of.get(folder)
        if known is None:
            known = []
            if os.path.isfile(os.path.join(folder, "__init__.py")):
                parent = os.path.dirname(folder)
                known = ([] if parent == folder else self._packages(parent)) + [os.path.basename(folder)]
            self._packages_of[folder] = known
            if len(self._packages_of) > _FOLDERS_KEPT:
                self._packages_of.popitem(last=False)
        else:
            self._packages_of.move_to_end(folder)
        return known

    @property
    def paths(self) -> "_Paths":
        """The project's modules (absolute paths), in the order given."""
        return _Paths(self._db)

    def known(self, path: str) -> bool:  # (replaced in __init__ by the same with its answers kept)
        """Whether `path` (absolute) is one of the project's modules."""
        return self._known(path)

    def by_name(self, name: str) -> Optional[str]:  # (as `known`)
        """The file the project's names give module `name`, or None."""
        return self._by_name(name)

    def name_of(self, path: str) -> Optional[str]:  # (as `known`)
        """The dotted name of the module at `path` (absolute), or None."""
        return self._name_of(path)

    def _known(self, path: str) -> bool:
        return self._db.execute("SELECT 1 FROM paths WHERE path = ?", (_blob(path),)).fetchone() is not None

    def _by_name(self, name: str) -> Optional[str]:
        if self._no_module(name):
            return None
        row = self._db.execute("SELECT path FROM claims WHERE name = ? ORDER BY prio, seq LIMIT 1",
                               (name,)).fetchone()
        return _text(row[0]) if row else None

    def _no_module(self, name: str) -> bool:
        """Whether `name` surely names no module: its last part, a name (a claim's every part is one, and a
        file beside the importer has it as its stem or folder), is no module's (`_stems`)."""
        return not may_be_stem(self._stems, name.rpartition(".")[2])

    @property
    def stems(self) -> bytes:
        """The table `_no_module` reads, for a worker to tell the same (`may_be_stem`)."""
        return bytes(self._stems)

    def _name_of(self, path: str) -> Optional[str]:
        row = self._db.execute("SELECT name FROM claims WHERE path = ? ORDER BY prio, seq LIMIT 1",
                               (_blob(path),)).fetchone()
        return row[0] if row else None

    def relative(self, path: str) -> str:
        """The path as messages show it: from the project root, with `/`."""
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def module(self, name: str, importer: Optional[str] = None) -> Optional[str]:
        """The file of module `name`: the project's names first, then as seen from the importer's folder and
        each folder above it up to the project root (a script's folder is on sys.path when it runs, and a
        project nested in a bigger tree names its modules from its own folder)."""
        found = self.by_name(name)
        if found is not None or importer is None:
            return found
        return self._beside(name, os.path.dirname(importer))

    def _beside_uncached(self, name: str, start: str) -> Optional[str]:
        """Module `name` as a script in folder `start` imports it (see `module`)."""
        if self._no_module(name):
            return None
        folder = start
        while True:
            base = os.path.join(folder, *name.split("."))
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if self.known(candidate):
                    return candidate
            parent = os.path.dirname(folder)
            if folder == self.root or parent == folder or not folder.startswith(self.root):
                return None
            folder = parent

    def absolute(self, path: str, importer: str) -> Optional[str]:
        """A relative module path (`..http.get`) made absolute from the importer's package."""
        level = len(path) - len(path.lstrip("."))
        if not level:
            return path
        name = self.name_of(importer)
        if name is None:
            return None
        package = name.split(".") if importer.endswith("__init__.py") else name.split(".")[:-1]
        if level - 1 > len(package):
            return None
        package = package[: len(package) - (level - 1)]
        rest = path[level:]
        return ".".join(package + ([rest] if rest else [])) or None


# Folders whose packages ModuleMap keeps (a tree's files come folder by folder), and the answers it keeps of
# each kind of lookup.
_FOLDERS_KEPT = 256
_ANSWERS_KEPT = 1024


class _Paths:
    """ModuleMap's modules as a sequence to go through (each time from the start) and count."""

    def __init__(self, db: Any) -> None:
        self._db = db

    def __iter__(self) -> Iterator[str]:
        from . import ondisk

        return (ondisk.text(row[0]) for row in ondisk.rows(self._db, "SELECT path FROM paths ORDER BY n"))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM paths").fetchone()[0])


def absolute_path(path: str) -> str:
    """`os.path.abspath(path)`, and the very string given when it is that already: a big tree's paths are then
    held once, not once per structure keyed by them."""
    return path if os.path.isabs(path) and os.path.normpath(path) == path else os.path.abspath(path)


def packed(summary: Optional[Summary]) -> Optional[bytes]:
    """A summary as a worker hands it to the main process: pickled and compressed, as `Summaries` holds it.

    A summary's pickle repeats its field names and references in every function record, and compresses to about
    a quarter at zlib's fastest level; reading one back costs a seventh more than unpickling it alone. On a
    100,000-file tree the phase-1 summaries alone were 16 MB of pickles held by the main process."""
    if summary is None:
        return None
    return zlib.compress(pickle.dumps(summary, pickle.HIGHEST_PROTOCOL), 1)


def unpacked(data: bytes) -> Summary:
    """What `packed` was given."""
    return pickle.loads(zlib.decompress(data))  # type: ignore[no-any-return]


class Summaries(MutableMapping[str, Optional[Summary]]):
    """Path -> summary (None: the module could not be summarized), in the order set, held packed (`packed`) on
    disk (ondisk.py), the last few read kept unpacked. A value may be set as `packed`'s bytes or as a summary.

    A summary's objects take about eight times its pickle (lists of call sites repeating the same references),
    and a big project's summaries held as objects were most of `check`'s memory; held packed in memory, they
    still grew with the project. The gate reads each module's summary a couple of times; the solve reads every
    one of them about a dozen times, so `narrow` first turns each into the little the solve reads of it (a small
    one is quick to read). Summaries are read only once made, so one unpacked again is the same summary."""

    def __init__(self, items: Iterable[Tuple[str, Union[Summary, bytes, None]]] = (), keep: int = 16,
                 db: Any = None) -> None:
        from . import ondisk

        self._db = db if db is not None else ondisk.database()  # a ModuleMap's (`ModuleMap.db`), or a new one
        # `none`: set as None (not summarized); `data`: the packed summary otherwise.
        self._db.execute("CREATE TABLE summaries(seq INTEGER PRIMARY KEY, path BLOB NOT NULL UNIQUE, "
                         "none INTEGER NOT NULL, data BLOB)")
        self._recent: "OrderedDict[str, Summary]" = OrderedDict()
        self._keep = keep
        ondisk.insert_all(self._db, _SET_SUMMARY, (_row(path, value) for path, value in items))

    def __setitem__(self, path: str, value: Union[Summary, bytes, None]) -> None:  # type: ignore[override]
        self._recent.pop(path, None)
        self._db.execute(_SET_SUMMARY, _row(path, value))

    def __getitem__(self, path: str) -> Optional[Summary]:
        summary = self._recent.get(path)
        if summary is not None:
            self._recent.move_to_end(path)
            return summary
        row = self._db.execute("SELECT none, data FROM summaries WHERE path = ?", (_blob(path),)).fetchone()
        if row is None:
            raise KeyError(path)
        if row[0]:
            return None
        summary = self._recent[path] = unpacked(row[1])
        if len(self._recent) > self._keep:
            self._recent.popitem(last=False)
        return summary

    def narrow(self, keep_of: Callable[[Summary], Summary]) -> None:
        """Hold `keep_of(summary)` in place of each summary."""
        from . import ondisk

        narrowed = ((packed(keep_of(unpacked(data))), seq) for seq, data in ondisk.pages(
            self._db, "SELECT seq, data FROM summaries WHERE seq > ? AND none = 0 ORDER BY seq LIMIT ?"))
        ondisk.insert_all(self._db, "UPDATE summaries SET data = ? WHERE seq = ?", narrowed)
        self._recent.clear()

    def __delitem__(self, path: str) -> None:
        if self._db.execute("DELETE FROM summaries WHERE path = ?", (_blob(path),)).rowcount == 0:
            raise KeyError(path)
        self._recent.pop(path, None)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._db.execute("SELECT 1 FROM summaries WHERE path = ?",
                                                          (_blob(path),)).fetchone() is not None

    def __iter__(self) -> Iterator[str]:
        """The paths set so far, read a batch at a time: one set while they are gone through comes after them
        and is not among them (the caller may set summaries as it goes)."""
        from . import ondisk

        last = self._db.execute("SELECT MAX(seq) FROM summaries").fetchone()[0]
        return (_text(row[1]) for row in ondisk.pages(
            self._db, "SELECT seq, path FROM summaries WHERE seq <= ? AND seq > ? ORDER BY seq LIMIT ?",
            (last if last is not None else -1,)))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM summaries").fetchone()[0])

    def numbered(self) -> Iterator[Tuple[int, str]]:
        """`iter(self)` with each path's place in the order (see `place`)."""
        from . import ondisk

        last = self.last()
        return ((row[0], _text(row[1])) for row in ondisk.pages(
            self._db, "SELECT seq, path FROM summaries WHERE seq <= ? AND seq > ? ORDER BY seq LIMIT ?", (last,)))

    def place(self, path: str) -> Optional[int]:
        """The path's place in the order (a number that grows with it; set again, a path keeps its place)."""
        row = self._db.execute("SELECT seq FROM summaries WHERE path = ?", (_blob(path),)).fetchone()
        return row[0] if row else None

    def at(self, place: int) -> str:
        """The path at `place`."""
        return _text(self._db.execute("SELECT path FROM summaries WHERE seq = ?", (place,)).fetchone()[0])

    def last(self) -> int:
        """The place of the path set last (-1 when none is)."""
        last = self._db.execute("SELECT MAX(seq) FROM summaries").fetchone()[0]
        return last if last is not None else -1


# Set a summary: a path set again keeps its place in the order.
_SET_SUMMARY = ("INSERT INTO summaries(path, none, data) VALUES (?, ?, ?) "
                "ON CONFLICT(path) DO UPDATE SET none = excluded.none, data = excluded.data")


def _row(path: str, value: Union[Summary, bytes, None]) -> Tuple[bytes, int, Optional[bytes]]:
    if value is None:
        return _blob(path), 1, None
    return _blob(path), 0, value if isinstance(value, bytes) else packed(value)


def _blob(path: str) -> bytes:
    return path.encode("utf-8", "surrogatepass")  # ondisk.blob, without importing ondisk (and sqlite3) here


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _as_set(summaries: MutableMapping[str, Any]) -> Iterator[str]:
    """The paths of `summaries` set so far, to go through while more may be set (a dict is copied)."""
    return iter(summaries) if isinstance(summaries, Summaries) else iter(list(summaries))


class _Record(Dict[str, Any]):
    """A function's record as the solve reads it (`_worth_only`): a field left out has its default value."""

    __slots__ = ()
    DEFAULTS: Dict[str, Any] = {"calls": (), "always": (), "writes": (), "handoffs": (), "hot": None,
                                "blocks": None, "factory": None, "unpooled": False, "client": False, "wrapper": False}

    def __missing__(self, key: str) -> Any:
        if key in self.DEFAULTS:
            return self.DEFAULTS[key]
        raise KeyError(key)


def _worth_only(summary: Summary, worth: Callable[[Ref], bool]) -> Summary:
    """`summary` as the solve reads it, once the gate has settled what can matter (`worth`), made small: most
    functions of a module call nothing that can matter, and a big module's summary was mostly its call sites.

    - A call site whose reference `worth` passes over is left out: every pass of the solve over sites skips it.
    - A site naming a function of the same module is kept once per function named, one site shared by every
      record naming it: the solve follows those only to the function (hot through a call, blocking through a
      call every run), never to the site's line or kind.
    - A record leaves out the fields that hold their default (`_Record`)."""
    defaults = _Record.DEFAULTS
    local: Dict[Tuple[str, str], Any] = {}  # (field, function named) -> the one site kept
    functions = {}
    for key, record in summary["functions"].items():
        kept = _Record()
        for field, value in record.items():
            if field in ("calls", "always"):
                value = _sites_worth(value, worth, local, field)
            elif field == "name" and value == key:
                value = key  # the same string
            if field not in defaults or (value if defaults[field] == () else value != defaults[field]):
                kept[field] = value
        functions[key] = kept
    return dict(summary, functions=functions,
                module_calls=_sites_worth(summary["module_calls"], worth, local, "module_calls"))


def _sites_worth(sites: List[Any], worth: Callable[[Ref], bool], local: Dict[Tuple[str, str], Any],
                 field: str) -> List[Any]:
    kept = []
    named: Set[str] = set()
    for site in sites:
        ref = site[0]
        if ref[0] == "local":
            if ref[1] in named:
                continue
            named.add(ref[1])
            site = local.setdefault((field, ref[1]), site)
        elif not worth(ref):
            continue
        kept.append(site)
    return kept


class Project:
    """The summaries of the project's modules, loaded as asked, and references resolved to (file, key)."""

    def __init__(self, modules: ModuleMap, summaries: Dict[str, Summary],
                 load: Callable[[str], Optional[Summary]]) -> None:
        self.modules = modules
        self.summaries = summaries
        self._load = load
        # Summarizes any project module, whatever it imports (set by `gather`): the modules of writer functions.
        self.demand: Optional[Callable[[str], Optional[Summary]]] = None
        # The gate's: told of each module loaded here with a summary, and, while set, given every module read
        # without one (a reference resolved through it may resolve otherwise once it has joined).
        self.loaded: Optional[Callable[[str], None]] = None
        self.consulted: Optional[Set[str]] = None
        # What `_in_module` found for (module, rest, depth), with the modules it went through without a summary
        # (`consulted`): a package whose `__init__.py` star-imports modules that star-import others was searched
        # again down every path of stars to each of them, twelve modules deep, for every reference into it (an
        # HTTP-dense project's solve did not end in 15 minutes). The depth is part of the key: the search stops
        # twelve modules down, so what a module gives depends on how deep it is met. `forget` clears it.
        self._found: "OrderedDict[Tuple[str, Tuple[str, ...], int], _Found]" = OrderedDict()
        # The module a dotted path imported in a module names, and the names after it (`_target`): the same at
        # every depth, and the prefixes of the path tried for it each cost a lookup; the modules do not change.
        self._targets: "OrderedDict[Tuple[str, Tuple[str, ...], str, bool], Optional[Tuple[str, Tuple[str, ...]]]]" = \
            OrderedDict()

    def summary(self, path: str) -> Optional[Summary]:
        if path not in self.summaries:
            loaded = self.summaries[path] = self._load(path)  # type: ignore[assignment]
            if loaded is not None and self.loaded is not None:
                self.loaded(path)
        found = self.summaries[path]
        if found is None and self.consulted is not None:
            self.consulted.add(path)
        return found

    def forget(self) -> None:
        """Drop what resolving found: to be called when a module read without a summary gets one (a reference
        that went through it may resolve otherwise now)."""
        self._found.clear()

    def resolve(self, ref: Ref, importer: str) -> Optional[Tuple[str, str]]:
        """The project function `ref` (made in `importer`) names, or None (not a project function, or unknown;
        a "verbs" reference names several: see `resolve_all`)."""
        if ref[0] == "local":
            return importer, ref[1]
        if ref[0] != "import":
            return None
        return self._resolve_path(ref[1], list(ref[2]), importer, 0)

    def resolve_all(self, ref: Ref, importer: str) -> List[Tuple[str, str]]:
        """Every project function `ref` names: one, or a class-based view's HTTP-verb methods of its own."""
        if ref[0] != "verbs":
            found = self.resolve(ref, importer)
            return [found] if found is not None else []
        from .hot_functions import VIEW_METHODS

        inner = ref[1]
        methods = (self.resolve(["import", inner[1], [*inner[2], verb]], importer) for verb in VIEW_METHODS)
        return [found for found in methods if found is not None]

    def _resolve_path(self, path: str, attrs: Sequence[str], importer: str, depth: int, star: bool = False
                      ) -> Optional[Tuple[str, str]]:
        if depth > 12:
            return None
        key = (path, tuple(attrs), importer, star)
        target = self._targets.get(key, _UNSEEN)
        if target is _UNSEEN:
            target = self._targets[key] = self._target(path, attrs, importer, star)
            if len(self._targets) > _FOUND_KEPT:
                self._targets.popitem(last=False)
        else:
            self._targets.move_to_end(key)
        return None if target is None else self._in_module(target[0], target[1], depth + 1)

    def _target(self, path: str, attrs: Sequence[str], importer: str, star: bool
                ) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """The module `path` (imported in `importer`) names, followed by `attrs`, and the names after it. The
        path of a star import (`star`) names a module itself or nothing: `from .appinfo import *` with no
        `appinfo` module in the project is not the package's attribute `appinfo` (a package star-importing
        modules the project lacks was searched for `appinfo.appinfo.user.f`, ... every order of them, twelve
        deep)."""
        absolute = self.modules.absolute(path, importer)
        if absolute is None:
            return None
        whole = absolute.split(".")
        parts = (*whole, *attrs)
        for cut in range(len(parts), len(whole) - 1 if star else 0, -1):
            module = self.modules.module(".".join(parts[:cut]), importer)
            if module is not None:
                return module, parts[cut:]
        return None

    def _in_module(self, module: str, rest: Sequence[str], depth: int) -> Optional[Tuple[str, str]]:
        """What `rest` names in `module`, met `depth` modules down: through the module's re-exports, sub-modules
        and star imports, each (module, rest, depth) searched once (`_found`)."""
        if not rest or depth > 12:
            return None  # a module itself is not called
        key = (module, tuple(rest), depth)
        outer = self.consulted
        known = self._found.get(key)
        if known is not None:
            self._found.move_to_end(key)
            if outer is not None:
                outer.update(known[1])
            return known[0]
        self.consulted = mine = set()  # this search's, kept with its answer whether or not the caller watches
        try:
            found = self._in_module_read(module, rest, depth)
        finally:
            self.consulted = outer
        if outer is not None:
            outer.update(mine)
        self._found[key] = (found, frozenset(mine) if mine else _NOTHING)
        if len(self._found) > _FOUND_KEPT:
            self._found.popitem(last=False)
        return found

    def _in_module_read(self, module: str, rest: Sequence[str], depth: int) -> Optional[Tuple[str, str]]:
        summary = self.summary(module)
        if summary is None:
            return None
        head = rest[0]
        if head in summary["defs"] and len(rest) == 1:
            return module, summary["defs"][head]
        if head in summary["classes"]:
            methods = summary["classes"][head]
            wanted = rest[1] if len(rest) == 2 else "__init__" if len(rest) == 1 else None
            return (module, methods[wanted]) if wanted in methods else None
        if head in summary["exports"]:  # `__init__.py` re-exports, and names a module imported itself
            return self._resolve_path(summary["exports"][head], rest[1:], module, depth)
        name = self.modules.name_of(module)
        if name is not None:
            sub = self.modules.module(f"{name}.{head}")
            if sub is not None:
                return self._in_module(sub, rest[1:], depth + 1)
        for star in summary["stars"]:
            found = self._resolve_path(star, rest, module, depth, star=True)
            if found is not None:
                return found
        return None


# The answers of `Project._in_module` kept (the last asked; a big project's every one is not), and the modules
# gone through without a summary of most of them.
_FOUND_KEPT = 1 << 15
_NOTHING: FrozenSet[str] = frozenset()
_UNSEEN: Any = object()
_Found = Tuple[Optional[Tuple[str, str]], FrozenSet[str]]


class _Selected:
    """Some of `_Rest`'s modules (`_Rest.where`): a focused solve searches its two parts for different needles,
    and a shard's were nearly all of a big project's files, held as lists of paths."""

    def __init__(self, rest: "_Rest", keep: Callable[[str], bool]) -> None:
        self._rest = rest
        self._keep = keep

    def __iter__(self) -> Iterator[str]:
        return (path for path in self._rest if self._keep(path))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return next(iter(self), None) is not None


class _Rest:
    """The modules phase 1 of the gate left out that phase 2 has not taken in yet, in their order, on disk (a
    big project's are nearly all its files)."""

    def __init__(self, paths: Iterable[str], db: Any) -> None:
        from . import ondisk

        self._db = db
        db.execute("CREATE TABLE rest(n INTEGER PRIMARY KEY, path BLOB NOT NULL UNIQUE)")
        ondisk.insert_all(db, "INSERT OR IGNORE INTO rest(path) VALUES (?)", ((_blob(path),) for path in paths))

    def __iter__(self) -> Iterator[str]:
        from . import ondisk

        return (_text(row[0]) for row in ondisk.rows(self._db, "SELECT path FROM rest ORDER BY n"))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM rest").fetchone()[0])

    def __bool__(self) -> bool:
        return self._db.execute("SELECT 1 FROM rest LIMIT 1").fetchone() is not None

    def where(self, keep: Callable[[str], bool]) -> "_Selected":
        """The modules here that `keep`, read from the table each time they are gone through."""
        return _Selected(self, keep)

    def numbered(self) -> Iterator[Tuple[int, str]]:
        """Each module with its number here, in their order."""
        from . import ondisk

        return ((row[0], _text(row[1])) for row in ondisk.rows(self._db, "SELECT n, path FROM rest ORDER BY n"))

    def numbered_as(self, numbers: Iterable[int]) -> List[str]:
        """The modules still here of those numbered `numbers` (as `numbered` gives them), in their order."""
        from . import ondisk

        found: List[Tuple[int, str]] = []
        for batch in ondisk.batches(sorted(set(numbers)), ondisk.IN_AT_ONCE):
            found.extend((n, _text(path)) for n, path in self._db.execute(
                f"SELECT n, path FROM rest WHERE n IN ({','.join('?' * len(batch))})", batch))
        return [path for _, path in sorted(found)]

    def taking(self, joined: Iterable[str]) -> List[str]:
        """Take the modules of `joined` out; those that were here, in their order here."""
        from . import ondisk

        # Looked up by path: going through every module here cost a round of the gate as much as its search.
        found = sorted(ondisk.rows_in(self._db, "SELECT n, path FROM rest WHERE path IN ({marks})", list(joined)))
        ondisk.insert_all(self._db, "DELETE FROM rest WHERE n = ?", ((n,) for n, _ in found))
        return [_text(path) for _, path in found]


class _Targets:
    """The functions call sites name that are not functions of the caller's own module, each given a number
    (negative, so a _Calls entry tells them from its own module's functions)."""

    def __init__(self) -> None:
        self._numbers: Dict[Tuple[str, str], int] = {}
        self._targets: List[Tuple[str, str]] = []

    def number(self, target: Tuple[str, str]) -> int:
        number = self._numbers.get(target)
        if number is None:
            number = self._numbers[target] = -1 - len(self._targets)
            self._targets.append(target)
        return number

    def of(self, number: int) -> Tuple[str, str]:
        return self._targets[-1 - number]

    def known(self, target: Tuple[str, str]) -> Optional[int]:
        """The number of `target`, None when it has none yet."""
        return self._numbers.get(target)


class _Calls:
    """What the call sites of one module's functions name, resolved so far, held small: per function (in the
    order of the summary's `functions`), the numbers of the functions it calls (its own module's by their place,
    others by `_Targets` numbers), and whether a site is left to resolve (`pending`: it names nothing wanted yet,
    or what it names was not summarized yet); `searched_with`: the number of needles it was resolved with."""

    __slots__ = ("offsets", "targets", "pending", "searched_with")

    def __init__(self, offsets: Any, targets: Any, pending: bytearray, searched_with: int) -> None:
        self.offsets, self.targets, self.pending, self.searched_with = offsets, targets, pending, searched_with

    @classmethod
    def resolved(cls, summary: Summary, path: str, numbers: _Targets,
                 resolve: Callable[[List[Any], str], Tuple[Iterable[Tuple[str, str]], bool]],
                 before: Optional["_Calls"] = None) -> "_Calls":
        """The module's calls resolved: those of its functions pending `before`, the others as they were."""
        functions = summary["functions"]
        place = {key: index for index, key in enumerate(functions)}
        calls = cls(array("i", [0]), array("i"), bytearray(len(functions)),
                    before.searched_with if before is not None else -1)
        for index, record in enumerate(functions.values()):
            if before is not None and not before.pending[index]:
                calls.targets.extend(before.of(index))
            else:
                named, pending = resolve(record["calls"], path)
                calls.pending[index] = pending
                for target in named:
                    local = place.get(target[1]) if target[0] == path else None
                    calls.targets.append(local if local is not None else numbers.number(target))
            calls.offsets.append(len(calls.targets))
        return calls

    def of(self, index: int) -> Any:
        return self.targets[self.offsets[index]:self.offsets[index + 1]]

    def packed(self) -> bytes:
        head = array("i", [self.searched_with, len(self.pending), len(self.targets)])
        return head.tobytes() + self.offsets.tobytes() + self.targets.tobytes() + bytes(self.pending)

    @classmethod
    def unpacked(cls, data: bytes) -> "_Calls":
        head = array("i")
        head.frombytes(data[:12])
        searched_with, count, length = head
        offsets, targets = array("i"), array("i")
        end = 12 + 4 * (count + 1)
        offsets.frombytes(data[12:end])
        targets.frombytes(data[end:end + 4 * length])
        return cls(offsets, targets, bytearray(data[end + 4 * length:]), searched_with)


class _CallsTable:
    """Path -> _Calls, in the order first set, held packed on disk (a 100,000-file tree's were a megabyte)."""

    def __init__(self, db: Any) -> None:
        self._db = db
        db.execute("CREATE TABLE calls(seq INTEGER PRIMARY KEY, path BLOB NOT NULL UNIQUE, data BLOB NOT NULL)")

    def get(self, path: str) -> Optional[_Calls]:
        row = self._db.execute("SELECT data FROM calls WHERE path = ?", (_blob(path),)).fetchone()
        return _Calls.unpacked(row[0]) if row else None

    def place(self, path: str) -> Optional[int]:
        """The path's place in the order `items` goes through."""
        row = self._db.execute("SELECT seq FROM calls WHERE path = ?", (_blob(path),)).fetchone()
        return row[0] if row else None

    def __setitem__(self, path: str, calls: _Calls) -> None:
        self._db.execute("INSERT INTO calls(path, data) VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET "
                         "data = excluded.data", (_blob(path), calls.packed()))

    def items(self) -> Iterator[Tuple[str, _Calls]]:
        """Each path and its calls, those set as they are gone through included."""
        from . import ondisk

        return ((_text(path), _Calls.unpacked(data)) for _, path, data in ondisk.pages(
            self._db, "SELECT seq, path, data FROM calls WHERE seq > ? ORDER BY seq LIMIT ?"))

    def clear(self) -> None:
        self._db.execute("DROP TABLE calls")


# -- the solver ------------------------------------------------------------------------------------------
_LATER = ("", "")  # a reference not resolved yet: it names nothing wanted so far (see `_solve_gated`)


class _Hot:
    __slots__ = ("how", "place", "caller", "crossed")

    def __init__(self, how: str, place: Tuple[str, int], caller: Optional[str], crossed: bool) -> None:
        self.how = how  # the root reason, without its place
        self.place = place  # (file, line) of the root reason
        self.caller = caller  # the hot caller's qualified name, when hot by source 4
        self.crossed = crossed  # the chain that makes it hot crosses a module boundary

    def rank(self) -> Tuple[bool, str, int, str, str]:
        """The order between two reasons for one function: its own module's first, then by place."""
        return (self.crossed, self.place[0], self.place[1], self.how, self.caller or "")


def solve(project: Project, worth: Callable[[Ref], bool] = lambda ref: True,
          matters: Optional[Callable[[Tuple[str, str]], bool]] = None) -> Dict[str, Seeds]:
    """Hot functions over the whole project; for each file, the functions hot because of another module.

    `worth(ref)`: whether a loop's or a registration's reference to another module can name a function that
    can matter (the gate's, see `_solve_gated`); one that cannot is not resolved. `matters(function)`: whether
    its being hot can make a finding (the gate's `can_matter`, across modules); the others are no seeds. A
    function that cannot matter was made hot only when a call of it named a word of one that can: whether it
    was then depended on the words of modules that have nothing to do with it."""
    hot: Dict[Tuple[str, str], _Hot] = {}
    queue: List[Tuple[str, str]] = []

    def mark(target: Optional[Tuple[str, str]], state: _Hot) -> None:
        # A function hot for several reasons keeps the least by `_Hot.rank` (its own module's first, then by
        # place), whatever order the modules and calls are gone through in: the reason did not depend on which
        # modules the gate summarized first, so the seeds of a file solved from the modules that can matter to it
        # (focus.py) are the whole project's.
        if target is None:
            return
        known = hot.get(target)
        if known is not None:
            if state.rank() >= known.rank():
                return
        else:
            summary = project.summary(target[0])
            if summary is None or target[1] not in summary["functions"]:
                return
        hot[target] = state
        queue.append(target)

    # Each module's own hot functions first: their reason is the module's own and wins.
    for path in _as_set(project.summaries):
        summary = project.summary(path)
        for key, record in (summary or {}).get("functions", {}).items():
            if record["hot"] is not None:
                mark((path, key), _Hot(record["hot"][0], (path, record["hot"][1]), None, False))
    # Sources 1-3 across modules: a loop, mapping call or registration naming another module's function.
    for path in _as_set(project.summaries):
        summary = project.summary(path)
        if summary is None:
            continue
        sites = list(summary["module_calls"])
        for record in summary["functions"].values():
            sites.extend(site for site in record["calls"] if site[2] != "call")
        for ref, line, kind, _ in sites:
            for target in project.resolve_all(ref, path) if worth(ref) else ():
                if target[0] != path:
                    mark(target, _Hot(kind, (path, line), None, True))
    # Source 4: called from a hot function.
    while queue:
        caller = queue.pop()
        state = hot[caller]
        summary = project.summary(caller[0])
        assert summary is not None
        record = summary["functions"][caller[1]]
        for site in record["calls"]:
            target = project.resolve(site[0], caller[0]) if worth(site[0]) else None
            if target is not None:
                mark(target, _Hot(state.how, state.place, record["name"], state.crossed or target[0] != caller[0]))

    hot_seeds: Dict[str, Dict[str, Tuple[str, str, int, str]]] = {}
    for (path, key), state in hot.items():
        if not state.crossed or (matters is not None and not matters((path, key))):
            continue
        summary = project.summary(path)
        if summary is not None and summary["functions"][key]["factory"]:
            # A client factory run many times is reported at its callers' calls (RULES.md, HTP103/HTP104),
            # which this model does not hand the engine yet; hot here, its own constructor would be reported.
            continue
        where = f"{project.modules.relative(state.place[0])}:{state.place[1]}"
        reason = f"{state.how} at {where}"
        if state.caller is not None:
            reason = f"called from {state.caller}(), {reason}"
        hot_seeds.setdefault(path, {})[key] = (reason, project.modules.relative(state.place[0]), state.place[1],
                                               state.place[0])
    factories = _factory_calls(project, worth)
    rules = blocking_and_writers(project, worth)
    shadowed = _shadowed(project)
    return {path: ModuleSeeds(hot_seeds.get(path, {}), factories.get(path, {}), **rules.get(path, {}),
                              shadowed=shadowed.get(path, frozenset()))
            for path in sorted(set(hot_seeds) | set(factories) | set(rules) | set(shadowed))}


def _shadowed(project: Project) -> Dict[str, FrozenSet[str]]:
    """Per file, the HTTP library names its imports find among the project's own files, as Python would when
    the program runs from the project root: a module or package at the root or in its `src/` folder
    (`requests.py`, `src/requests/`), or, for a script (a file outside any package), one beside it. Such an
    `import requests` is the project's module: the engine must not take its calls for the library's (its own
    functions are followed like any other module's). A `requests.py` inside a package shadows nothing (imports
    are absolute)."""
    known = project.modules.known
    root = project.modules.root
    found: Dict[str, FrozenSet[str]] = {}
    for path in _as_set(project.summaries):
        summary = project.summaries.get(path)
        if not summary or not summary.get("library_roots"):
            continue
        folders = [root, os.path.join(root, "src")]
        here = os.path.dirname(path)
        if not os.path.isfile(os.path.join(here, "__init__.py")):
            folders.append(here)
        own = frozenset(name for name in summary["library_roots"]
                        if any(known(os.path.join(folder, name + ".py"))
                               or known(os.path.join(folder, name, "__init__.py")) for folder in folders))
        if own:
            found[path] = own
    return found


def blocking_and_writers(project: Project, worth: Callable[[Ref], bool] = lambda ref: True
                         ) -> Dict[str, Dict[str, Any]]:
    """The seeds of HTP403, HTP201 and HTP203 across modules, per file (engine.ModuleSeeds' `blocking`,
    `writers` and `inherited`):

    - synchronous functions that block on HTTP every run, as a fixpoint through the calls each makes every run
      (a function blocking because of its own module is the engine's; here the chains crossing modules), and
      every call of one from another module;
    - calls handing a whole body or a response to a function of another module that writes that parameter to
      a file (that module is summarized on demand: it need not name any HTTP library);
    - the clients a class's `self.<attribute>` holds through base classes defined in other modules.
    """
    out: Dict[str, Dict[str, Any]] = {}
    memo: "OrderedDict[Tuple[str, str, str, Tuple[str, ...]], Optional[Tuple[str, str]]]" = OrderedDict()

    def resolve(ref: Ref, importer: str) -> Optional[Tuple[str, str]]:
        key = (importer, ref[0], ref[1], tuple(ref[2]) if ref[0] == "import" else ())
        if key in memo:
            memo.move_to_end(key)
            return memo[key]
        found = memo[key] = project.resolve(ref, importer)
        if len(memo) > _ANSWERS_KEPT:  # the answers asked last (every call of a big project's was memory)
            memo.popitem(last=False)
        return found

    def record_of(target: Tuple[str, str]) -> Optional[Dict[str, Any]]:
        summary = project.summary(target[0])
        return summary["functions"].get(target[1]) if summary else None

    paths = [path for path in _as_set(project.summaries) if project.summaries.get(path)]
    # -- writers (first: the modules of the functions handed a body are read now, whatever they import, before
    # any reference into them is resolved and remembered).
    for path in paths:
        for record in project.summaries[path]["functions"].values():  # type: ignore[index]
            for ref, line, col in record.get("handoffs", ()):
                _demand(project, ref, path)
                target = resolve(ref, path)
                writer = record_of(target) if target is not None and target[0] != path else None
                if writer and writer.get("writes"):
                    seeds = out.setdefault(path, {}).setdefault("writers", {})
                    seeds[(line, col)] = (writer["name"], project.modules.relative(target[0]),  # type: ignore[index]
                                          writer["line"], target[0],  # type: ignore[index]
                                          tuple(tuple(param) for param in writer["writes"]))
    # -- blocking: roots, then callers that call a blocking function every run, across modules.
    blocks: Dict[Tuple[str, str], Tuple[str, str, int, str]] = {}
    for path in paths:
        for key, record in project.summaries[path]["functions"].items():  # type: ignore[index]
            if record.get("blocks"):
                blocks[(path, key)] = (record["blocks"][0], path, record["blocks"][1], record["blocks"][2])
    if blocks:
        blocks = _spread_blocking(project, paths, blocks, resolve, worth)
        for path in paths:
            if not project.summaries[path].get("has_async", True):  # type: ignore[union-attr]
                continue
            for record in project.summaries[path]["functions"].values():  # type: ignore[index]
                for ref, line, kind, col in record["calls"]:
                    if kind != "call" or ref[0] == "local" or not worth(ref):
                        continue
                    target = resolve(ref, path)
                    if target is None or target[0] == path or target not in blocks:
                        continue
                    call, root, root_line, family = blocks[target]
                    callee = record_of(target)
                    seeds = out.setdefault(path, {}).setdefault("blocking", {})
                    seeds[(line, col)] = (call, project.modules.relative(root), root_line, root,
                                          callee["name"] if callee else target[1], family)
    # -- clients inherited from base classes of other modules.
    for path in paths:
        facts = project.summaries[path].get("class_facts", {})  # type: ignore[union-attr]
        stored = set(facts.get("*", {}).get("stored", ()))
        for name, cls in facts.items():
            if name == "*":
                continue
            inherited: Dict[str, str] = {}
            for base in cls["bases"]:
                if base is None or base[0] == "local":
                    continue  # a base of this module: the engine reads it, and hands on what it inherits
                found = _resolve_class(project, base, path, 0)
                if found is not None and found[0] != path:
                    for attribute, constructor in _class_clients(project, found, 0).items():
                        inherited.setdefault(attribute, constructor)
            for attribute in list(inherited):
                if attribute in cls["clients"] or attribute in cls["own"] or attribute in stored:
                    del inherited[attribute]
            if inherited:
                seeds = out.setdefault(path, {}).setdefault("inherited", {})
                seeds[name] = tuple(sorted(inherited.items()))
    return out


def _spread_blocking(project: Project, paths: List[str], blocks: Dict[Tuple[str, str], Any],
                     resolve: Callable[[Ref, str], Optional[Tuple[str, str]]], worth: Callable[[Ref], bool]
                     ) -> Dict[Tuple[str, str], Any]:
    """`blocks` given to every function that calls one of them every run, across modules (spread_to_callers).

    The call graph is held as numbers, on disk: a function is its module's place in `paths` and its own place in
    the module's `functions` (a big project's graph, as tuples naming functions, was most of the solve's
    memory); only the functions found blocking are named again."""
    from . import ondisk

    number = {path: place for place, path in enumerate(paths)}
    shift = 32

    @functools.lru_cache(maxsize=16)
    def places(place: int) -> Dict[str, int]:
        functions = project.summaries[paths[place]]["functions"]  # type: ignore[index]
        return {key: index for index, key in enumerate(functions)}

    def node(path: str, key: str) -> Optional[int]:
        place = number.get(path)
        index = places(place).get(key) if place is not None else None
        return None if index is None else place << shift | index

    def named(node: int) -> Tuple[str, str]:
        place = node >> shift
        functions = project.summaries[paths[place]]["functions"]  # type: ignore[index]
        return paths[place], next(itertools.islice(functions, node & ((1 << shift) - 1), None))

    db = project.modules.db
    db.execute("CREATE TEMP TABLE callers(seq INTEGER PRIMARY KEY, callee INTEGER NOT NULL, caller INTEGER NOT NULL)")

    def edges() -> Iterator[Tuple[int, int]]:
        for place, path in enumerate(paths):
            for index, (key, record) in enumerate(project.summaries[path]["functions"].items()):  # type: ignore[index]
                for ref, _, _ in record.get("always", ()):
                    target = resolve(ref, path) if worth(ref) else None  # a blocking function can matter
                    if target is not None and target != (path, key):
                        callee = node(*target)
                        if callee is not None:  # else no function of the project: never blocking
                            yield callee, place << shift | index

    try:
        ondisk.insert_all(db, "INSERT INTO callers(callee, caller) VALUES (?, ?)", edges())
        db.execute("CREATE INDEX callers_callee ON callers(callee, seq)")

        class Callers:
            @staticmethod
            def get(callee: int, default: Any = ()) -> List[int]:
                return [row[0] for row in db.execute("SELECT caller FROM callers WHERE callee = ? ORDER BY seq",
                                                     (callee,))]

        found = {node(*function): value for function, value in blocks.items()}
        spread_to_callers(found, Callers())  # type: ignore[arg-type]
        return {named(function): value for function, value in found.items()}  # type: ignore[arg-type]
    finally:
        db.execute("DROP TABLE callers")


def _demand(project: Project, ref: Ref, importer: str) -> None:
    """Summarize, if the gate left them out, the project modules `ref` may name (`project.demand`, set by
    `gather`): a writer function's module need not import any HTTP library."""
    demand = getattr(project, "demand", None)
    if demand is None or ref[0] != "import":
        return
    absolute = project.modules.absolute(ref[1], importer)
    if absolute is None:
        return
    parts = absolute.split(".") + list(ref[2])
    for cut in range(len(parts), 0, -1):
        module = project.modules.module(".".join(parts[:cut]), importer)
        if module is not None:
            if project.summaries.get(module) is None:
                project.summaries[module] = demand(module)
                project.forget()  # a reference that went through it may resolve otherwise now
            return


def _resolve_class(project: Project, ref: Ref, importer: str, depth: int) -> Optional[Tuple[str, str]]:
    """The project class (file, top-level class name) that a base class reference names, or None."""
    if depth > 8:
        return None
    if ref[0] == "local":
        return importer, ref[1]
    absolute = project.modules.absolute(ref[1], importer)
    if absolute is None:
        return None
    parts = absolute.split(".") + list(ref[2])
    for cut in range(len(parts) - 1, 0, -1):
        module = project.modules.module(".".join(parts[:cut]), importer)
        if module is None:
            continue
        summary = project.summary(module)
        rest = parts[cut:]
        if summary is None:
            return None
        if len(rest) == 1 and rest[0] in summary.get("class_facts", {}) and rest[0] != "*":
            return module, rest[0]
        if rest[0] in summary["exports"]:
            return _resolve_class(project, ["import", summary["exports"][rest[0]], rest[1:]], module, depth + 1)
        return None
    return None


def _class_clients(project: Project, cls: Tuple[str, str], depth: int) -> Dict[str, str]:
    """The clients `self.<attribute>` holds in instances of a project class: its module's reading, then what
    its bases (of any module) hold, where the class gives the attribute no value of its own."""
    summary = project.summary(cls[0])
    facts = (summary or {}).get("class_facts", {}).get(cls[1])
    if facts is None or depth > 8:
        return {}
    found = dict(facts["clients"])
    stored = set(summary.get("class_facts", {}).get("*", {}).get("stored", ()))  # type: ignore[union-attr]
    for base in facts["bases"]:
        if base is None:
            continue
        target = _resolve_class(project, base, cls[0], 0)
        if target is None or target == cls:
            continue
        for attribute, constructor in _class_clients(project, target, depth + 1).items():
            if attribute not in facts["own"] and attribute not in stored:  # this module's own value wins
                found.setdefault(attribute, constructor)
    return found


def _factory_calls(project: Project, worth: Callable[[Ref], bool]
                   ) -> Dict[str, Dict[Tuple[int, int], Tuple[str, str, str, int, str, bool]]]:
    """Per file, its calls of client factories defined in other modules: (line, column) -> (client constructor,
    factory name, path from the project root, line of its def, absolute path, whether every call builds the same
    client). A factory's calls in its own module are the engine's already."""
    found: Dict[str, Dict[Tuple[int, int], Tuple[str, str, str, int, str, bool]]] = {}
    for path in _as_set(project.summaries):
        summary = project.summary(path)
        if summary is None:
            continue
        sites = [site for record in summary["functions"].values() for site in record["calls"]]
        sites.extend(summary["module_calls"])
        for ref, line, kind, col in sites:
            if kind not in ("call", _CALLED_IN_A_LOOP) or ref[0] == "local" or not worth(ref):
                continue  # a callable passed on is not called here; a factory is a function that can matter
            target = project.resolve(ref, path)
            if target is None or target[0] == path:
                continue
            factory = project.summary(target[0])["functions"][target[1]]  # type: ignore[index]
            if factory["factory"]:
                found.setdefault(path, {})[(line, col)] = (factory["factory"],
                                                           factory.get("factory_name") or factory["name"],
                                                           project.modules.relative(target[0]), factory["line"],
                                                           target[0], factory.get("factory_same") is True)
    return found


# -- the two-phase gate ----------------------------------------------------------------------------------
def _summary_or_none(tree: Optional[ast.Module], options: Options) -> Optional[Summary]:
    """A module's summary; an engine bug on one module costs its cross-module facts, not the run (the file's
    own check still runs, and reports such a bug as its error)."""
    if tree is None:
        return None
    try:
        return summarize(tree, options)
    except (RecursionError, MemoryError):
        return None
    except Exception:  # noqa: BLE001 - see the docstring
        return None


class Needles(NamedTuple):
    """What phase 2 of the gate searches the remaining files' bytes for (small and picklable: it goes to workers).

    A wanted reference is a function's or class's name with its module's token, the word every import of the
    module names (its file stem, a package's folder name). `direct`: token -> the names wanted in its module;
    `through`: the name of a package folder above modules -> their tokens, each with its names (`import app`
    then `app.http.get_json()`)."""

    direct: Dict[str, FrozenSet[str]]
    through: Dict[str, Dict[str, FrozenSet[str]]]

    def match(self, data: bytes) -> bool:
        """The file's bytes may reference a wanted function, as another module's reference must be spelled:
        through an import statement naming its module's token (or a package above it). Then the name and the
        token in one import statement (`from app.http import get_json`, `from .http import Api`), the name
        right after the token and a dot (`http.get_json`, `app.http.Api`), or the token imported under an
        alias and the name after a dot (`import app.http as h` then `h.get_json`); a star import of the
        module matches whatever it names (`from .http import *` re-exports)."""
        statements = import_statements(data)
        if not statements:
            return False
        # Most files import no module wanted (half the time of a shard's search was telling so statement by
        # statement).
        if not self.may_import(b"\n".join(statements)):
            return False
        imported = [{word.decode("utf-8", "replace") for word in _WORD.findall(statement)}
                    for statement in statements]
        every = set().union(*imported)
        direct = every.intersection(self.direct)
        through = every.intersection(self.through)
        if not direct and not through:
            return False
        aliased = {word.decode("utf-8", "replace") for statement in statements
                   for word in _ALIASED.findall(statement)}
        after_dot: Optional[Set[str]] = None
        for token in direct:
            held = [(words, b"*" in statement) for words, statement in zip(imported, statements) if token in words]
            if any(star for _, star in held):
                return True
            names = self.direct[token]
            if any(names & words for words, _ in held):
                return True
            if names & _after(token, data):
                return True
            if token in aliased:
                if after_dot is None:
                    after_dot = {word.decode("utf-8", "replace") for word in _AFTER_DOT.findall(data)}
                if names & after_dot:
                    return True
        return any(names & _after(token, data) for word in through for token, names in self.through[word].items())

    def may_name(self, data: bytes) -> bool:
        """False when `match(data)` is surely False, told by a search of the bytes for each wanted token: every
        way `match` has of matching holds a token (a folder above one is not enough). Only for a few ASCII
        tokens (`_FEW_TOKENS`, each a search of the whole file); True otherwise."""
        tokens = _token_bytes(self, direct_only=True)
        return tokens is None or len(tokens) > _FEW_TOKENS or any(token in data for token in tokens)

    def may_import(self, statements: bytes) -> bool:
        """False when a file's import statements (`statements`, one a line) name no token and no package folder
        wanted: `match` is then False, told without a set or a decoding per statement."""
        keys = _token_bytes(self)
        return keys is None or not keys.isdisjoint(_WORD.findall(statements))


_AFTER_DOT = re.compile(rb"\.[ \t]*([^\W\d]\w*)")
# Up to this many tokens wanted, a file of ASCII bytes is searched for each before its import statements are
# found (`Needles.may_name`): a search for one word costs a third of finding them.
_FEW_TOKENS = 4
# The Needles `_token_bytes` last gave the words of, and those: (tokens and folders, tokens alone). A worker
# matches a round's files with one.
_TOKENS: List[Any] = [None, None, None]


def _token_bytes(needles: Needles, direct_only: bool = False) -> Optional[FrozenSet[bytes]]:
    """The tokens and package folders of `needles` as the bytes a word of a module names them by, or
    (`direct_only`) every token, those below the folders too; None when one is not plainly UTF-8 (a name
    holding U+FFFD, or undecodable bytes), which `match` compares only decoded."""
    if _TOKENS[0] is not needles:
        below = [token for tokens in needles.through.values() for token in tokens]
        _TOKENS[:] = [needles, _encoded([*needles.direct, *needles.through]), _encoded([*needles.direct, *below])]
    return _TOKENS[2 if direct_only else 1]  # type: ignore[no-any-return]


def _encoded(words: List[str]) -> Optional[FrozenSet[bytes]]:
    try:
        found = frozenset(word.encode("utf-8") for word in words)
    except UnicodeEncodeError:
        return None
    return None if any(b"\xef\xbf\xbd" in word for word in found) else found


def import_matches(pattern: "re.Pattern[bytes]", data: bytes) -> Iterator["re.Match[bytes]"]:
    """`pattern.finditer(data)` for a pattern of import statements (`_IMPORT_STATEMENT`, focus.py's), tried only
    on the lines that hold `import`.

    Every match starts on a line holding the word (at its start, or at a `:` or `;` of it: only blanks come
    between that and the keyword), so the lines without it are skipped by a byte search; re tries a `^`
    pattern at every byte, which cost more than reading the module."""
    pos = 0
    size = len(data)
    while True:
        word = data.find(b"import", pos)
        if word < 0:
            return
        start = max(data.rfind(b"\n", 0, word) + 1, pos)
        end = data.find(b"\n", word)
        end = size if end < 0 else end
        found = None
        at = start
        while at <= end:
            found = pattern.match(data, at)
            if found is not None:
                break
            colon, semicolon = data.find(b":", at + 1, end), data.find(b";", at + 1, end)
            at = min(colon if colon >= 0 else end + 1, semicolon if semicolon >= 0 else end + 1)
        if found is None:
            pos = end + 1
            continue
        yield found
        pos = found.end()


def import_statements(data: bytes) -> List[bytes]:
    """What `_IMPORT_STATEMENT.findall(data)` gives, found faster (`import_matches`)."""
    return [statement.group() for statement in import_matches(_IMPORT_STATEMENT, data)]


def _after(token: str, data: bytes) -> Set[str]:
    """The names written right after the word `token` and a dot in `data` (`http.get_json` -> get_json)."""
    found: Set[str] = set()
    for match in _dotted_pattern(token).finditer(data):
        # The pattern starts with the token's literal bytes, which re searches fast; a `\b` before it would
        # make re try every position, ten times slower. So the word's start is checked here.
        start = match.start()
        if not (start and _WORD_BYTE.match(data, start - 1)):
            found.add(match.group(1).decode("utf-8", "replace"))
    return found


_WORD_BYTE = re.compile(rb"[\w\x80-\xff]")


class _Computed:
    """A mapping that works out each value it is asked (`_pairs` reads its `tokens` and `above` so)."""

    def __init__(self, value_of: Callable[[str], Set[str]]) -> None:
        self.value_of = value_of

    def __getitem__(self, key: str) -> Set[str]:
        return self.value_of(key)


def _pairs(needles: Dict[str, Set[str]], tokens: Any, above: Any) -> Needles:
    """The Needles of phase 2: `needles` name -> its modules, `tokens` module -> its words, `above` module ->
    the package folders above it."""
    direct: Dict[str, Set[str]] = {}
    through: Dict[str, Dict[str, Set[str]]] = {}
    for name, modules in needles.items():
        for module in modules:
            for token in tokens[module]:
                direct.setdefault(token, set()).add(name)
                for folder in above[module]:
                    through.setdefault(folder, {}).setdefault(token, set()).add(name)
    shared: Dict[FrozenSet[str], FrozenSet[str]] = {}  # one set of names however many tokens and folders want it

    def names_of(names: Set[str]) -> FrozenSet[str]:
        frozen = frozenset(names)
        return shared.setdefault(frozen, frozen)

    return Needles({token: names_of(names) for token, names in direct.items()},
                   {folder: {token: names_of(names) for token, names in below.items()}
                    for folder, below in through.items()})


@functools.lru_cache(maxsize=4096)
def _dotted_pattern(token: str) -> Any:
    return re.compile(rb"%s[ \t]*\.[ \t]*([^\W\d]\w*)" % re.escape(token.encode("utf-8", "surrogateescape")))


def searchable(data: bytes, text: Optional[str]) -> bytes:
    """The bytes phase 2 searches: the file's own when ASCII, else its decoded text as UTF-8 (a cookie's
    encoding must not hide a name)."""
    return data if data.isascii() or text is None else text.encode("utf-8")


def matched_text(data: bytes, needles: Needles) -> Optional[str]:
    """The text of a module whose bytes (`searchable`) `needles` match, or None when they do not: ASCII bytes
    are matched before they are decoded (most files of a project name nothing wanted). Raises SourceError for
    bytes that do not decode."""
    from .source_files import decode_source

    if data.isascii():
        if not needles.may_name(data):
            return None
        text = None
    else:
        text = decode_source(data)
    if not needles.match(searchable(data, text)):
        return None
    return decode_source(data) if text is None else text


# The per-file steps of the gate, as `project_seeds` asks for them (in-process, or in `check`'s workers):
# First(paths) -> (path -> summary or None for the files past phase 1's gate, the other paths);
# Search(paths, needles) -> path -> summary or None for the files whose bytes match the needles.
First = Callable[[List[str]], Tuple[Dict[str, Optional[Summary]], List[str]]]
Search = Callable[[List[str], Needles], Dict[str, Optional[Summary]]]
Load = Callable[[str], Optional[Summary]]
# Words(paths, project words) -> for each path in order, what the gate's word index keeps of its bytes
# (word_index.file_words of its searchable bytes; None when nothing, or when it cannot be read).
Words = Callable[[Iterable[str], Any], Iterator[Any]]


def project_seeds(paths: Iterable[str], options_of: Callable[[str], Options], *, cache: Any = None,
                  first: Optional[First] = None, search: Optional[Search] = None,
                  load: Optional[Load] = None, words: Optional[Words] = None) -> Dict[str, Seeds]:
    """THE entry point of the project model, for `check`, `fix` and the flake8 plugin: the project's Python
    files `paths` (absolute or relative) solved as one program; returns each file's seeds (absolute path ->
    engine.ModuleSeeds), only for the files that get any.

    `options_of(path)` gives a file's Options (its summary depends on them). `cache`: a
    project_cache.ProjectCache, or None for no cache. By default every step runs in this process, through the
    cache; `check` passes `first`, `search`, `load` and `words` to run them in its workers (project_check.py). A
    file that cannot be read or parsed is left out: its own check reports it.
    """
    from .project_cache import LocalModules

    local = LocalModules(options_of, cache)
    return _solve_gated(_Absolute(paths), first or local.first, search or local.search, load or local.summary,
                        words or local.words)


class _Absolute:
    """Paths made absolute as they are gone through, each time (a big project's are not copied)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = paths

    def __iter__(self) -> Iterator[str]:
        return (absolute_path(path) for path in self.paths)


def _reaching(path: str, keys: List[str], hit: List[bool], calls: Any, targets: Any,
              reaching: Set[Tuple[str, str]], toward: Tuple[AbstractSet[str], AbstractSet[str]]
              ) -> Set[Tuple[str, str]]:
    """The functions of `path` (its `keys`, `hit` where they can matter, their resolved `calls`) that reach a
    function that can matter of the files `toward` answers for (`reaching`: those found so far), or are one."""
    near = [hit[index] and path in toward[0] for index in range(len(keys))]

    def reaches(target: int) -> bool:
        return near[target] if target >= 0 else targets.of(target) in reaching

    changed = True
    while changed:
        changed = False
        for index in range(len(keys)):
            if not near[index] and hit[index] and any(reaches(target) for target in calls.of(index)):
                near[index] = changed = True
    return {(path, keys[index]) for index in range(len(keys)) if near[index]}


def _exported(resolved: Callable[..., Optional[Tuple[str, str]]], worth: Callable[[Ref], bool], target: str,
              path: str, place: int) -> Optional[Tuple[str, str]]:
    """The function or class a re-export of `path` (`from .http import get_json`) names, when `worth` resolving."""
    ref = ["import", target, []]
    return resolved(ref, path, place) if worth(ref) else None


def _summary_analysis(analysis: Any, options: Options) -> Optional[Summary]:
    """`_summary_or_none` from the Analysis a file's check built (no second walk)."""
    try:
        return summarize(None, options, analysis=analysis)  # type: ignore[arg-type]  # the tree is in it
    except (RecursionError, MemoryError):
        return None
    except Exception:  # noqa: BLE001 - see _summary_or_none
        return None


def gather(paths: List[str], options_of: Callable[[str], Options],
           read: Callable[[str, Options], Optional[Tuple[bytes, str]]],
           parse: Callable[[str, str], Optional[ast.Module]]) -> Dict[str, Seeds]:
    """`project_seeds` with the reading and parsing given, no cache, all in this process (kept for callers of
    the first slice; new callers use `project_seeds`)."""
    from .checking import mentions_a_library
    from .engine import may_have_findings

    def summary(path: str) -> Optional[Summary]:
        got = read(path, options_of(path))
        tree = parse(got[1], path) if got is not None else None
        return _summary_or_none(tree, options_of(path))

    def first(todo: List[str]) -> Tuple[Dict[str, Optional[Summary]], List[str]]:
        found: Dict[str, Optional[Summary]] = {}
        rest: List[str] = []
        for path in todo:
            options = options_of(path)
            got = read(path, options)
            if got is None:
                continue
            data, text = got
            if options.unpooled_calls or (mentions_a_library(data, text) and may_have_findings(text, options)):
                found[path] = _summary_or_none(parse(text, path), options)
            else:
                rest.append(path)
        return found, rest

    def search(todo: List[str], needles: Needles) -> Dict[str, Optional[Summary]]:
        found: Dict[str, Optional[Summary]] = {}
        for path in todo:
            got = read(path, options_of(path))
            if got is not None and needles.match(searchable(*got)):
                found[path] = _summary_or_none(parse(got[1], path), options_of(path))
        return found

    def words(todo: Iterable[str], project_words: Any) -> Iterator[Any]:
        from .word_index import file_words

        for path in todo:
            got = read(path, options_of(path))
            yield file_words(searchable(*got), project_words) if got is not None else None

    return _solve_gated([absolute_path(p) for p in paths], first, search, summary, words)


# The gate's search rounds that read every remaining file. Most projects need one round to bring their callers
# in and a second that finds nothing more: those read the rest as before. A third round reads it once more into
# a word index (word_index.py), and it and every later round look their new needles up there.
_PLAIN_ROUNDS = 2


def _solve_gated(paths: Iterable[str], first: First, search: Search, load_summary: Load,
                 words: Words, plain_rounds: Optional[int] = None, modules: Optional[ModuleMap] = None,
                 toward: Optional[Tuple[AbstractSet[str], AbstractSet[str]]] = None) -> Dict[str, Seeds]:
    """The two-phase gate over `paths`, then `solve`.

    Phase 1 (`first`) summarizes the files that import an HTTP library (or that the `unpooled-calls` patterns
    may match); phase 2 (`search`) only the files whose bytes name one of the functions that can matter
    (`can_matter`) or a class holding one, repeated while new ones join. `words` reads the rest for the word
    index of the rounds after `plain_rounds` (a focused solve's few needles are searched for in more plain
    rounds, each a read of the rest, than the word index is worth: focus.py).

    Each module is grown (`grow`) when something it reads changed, in the order and passes of a loop growing
    every module until nothing changes (gate_worklist.py), and the rounds after `_PLAIN_ROUNDS` look the rest
    up in a word index: a chain of wrappers across modules, one round per link, cost every round a pass over
    every module and a read of every remaining file, quadratic.

    `toward` (the files a focused solve answers for, and the modules they reach on the way down, focus.py): the
    modules outside the second are searched only for the functions that reach the first (`aims`); a caller of
    any other function that can matter changes no seed of those files.
    """
    from .gate_worklist import Watch, Worklist

    if modules is None:  # (`modules`: the map of these very paths, made already)
        modules = ModuleMap(paths, project_root(paths))

    def load(path: str) -> Optional[Summary]:
        # Outside the project: never read. A module the gate left out holds no function that can matter; only
        # a package's `__init__.py` is read on demand, to follow what it re-exports (`from .http import *`).
        if os.path.basename(path) != "__init__.py" or not modules.known(path):
            return None
        return load_summary(path)

    gated, left = first(modules.paths)
    summaries = Summaries(gated.items(), db=modules.db)
    del gated
    rest = _Rest(left, modules.db)
    del left
    project = Project(modules, summaries, load)  # type: ignore[arg-type]

    def demand(path: str) -> Optional[Summary]:
        if not modules.known(path):
            return None  # outside the project: never read
        return load_summary(path)

    project.demand = demand
    worklist = Worklist(summaries)
    watch = Watch(modules.db)
    project.loaded = worklist.mark_path  # a package's `__init__.py` read on demand is grown as a new module is

    # A file joins in phase 2 when its bytes name a function (or the class of a constructor) that can matter
    # AND the last part of that function's module name, which every import of it names (`from app.http import
    # f`, `from . import http`, `from .http import f`, `import helper`); a package re-exporting the function
    # is searched for under its own name (`from app import f`, see `grow`).
    needles: Dict[str, Set[str]] = {}  # name -> the modules where a function of that name can matter
    needed: List[Tuple[str, str]] = []  # (name, module) in the order `need` added them to `needles`
    names_from: Dict[str, List[str]] = {}  # module -> the names searched for from it
    relevant: Set[Tuple[str, str]] = set()
    # With `toward`: the functions that reach one of its files' functions that can matter (or are one), and the
    # (name, module) pairs searched for outside the modules its files reach, as `needles` and `needed` are.
    reaching: Set[Tuple[str, str]] = set()
    aims: Dict[str, Set[str]] = {}
    aimed: List[Tuple[str, str]] = []
    aims_from: Dict[str, List[str]] = {}
    folders: Dict[str, Set[str]] = {}  # folder -> the package folders it is below the project root

    def words_of(path: str, known: Dict[str, Set[str]]) -> Tuple[str, Set[str]]:
        """The word an import of the module names (`known`: the folders' answers so far), and the package
        folders above it."""
        stem = os.path.splitext(os.path.basename(path))[0]
        folder = os.path.dirname(path)
        if stem == "__init__":
            stem, folder = os.path.basename(folder), os.path.dirname(folder)
        above = known.get(folder)
        if above is None:
            relative = os.path.relpath(folder, modules.root)
            above = known[folder] = set() if relative.startswith("..") or relative == "." else \
                set(relative.split(os.sep))
        return stem, above

    def pairs(wanted: Optional[Iterable[Tuple[str, str]]] = None) -> Needles:
        """The needles of phase 2 (`_pairs`): of every (name, module) searched for, or of those `wanted`; each
        module's words worked out from its path as they are asked (held for every module needed, they were
        memory per module)."""
        chosen: Dict[str, Set[str]] = needles
        if wanted is not None:
            chosen = {}
            for name, module in wanted:
                chosen.setdefault(name, set()).add(module)
        return _pairs(chosen, _Computed(lambda path: {words_of(path, folders)[0]}),
                      _Computed(lambda path: words_of(path, folders)[1]))

    def atoms(wanted: Iterable[Tuple[str, str]]) -> List[Any]:
        """What `pairs(wanted)` matches, atom by atom (word_index.Atom)."""
        from .word_index import Atom

        found = []
        for name, module in wanted:
            token, above = words_of(module, folders)
            found.append(Atom(token, name, None))
            found.extend(Atom(token, name, folder) for folder in sorted(above))
        return found

    def word_index() -> Any:
        """The rest's words, each file read once (word_index.py)."""
        from collections import deque

        from .word_index import FOLDER, TOKEN, WordFilter, WordIndex

        project_words = WordFilter(len(modules.paths))
        seen: Dict[str, Set[str]] = {}
        for path in modules.paths:
            token, above = words_of(path, seen)
            project_words.add(TOKEN, token)
            for folder in above:
                project_words.add(FOLDER, folder)
        del seen
        index = WordIndex(modules.db)
        numbers: Any = deque()  # the numbers of the files given to `words` and not back yet

        def given() -> Iterator[str]:
            for number, path in rest.numbered():
                numbers.append(number)
                yield path

        index.add((numbers.popleft(), found) for found in words(given(), project_words))
        return index

    # path -> what the call sites of its functions name so far (_Calls); held as tuples of targets per function,
    # they were most of the gate's memory on a 100,000-file tree.
    resolved_calls = _CallsTable(modules.db)
    targets = _Targets()

    def worth(ref: Ref) -> bool:
        """Whether `ref` can name a function that can matter: another module's function is reached through
        its own name or its class's (see `grow`), so a reference naming none of the wanted names is left
        unresolved (resolving it could read a big package `__init__.py` for nothing)."""
        if ref[0] == "verbs":
            ref = ref[1]
        if ref[0] != "import":
            return ref[0] == "local"
        return any(word in needles for word in ref[1].split(".")) or any(word in needles for word in ref[2])

    def resolved(ref: Ref, importer: str, place: int) -> Optional[Tuple[str, str]]:
        """`project.resolve`, watching the modules it went through without a summary: when one joins, the
        reference may resolve otherwise (see the loop below)."""
        consulted: Set[str] = set()
        project.consulted = consulted
        try:
            found = project.resolve(ref, importer)
        finally:
            project.consulted = None
        if consulted:
            watch.through(place, map(_blob, consulted))
        return found

    resolving = [-1]  # the place of the module whose calls `resolve_sites` resolves

    def resolve_sites(sites: List[Any], path: str) -> Tuple[Iterable[Tuple[str, str]], bool]:
        named: Dict[Tuple[str, str], None] = {}
        pending = False
        for site in sites:
            target = resolved(site[0], path, resolving[0]) if worth(site[0]) else _LATER
            if target is None or target == _LATER:
                pending = True
            else:
                named[target] = None
        watch.calls(resolving[0], (targets.number(target) for target in named if target[0] != path))
        return named, pending

    def calls_of(summary: Summary, path: str, place: int, before: Optional[_Calls] = None) -> _Calls:
        """The module's calls resolved (those of its functions still pending, given what was resolved `before`)."""
        resolving[0] = place
        return _Calls.resolved(summary, path, targets, resolve_sites, before)

    def watch_new(summary: Summary, path: str, place: int) -> None:
        """What marks a module grown for the first time: the words its references and re-exports name (one
        naming a needle is resolved), the names it re-exports, the modules it star-imports."""
        referenced: Set[str] = set()
        for record in summary["functions"].values():
            for site in record["calls"]:
                ref = site[0][1] if site[0][0] == "verbs" else site[0]
                if ref[0] == "import":
                    referenced.update(ref[1].split("."))
                    referenced.update(ref[2])
        for target in summary["exports"].values():
            referenced.update(target.split("."))
        watch.words(place, referenced)
        watch.exports(place, summary["exports"])
        sources = []
        for star in summary["stars"]:
            absolute = modules.absolute(star, path)
            source = modules.module(absolute, path) if absolute else None
            if source is not None:
                sources.append(_blob(source))
        watch.stars(place, sources)

    def grow(path: str) -> bool:
        """Add the functions of `path` that can matter, and the names to search for; True when anything was new."""
        summary = summaries.get(path)
        if not summary:
            return False
        place = summaries.place(path)
        assert place is not None
        matter = can_matter(summary)
        calls = resolved_calls.get(path)
        if calls is None:
            watch_new(summary, path, place)
            calls = calls_of(summary, path, place)
        elif calls.searched_with != len(needles) and any(calls.pending):
            calls = calls_of(summary, path, place, calls)  # names were added since: resolve what they may name
        if calls.searched_with != len(needles):
            calls.searched_with = len(needles)
            resolved_calls[path] = calls
        keys = list(summary["functions"])
        # A function can matter if it is one `can_matter` names, or if it calls one that can matter, of this
        # module or of another (`relevant`).
        hit = [key in matter for key in keys]

        def reaches(target: int) -> bool:
            if target >= 0:
                return hit[target] or (path, keys[target]) in relevant
            other = targets.of(target)
            return other in relevant or (other[0] == path and other[1] in matter)

        changed = True
        while changed:
            changed = False
            for index in range(len(keys)):
                if not hit[index] and any(reaches(target) for target in calls.of(index)):
                    hit[index] = True
                    changed = True
        found = {(path, key) for key in matter}
        found.update((path, keys[index]) for index in range(len(keys)) if hit[index])
        new = found - relevant
        relevant.update(new)
        near = _reaching(path, keys, hit, calls, targets, reaching, toward) if toward is not None else set()
        new_near = near - reaching
        reaching.update(new_near)
        for function in new | new_near:  # their callers in other modules may now reach one that can matter
            number = targets.known(function)
            for caller in watch.callers(number) if number is not None else ():
                worklist.mark(caller)
        added = False
        for module, key in new_near:  # (as for `new` below)
            parts = key.split(".")
            if (len(parts) == 1 and parts[0] in summary["defs"]) or \
                    (len(parts) == 2 and parts[0] in summary["classes"]):
                added = aim(parts[0], module) or added
        for module, key in new:
            # Another module reaches a top-level def by its name, and a method of a top-level class through
            # the class (`Api().fetch()`, `api = Api()` then `api.fetch()`, `class Mine(Api)`, a view's
            # `ItemView.as_view()`): the resolver follows nothing else (`Project._in_module`), so a nested def
            # or a nested class's method is searched for nowhere.
            parts = key.split(".")
            if len(parts) == 1 and parts[0] in summary["defs"]:
                added = need(parts[0], module) or added
            elif len(parts) == 2 and parts[0] in summary["classes"]:
                added = need(parts[0], module) or added
        # A module that re-exports such a function or class (`from .http import get_json` in `__init__.py`) is
        # imported under its own name: `from app import get_json`.
        for name, target in summary["exports"].items():
            absolute = modules.absolute(target, path)
            source = modules.module(absolute.rsplit(".", 1)[0], path) if absolute and "." in absolute else None
            exported: Any = _UNSEEN  # what the re-export names, resolved once when asked
            if path not in needles.get(name, ()):
                if source is not None and source in needles.get(name, ()):
                    added = need(name, path) or added
                else:
                    exported = _exported(resolved, worth, target, path, place)
                    if exported is not None:
                        watch.calls(place, (targets.number(exported),))
                        if exported in relevant:
                            added = need(name, path) or added
            if toward is None or path in aims.get(name, ()):
                continue
            if source is not None and source in aims.get(name, ()):
                added = aim(name, path) or added
                continue
            if exported is _UNSEEN:
                exported = _exported(resolved, worth, target, path, place)
            if exported in reaching:
                added = aim(name, path) or added
        for star in summary["stars"]:  # `from .http import *`
            absolute = modules.absolute(star, path)
            source = modules.module(absolute, path) if absolute else None
            for name in list(names_from.get(source, ())) if source is not None else ():
                added = need(name, path) or added
            for name in list(aims_from.get(source, ())) if source is not None else ():
                added = aim(name, path) or added
        return added or bool(new) or bool(new_near)

    def need(name: str, module: str) -> bool:
        """Search for `name` imported from `module`; True when that is new."""
        if name not in needles:
            for place in watch.referencing(name):  # a reference naming it is resolved now (`worth`)
                worklist.mark(place)
        return searched_for(needles, needed, names_from, name, module)

    def aim(name: str, module: str) -> bool:
        """Search for `name` imported from `module` outside the modules `toward` reaches; True when that is new."""
        return searched_for(aims, aimed, aims_from, name, module)

    def searched_for(table: Dict[str, Set[str]], order: List[Tuple[str, str]], by_module: Dict[str, List[str]],
                     name: str, module: str) -> bool:
        """(name, module) added to `table`, `order` and `by_module` (`needles`, `needed` and `names_from`, or
        their `aims` counterparts); the modules re-exporting the name or star-importing the module grow again."""
        known = table.setdefault(name, set())
        if module in known:
            return False
        known.add(module)
        order.append((name, module))
        by_module.setdefault(module, []).append(name)
        for place in [*watch.exporting(name), *watch.starring(_blob(module))]:
            worklist.mark(place)
        return True

    # Until nothing changes: a module's function may call one that a later module's pass finds can matter.
    worklist.run(grow, every=True)
    index = None
    searched = 0  # the (name, module) pairs of `needed` (of `aimed`, with `toward`) the rest was last searched for
    rounds = 0
    while (needles if toward is None else needles or aims) and rest:
        rounds += 1
        fresh = needed[searched:] if toward is None else aimed[searched:]
        searched = len(needed) if toward is None else len(aimed)
        plain = rounds <= (_PLAIN_ROUNDS if plain_rounds is None else plain_rounds)
        if toward is not None:
            # The modules the files reach, for every function that can matter; the others, for those that reach
            # the files (the word index, after the plain rounds, for those not searched for yet).
            below = rest.where(toward[1].__contains__)
            joined = search(below, pairs()) if needles and below else {}  # type: ignore[arg-type]
            if plain and aims:
                above = rest.where(lambda path: path not in toward[1])
                joined.update(search(above, pairs(aimed)) if above else {})  # type: ignore[arg-type]
            elif fresh:
                if index is None:
                    index = word_index()
                candidates = [path for path in rest.numbered_as(index.candidates(atoms(fresh)))
                              if path not in toward[1]]
                joined.update(search(candidates, pairs(fresh)) if candidates else {})
        elif plain:
            joined = search(rest, pairs())  # type: ignore[arg-type]
        else:
            # The rest's files matched none of the needles searched for before: those that match now match one
            # of the new ones. Those the index gives are read and matched by `search` itself.
            if index is None:
                index = word_index()
            candidates = rest.numbered_as(index.candidates(atoms(fresh)))
            joined = search(candidates, pairs(fresh)) if candidates else {}
        taken = rest.taking(joined)
        for path in taken:  # in the order of `paths`, so the solve's order does not depend on the workers'
            summaries[path] = joined[path]
        if taken:
            project.forget()  # a reference that went through one of them may resolve otherwise now
        if not joined:
            break
        # References into the modules that joined resolve now (one that resolved already resolves as it did: it
        # went through summaries that have not changed), in the order the calls were first resolved.
        through: Set[int] = set()
        for path in taken:
            through.update(watch.resolved_through(_blob(path)))
        again = sorted((resolved_calls.place(summaries.at(place)) or -1, place) for place in through)
        for _, place in again:
            path = summaries.at(place)
            calls = resolved_calls.get(path)
            if calls is not None and any(calls.pending):
                resolved_calls[path] = calls_of(summaries[path], path, place, calls)  # type: ignore[arg-type]
            worklist.mark(place)
        for path in taken:
            if joined[path] is not None:
                worklist.mark_path(path)
        if not worklist.run(grow):
            break  # nothing new to search the rest for
    resolved_calls.clear()
    summaries.narrow(lambda summary: _worth_only(summary, worth))
    return solve(project, worth, relevant.__contains__)
