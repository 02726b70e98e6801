"""The libcst command shared by HTP201, HTP202 and HTP203: stream the request, use the response in a `with`.

It carries out a plan from `htp2xx_sites.py`: `stream=True` on the request (httpx: `X.stream("GET", ...)`),
`r = <request>` and the statements using `r` become `with <request> as r:` around them, and a whole-body
write becomes a chunked one. Each rule's module (`htp201.py`, ...) names the code it fixes.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Sequence, Tuple, Union

import libcst as cst

from ..finding import Finding
from ..fix_facts import FixFacts
from .base import FindingFixCommand, lines_of
from .htp2xx_sites import ResponseEdit, Wrap, Write, plan_response_fixes

_NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_CODE = cst.Module(body=[])


def _body_source(body: cst.BaseExpression) -> cst.BaseExpression:
    """The inline request whose body `body` reads: `X` of `X.content` or `X.read()`."""
    if isinstance(body, cst.Await):
        body = body.expression
    if isinstance(body, cst.Call):
        body = body.func
    assert isinstance(body, cst.Attribute)
    return body.value


def _append_keyword(args: List[cst.Arg], new: cst.Arg) -> List[cst.Arg]:
    """`args` plus `new` at the end, on the last argument's line: whatever followed the last argument (its
    comment, the newline before a `)` on its own line) now follows `new`, so nothing is doubled or orphaned."""
    if not args:
        return [new]
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        moved = new.with_changes(comma=cst.Comma(whitespace_after=last.comma.whitespace_after))
        last = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    else:
        moved = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(
            whitespace_after_arg=cst.SimpleWhitespace(""),
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
    return [*args[:-1], last, moved]


class ResponseFixCommand(FindingFixCommand):
    """Carry out the response edits planned for one of HTP201/202/203 (`CODE`)."""

    def make_plan(self, findings: Sequence[Finding], tree: ast.Module, text: str, facts: FixFacts) -> List[Any]:
        return list(plan_response_fixes(findings, tree, lines_of(text), self.CODE, facts))

    def prepare(self, plan: Sequence[Any]) -> None:
        self._requests: Dict[Tuple[int, int, int, int], ResponseEdit] = {e.request: e for e in plan}
        self._writes: Dict[Tuple[int, int], Write] = {e.write.statement[:2]: e.write for e in plan if e.write}
        self._wraps: Dict[Tuple[int, int], Wrap] = {e.wrap.first[:2]: e.wrap for e in plan if e.wrap}
        # `data = r.content` whose `f.write(data)` now reads the body itself.
        self._drops = {e.write.drop[:2] for e in plan if e.write and e.write.drop}

    # -- the request ---------------------------------------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        edit = self._requests.get(self.span(original_node))
        if edit is None:
            return updated_node
        self.applied += 1
        args = list(updated_node.args)
        if edit.stream_keyword:
            args = _append_keyword(args, cst.Arg(value=cst.Name("True"), keyword=cst.Name("stream"), equal=_NO_SPACE))
        if edit.httpx_method is not None and isinstance(updated_node.func, cst.Attribute):
            if edit.httpx_method:
                args.insert(0, cst.Arg(value=cst.SimpleString(f'"{edit.httpx_method}"')))
            func = updated_node.func.with_changes(attr=cst.Name("stream"))
            return updated_node.with_changes(func=func, args=args)
        return updated_node.with_changes(args=args)

    # -- the write -----------------------------------------------------------------------------------
    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> Union[cst.BaseStatement, cst.RemovalSentinel]:
        write = self._writes.get(self.start(original_node))
        if write is None:
            return updated_node
        expression = updated_node.body[0]
        assert isinstance(expression, cst.Expr) and isinstance(expression.value, cst.Call)
        call = expression.value
        assert isinstance(call.func, cst.Attribute)
        receiver = _CODE.code_for_node(call.func.value)
        response = write.response or write.inline_name
        chunk = write.chunk
        items = []
        if write.writer == "write" and isinstance(call.func.value, cst.Call):
            # `open(p, "wb").write(body)`: the file is opened once, in the header, before the request as before.
            items.append(f"{receiver} as {write.file_name}")
        if write.response is None:
            items.append(f"{_CODE.code_for_node(_body_source(call.args[0].value))} as {response}")
        if write.writer == "write_bytes":
            items.append(f'{receiver}.open("wb") as {write.file_name}')
            target = write.file_name
        elif isinstance(call.func.value, cst.Call):
            target = write.file_name
        else:
            target = receiver
        if write.copier is not None:
            if write.import_copier:
                self.add_needed_import("shutil")
            code = f"{write.copier}.copyfileobj({response}, {target})\n"
        else:
            loop = "async for" if write.asynchronous else "for"
            code = f"{loop} {chunk} in {response}.{write.iterator}:\n    {target}.write({chunk})\n"
        if items:
            code = f"with {', '.join(items)}:\n" + "".join(f"    {line}\n" for line in code.splitlines())
        statement = cst.parse_statement(code)
        if isinstance(statement, cst.SimpleStatementLine):  # a copy in place of the write: its comment stays
            return statement.with_changes(
                leading_lines=updated_node.leading_lines, trailing_whitespace=updated_node.trailing_whitespace
            )
        assert isinstance(statement, (cst.For, cst.With)) and isinstance(statement.body, cst.IndentedBlock)
        # The write line's own comment now ends the new header line.
        body_block = statement.body.with_changes(header=updated_node.trailing_whitespace)
        return statement.with_changes(body=body_block, leading_lines=updated_node.leading_lines)

    # -- the wrap ------------------------------------------------------------------------------------
    def _wrap_block(self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]) -> List[Any]:
        if self._drops:
            kept = [(o, u) for o, u in zip(original, updated) if self.start(o) not in self._drops]
            original, updated = [o for o, _ in kept], [u for _, u in kept]
        out: List[Any] = []
        position = 0
        while position < len(original):
            wrap = self._wraps.get(self.start(original[position]))
            if wrap is None:
                out.append(updated[position])
                position += 1
                continue
            last = position
            # The last statement to wrap is the libcst statement holding the `ast` one (a line may hold several).
            while last < len(original) and not self._holds(original[last], wrap.last[:2]):
                last += 1
            first = updated[position]
            assert last < len(original) and isinstance(first, cst.SimpleStatementLine)
            assign = first.body[0]
            assert isinstance(assign, (cst.Assign, cst.AnnAssign)) and assign.value is not None
            value = assign.value
            source = original[position]
            if isinstance(assign, cst.AnnAssign) and isinstance(source, cst.SimpleStatementLine):
                # The annotation goes with the assignment: an import only it used goes too.
                self.remove_unused_import_by_node(source.body[0])
            if isinstance(value, cst.Await):  # `r = await client.get(u)` becomes `async with client.stream(...)`
                value = value.expression
            item = cst.WithItem(item=value, asname=cst.AsName(name=cst.Name(wrap.name)))
            block = cst.IndentedBlock(body=list(updated[position + 1:last + 1]), header=first.trailing_whitespace)
            asynchronous = cst.Asynchronous() if wrap.asynchronous else None
            out.append(cst.With(items=[item], body=block, leading_lines=first.leading_lines, asynchronous=asynchronous))
            position = last + 1
        return out

    def _holds(self, statement: cst.CSTNode, where: Tuple[int, int]) -> bool:
        line, column, end_line, end_column = self.span(statement)
        return (line, column) <= where < (end_line, end_column)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        if not self._wraps and not self._drops:
            return updated_node
        return updated_node.with_changes(body=self._wrap_block(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self._wraps and not self._drops:
            return updated_node
        return updated_node.with_changes(body=self._wrap_block(original_node.body, updated_node.body))
