"""HTP102's fix (unsafe): one module-level client shared by every call of a hot function.

`_HTTP_SESSION = requests.Session()` (`_HTTP_CLIENT = httpx.Client()`) goes after the imports, unless such a
module-level client exists already, and each reported call becomes `_HTTP_SESSION.get(...)` (grequests: gets
`session=_HTTP_SESSION`; a function handed on, `ex.map(requests.get, urls)`, becomes `_HTTP_SESSION.get`).
The same command fixes HTP101's deferred and handed-on calls, which HTP101's loop-scoped session cannot cover.
Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp102.SharedClientCommand PATH`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Sequence, Tuple

import libcst as cst

from ..finding import Finding
from ..fix_facts import FixFacts
from .base import FindingFixCommand, lines_of
from .realign import realign_continuations
from .htp102_sites import SharedCall, SharedClient, plan_shared_clients

_NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


class SharedClientCommand(FindingFixCommand):
    """HTP102: send a hot function's requests through one module-level client."""

    DESCRIPTION = "HTP102: create one module-level requests.Session (httpx.Client) and send the calls through it."
    CODE = "HTP102"
    RULES = ("HTP102", "HTP101")  # also HTP101's deferred and handed-on calls (FIXES["HTP101:unsafe"])

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        return list(plan_shared_clients(findings, tree, lines_of(text), facts))

    def prepare(self, plan: Sequence[Any]) -> None:
        self._calls: Dict[Tuple[int, int, int, int], Tuple[SharedClient, SharedCall]] = {
            call.span: (client, call) for client in plan for call in client.calls
        }
        self._clients: List[SharedClient] = list(plan)
        self._blocks: List[int] = []  # start columns of the statements being visited, innermost last

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._blocks.append(self.start(node)[1])  # the indentation continuation lines are measured from
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and self._blocks:
            self._blocks.pop()
        return super().on_leave(original_node, updated_node)

    def _site(self, original: cst.CSTNode, updated: Any, want_call: bool) -> Any:
        found = self._calls.get(self.span(original))
        if found is None or found[1].is_call != want_call:
            return None
        client, edit = found
        self.applied += 1
        for ref in edit.imports:
            self.remove_unused_import(ref.module, ref.obj, ref.asname)
        method = cst.Attribute(value=cst.Name(client.name), attr=cst.Name(edit.verb))
        if not want_call:
            return method
        if edit.pass_session:
            keyword = cst.Arg(value=cst.Name(client.name), keyword=cst.Name("session"), equal=_NO_SPACE)
            return updated.with_changes(args=[*updated.args, keyword])
        args = list(updated.args)
        if edit.params_keyword:
            args[1] = args[1].with_changes(keyword=cst.Name("params"), equal=_NO_SPACE)
        renamed = updated.with_changes(func=method, args=args)
        # `_HTTP_SESSION.get(` is longer than `requests.get(`: lines aligned under the arguments move with it.
        block = self._blocks[-1] if self._blocks else 0
        return realign_continuations(original, renamed, self.start(original)[1], block)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        return self._site(original_node, updated_node, True) or updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._site(original_node, updated_node, False) or updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._site(original_node, updated_node, False) or updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = list(updated_node.body)
        starts = [self.start(stmt) for stmt in original_node.body]
        for client in reversed(self._clients):
            if not client.create or not self.applied:
                continue
            if client.import_module is not None:
                self.add_needed_import(client.import_module)
            func = cst.Attribute(value=cst.Name(client.module_name), attr=cst.Name(client.constructor))
            constructor = cst.Call(func=func)
            line = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(client.name))], value=constructor)],
                leading_lines=[cst.EmptyLine()] if client.after is not None else [],
            )
            position = 0
            if client.after is not None and client.after in starts:
                position = starts.index(client.after) + 1
            body.insert(position, line)
        return updated_node.with_changes(body=body)
