"""Splice a code fragment into a generated module, for the hypothesmith property tests."""

from __future__ import annotations


def splice(source: str, fragment: str, cut: int) -> str:
    """`source` with `fragment` inserted before line `cut` (modulo its length), indented like that line so it
    joins the block it lands in."""
    lines = source.splitlines(keepends=True)
    at = cut % (len(lines) + 1)
    indent = ""
    if at < len(lines):
        stripped = lines[at].lstrip(" \t")
        indent = lines[at][: len(lines[at]) - len(stripped)]
    spliced = "".join(indent + line + "\n" for line in fragment.splitlines())
    return "".join(lines[:at]) + spliced + "".join(lines[at:])
