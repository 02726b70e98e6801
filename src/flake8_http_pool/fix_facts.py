"""What a fix must know beyond its own module: the names the project patches or wraps, the requests it pins,
whether it is an application, and which rules' fixes the config moves between safe and unsafe.

RULES.md, "Fix safety": a fix is not offered where the name it rewrites is patched or wrapped
(`mock.patch("pkg.mod.requests.get")`, `mock.patch.object(mod, "get")`, `monkeypatch.setattr(requests, "get", f)`,
`requests.get = wrapper`): the tests and wrappers would silently stop applying. These facts are gathered once
per `fix` run from the project's files (a byte gate first, then `ast`, nothing is executed) and handed to
every planner; a planner given none sees only its own module's.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Set, Tuple

from .bindings import dotted_name
from .roots import find_project_root

# Calls whose first argument names what they patch (a dotted string), or whose first two name an object and
# the attribute patched on it.
_PATCH_CALLS = frozenset({"patch", "setattr", "patch.object", "patch.dict", "delattr"})
# A file can patch through one of these words (whole words: `dispatch` is not one), or by assigning to an
# attribute of a module it imports: of a library anywhere (below), of any module in a test that names pytest's
# patching fixtures (`monkeypatch`, pytest-mock's `mocker`) even where it then assigns the attribute itself.
_PATCH_WORDS = re.compile(rb"\b(?:patch|setattr|delattr|monkeypatch|mocker)\b")
_PATCH_SUBSTRINGS = (b"patch", b"setattr", b"delattr", b"mocker")  # tested first: a substring test is fast
# One pattern per library, searched only in a file that holds the library's name (a plain substring test is
# several times faster than the pattern's search over a file that does not).
_LIBRARY_ATTRIBUTE_STORES = tuple(
    (name, re.compile(re.escape(name) + rb"\.[\w.]+[ \t]*=[^=]"))
    for name in (b"requests", b"httpx", b"aiohttp", b"urllib3", b"grequests", b"niquests")
)
# How patch targets are found: a change to patch_targets or the byte gate raises it (cached targets then go).
PATCHES_FORMAT = 2
PATCHES_MARK = " (patches)"  # after a path in the parse log (a test hook): parsed for its patches
_MAX_BYTES = 4 * 1024 * 1024  # a larger file is not read for patches (check's default --max-file-size)
_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".tox", ".nox", "build", "dist", ".venv", "venv"})
_REQUESTS_232 = (2, 32)


class FixFacts(NamedTuple):
    """Facts of the project a fix is planned in (see the module docstring)."""

    patched: FrozenSet[str] = frozenset()  # dotted names something patches or rebinds: "pkg.mod.requests.get"
    module: str = ""  # the fixed module's dotted name, "" when unknown
    requests_232: bool = False  # the project pins requests at 2.32 or newer (CVE-2024-35195 fixed)
    application: bool = False  # config `application = true`: no outside caller, signatures may change
    extend_safe: Tuple[str, ...] = ()  # codes or prefixes whose unsafe fixes count as safe
    extend_unsafe: Tuple[str, ...] = ()  # codes or prefixes whose safe fixes count as unsafe
    # The names of this module's defs and classes that another module of the project names (a word of its
    # text): a signature change there could break a caller the module's own plan cannot see. None: unknown
    # (the project model did not run); a NamesElsewhere: asked of the project as a planner needs them.
    named_elsewhere: "Optional[FrozenSet[str] | NamesElsewhere]" = None
    # The project root whose patches are not known yet ("" when they are): `fix --check` plans a file in the
    # same read as its phase 1 takes the file's patches from (fix_command._planning_job), so the project's are
    # known only once every file has been read. Meanwhile `patched` holds the module's own, and each question
    # they do not answer yes is noted (`asked_patches`): the plan stands if the project's patches answer no too.
    pending: str = ""

    def with_module(self, module: str, tree: Optional[ast.Module]) -> "FixFacts":
        """These facts for one module: its dotted name, and the patches its own text makes."""
        own = frozenset(patch_targets(tree)) if tree is not None else frozenset()
        return self._replace(module=module, patched=self.patched | own)

    def is_patched(self, *names: str) -> bool:
        """Whether any of `names` (dotted, as written in the module or as the library's) is patched or rebound.

        A target matches a name written in this module when it is the name itself (a library attribute, or a
        rebinding in the module), or the module's dotted name followed by it (`pkg.mod` + `requests.get`). When
        the module's name is not known, a target ending in `.<name>` whose prefix ends with the module's last
        component matches too.
        """
        if patched_among(self.patched, self.module, names):
            return True
        if self.pending:
            _ASKED.append((self.pending, self.module, names))
        return False

    def moves(self, code: str, safety: str) -> str:
        """`safety` after the config's extend-safe-fixes / extend-unsafe-fixes (unsafe wins a tie)."""
        if safety not in ("safe", "unsafe"):
            return safety
        if any(code.startswith(prefix) for prefix in self.extend_unsafe):
            return "unsafe"
        if any(code.startswith(prefix) for prefix in self.extend_safe):
            return "safe"
        return safety


NO_FACTS = FixFacts()


def patched_among(patched: FrozenSet[str], module: str, names: Iterable[str]) -> bool:
    """FixFacts.is_patched for these patch targets: any target matching any name answers yes."""
    if not patched:
        return False
    leaf = module.rsplit(".", 1)[-1]
    for name in names:
        if not name:
            continue
        if name in patched or (module and f"{module}.{name}" in patched):
            return True
        suffix = "." + name
        for target in patched:
            if target.endswith(suffix):
                prefix = target[: -len(suffix)]
                if leaf and (prefix == leaf or prefix.endswith("." + leaf)):
                    return True
    return False


# Per process: the questions about patches asked of facts still pending (FixFacts.pending), as (root, module,
# names), since `asked_patches` was last called.
_ASKED: List[Tuple[str, str, Tuple[str, ...]]] = []


def asked_patches() -> Tuple[Tuple[str, str, Tuple[str, ...]], ...]:
    """The questions noted since the last call (FixFacts.pending), each once, in the order they came."""
    asked = tuple(dict.fromkeys(_ASKED))
    _ASKED.clear()
    return asked


def answered_yes(asked: Iterable[Tuple[str, str, Tuple[str, ...]]],
                 roots: Dict[str, Tuple[FrozenSet[str], bool]]) -> bool:
    """Whether the project's patches, now known (`roots`, as know_roots takes them), answer yes to any of
    these questions: the plan that took no for them must be made again (as when a root is not in `roots`)."""
    return any(root not in roots or patched_among(roots[root][0], module, names) for root, module, names in asked)


class AskNames(BaseException):
    """A planner asked whether the project names `names` elsewhere, and the answer is not known yet.

    A BaseException, like time_budget.OverBudget: a planner's own `except Exception` must not swallow the
    question and plan on a guess. `fix` catches it before anything is written, finds the answer for every name
    its files asked in one pass over the project (fix_command._Names), and plans those files again."""

    def __init__(self, names: FrozenSet[str]) -> None:
        super().__init__(sorted(names))
        self.names = names


class NamesElsewhere(NamedTuple):
    """`FixFacts.named_elsewhere` found on demand: of the names asked so far (`known`), those that more than one
    file of the project holds as a word (`named`: the defining file holds its own name). A name not asked yet
    raises AskNames. Reading every file of a big project for every name it defines cost `fix` a fifth of its
    run, and only a planner about to change a signature (HTP104) ever asks."""

    known: FrozenSet[str] = frozenset()
    named: FrozenSet[str] = frozenset()
    # Of `known`, those a file of the project that the run does not fix names (a caller there is never edited).
    outside: FrozenSet[str] = frozenset()
    # Whether a name not asked yet counts as named both ways (the safe answer) rather than raising AskNames:
    # for the last plan of a file that kept asking.
    rest_named: bool = False

    def __contains__(self, name: object) -> bool:
        if name in self.named:
            return True
        if name in self.known:
            return False
        if self.rest_named:
            return True
        raise AskNames(frozenset({str(name)}))

    def __bool__(self) -> bool:
        return True

    def named_outside_the_run(self, name: str) -> bool:
        """Whether a module of the project that this run does not fix names `name`: a change that edits the
        callers it can see would leave a caller there broken."""
        if name in self.outside:
            return True
        if name in self.known:
            return False
        if self.rest_named:
            return True
        raise AskNames(frozenset({name}))

    def answered(self, named: Iterable[str], asked: Iterable[str], outside: Iterable[str] = ()) -> "NamesElsewhere":
        """These facts with the answers for `asked` added (`named`: those of them the project names twice;
        `outside`: those a file outside the run names)."""
        return NamesElsewhere(self.known | frozenset(asked), self.named | frozenset(named),
                              self.outside | frozenset(outside), self.rest_named)


def patch_targets(tree: ast.AST) -> Iterator[str]:
    """The dotted names a module patches or rebinds, resolved through its own imports where it can.

    One pass over the tree gathers the imports and the candidate sites together; the sites are resolved after,
    since an import may come below its use (`import requests` inside the test function that patches it). A name
    imported from several modules (`try: import winreg` / `except ImportError: import _winreg as winreg`) gives
    a target through each: a patch counts wherever it may land.
    """
    imports: Dict[str, Set[str]] = {}
    # (written, dotted name, attribute or None): a dotted string given to patch() is taken as written; a name
    # is resolved through `imports` once they are all known.
    later: list = []
    stack: list = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    node_type = ast.AST
    while stack:
        node = pop()
        kind = type(node)
        if kind in _LEAVES:
            continue
        if kind is ast.Call:
            _call_site(node, later)  # type: ignore[arg-type]
        elif kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
            for target in node.targets if kind is ast.Assign else (node.target,):  # type: ignore[attr-defined]
                if type(target) is ast.Attribute:
                    later.append((False, dotted_name(target), None))  # `requests.get = wrapper`: by import
        elif kind is ast.Delete:
            later.extend((False, dotted_name(target), None) for target in node.targets  # type: ignore[attr-defined]
                         if type(target) is ast.Attribute)
        elif kind is ast.Import:
            for alias in node.names:  # type: ignore[attr-defined]
                top = alias.name.split(".", 1)[0]
                imports.setdefault(alias.asname or top, set()).add(alias.name if alias.asname else top)
            continue
        elif kind is ast.ImportFrom:
            if node.module and not node.level:  # type: ignore[attr-defined]
                for alias in node.names:  # type: ignore[attr-defined]
                    imports.setdefault(alias.asname or alias.name, set()).add(
                        f"{node.module}.{alias.name}")  # type: ignore[attr-defined]
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                extend(value)
            elif isinstance(value, node_type):
                push(value)
    for written, name, attribute in later:
        if written:
            yield name
            continue
        for owner in _qualified(name, imports):
            yield owner if attribute is None else f"{owner}.{attribute}"


# Nodes below which no patch can be: names, constants, contexts, operators, and a list's strings
# (`global a, b`) or missing keys (`{**x}`), which the walk meets as plain values.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, str, type(None), ast.Global,
                     ast.Nonlocal, ast.Pass, ast.Break, ast.Continue}
                    | {cls for base in (ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
                       for cls in base.__subclasses__()})


def _call_site(node: ast.Call, later: list) -> None:
    """A call of patch(), setattr(), patch.object(), patch.dict() or delattr(): what it names, for later."""
    name = dotted_name(node.func) or ""
    tail = ".".join(name.split(".")[-2:]) if name.endswith(".object") else name.rsplit(".", 1)[-1]
    if tail not in _PATCH_CALLS or not node.args:
        return
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        later.append((True, first.value.strip(), None))
    elif len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        later.append((False, dotted_name(first), node.args[1].value))


def _qualified(name: Optional[str], imports: Dict[str, Set[str]]) -> Iterator[str]:
    """`name` with its first part replaced by each module the module imported under it; none when not imported."""
    if not name:
        return
    head, _, rest = name.partition(".")
    for module in sorted(imports.get(head, ())):
        yield module + ("." + rest if rest else "")


def module_name(path: str) -> str:
    """The dotted module name of a file: its packages followed up through their `__init__.py` files."""
    absolute = os.path.abspath(path)
    parts = [os.path.splitext(os.path.basename(absolute))[0]]
    directory = os.path.dirname(absolute)
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parts.append(os.path.basename(directory))
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    if parts[0] == "__init__":
        parts = parts[1:]
    return ".".join(reversed(parts)) if parts else ""


def project_python_files(root: str) -> Iterator[str]:
    """Every `*.py` below `root`, skipping virtual environments, caches and VCS folders; links to folders not
    followed, links to files only inside the tree, and only regular files (discovery.tree_file)."""
    from .discovery import tree_file

    real = os.path.realpath(root)
    folders = [root]
    while folders:  # top-down, each folder's entries in the order the system lists them, as os.walk went
        directory = folders.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue
        dirs = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name not in _SKIP_DIRS and not os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                    dirs.append(entry.path)
            elif entry.name.endswith(".py") and tree_file(entry, real):
                yield entry.path
        folders.extend(reversed(dirs))


def may_patch(data: bytes) -> bool:
    """The byte gate: whether a file's text could patch or rebind anything (most files cannot).

    Non-ASCII bytes are searched as the parser reads identifiers (NFKC): `ｐａｔｃｈ` is `patch` to Python.
    """
    from .source_files import bytes_as_parser_reads

    data = bytes_as_parser_reads(data)
    if any(word in data for word in _PATCH_SUBSTRINGS) and _PATCH_WORDS.search(data):
        return True
    return any(
        name in data and store.search(data) for name, store in _LIBRARY_ATTRIBUTE_STORES)


# The run's disk cache (project_cache.ProjectCache), when it has one: each file's patch targets are kept there
# by content hash, so a warm run parses none of the project's test files again. Set per process (`use_cache`).
_cache: Optional[Any] = None


# Per process, with or without a disk cache: the targets of each file content met so far (a few names each).
_seen: Dict[str, Tuple[str, ...]] = {}


def use_cache(cache: Optional[Any]) -> None:
    """Keep (and find) each file's patch targets in `cache` for the rest of this process; None: no cache."""
    global _cache
    _cache = cache


def project_words(root: str, files: Iterable[str]) -> FrozenSet[bytes]:
    """The words one of which a file's text must hold for a patch it makes to matter to a fix in the project.

    A fix asks whether a name it rewrites is patched (`FixFacts.is_patched`): a library's name
    (`requests.get`), or a name as the fixed module writes it, alone or after the module's dotted name, or after
    a prefix ending with the module's own name. A target that can match holds, as one of its dotted parts, a
    library's top-level name or the fixed module's own name (its file's stem, or its package's folder); and a
    file's targets are spelled from words of its text (a string it patches, the modules it imports). So a file
    naming no library and no module or package of the project patches nothing a fix asks about. (A target equal
    to a name as some module writes it, `rq.get` for `import requests as rq`, names no importable module unless
    one of the project's: a test cannot patch it.)"""
    from .libraries import CLIENT_CONSTRUCTORS, UNPOOLED_FUNCTIONS

    # The libraries whose names a fix asks about: those of its unpooled functions and client constructors.
    words = {name.split(".", 1)[0].encode("ascii") for name in (*UNPOOLED_FUNCTIONS, *CLIENT_CONSTRUCTORS)}
    # A module's dotted name may start above the root (module_name follows `__init__.py` files up): the root's
    # own package and the packages holding it name modules too.
    above = module_name(os.path.join(root, "__init__.py"))
    words.update(part.encode("utf-8", "surrogatepass") for part in above.split(".") if part)
    for path in files:
        parts = os.path.relpath(path, root).split(os.sep)
        parts[-1] = os.path.splitext(parts[-1])[0]
        for part in parts:
            words.update(piece.encode("utf-8", "surrogatepass") for piece in part.split(".") if piece)
    return frozenset(words)


def file_patch_targets(path: str, words: Optional[FrozenSet[bytes]] = None, data: Optional[bytes] = None
                       ) -> Tuple[str, ...]:
    """The patch targets of one file (none when it fails the byte gate, cannot be read, or does not parse).
    With `words` (project_words), also none when its text holds none of them: nothing it patches can matter.
    `data`: the whole file, when the caller has read it already."""
    if data is None:
        from .source_files import read_or_none

        data = read_or_none(path, _MAX_BYTES)
        if data is None:
            return ()
    if len(data) > _MAX_BYTES or not may_patch(data):
        return ()
    if words is not None:
        from .project_run import words_of
        from .source_files import bytes_as_parser_reads

        if words_of(bytes_as_parser_reads(data)).isdisjoint(words):
            return ()
    from .project_cache import content_hash, log_parse
    from .source_files import quiet_compiler

    key = patches_key(content_hash(data))
    if key in _seen:
        return _seen[key]  # the same bytes met before in this process (a vendored copy, a repeated fixture)
    if _cache is not None:
        from .cache_shapes import strings

        known = _cache.load_blob("p", key, strings)
        if known is not None:
            _seen[key] = known
            return known
    log_parse(path + PATCHES_MARK)
    try:
        with quiet_compiler():  # a test file's `1if x else y` is not this run's to warn about
            tree = ast.parse(data, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    targets = tuple(sorted(set(patch_targets(tree))))
    _seen[key] = targets
    if _cache is not None:
        _cache.store_blob("p", key, targets)
    return targets


def patches_key(what: str) -> str:
    """The cache key of patch targets found from `what` (a file's content hash, a project's files' state):
    with the tool's version and how targets are found, so a new version reads the tests again."""
    from . import __version__

    return f"patches\0{PATCHES_FORMAT}\0{__version__}\0{what}"


def project_patches(files: Iterable[str], words: Optional[FrozenSet[bytes]] = None) -> Set[str]:
    """The patch targets of every file that passes the byte gate (and holds one of `words`, when given);
    unreadable or broken files are passed over."""
    found: Set[str] = set()
    for path in files:
        found.update(file_patch_targets(path, words))
    return found


def pins_requests_232(root: str) -> bool:
    """Whether the project's dependency files require requests 2.32 or newer (every requests line they have)."""
    from .dependency_files import declared_requirements

    lowest = []
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else ():
        if not (name in ("pyproject.toml", "setup.cfg", "setup.py") or (name.startswith("requirements") and name.endswith(".txt"))):
            continue
        for requirement in declared_requirements(os.path.join(root, name)):
            if requirement.name.lower() == "requests":
                lowest.append(_lower_bound(requirement.specifier))
    return bool(lowest) and all(bound is not None and bound >= _REQUESTS_232 for bound in lowest)


def _lower_bound(specifiers: object) -> Optional[Tuple[int, ...]]:
    best: Optional[Tuple[int, ...]] = None
    for spec in specifiers:  # type: ignore[attr-defined]
        if spec.operator in (">=", "==", "~=", ">", "==="):
            try:
                version = tuple(int(p) for p in re.findall(r"\d+", spec.version)[:3])
            except ValueError:
                continue
            if best is None or version > best:
                best = version
    return best


def gather_fix_facts(root: str, settings: FixFacts = NO_FACTS) -> FixFacts:
    """The facts of the project rooted at `root`, over `settings` (the config's application and safety lists)."""
    patched, requests_232 = _root_facts(root)
    return settings._replace(patched=patched, requests_232=requests_232, pending=root if root in _PENDING else "")


# Per process: the facts of each project root met so far, (patched, requests_232); a run gathers a root once
# (project_check gathers them in its workers and hands them to the ones that mark fixes: `know_roots`). Those
# in _PENDING are known but for the project's patches (FixFacts.pending).
_ROOTS: Dict[str, Tuple[FrozenSet[str], bool]] = {}
_PENDING: Set[str] = set()


def _root_facts(root: str) -> Tuple[FrozenSet[str], bool]:
    if root not in _ROOTS:
        files = sorted(project_python_files(root))
        _ROOTS[root] = (frozenset(project_patches(files, project_words(root, files))), pins_requests_232(root))
    return _ROOTS[root]


def know_roots(roots: Dict[str, Tuple[FrozenSet[str], bool]], pending: bool = False) -> None:
    """Take these roots' facts as gathered (by the run, across its workers) for the rest of this process; with
    `pending`, all but their patches, which are not known yet (FixFacts.pending)."""
    _ROOTS.update(roots)
    if pending:
        _PENDING.update(roots)
    else:
        _PENDING.difference_update(roots)


def project_root(path: str, walked_root: Optional[str] = None) -> Optional[str]:
    """The root of the project whose facts a fix in the file at `path` is planned with (see facts_for_file)."""
    return find_project_root(path) or (os.path.abspath(walked_root) if walked_root else None)


def facts_for_file(path: str, settings: FixFacts = NO_FACTS, walked_root: Optional[str] = None) -> FixFacts:
    """The facts of the project the file at `path` belongs to, with its module name.

    The project is the nearest folder with a root marker above the file; without one, the folder the run
    walked to find it (`walked_root`); a file named on its own outside any project has no project, and its fix
    sees what the file itself says. Each file gets its own project's facts: a folder holding several projects
    must not let one project's test patches make another's sites report-only. The facts of a root are
    gathered once per process, whichever of its modules asks first.
    """
    root = project_root(path, walked_root)
    if root is None:
        return settings._replace(module=module_name(path))
    return gather_fix_facts(root, settings)._replace(module=module_name(path))
