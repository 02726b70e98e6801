"""HTP104's fix (unsafe): a hot function takes its client as a parameter; each caller makes one per loop.

`async def fetch(url): async with aiohttp.ClientSession() as session: ...` becomes
`async def fetch(session, url): ...`, and `await asyncio.gather(*(fetch(u) for u in urls))` becomes
`async with aiohttp.ClientSession() as session: await asyncio.gather(*(fetch(session, u) for u in urls))`.
Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp104.ClientParameterCommand PATH`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Sequence, Tuple, Union

import libcst as cst

from ..finding import Finding
from ..fix_facts import FixFacts
from .base import FindingFixCommand, lines_of
from .htp104_sites import CallerWrap, ClientParameter, plan_client_parameters

_Result = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]


class ClientParameterCommand(FindingFixCommand):
    """HTP104: pass one client into a hot function instead of making one per call."""

    DESCRIPTION = "HTP104: the function takes the client as a parameter; each caller makes one around its loop."
    CODE = "HTP104"

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        return list(plan_client_parameters(findings, tree, lines_of(text), facts))

    def prepare(self, plan: Sequence[Any]) -> None:
        self._creations: Dict[Tuple[int, int], ClientParameter] = {(p.creation[0], p.creation[1]): p for p in plan}
        self._wraps: Dict[Tuple[int, int], Tuple[ClientParameter, CallerWrap]] = {
            (w.statement[0], w.statement[1]): (p, w) for p in plan for w in p.wraps
        }
        self._calls: Dict[Tuple[int, int, int, int], CallerWrap] = {
            c: w for p in plan for w in p.wraps for c in w.calls
        }
        self._functions: List[List[ClientParameter]] = []  # a stack: the creations found in each open def
        # Statements to drop, by id, holding each node: an id is only unique while its object lives, and a
        # freed node's id, reused by a later statement, must never mark that statement for removal.
        self._drop: Dict[int, cst.CSTNode] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._functions.append([])
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        found = self._functions.pop()
        if not found:
            return updated_node
        plan = found[0]
        self.applied += 1
        params = list(updated_node.params.params)
        params.insert(plan.position, cst.Param(name=cst.Name(plan.parameter)))
        return updated_node.with_changes(params=updated_node.params.with_changes(params=params))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        wrap = self._calls.get(self.span(original_node))
        if wrap is None:
            return updated_node
        return updated_node.with_changes(args=[cst.Arg(value=cst.Name(wrap.name)), *updated_node.args])

    def _start(self, node: cst.CSTNode) -> Tuple[int, int]:
        if isinstance(node, cst.SimpleStatementLine) and node.body:
            return self.start(node.body[0])
        return self.start(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> _Result:
        result = super().on_leave(original_node, updated_node)
        if not isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return result
        start = self._start(original_node)
        plan = self._creations.get(start)
        if plan is not None and self._functions:
            if not plan.is_with and isinstance(original_node, cst.SimpleStatementLine) and len(original_node.body) == 1:
                self._functions[-1].append(plan)
                self._drop[id(result)] = result  # removed by the enclosing block, which keeps its comments
                return result
            if plan.is_with and isinstance(result, cst.With):
                unwrapped = self._unwrap(original_node, result, plan)  # type: ignore[arg-type]
                if unwrapped is not None:
                    self._functions[-1].append(plan)
                    return unwrapped
        found = self._wraps.get(start)
        if found is not None and isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            plan, wrap = found
            constructor = cst.parse_expression(plan.constructor_code)
            return cst.With(
                items=[cst.WithItem(item=constructor, asname=cst.AsName(name=cst.Name(wrap.name)))],
                body=cst.IndentedBlock(body=[result.with_changes(leading_lines=[])]),
                asynchronous=cst.Asynchronous() if plan.is_async else None,
                leading_lines=result.leading_lines,
            )
        return result

    def _unwrap(self, original: cst.With, updated: cst.With, plan: ClientParameter) -> Any:
        """The `with`'s body takes its place (its client item dropped; other items keep their `with`)."""
        position = next((n for n, item in enumerate(original.items) if self.span(item.item) == plan.constructor), None)
        if position is None:
            return None
        rest = [i for n, i in enumerate(updated.items) if n != position]
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=rest)
        body = updated.body
        if isinstance(body, cst.SimpleStatementSuite):
            statements: List[cst.BaseStatement] = [
                cst.SimpleStatementLine(body=body.body, trailing_whitespace=body.trailing_whitespace)
            ]
            header_comment = None
        else:
            statements = list(body.body)
            header_comment = body.header.comment
        leading = list(updated.leading_lines)
        if header_comment is not None:
            leading.append(cst.EmptyLine(comment=header_comment))  # the `with` line's comment stays, above its body
        statements[0] = statements[0].with_changes(leading_lines=[*leading, *statements[0].leading_lines])
        return cst.FlattenSentinel(statements)

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body: List[cst.BaseStatement] = []
        comments: List[cst.EmptyLine] = []
        for statement in updated_node.body:
            if self._drop.get(id(statement)) is statement and isinstance(statement, cst.SimpleStatementLine):
                del self._drop[id(statement)]
                # The removed assignment's comments go to the statement after it, above its own (source order).
                comments += [line for line in statement.leading_lines if line.comment]
                if statement.trailing_whitespace.comment is not None:
                    comments.append(cst.EmptyLine(comment=statement.trailing_whitespace.comment))
                continue
            if comments:
                statement = statement.with_changes(leading_lines=[*comments, *statement.leading_lines])
                comments = []
            body.append(statement)
        if not body:
            body = [cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=comments)]
        elif comments:
            return updated_node.with_changes(body=body, footer=[*updated_node.footer, *comments])
        return updated_node.with_changes(body=body)
