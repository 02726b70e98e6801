"""HTP101's fix: wrap the statement holding the outermost loop in one session and call through it.

`with requests.Session() as session:` (`httpx.Client() as client`, `async with aiohttp.ClientSession() as
session`) goes around the statement, each reported call inside becomes `session.get(...)` (grequests: gets
`session=session`), `import requests` is added where needed and imports left unused are removed. A generator
expression assigned to a name and consumed later in its block (`pages = (requests.get(u) for u in urls)` ...
`for p in pages:`) gets a `with` spanning the assignment through the last statement reading the name.
Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp101.UnpooledCallInLoopCommand PATH`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from ..finding import Finding
from ..fix_facts import FixFacts
from .base import FindingFixCommand, lines_of
from .htp101_sites import CallEdit, LoopWrap, plan_loop_wraps
from .realign import realign_continuations

_NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def append_argument(args: Sequence[cst.Arg], new: cst.Arg) -> List[cst.Arg]:
    """`args` with `new` after the last one, laid out like the others: it takes the last argument's trailing
    comma and the whitespace before the closing parenthesis, and the last argument gets the separator the
    arguments already use (`, ` or a line break), so no trailing whitespace or stray line is written."""
    if not args:
        return [new]
    last = args[-1]
    separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma
    if isinstance(last.comma, cst.Comma):
        # `f(a, b,)` / `f(\n    a,\n)`: the trailing comma and what follows it move to the new argument.
        if not isinstance(last.comma.whitespace_after, cst.ParenthesizedWhitespace) and len(args) < 2:
            separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return [*args[:-1], last.with_changes(comma=separator), new.with_changes(comma=last.comma)]
    moved = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
    return [*args[:-1], last.with_changes(comma=separator, whitespace_after_arg=cst.SimpleWhitespace("")), moved]


class UnpooledCallInLoopCommand(FindingFixCommand):
    """HTP101: send the requests of a loop through one session opened around the loop."""

    DESCRIPTION = (
        "HTP101: wrap the loop in `with requests.Session() as session:` (httpx.Client, aiohttp.ClientSession) "
        "and send its requests through it."
    )
    CODE = "HTP101"

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        return list(plan_loop_wraps(findings, tree, lines_of(text), facts))

    def prepare(self, plan: Sequence[Any]) -> None:
        self._wraps: Dict[Tuple[int, int], LoopWrap] = {(w.loop[0], w.loop[1]): w for w in plan}
        self._calls: Dict[Tuple[int, int, int, int], Tuple[LoopWrap, CallEdit]] = {
            call.span: (wrap, call) for wrap in plan for call in wrap.calls
        }
        self._blocks: List[int] = []  # start columns of the statements being visited, innermost last
        self._in_body: Set[int] = set()  # ids of statements that sit directly in a statement list
        self._matched: Dict[int, LoopWrap] = {}  # id(original statement) -> its wrap
        self._active: Set[LoopWrap] = set()
        # Wraps spanning a run of statements (a generator assigned, then consumed): where each run ends, and
        # the rewritten statements opening / closing a run, found again when their block is left.
        self._through: Dict[Tuple[int, int], LoopWrap] = {(w.through[0], w.through[1]): w for w in plan if w.through}
        # Keyed by id of rewritten nodes, each entry holding its node: an id is unique only while its object
        # lives, so a lookup must also check that it found the very node.
        self._run_start: Dict[int, Tuple[cst.CSTNode, LoopWrap]] = {}
        self._run_end: Dict[int, Tuple[cst.CSTNode, LoopWrap]] = {}

    # -- finding the loop statement ----------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        self._in_body.update(id(stmt) for stmt in node.body)
        return True

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> Optional[bool]:
        self._in_body.update(id(stmt) for stmt in node.body)
        return True

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> Optional[bool]:
        self._match(node, [self.start(small) for small in node.body])
        return True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._blocks.append(self.start(node)[1])  # the indentation continuation lines are measured from
        if id(node) in self._in_body and not isinstance(node, cst.SimpleStatementSuite):
            starts = [self.start(node)]
            if isinstance(node, cst.SimpleStatementLine):
                starts += [self.start(small) for small in node.body]
            self._match(node, starts)
        return super().on_visit(node)

    def _match(self, node: cst.CSTNode, starts: List[Tuple[int, int]]) -> None:
        for start in starts:
            wrap = self._wraps.get(start)
            if wrap is not None and wrap not in self._active:
                self._matched[id(node)] = wrap
                self._active.add(wrap)
                return

    # -- the calls -----------------------------------------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        found = self._calls.get(self.span(original_node))
        if found is None or found[0] not in self._active:
            return updated_node
        wrap, edit = found
        self.applied += 1
        for ref in edit.imports:
            self.remove_unused_import(ref.module, ref.obj, ref.asname)
        if edit.pass_session:
            keyword = cst.Arg(value=cst.Name(wrap.name), keyword=cst.Name("session"), equal=_NO_SPACE)
            return updated_node.with_changes(args=append_argument(updated_node.args, keyword))
        args = list(updated_node.args)
        if edit.params_keyword:
            args[1] = args[1].with_changes(keyword=cst.Name("params"), equal=_NO_SPACE)
        func = cst.Attribute(value=cst.Name(wrap.name), attr=cst.Name(edit.verb))
        renamed = updated_node.with_changes(func=func, args=args)
        block = self._blocks[-1] if self._blocks else 0
        return realign_continuations(original_node, renamed, self.start(original_node)[1], block)

    # -- the wrap ------------------------------------------------------------------------------------
    def _with(self, wrap: LoopWrap, body: Sequence[cst.BaseStatement], leading: Sequence[cst.EmptyLine]) -> cst.With:
        if wrap.import_module is not None:
            self.add_needed_import(wrap.import_module)
        constructor = cst.Call(func=cst.Attribute(value=cst.Name(wrap.module_name), attr=cst.Name(wrap.constructor)))
        return cst.With(
            items=[cst.WithItem(item=constructor, asname=cst.AsName(name=cst.Name(wrap.name)))],
            body=cst.IndentedBlock(body=list(body)),
            asynchronous=cst.Asynchronous() if wrap.is_async else None,
            leading_lines=list(leading),
        )

    def on_leave(
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]:
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and self._blocks:
            self._blocks.pop()
        result = super().on_leave(original_node, updated_node)
        if isinstance(result, (cst.Module, cst.IndentedBlock)) and self._run_start:
            return self._wrap_runs(result)
        if self._through and id(original_node) in self._in_body:
            starts = [self.start(original_node)]
            if isinstance(original_node, cst.SimpleStatementLine):
                starts += [self.start(small) for small in original_node.body]  # `pages = ...; list(pages)`
            for start in starts:
                ending = self._through.get(start)
                if ending is not None and ending in self._active:
                    self._run_end[id(result)] = (result, ending)
        wrap = self._matched.pop(id(original_node), None)
        if wrap is None:
            return result
        if wrap.through is not None:
            self._run_start[id(result)] = (result, wrap)  # wrapped with the statements after it, when the block is left
            return result
        if isinstance(result, cst.SimpleStatementSuite):
            # `if x: y = [...]`: the suite becomes an indented block holding the `with`.
            line = cst.SimpleStatementLine(body=result.body, trailing_whitespace=result.trailing_whitespace)
            return cst.IndentedBlock(body=[self._with(wrap, [line], [])])
        if isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            # Comments above the statement stay above the `with`; those inside move with the body.
            leading = result.leading_lines
            return self._with(wrap, [result.with_changes(leading_lines=[])], leading)
        return result

    def _ends_run(self, statement: cst.CSTNode, wrap: LoopWrap) -> bool:
        ended = self._run_end.get(id(statement))
        return ended is not None and ended[0] is statement and ended[1] is wrap

    def _wrap_runs(self, block: Union[cst.Module, cst.IndentedBlock]) -> Union[cst.Module, cst.IndentedBlock]:
        """Put each run of statements, from a generator's assignment through its last reader, in one `with`."""
        body = list(block.body)
        grouped: List[Any] = []
        index = 0
        while index < len(body):
            started = self._run_start.get(id(body[index]))
            wrap = started[1] if started is not None and started[0] is body[index] else None
            if wrap is None:
                grouped.append(body[index])
                index += 1
                continue
            del self._run_start[id(body[index])]
            end = index
            # The planner saw the last reader in this block; if it were missing the run would reach the
            # block's end, which still keeps the session open for every read.
            while end < len(body) - 1 and not self._ends_run(body[end], wrap):
                end += 1
            run = body[index:end + 1]
            leading = run[0].leading_lines
            run[0] = run[0].with_changes(leading_lines=[])
            grouped.append(self._with(wrap, run, leading))
            index = end + 1
        return block.with_changes(body=grouped)
