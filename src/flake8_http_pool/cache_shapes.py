"""What each kind of cache entry may hold: an entry of any other shape is a miss, never a value the run uses.

The restricted unpickler (project_cache._DataUnpickler) keeps a committed cache from running code; it still
builds whatever plain data a pickle describes, and a well-formed entry of the wrong shape (`results` a list,
a finding whose line is a string, a summary without `functions`) made the engine fail and the run report an
internal error instead of its findings. So every entry is checked here, where it is loaded, against the shape
this version writes: types, lengths, the keys each record always has, and the references inside a summary
that the solve follows without asking (a def's key is one of the module's functions). A check is a function
of the value returning a bool; they are built once, from a few combinators, and cost a few microseconds per
module's entry.

Text that reaches the output (a finding's code and message, a file's error) must be free of lone surrogates:
printing one raises UnicodeEncodeError. Paths and names may hold them (surrogate escapes of a file name).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional

Check = Callable[[Any], bool]

# Lines, columns and counts are far inside this; a bigger int (a crafted `line` of 10**5000) could not even be
# printed (Python 3.11+ limits int-to-str conversions).
_INT_LIMIT = 1 << 62
# Details of a finding (fix hints: flags, names, spans) nest two levels at most; a value nested deeper than this
# is not one this version wrote.
_DETAILS_DEPTH = 4


def _int(value: Any) -> bool:
    return type(value) is int and -_INT_LIMIT < value < _INT_LIMIT


def _str(value: Any) -> bool:
    return type(value) is str


def _bool(value: Any) -> bool:
    return type(value) is bool


def _printable_text(value: Any) -> bool:
    """A str that can be written out: no lone surrogate."""
    if type(value) is not str:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


def fixed(*checks: Check, kind: type = tuple) -> Check:
    """A tuple (or list) of exactly these items."""
    count = len(checks)
    return lambda value: (type(value) is kind and len(value) == count
                          and all(check(item) for check, item in zip(checks, value)))


def each(check: Check, kind: type = list) -> Check:
    """A list (or tuple, frozenset) whose every item passes `check`."""
    return lambda value: type(value) is kind and all(map(check, value))


def mapping(key: Check, item: Check) -> Check:
    """A dict whose every key and value pass."""
    return lambda value: type(value) is dict and all(key(k) and item(v) for k, v in value.items())


def record(required: Dict[str, Check], optional_fields: Optional[Dict[str, Check]] = None) -> Check:
    """A dict holding every `required` field (and may hold the optional ones), each of its shape."""
    wanted = tuple(required.items())
    maybe = tuple((optional_fields or {}).items())

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name, field in wanted:
            if name not in value or not field(value[name]):
                return False
        return all(field(value[name]) for name, field in maybe if name in value)

    return check


_SCALARS = frozenset({str, bool, float, type(None)})


def _plain(value: Any, depth: int = 0) -> bool:
    """Plain data a finding's details may hold: scalars, and tuples, lists and str-keyed dicts of them."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is int:
        return -_INT_LIMIT < value < _INT_LIMIT
    if depth >= _DETAILS_DEPTH:
        return False
    if kind in (tuple, list):
        return all(_plain(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(key) is str and _plain(item, depth + 1) for key, item in value.items())
    return False


def _details(value: Any) -> bool:
    """A finding's details: a str-keyed dict of plain data (most values scalars, checked here without a call)."""
    if type(value) is not dict:
        return False
    for key, item in value.items():
        kind = type(item)
        if type(key) is not str:
            return False
        if kind in _SCALARS or (kind is int and -_INT_LIMIT < item < _INT_LIMIT):
            continue
        if not _plain(item, 1):
            return False
    return True


# -- a module's summary (project.summarize) -------------------------------------------------------------
_strings = each(_str)


def _import_ref(value: Any) -> bool:
    return type(value) is list and len(value) == 3 and value[0] == "import" and _str(value[1]) \
        and _strings(value[2])


def _ref(value: Any) -> bool:
    """["local", function key], ["import", module path, [attributes]] or ["verbs", an import reference]."""
    if type(value) is not list or not value:
        return False
    tag = value[0]
    if tag == "import":
        return _import_ref(value)
    if tag in ("local", "verbs") and len(value) == 2:
        return _str(value[1]) if tag == "local" else _import_ref(value[1])
    return False


_site = fixed(_ref, _int, _str, _int, kind=list)  # a call or registration: [ref, line, kind, column]
_every_run = fixed(_ref, _int, _int, kind=list)  # "always" and "handoffs": [ref, line, column]
_function = record({
    "name": _str, "line": _int, "calls": each(_site), "hot": optional(fixed(_str, _int, kind=list)),
    "unpooled": _bool, "client": _bool, "wrapper": _bool, "factory": optional(_str),
    "blocks": optional(fixed(_str, _int, _str, kind=list)), "always": each(_every_run),
    "writes": each(fixed(_int, _str, _str, kind=list)), "handoffs": each(_every_run),
}, {"factory_name": _str, "factory_same": _bool})
_class_facts = record({"bases": each(optional(_ref)), "clients": mapping(_str, _str), "own": _strings})
_stored = record({"stored": _strings})


def _classes_facts(value: Any) -> bool:
    """Per top-level class its facts; under "*" the attributes the module stores."""
    return type(value) is dict and all(
        type(name) is str and (_stored(facts) if name == "*" else _class_facts(facts)) for name, facts in value.items())


_summary_fields = record({
    "version": _int, "functions": mapping(_str, _function), "module_calls": each(_site),
    "defs": mapping(_str, _str), "classes": mapping(_str, mapping(_str, _str)), "exports": mapping(_str, _str),
    "stars": _strings, "library_roots": _strings,
    "class_facts": _classes_facts, "has_async": _bool,
})


def summary(value: Any) -> bool:
    """A module's summary: its shape, and every def and method it names is one of its functions (the solve
    looks those up without asking)."""
    if not _summary_fields(value):
        return False
    functions = value["functions"]
    return all(key in functions for key in value["defs"].values()) and all(
        key in functions for methods in value["classes"].values() for key in methods.values())


# -- check results and findings (checking.FileResult, Located, finding.Finding) -------------------------
_BUILT: Dict[str, Check] = {}


def _built(name: str) -> Check:
    """The checks that name the tool's own result classes, built on first use (importing them costs the
    flake8 plugin's warm run nothing until an entry holding them is read)."""
    if not _BUILT:
        from .checking import FileResult, Located
        from .engine import ModuleSeeds
        from .finding import Finding

        def finding(value: Any) -> bool:
            return (type(value) is Finding and _printable_text(value.code) and _int(value.line)
                    and _int(value.col) and _int(value.end_line) and _int(value.end_col)
                    and _printable_text(value.message) and _details(value.details))

        def located(value: Any) -> bool:
            return type(value) is Located and finding(value.finding) and _int(value.col_chars) \
                and _int(value.end_col_chars)

        findings = each(located, tuple)

        def result(value: Any) -> bool:
            return (type(value) is FileResult and _str(value.path) and findings(value.findings)
                    and (value.error is None or _printable_text(value.error))
                    and (value.where is None or fixed(_int, _int)(value.where)))

        position = fixed(_int, _int)
        seeds_fields = (
            mapping(_str, fixed(_str, _str, _int, _str)),  # hot
            mapping(position, fixed(_str, _str, _str, _int, _str, _bool)),  # factories
            mapping(position, fixed(_str, _str, _int, _str, _str, _str)),  # blocking
            mapping(position, fixed(_str, _str, _int, _str, each(fixed(_int, _str, _str), tuple))),  # writers
            mapping(_str, each(fixed(_str, _str), tuple)),  # inherited
            each(_str, frozenset),  # shadowed
        )

        def seeds(value: Any) -> bool:
            return type(value) is ModuleSeeds and len(value) == len(seeds_fields) and all(
                check(field) for check, field in zip(seeds_fields, value))

        fix_class = optional(lambda value: value in ("safe", "unsafe") if type(value) is str else False)
        entry_fields = {
            "hash": _str, "path": _str, "gated": _bool, "summary": optional(summary),
            "results": mapping(_str, result),
            "seeded": mapping(fixed(_str, _str), result),
            "findings": fixed(_str, each(finding)),
            "classes": mapping(fixed(_str, _str, _str), each(fix_class)),
        }
        _BUILT.update(
            findings=findings,
            module_entry=record({}, entry_fields),
            **{f"entry_{name}": check for name, check in entry_fields.items()},
            seeds=mapping(_str, seeds),
            phase_one=fixed(findings, lambda place: place in ("first", "rest") if type(place) is str else False,
                            _str),
        )
    return _BUILT[name]


def module_entry(value: Any) -> bool:
    """A module's entry (project_cache.ProjectCache.load): whatever of its fields it holds, each whole."""
    return _built("module_entry")(value)


def module_entry_field(name: str) -> Check:
    """The shape of one field of a module's entry (`module_entry`'s), to check that field alone."""
    return _built(f"entry_{name}")


def findings(value: Any) -> bool:
    """A check's findings: a tuple of checking.Located."""
    return _built("findings")(value)


def phase_one(value: Any) -> bool:
    """What `check`'s stat index keeps of a file's phase 1: (findings, "first" or "rest", content hash)."""
    return _built("phase_one")(value)


def solved_seeds(value: Any) -> bool:
    """A solve's seeds: absolute path -> engine.ModuleSeeds."""
    return _built("seeds")(value)


def check_solved(value: Any) -> bool:
    """`check`'s solved project: (state, seeds, the paths phase 2 took in but could not summarize)."""
    return type(value) is tuple and len(value) == 3 and _str(value[0]) and solved_seeds(value[1]) \
        and each(_str, tuple)(value[2])


def plugin_solved(value: Any) -> bool:
    """The plugin's solved project: (state, seeds)."""
    return type(value) is tuple and len(value) == 2 and _str(value[0]) and solved_seeds(value[1])


strings = each(_str, tuple)  # patch targets, the needles a file was missed by
text = _str  # a digest, a state
pair_of_text = fixed(_str, _str)  # the plugin's quick check: (digest of the stats, state)


def folder_listing(folder: str, value: Any) -> bool:
    """A folder's listing in the plugin's memo (a project_cache.StatMemo's value for `folder`): its Python
    files and its subfolders, each right in it (the walk reads them as the folder's)."""
    if not fixed(_strings, _strings)(value):
        return False
    return all(os.path.dirname(path) == folder and os.path.basename(path) not in ("", ".", "..")
               for part in value for path in part)


def per_file(check: Check) -> Callable[[str, Any], bool]:
    """`check` as a project_cache.StatMemo takes it: of a file's path and the value kept for it."""
    return lambda path, value: check(value)
