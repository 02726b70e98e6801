"""Re-indents the continuation lines of a call whose callee a fix renamed, so visual indents stay aligned.

`requests.get(url,` becoming `session.get(url,` moves the open parenthesis one column left; a continuation
line aligned under `url` would then be one column off (pycodestyle E127/E128). `_HTTP_SESSION.get(` moves it
right. `realign_continuations` shifts those lines by the difference, and leaves alone a call written with a
hanging indent (a line break right after the open parenthesis), whose lines do not depend on where it is.
"""

from __future__ import annotations

import libcst as cst

_EMPTY_MODULE = cst.Module(body=[])


def _callee_width(call: cst.Call) -> int:
    """Characters from the call's start to just after its open parenthesis, or -1 when that spans lines."""
    # libcst's positions start a parenthesized call after its parentheses, so they are not counted.
    text = (
        _EMPTY_MODULE.code_for_node(call.func)
        + _EMPTY_MODULE.code_for_node(call.whitespace_after_func)
        + "("
    )
    return -1 if "\n" in text or "\r" in text else len(text)


class _Shift(cst.CSTTransformer):
    """Moves every continuation line at or right of the anchor by `delta` columns."""

    def __init__(self, delta: int, relative_anchor: int, absolute_anchor: int) -> None:
        super().__init__()
        self.delta = delta
        self.relative_anchor = relative_anchor
        self.absolute_anchor = absolute_anchor

    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        indent = updated_node.last_line.value
        if indent.strip(" "):
            return updated_node  # tabs: leave the line as it is
        anchor = self.relative_anchor if updated_node.indent else self.absolute_anchor
        if len(indent) < anchor:
            return updated_node  # aligned to something left of the call (an outer bracket, a hanging indent)
        width = max(len(indent) + self.delta, 0)
        return updated_node.with_changes(last_line=cst.SimpleWhitespace(" " * width))


def realign_continuations(original: cst.Call, updated: cst.Call, call_column: int, block_column: int) -> cst.Call:
    """`updated` with the continuation lines of its arguments moved by as many columns as its callee grew or
    shrank, so lines aligned under the arguments (or under brackets opened on the call's first line) stay
    aligned.

    - `original`: the call as it stands in the source (`requests.get(url,\\n             timeout=5)`).
    - `updated`: the same call with the new callee (`session.get(...)`, `_HTTP_SESSION.get(...)`); its
      arguments may have changed (a keyword renamed or added) as long as its line breaks did not.
    - `call_column`: the character column where `original` starts (libcst `PositionProvider` start column).
    - `block_column`: the indentation of the block holding the call's statement, which is the start column
      of the innermost statement around the call (a `SimpleStatementLine`, or the compound statement whose
      header holds the call); libcst measures continuation lines from it.

    Only lines whose indentation reaches the column just after the original open parenthesis move: those are
    aligned on the call's first line. A call with a hanging indent, or whose callee spans lines, comes back
    unchanged. Call it from `leave_Call` after building the new call; inner calls realigned first are
    shifted again by their outer call, which is right, since their first line moved too.
    """
    if isinstance(original.whitespace_before_args, cst.ParenthesizedWhitespace):
        return updated  # hanging indent: `requests.get(\n    url)`
    old, new = _callee_width(original), _callee_width(updated)
    if old < 0 or new < 0 or old == new:
        return updated
    absolute = call_column + old
    relative = absolute - block_column
    shift = _Shift(new - old, relative, absolute)
    return updated.with_changes(args=[arg.visit(shift) for arg in updated.args])
