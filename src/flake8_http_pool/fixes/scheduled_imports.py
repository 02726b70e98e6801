"""The imports a fix scheduled, carried out at the cost of the part of the module they concern.

A fix asks for an import (`add_needed_import`) or for one it made unused to go (`remove_unused_import`), and
libcst's AddImportsVisitor and RemoveImportsVisitor do it after the transform, as libcst's CodemodCommand runs
them. Both walk the whole module: on a 5,000-line module the removal's scope analysis took 8 s of CPU, for an
import that stayed in use (HTP102's `_HTTP_SESSION = requests.Session()` uses the `requests` it may drop).
Their result is kept byte for byte; what changes is how much of the module they are shown:

- AddImportsVisitor reads and changes only the first statements of the module (a docstring, the import block
  after it, the statement that follows; libcst 1.1 and later, which have `_GatherTopImportsBeforeStatements`):
  it is run on those and the rest is put back behind them.
- RemoveImportsVisitor drops an import only when its name is unused. It is first run on a reduction of the
  module: every statement (at any depth) whose text names none of the imports' names nor `__all__` left
  out. A statement that does not name a name neither binds nor reads it, and keeps its place in the order of
  the others, so a name used in the reduction is used in the module. When the reduction drops nothing, no
  name is unused in the module either and the removal is skipped; otherwise it runs on the whole module.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..source_files import quiet_parse

_LINE = re.compile(r".*?(?:\r\n|\r|\n)|.+\Z", re.DOTALL)  # the tokenizer's lines, each with its end
# Below this share of the module's lines the reduction is worth its own parse and analysis.
_WORTH = 0.5


def carry_out(tree: cst.Module, context: Any) -> cst.Module:
    """`tree` with the imports scheduled in `context` (a CodemodContext) added, then the unused ones removed,
    as libcst's AddImportsVisitor and RemoveImportsVisitor would leave it."""
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    if AddImportsVisitor.CONTEXT_KEY in context.scratch:
        tree = _added(tree, context)
    if RemoveImportsVisitor.CONTEXT_KEY in context.scratch:
        tree = _removed(tree, context)
    return tree


def _import_line(statement: cst.CSTNode) -> bool:
    """A statement line holding one import (what AddImportsVisitor counts as the import block)."""
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))


def _reads_only_the_top() -> bool:
    """Whether this libcst's AddImportsVisitor looks only at the imports before the module's first other
    statement (libcst 1.1, PR 1024); before, it took imports from anywhere in the module."""
    from libcst.codemod.visitors import _add_imports

    return hasattr(_add_imports, "_GatherTopImportsBeforeStatements")


def _added(tree: cst.Module, context: Any) -> cst.Module:
    from libcst.codemod.visitors import AddImportsVisitor

    if not _reads_only_the_top():
        return AddImportsVisitor(context).transform_module(tree)
    body = list(tree.body)
    # The first statement (a docstring or __strict__ flag it skips), the import block, and the statement after
    # it (which gets an empty line above the new imports): all it reads or changes.
    end = 1
    while end < len(body) and _import_line(body[end]):
        end += 1
    head = AddImportsVisitor(context).transform_module(tree.with_changes(body=body[:end + 1]))
    return tree.with_changes(body=[*head.body, *body[end + 1:]])


def _removed(tree: cst.Module, context: Any) -> cst.Module:
    from libcst.codemod.visitors import RemoveImportsVisitor

    scheduled: Sequence[Tuple[str, Optional[str], Optional[str]]] = context.scratch[RemoveImportsVisitor.CONTEXT_KEY]
    text = tree.code
    reduced = reduced_source(text, _names(scheduled))
    if reduced is not None and len(reduced) < _WORTH * len(text):
        try:
            small = cst.parse_module(reduced)
        except cst.ParserSyntaxError:
            small = None
        if small is not None and RemoveImportsVisitor(context).transform_module(small).code == reduced:
            return tree  # every import it may remove is still used
    return RemoveImportsVisitor(context).transform_module(tree)


def _names(scheduled: Iterable[Tuple[str, Optional[str], Optional[str]]]) -> Set[str]:
    """The words a statement must hold to bind, read or export a scheduled import's name."""
    names = {"__all__"}
    for module, obj, asname in scheduled:
        names.add(module.split(".", 1)[0])
        names.update(name for name in (obj, asname) if name)
    return names


def reduced_source(text: str, names: Set[str]) -> Optional[str]:
    """`text` without the statements, at any depth, whose lines hold none of `names` (a block left empty holds
    `pass`), or None when `text` does not parse. A statement sharing a line with another, or joined to the line
    before or after by a backslash, stays."""
    try:
        tree = quiet_parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = _LINE.findall(text)
    out = list(lines)
    try:
        _reduce(tree.body, 0, lines, out, names)
    except RecursionError:
        return None
    return "".join(out)


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None)
    return min([statement.lineno] + [d.lineno for d in decorators]) if decorators else statement.lineno


def _alone(statement: ast.stmt, first: int, last: int, lines: Sequence[str], after: int, before: int) -> bool:
    """Whether the statement's lines hold nothing else: the code before it on its first line is indentation,
    its neighbours end before it (`after`) and start after it (`before`), no backslash joins its lines to
    others."""
    if not first > after or not last < before or last > len(lines):
        return False
    head = lines[first - 1]
    if getattr(statement, "decorator_list", None):
        if not head.lstrip(" \t\f").startswith("@"):
            return False
    elif head.encode("utf-8")[:statement.col_offset].strip(b" \t\f"):
        return False
    if first > 1 and lines[first - 2].rstrip("\r\n").endswith("\\"):
        return False
    return not lines[last - 1].rstrip("\r\n").endswith("\\")


def _reduce(body: Sequence[ast.stmt], header: int, lines: Sequence[str], out: List[str], names: Set[str]) -> None:
    """Blank in `out` the lines of the statements of `body` that name none of `names`; go into the others.
    `header` is the line of the block's header (0 for the module)."""
    spans = [(_first_line(s), s.end_lineno or s.lineno) for s in body]
    dropped = []
    for index, statement in enumerate(body):
        first, last = spans[index]
        after = spans[index - 1][1] if index else header
        before = spans[index + 1][0] if index + 1 < len(spans) else len(lines) + 1
        if not any(name in line for line in lines[first - 1:last] for name in names) \
                and _alone(statement, first, last, lines, after, before):
            dropped.append((first, last))
            continue
        for block in _blocks(statement):
            _reduce(block, first, lines, out, names)
    if not dropped:
        return
    for first, last in dropped:
        for number in range(first, last + 1):
            out[number - 1] = ""
    if len(dropped) == len(body):  # a block must hold a statement
        head = lines[dropped[0][0] - 1]
        indent = head[:len(head) - len(head.lstrip(" \t\f"))]
        end = head[len(head.rstrip("\r\n")):] or "\n"
        out[dropped[0][0] - 1] = f"{indent}pass{end}"


def _blocks(statement: ast.stmt) -> Iterable[Sequence[ast.stmt]]:
    """The statement lists a compound statement holds."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(statement, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for part in getattr(statement, "handlers", ()) or ():
        yield part.body
    for part in getattr(statement, "cases", ()) or ():
        yield part.body
