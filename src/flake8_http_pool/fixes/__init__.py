"""The fixes: one per fixable rule, each a stdlib planner (which findings it can rewrite, and how) and a
libcst codemod command that carries the plan out. Importing this package does not import libcst."""

from __future__ import annotations

import ast
import importlib
from typing import Any, Callable, Dict, List, NamedTuple, Sequence, Tuple

from ..finding import Finding
from ..fix_facts import FixFacts
from ..rule import FIX_SAFE, FIX_UNSAFE

# A planner turns one rule's findings in a module into plan items, each one site's edit. An item may carry a
# `safety` field ("safe" / "unsafe"): RULES.md decides safety per site, and an empty one means the fix's own.
# A site that must stay report-only gets no item at all.
Planner = Callable[[Sequence[Finding], ast.Module, Sequence[str], FixFacts], List[Any]]


class Fix(NamedTuple):
    """A rule's fix: its planner (stdlib only) and where its libcst command lives (imported on use)."""

    code: str
    planner: str  # "module:function", relative to this package: a Planner, imported on use
    command: str  # "module:Class", relative to this package
    # A second fix for a rule sits under its own key ("HTP101:unsafe"): `rule` names the findings it takes
    # (the key when empty) and `safety` overrides the rule's fix safety.
    rule: str = ""
    safety: str = ""

    @property
    def rule_code(self) -> str:
        """The code of the findings this fix plans from."""
        return self.rule or self.code

    def site_safety(self, item: Any, facts: FixFacts) -> str:
        """Whether carrying out `item` is safe or unsafe: the site's own word, else the fix's, else the rule's;
        then the config's extend-safe-fixes / extend-unsafe-fixes."""
        from ..rules import RULES_BY_CODE

        safety = getattr(item, "safety", "") or self.safety or RULES_BY_CODE[self.rule_code].fix
        return facts.moves(self.rule_code, safety)

    def split_plan(self, items: Sequence[Any], facts: FixFacts, unsafe: bool) -> Tuple[List[Any], List[Any]]:
        """The items that may be carried out (safe ones, and unsafe with `unsafe`) and the unsafe ones held back."""
        allowed: List[Any] = []
        held: List[Any] = []
        for item in items:
            safety = self.site_safety(item, facts)
            if safety == FIX_SAFE or (safety == FIX_UNSAFE and unsafe):
                allowed.append(item)
            elif safety == FIX_UNSAFE:
                held.append(item)
        return allowed, held

    def plan(self, findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str], facts: FixFacts) -> List[Any]:
        """The planner's items for these findings (stdlib only: the planner modules do not import libcst)."""
        planner: Planner = _load(self.planner)
        return list(planner(findings, tree, lines, facts))

    def command_class(self) -> Any:
        """The libcst command class (this imports libcst)."""
        return _load(self.command)


def _load(where: str) -> Any:
    """The object a "module:name" string names inside this package, imported on first use."""
    module_name, _, name = where.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module_name}"), name)


FIXES: Dict[str, Fix] = {
    # RULES.md: a session around a loop changes cookies and connection reuse, so HTP101's fix is unsafe too.
    "HTP101": Fix("HTP101", "htp101_sites:plan_loop_wraps", "htp101:UnpooledCallInLoopCommand"),
    "HTP201": Fix("HTP201", "htp2xx_sites:plan_rule_fixes", "htp201:UnstreamedDownloadCommand"),
    "HTP202": Fix("HTP202", "htp2xx_sites:plan_rule_fixes", "htp202:StreamApiWithoutStreamCommand"),
    "HTP203": Fix("HTP203", "htp2xx_sites:plan_rule_fixes", "htp203:StreamedResponseNotClosedCommand"),
    "HTP301": Fix("HTP301", "htp301_sites:plan_adapter_mounts", "htp301:PoolSmallerThanWorkersCommand"),
    "HTP402": Fix("HTP402", "htp402_sites:plan_patch_moves", "htp402:LateMonkeyPatchCommand"),
    "HTP102": Fix("HTP102", "htp102_sites:plan_shared_clients", "htp102:SharedClientCommand"),
    # HTP101's deferred and handed-on calls (lambda/nested def in a loop, executor.map(requests.get, urls)),
    # and the loops of hot functions (a session around them would be HTP104).
    "HTP101:unsafe": Fix("HTP101", "htp101_sites:plan_shared_sessions", "htp102:SharedClientCommand", safety="unsafe"),
    "HTP103": Fix("HTP103", "htp103_sites:plan_hoists", "htp103:HoistClientCommand"),
    "HTP104": Fix("HTP104", "htp104_sites:plan_client_parameters", "htp104:ClientParameterCommand"),
}
