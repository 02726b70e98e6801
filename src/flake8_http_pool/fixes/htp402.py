"""HTP402's fix: move a late gevent monkey-patch (its import and call, or `import grequests`) to the top.

The moved statements go after the docstring and the `from __future__` imports, in their source order;
comments on them and above them move with them.
Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp402.LateMonkeyPatchCommand PATH`.
"""

from __future__ import annotations

import ast
from typing import Any, List, Sequence, Set, Tuple

import libcst as cst

from ..finding import Finding
from ..fix_facts import FixFacts
from .base import FindingFixCommand, lines_of
from .htp402_sites import plan_patch_moves


def _is_header(stmt: cst.BaseStatement) -> bool:
    """The module docstring or a `from __future__` import: they stay first."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name):
        return small.module.value == "__future__"
    return False


class LateMonkeyPatchCommand(FindingFixCommand):
    """HTP402: move the monkey-patch before every import that would keep the unpatched objects."""

    DESCRIPTION = "HTP402: move gevent's monkey-patch (its import and call, or `import grequests`) to the top."
    CODE = "HTP402"

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        return list(plan_patch_moves(findings, tree, lines_of(text), facts))

    def prepare(self, plan: Sequence[Any]) -> None:
        self._starts: Set[Tuple[int, int]] = {start for move in plan for start in move.starts}
        self._reported: Set[Tuple[int, int]] = {start for move in plan for start in move.reported}

    def visit_Module(self, node: cst.Module) -> bool:
        self._moved_ids: Set[int] = set()
        for stmt in node.body:
            if isinstance(stmt, cst.SimpleStatementLine) and self.start(stmt.body[0]) in self._starts:
                self._moved_ids.add(id(stmt))
        return False  # only the module's own statement list changes

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = list(original_node.body)
        moved = [stmt for stmt in body if id(stmt) in self._moved_ids]
        if not moved:
            return updated_node
        kept = [stmt for stmt in body if id(stmt) not in self._moved_ids]
        header = 0
        while header < len(kept) and _is_header(kept[header]):
            header += 1
        block: List[cst.BaseStatement] = []
        for stmt in moved:
            # Comments above the statement go with it; of the blank lines before it at most one stays, and none
            # before the first moved statement.
            comments = [line for line in stmt.leading_lines if line.comment is not None]
            if block and any(line.comment is None for line in stmt.leading_lines):
                comments.insert(0, cst.EmptyLine())
            block.append(stmt.with_changes(leading_lines=comments))
        if header:
            block[0] = block[0].with_changes(leading_lines=[cst.EmptyLine(), *block[0].leading_lines])
        rest = kept[header:]
        if rest:
            first = rest[0]
            leading = list(first.leading_lines)
            if not leading or leading[0].comment is not None:
                leading.insert(0, cst.EmptyLine())
            rest[0] = first.with_changes(leading_lines=leading)
        self.applied += sum(1 for stmt in moved for small in stmt.body if self.start(small) in self._reported)
        return updated_node.with_changes(body=[*kept[:header], *block, *rest])
