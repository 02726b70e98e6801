"""HTP301's fix: size the shared session's connection pool to the thread pool's workers.

Right after the statement that binds the session (first in the body of `with ... as session:`) it adds
`session.mount("http://", HTTPAdapter(pool_connections=N, pool_maxsize=N))` and the same for `https://`,
importing `HTTPAdapter` from the session's library when the module does not already.
Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp301.PoolSmallerThanWorkersCommand PATH`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Sequence, Tuple, Union

import libcst as cst

from ..finding import Finding
from ..fix_facts import FixFacts
from .base import FindingFixCommand, lines_of
from .htp301_sites import AdapterMount, plan_adapter_mounts


# pycodestyle's default line length: a mount that would pass it is split over lines.
_MAX_LINE = 79


class PoolSmallerThanWorkersCommand(FindingFixCommand):
    """HTP301: mount an HTTPAdapter sized to the workers on the session they share."""

    DESCRIPTION = "HTP301: mount HTTPAdapter(pool_connections=N, pool_maxsize=N) on the session the N workers share."
    CODE = "HTP301"

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        return list(plan_adapter_mounts(findings, tree, lines_of(text), facts))

    def prepare(self, plan: Sequence[Any]) -> None:
        self._after: Dict[Tuple[int, int], List[AdapterMount]] = {}
        self._first_in: Dict[Tuple[int, int], List[AdapterMount]] = {}
        for mount in plan:
            table = self._first_in if mount.in_with_body else self._after
            table.setdefault(mount.statement, []).append(mount)

    def _mounts(self, mounts: Sequence[AdapterMount], column: int) -> List[cst.BaseStatement]:
        """The mount statements, for a block indented by `column` characters: one line each where that fits
        in 79 characters (pycodestyle's E501), else the arguments on lines of their own."""
        out: List[cst.BaseStatement] = []
        for mount in mounts:
            if mount.import_needed:
                asname = None if mount.adapter_name == "HTTPAdapter" else mount.adapter_name
                self.add_needed_import(mount.adapter_module, "HTTPAdapter", asname=asname)
            self.applied += mount.findings
            adapter = f"{mount.adapter_name}(pool_connections={mount.workers}, pool_maxsize={mount.workers})"
            for scheme in ("http://", "https://"):
                code = f'{mount.target}.mount("{scheme}", {adapter})\n'
                if column + len(code) - 1 > _MAX_LINE:
                    code = f'{mount.target}.mount(\n    "{scheme}",\n    {adapter},\n)\n'
                out.append(cst.parse_statement(code))
        return out

    def on_leave(
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]:
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, cst.SimpleStatementLine) and isinstance(result, cst.SimpleStatementLine):
            start = self.start(original_node)
            mounts = self._after.pop(start, None)
            if mounts:
                return cst.FlattenSentinel([result, *self._mounts(mounts, start[1])])
        elif isinstance(original_node, cst.With) and isinstance(result, cst.With):
            mounts = self._first_in.pop(self.start(original_node), None)
            if mounts and isinstance(result.body, cst.IndentedBlock):
                body = list(result.body.body)
                added = self._mounts(mounts, self.start(original_node.body.body[0])[1])
                if body and isinstance(body[0], (cst.FunctionDef, cst.ClassDef)):
                    # A def right after the new mounts needs its blank line (pycodestyle's E306).
                    first = body[0]
                    body[0] = first.with_changes(leading_lines=[cst.EmptyLine(indent=False), *first.leading_lines])
                return result.with_changes(body=result.body.with_changes(body=[*added, *body]))
        return result
