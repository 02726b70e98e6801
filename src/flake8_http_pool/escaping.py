"""How text the scanned tree controls (file names, and whatever a committed cache or a report may hold) is shown
in output: one escaping for all of it, so that one finding or error stays one line and no control character
reaches the terminal."""

from __future__ import annotations


def shown(text: str) -> str:
    """`text` as output shows it: a name's bytes that are not UTF-8 (surrogate escapes) become `\\xNN` and other
    characters that do not print their escapes (`\\n`, `\\x1b`), so every format stays valid UTF-8 and one
    finding stays one line (a file named `a.py\\n./b.py:1:1: HTP101` cannot forge a second finding). Printable
    text comes back as it is, so text escaped twice is escaped once."""
    return shown_except(text, "")


def shown_except(text: str, kept: str) -> str:
    """`shown`, leaving the characters of `kept` as they are (a format that escapes those itself)."""
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable() or char in kept:
            out.append(char)
        elif "\udc80" <= char <= "\udcff":
            out.append(f"\\x{ord(char) - 0xDC00:02x}")
        else:
            out.append(char.encode("unicode_escape", "backslashreplace").decode("ascii"))
    return "".join(out)


def shown_keeping_tabs(text: str) -> str:
    """`shown`, with tabs left as tabs (a source line shown above a caret keeps its indentation)."""
    return shown_except(text, "\t")
