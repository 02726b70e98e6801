"""The fixes: one per fixable rule, each a stdlib planner (which findings it can rewrite, and how) and a
libcst codemod command that carries the plan out. Importing this package does not import libcst."""

from __future__ import annotations

import ast
import importlib
from typing import Any, Callable, Dict, List, NamedTuple, Sequence

from ..finding import Finding
from .htp101_sites import plan_loop_wraps

Planner = Callable[[Sequence[Finding], ast.Module, Sequence[str]], List[Any]]


class Fix(NamedTuple):
    """A rule's fix: its planner (stdlib only) and where its libcst command lives (imported on use)."""

    code: str
    plan: Planner
    command: str  # "module:Class", relative to this package

    def command_class(self) -> Any:
        """The libcst command class (this imports libcst)."""
        module_name, _, class_name = self.command.partition(":")
        module = importlib.import_module(f"{__name__}.{module_name}")
        return getattr(module, class_name)


def _plan_htp101(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    return list(plan_loop_wraps(findings, tree, lines))


FIXES: Dict[str, Fix] = {
    "HTP101": Fix("HTP101", _plan_htp101, "htp101:UnpooledCallInLoopCommand"),
}
