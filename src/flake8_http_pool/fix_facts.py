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
from typing import Any, Dict, FrozenSet, Iterable, Iterator, NamedTuple, Optional, Set, Tuple

from .bindings import dotted_name, import_names

# What marks a project's root, nearest first (as ruff, mypy and pre-commit find one).
ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
# Calls whose first argument names what they patch (a dotted string), or whose first two name an object and
# the attribute patched on it.
_PATCH_CALLS = frozenset({"patch", "setattr", "patch.object", "patch.dict", "delattr"})
# A file can patch only through one of these words, or by assigning to an attribute of a library it imports.
_PATCH_WORDS = (b"patch", b"mocker", b"setattr", b"delattr")
# One pattern per library: a pattern that starts with a literal is searched for that literal first (fast).
_LIBRARY_ATTRIBUTE_STORES = tuple(
    re.compile(re.escape(name) + rb"\.[\w.]+[ \t]*=[^=]")
    for name in (b"requests", b"httpx", b"aiohttp", b"urllib3", b"grequests", b"niquests")
)
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
    # (the project model did not run).
    named_elsewhere: Optional[FrozenSet[str]] = None

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
        if not self.patched:
            return False
        leaf = self.module.rsplit(".", 1)[-1]
        for name in names:
            if not name:
                continue
            if name in self.patched or (self.module and f"{self.module}.{name}" in self.patched):
                return True
            suffix = "." + name
            for target in self.patched:
                if target.endswith(suffix):
                    prefix = target[: -len(suffix)]
                    if leaf and (prefix == leaf or prefix.endswith("." + leaf)):
                        return True
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


def patch_targets(tree: ast.AST) -> Iterator[str]:
    """The dotted names a module patches or rebinds, resolved through its own imports where it can."""
    imports = import_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted_name(node.func) or ""
            tail = ".".join(name.split(".")[-2:]) if name.endswith(".object") else name.rsplit(".", 1)[-1]
            if tail not in _PATCH_CALLS or not node.args:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value.strip()
            elif len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                owner = _qualified(dotted_name(first), imports)
                if owner:
                    yield f"{owner}.{node.args[1].value}"
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute):
                    qualified = _qualified(dotted_name(target), imports)
                    if qualified:
                        yield qualified  # `requests.get = wrapper`: a module's attribute, reached by import
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                qualified = _qualified(dotted_name(target), imports) if isinstance(target, ast.Attribute) else None
                if qualified:
                    yield qualified


def _qualified(name: Optional[str], imports: dict) -> Optional[str]:
    """`name` with its first part replaced by what the module imported under it; None when not imported."""
    if not name:
        return None
    head, _, rest = name.partition(".")
    if head not in imports:
        return None
    return imports[head] + ("." + rest if rest else "")


def find_project_root(path: str) -> Optional[str]:
    """The nearest folder at or above `path` that holds a project marker, None when there is none."""
    start = os.path.abspath(path)
    here = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        if any(os.path.exists(os.path.join(here, marker)) for marker in ROOT_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


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
    """Every `*.py` below `root`, skipping virtual environments, caches and VCS folders; links not followed."""
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg"))]
        for name in files:
            if name.endswith(".py"):
                yield os.path.join(directory, name)


def may_patch(data: bytes) -> bool:
    """The byte gate: whether a file's text could patch or rebind anything (most files cannot).

    Non-ASCII bytes are searched as the parser reads identifiers (NFKC): `ｐａｔｃｈ` is `patch` to Python.
    """
    from .source_files import bytes_as_parser_reads

    data = bytes_as_parser_reads(data)
    return any(word in data for word in _PATCH_WORDS) or any(store.search(data) for store in _LIBRARY_ATTRIBUTE_STORES)


# The run's disk cache (project_cache.ProjectCache), when it has one: each file's patch targets are kept there
# by content hash, so a warm run parses none of the project's test files again. Set per process (`use_cache`).
_cache: Optional[Any] = None


def use_cache(cache: Optional[Any]) -> None:
    """Keep (and find) each file's patch targets in `cache` for the rest of this process; None: no cache."""
    global _cache
    _cache = cache


def project_patches(files: Iterable[str]) -> Set[str]:
    """The patch targets of every file that passes the byte gate; unreadable or broken files are passed over."""
    found: Set[str] = set()
    for path in files:
        try:
            with open(path, "rb") as handle:
                data = handle.read(4 * 1024 * 1024 + 1)
        except OSError:
            continue
        if len(data) > 4 * 1024 * 1024 or not may_patch(data):
            continue
        from .project_cache import content_hash, log_parse
        from .source_files import quiet_compiler

        key = content_hash(data) if _cache is not None else ""
        if _cache is not None:
            known = _cache.load_blob("p", key)
            if isinstance(known, tuple):
                found.update(known)
                continue
        log_parse(path)
        try:
            with quiet_compiler():  # a test file's `1if x else y` is not this run's to warn about
                tree = ast.parse(data, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        targets = tuple(sorted(set(patch_targets(tree))))
        found.update(targets)
        if _cache is not None:
            _cache.store_blob("p", key, targets)
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
    return settings._replace(
        patched=frozenset(project_patches(project_python_files(root))), requests_232=pins_requests_232(root)
    )


# Per process: the project facts of each root met so far (a run's workers each gather a root once).
_GATHERED: Dict[Tuple[str, FixFacts], FixFacts] = {}


def facts_for_file(path: str, settings: FixFacts = NO_FACTS, walked_root: Optional[str] = None) -> FixFacts:
    """The facts of the project the file at `path` belongs to, with its module name.

    The project is the nearest folder with a root marker above the file; without one, the folder the run
    walked to find it (`walked_root`); a file named on its own outside any project has no project, and its fix
    sees what the file itself says. Each file gets its own project's facts: a folder holding several projects
    must not let one project's test patches make another's sites report-only.
    """
    root = find_project_root(path) or (os.path.abspath(walked_root) if walked_root else None)
    if root is None:
        return settings._replace(module=module_name(path))
    # The project's facts do not depend on which of its modules asks: `named_elsewhere` is the module's own, so
    # it stays out of the key (in it, every module would walk and gather the whole project again).
    key = (root, settings._replace(named_elsewhere=None))
    if key not in _GATHERED:
        _GATHERED[key] = gather_fix_facts(root, key[1])
    return _GATHERED[key]._replace(module=module_name(path), named_elsewhere=settings.named_elsewhere)
