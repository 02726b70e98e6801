"""What every libcst fix shares: a codemod command that carries out a plan made from the engine's findings.

Importing this module imports libcst; `fixing.py` does so only for files with something to fix.
"""

from __future__ import annotations

import ast
from typing import Any, ClassVar, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.metadata import CodePosition, PositionProvider

from ..engine import check_source
from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from ..source_files import quiet_parse
from .positions import source_lines


class FindingFixCommand(VisitorBasedCodemodCommand):
    """A codemod driven by engine findings.

    `fix` hands it a plan it made already; run by `python -m libcst.tool codemod`, it has none and makes
    its own from the module's text (running the engine). `applied` counts the findings it fixed.
    """

    CODE: ClassVar[str] = ""
    # Run alone, the command plans from the findings of these rules (CODE's when empty): one command may
    # carry out the fixes of several FIXES entries. Safety is not consulted: naming the command is the opt-in.
    RULES: ClassVar[Tuple[str, ...]] = ()
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, context: CodemodContext, plan: Optional[Sequence[Any]] = None) -> None:
        super().__init__(context)
        self.plan: Optional[Sequence[Any]] = plan
        self.applied = 0

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        """The edits to make for `findings` (overridden by each fix)."""
        raise NotImplementedError

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if self.plan is None:
            text = tree.code
            findings = [f for f in check_source(text) if f.code in (self.RULES or (self.CODE,))]
            if findings:
                module = quiet_parse(text)
                self.plan = self.make_plan(findings, module, text, NO_FACTS.with_module("", module))
            else:
                self.plan = []
        if not self.plan:
            return tree
        self.prepare(self.plan)
        return tree.visit(self)

    def prepare(self, plan: Sequence[Any]) -> None:
        """Index the plan before the visit (overridden by each fix)."""

    def start(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Where `node` starts, as (line, character column)."""
        position: CodePosition = self.get_metadata(PositionProvider, node).start
        return (position.line, position.column)

    def span(self, node: cst.CSTNode) -> Tuple[int, int, int, int]:
        """Where `node` starts and ends, as (line, column, end line, end column) in characters."""
        where = self.get_metadata(PositionProvider, node)
        return (where.start.line, where.start.column, where.end.line, where.end.column)


def lines_of(text: str) -> List[str]:
    """The source's lines as `ast` numbers them (for byte to character column conversion)."""
    return source_lines(text)
