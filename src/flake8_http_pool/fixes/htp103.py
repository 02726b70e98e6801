"""HTP103's fix (unsafe): build the client once, above the loop, instead of in every iteration.

`for u in urls: with requests.Session() as s: ...` becomes `with requests.Session() as s: for u in urls: ...`
(the `with`'s body stays in the loop); `s = httpx.Client()` in the loop moves to just above it.
Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp103.HoistClientCommand PATH`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Sequence, Tuple, Union

import libcst as cst

from ..finding import Finding
from ..fix_facts import FixFacts
from .base import FindingFixCommand, lines_of
from .htp103_sites import Hoist, plan_hoists

_Result = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]


class HoistClientCommand(FindingFixCommand):
    """HTP103: move a client made in every iteration of a loop above the loop."""

    DESCRIPTION = "HTP103: create the client once above the loop instead of once per iteration."
    CODE = "HTP103"

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        return list(plan_hoists(findings, tree, lines_of(text), facts))

    def prepare(self, plan: Sequence[Any]) -> None:
        self._loops: Dict[Tuple[int, int], Hoist] = {(h.loop[0], h.loop[1]): h for h in plan}
        self._statements: Dict[Tuple[int, int], Hoist] = {(h.statement[0], h.statement[1]): h for h in plan}
        self._lifted: Dict[Hoist, Any] = {}  # the hoist -> the assignment line, or the `with` to wrap the loop in

    def _first_start(self, node: cst.CSTNode) -> Tuple[int, int]:
        if isinstance(node, cst.SimpleStatementLine) and node.body:
            return self.start(node.body[0])
        return self.start(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> _Result:
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, cst.SimpleStatementLine) and len(original_node.body) == 1:
            hoist = self._statements.get(self._first_start(original_node))
            if hoist is not None and not hoist.is_with and isinstance(original_node.body[0], cst.Assign):
                self._lifted[hoist] = result
                return cst.RemoveFromParent()
        elif isinstance(original_node, cst.With):
            hoist = self._statements.get(self.start(original_node))
            if hoist is not None and hoist.is_with and isinstance(result, cst.With):
                return self._unwrap(original_node, result, hoist)
        elif isinstance(original_node, (cst.For, cst.While)):
            hoist = self._loops.get(self.start(original_node))
            lifted = self._lifted.pop(hoist, None) if hoist is not None else None
            if lifted is not None and isinstance(result, (cst.For, cst.While)):
                self.applied += 1
                leading = result.leading_lines
                loop = result.with_changes(leading_lines=[])
                if isinstance(lifted, cst.With):
                    return lifted.with_changes(
                        body=lifted.body.with_changes(body=[loop]), leading_lines=leading
                    )
                moved = lifted.with_changes(leading_lines=[*leading, *lifted.leading_lines])
                return cst.FlattenSentinel([moved, loop])
        return result

    def _unwrap(self, original: cst.With, updated: cst.With, hoist: Hoist) -> _Result:
        """The `with`'s body takes its place in the loop; the client's item is kept to wrap the loop."""
        position = next(
            (n for n, item in enumerate(original.items) if self.span(item.item) == hoist.constructor), None
        )
        if position is None:
            return updated
        item = updated.items[position].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        body = updated.body
        if isinstance(body, cst.SimpleStatementSuite):
            statements: List[cst.BaseStatement] = [
                cst.SimpleStatementLine(body=body.body, trailing_whitespace=body.trailing_whitespace)
            ]
            header = cst.TrailingWhitespace()
        else:
            statements = list(body.body)
            header = body.header
        rest = [i for n, i in enumerate(updated.items) if n != position]
        # A comment on the `with` line stays with what is left of that line's `with`; when the client was its
        # only item, the comment goes up with the client (it usually describes the client, and pragmas such
        # as `# noqa` or `# type: ignore` must stay on its line), even where it spoke of one per iteration.
        self._lifted[hoist] = updated.with_changes(
            items=[item], lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT,
            body=cst.IndentedBlock(body=[], header=cst.TrailingWhitespace() if rest else header),
        )
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=rest)
        statements[0] = statements[0].with_changes(
            leading_lines=[*updated.leading_lines, *statements[0].leading_lines]
        )
        return cst.FlattenSentinel(statements)

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if original_node.body and not updated_node.body:
            # The moved assignment was all the block held.
            return updated_node.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
        return updated_node
