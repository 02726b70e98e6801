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
    # A second fix for a rule sits under its own key ("HTP101:unsafe"): `rule` names the findings it takes
    # (the key when empty) and `safety` overrides the rule's fix safety.
    rule: str = ""
    safety: str = ""

    @property
    def rule_code(self) -> str:
        """The code of the findings this fix plans from."""
        return self.rule or self.code

    def command_class(self) -> Any:
        """The libcst command class (this imports libcst)."""
        module_name, _, class_name = self.command.partition(":")
        module = importlib.import_module(f"{__name__}.{module_name}")
        return getattr(module, class_name)


def _plan_htp101(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    return list(plan_loop_wraps(findings, tree, lines))


def _plan_htp102(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    from .htp102_sites import plan_shared_clients

    return list(plan_shared_clients(findings, tree, lines))


def _plan_htp301(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    from .htp301_sites import plan_adapter_mounts

    return list(plan_adapter_mounts(findings, tree, lines))


def _plan_htp402(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    from .htp402_sites import plan_patch_moves

    return list(plan_patch_moves(findings, tree, lines))


def _plan_htp2xx(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    from .htp2xx_sites import plan_response_fixes

    # One planner for the three response rules: each call is handed one rule's findings.
    return list(plan_response_fixes(findings, tree, lines, findings[0].code)) if findings else []


def _plan_htp103(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    from .htp103_sites import plan_hoists

    return list(plan_hoists(findings, tree, lines))


def _plan_htp104(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str]) -> List[Any]:
    from .htp104_sites import plan_client_parameters

    return list(plan_client_parameters(findings, tree, lines))


FIXES: Dict[str, Fix] = {
    "HTP101": Fix("HTP101", _plan_htp101, "htp101:UnpooledCallInLoopCommand"),
    "HTP201": Fix("HTP201", _plan_htp2xx, "htp201:UnstreamedDownloadCommand"),
    "HTP202": Fix("HTP202", _plan_htp2xx, "htp202:StreamApiWithoutStreamCommand"),
    "HTP203": Fix("HTP203", _plan_htp2xx, "htp203:StreamedResponseNotClosedCommand"),
    "HTP301": Fix("HTP301", _plan_htp301, "htp301:PoolSmallerThanWorkersCommand"),
    "HTP402": Fix("HTP402", _plan_htp402, "htp402:LateMonkeyPatchCommand"),
    "HTP102": Fix("HTP102", _plan_htp102, "htp102:SharedClientCommand"),
    # HTP101's deferred and handed-on calls (lambda/nested def in a loop, executor.map(requests.get, urls)).
    "HTP101:unsafe": Fix("HTP101", _plan_htp102, "htp102:SharedClientCommand", safety="unsafe"),
    "HTP103": Fix("HTP103", _plan_htp103, "htp103:HoistClientCommand"),
    "HTP104": Fix("HTP104", _plan_htp104, "htp104:ClientParameterCommand"),
}
