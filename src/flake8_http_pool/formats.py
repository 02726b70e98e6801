"""Output formats of `check`, each written as results arrive: flake8-style text (also `concise`), `full` (text
with the source line and a caret), JSON, SARIF 2.1.0, GitHub Actions workflow commands, GitLab Code Quality
JSON and pylint's parseable lines."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, TextIO, Tuple
from urllib.parse import quote

from . import __version__
from .escaping import shown, shown_except, shown_keeping_tabs
from .reporting import Reported
from .rule import FIX_SAFE, Rule

FORMATS = ("text", "concise", "full", "json", "sarif", "github", "gitlab", "pylint")
TEXT_FORMATS = ("text", "concise", "full")  # the ones for people: colour, [*] marks, the closing summary
INFORMATION_URI = "https://pypi.org/project/flake8-http-pool/"
# Each rule's docs page, as committed under docs/rules/ in the repository.
DOCS_URL = "https://github.com/flake8-http-pool/flake8-http-pool/blob/main/docs/rules/{code}.md"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# flake8's codes for a file that does not parse (E999) and one that cannot be read (E902).
SYNTAX_ERROR = "E999"
IO_ERROR = "E902"


class CheckError(NamedTuple):
    """A file that could not be checked: the reason, and for a source error its flake8-shaped place."""

    path: str
    reason: str  # "E999 SyntaxError: ..." for a source error, else the plain reason
    where: Optional[Tuple[int, int]] = None  # (line, column from 1)

    @property
    def code(self) -> str:
        head = self.reason.split(" ", 1)[0]
        return head if self.where is not None and head[:1].isalpha() and head[1:].isdigit() else IO_ERROR

    @property
    def message(self) -> str:
        """The reason without its leading code."""
        if self.where is not None and self.reason.startswith(self.code + " "):
            return self.reason[len(self.code) + 1:]
        return self.reason

    @property
    def line(self) -> int:
        return self.where[0] if self.where else 1

    @property
    def col(self) -> int:
        return self.where[1] if self.where else 1


class Style:
    """ANSI colours for text output (ruff's: the path bold, the code bold red, the fix mark cyan), or none."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, start: str, text: str) -> str:
        return f"\033[{start}m{text}\033[0m" if self.enabled and text else text

    def path(self, text: str) -> str:
        return self._wrap("1", text)

    def code(self, text: str) -> str:
        return self._wrap("1;31", text)

    def mark(self, text: str) -> str:
        return self._wrap("36", text)

    def caret(self, text: str) -> str:
        return self._wrap("1;31", text)


PLAIN = Style(False)
FIX_MARK = "[*]"


class Formatter:
    """Writes a report to `out`: `start()`, `findings(path, reported)` per file with findings, `error(...)` per file
    that could not be checked (True when written in the report's own stream), then `finish(errors)`."""

    def __init__(self, out: TextIO, rules: Sequence[Rule], style: Style = PLAIN) -> None:
        self.out = out
        self.rules = rules
        self.style = style

    def start(self) -> None:
        """Called once before any finding."""

    def findings(self, path: str, reported: Sequence[Reported]) -> None:
        """Called once per file that has findings."""
        raise NotImplementedError

    def error(self, error: CheckError) -> bool:
        """Called as a file fails; True if the report shows it (else it goes to stderr as `path: error: ...`)."""
        return False

    def finish(self, errors: Sequence[CheckError]) -> None:
        """Called once at the end with every file that could not be checked."""


class TextFormatter(Formatter):
    """`path:line:col: CODE [*] message`, as flake8 prints it (columns from 1), `[*]` when `fix` fixes the site
    (ruff's mark, before the message); a source error as flake8's E999 line."""

    def findings(self, path: str, reported: Sequence[Reported]) -> None:
        s = self.style
        for item in reported:
            f = item.located.finding
            mark = f" {s.mark(FIX_MARK)}" if item.fix == FIX_SAFE else ""
            place = f"{s.path(shown(path))}:{f.line}:{f.col + 1}"
            self.out.write(f"{place}: {s.code(f.code)}{mark} {shown(f.message)}\n")
            self._source(item)

    def _source(self, item: Reported) -> None:
        """The `full` format's source line and caret (nothing here)."""

    def error(self, error: CheckError) -> bool:
        if error.where is None:
            return False
        s = self.style
        place = f"{s.path(shown(error.path))}:{error.line}:{error.col}"
        self.out.write(f"{place}: {s.code(error.code)} {shown(error.message)}\n")
        return True


class FullFormatter(TextFormatter):
    """The text lines, each followed by its source line and a caret under the column (flake8's --show-source)."""

    def _source(self, item: Reported) -> None:
        line = item.source_line.rstrip("\r\n")
        if not line.strip():
            return
        column = item.located.col_chars
        # Tabs stay tabs in the caret's indent, so the caret lands under the column whatever the tab width; a
        # control character before it is shown as its escape, and the caret moves past the escape's width.
        before = shown_keeping_tabs(line[:column])
        indent = "".join(ch if ch == "\t" else " " for ch in before)
        self.out.write(f"    {before}{shown_keeping_tabs(line[column:])}\n    {indent}{self.style.caret('^')}\n")


# A finding's details naming a place in another module, and what that place is (SARIF's related locations).
RELATED_PLACES = (
    ("hot_file", "hot_line", "the reason this function runs many times"),
    ("blocking_file", "blocking_line", "the blocking call the function reaches"),
    ("writer_file", "writer_line", "the function that writes the body to a file"),
)


def _json_safe(details: Mapping[str, Any]) -> Dict[str, Any]:
    # Details are for fixes and may hold tree nodes; only plain values go out.
    plain = (str, int, float, bool, type(None))
    return {k: v for k, v in details.items() if isinstance(v, plain)}


def _exact(path: str, item: Reported) -> Dict[str, Any]:
    """What a report needs beyond the finding's code, message and line for `merge` to write any format from it:
    the path as shown, the columns in UTF-8 bytes from 1 (flake8's), the end line, the source line and the
    plain details (the places in other modules behind it among them)."""
    f = item.located.finding
    return {"path": shown(path), "col": f.col + 1, "end_line": f.end_line, "end_col": f.end_col + 1,
            "source_line": item.source_line, "details": _json_safe(f.details)}


class JsonFormatter(Formatter):
    """A JSON array of objects: path, code, name, message, line, col (from 1, in UTF-8 bytes as flake8 counts),
    end_line, end_col, char_col and end_char_col (from 1, in characters as SARIF and GitHub count), fix ("safe",
    "unsafe" or null: what `fix` does with the site), details, source_line. A file that could not be checked is
    a record too, with flake8's code (E999: does not parse; E902: cannot be read), name "error", fix null, the
    whole reason and where (null, or [line, col] for a source error). `merge` reads it back whole."""

    def start(self) -> None:
        self.out.write("[")
        self._first = True
        self._names = {rule.code: rule.name for rule in self.rules}

    def _record(self, record: Dict[str, Any]) -> None:
        self.out.write(("\n  " if self._first else ",\n  ") + json_text(record))
        self._first = False

    def findings(self, path: str, reported: Sequence[Reported]) -> None:
        for item in reported:
            f = item.located.finding
            exact = _exact(path, item)
            self._record({
                "path": exact["path"],
                "code": f.code,
                "name": self._names.get(f.code, ""),
                "message": f.message,
                "line": f.line,
                "col": exact["col"],
                "end_line": exact["end_line"],
                "end_col": exact["end_col"],
                "fix": item.fix,
                "details": exact["details"],
                "char_col": item.located.col_chars + 1,
                "end_char_col": item.located.end_col_chars + 1,
                "source_line": exact["source_line"],
            })

    def finish(self, errors: Sequence[CheckError]) -> None:
        for error in errors:
            self._record({
                "path": shown(error.path), "code": error.code, "name": "error", "message": error.message,
                "line": error.line, "col": error.col, "end_line": error.line, "end_col": error.col,
                "fix": None, "details": {}, "reason": error.reason,
                "where": list(error.where) if error.where is not None else None,
            })
        self.out.write("]\n" if self._first else "\n]\n")


def rule_help_text(rule: Rule) -> str:
    """Plain-text help of a rule: what it does, why it is bad and the fix, for SARIF and `explain`."""
    parts = [rule.what_it_does, rule.why_bad]
    if rule.fix_title:
        parts.append(f"Fix: {rule.fix_title}")
    return "\n\n".join(p.strip() for p in parts if p and p.strip() and p.strip() != "TODO") or rule.summary


def rule_help_markdown(rule: Rule) -> str:
    """The rule's docs in Markdown, the sections of its docs page (ruff's layout)."""
    sections = [
        ("What it does", rule.what_it_does),
        ("Why is this bad?", rule.why_bad),
        ("Example", _code_block(rule.example)),
        ("Use instead", _code_block(rule.use_instead)),
        ("Fix safety", rule.fix_safety),
        ("Options", rule.options),
        ("References", "\n".join(f"- <{ref}>" for ref in rule.references)),
    ]
    body = [f"# {rule.code} {rule.name}", "", rule.summary]
    for title, text in sections:
        if text and text.strip() and text.strip() != "TODO":
            body += ["", f"## {title}", "", text.strip()]
    return "\n".join(body) + "\n"


def _code_block(code: str) -> str:
    code = (code or "").strip("\n")
    if not code.strip() or code.strip() == "TODO":
        return ""
    return f"```python\n{code}\n```"


class SarifFormatter(Formatter):
    """SARIF 2.1.0 as GitHub code scanning reads it: one run, the rules with help text and a docs link,
    results with physical locations relative to the working directory (`%SRCROOT%`)."""

    def start(self) -> None:
        self._index = {rule.code: i for i, rule in enumerate(self.rules)}
        self._cwd = os.getcwd()
        driver = {
            "name": "flake8-http-pool",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": INFORMATION_URI,
            "rules": [self._rule(rule) for rule in self.rules],
        }
        head = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
        }
        run_head = {
            "tool": {"driver": driver},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": _directory_uri(self._cwd)}},
            "columnKind": "unicodeCodePoints",
        }
        # Written by hand around the results so that they stream instead of piling up in memory.
        self.out.write(json_text(head)[:-1] + ', "runs": [')
        self.out.write(json_text(run_head)[:-1] + ', "results": [')
        self._first = True

    def _rule(self, rule: Rule) -> Dict[str, Any]:
        docs = DOCS_URL.format(code=rule.code)
        return {
            "id": rule.code,
            "name": _pascal(rule.name),
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule_help_text(rule)},
            "help": {"text": f"{rule_help_text(rule)}\n\nDocs: {docs}", "markdown": rule_help_markdown(rule)},
            "helpUri": docs,
            "defaultConfiguration": {"level": "warning"},
            "properties": {"tags": ["performance", "http"], "fix": rule.fix},
        }

    def findings(self, path: str, reported: Sequence[Reported]) -> None:
        location = self._artifact(path)
        for entry in reported:
            item = entry.located
            f = item.finding
            region = {
                "startLine": f.line,
                "startColumn": item.col_chars + 1,
                "endLine": max(f.end_line, f.line),
                "endColumn": item.end_col_chars + 1,
            }
            if (region["endLine"], region["endColumn"]) <= (region["startLine"], region["startColumn"]):
                del region["endLine"], region["endColumn"]  # a whole-line finding (dependency files)
            result: Dict[str, Any] = {
                "ruleId": f.code,
                "level": "warning",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": location, "region": region}}],
                # The rest of what the other formats show, so that `merge` can write any of them from SARIF.
                "properties": {"fix": entry.fix, **_exact(path, entry)},
            }
            related = []
            # Places in another module behind the finding (the project model): the loop or registration that
            # makes the function hot; the blocking call a helper reaches (HTP403); the function writing the body
            # to a file (HTP201).
            for file_key, line_key, text in RELATED_PLACES:
                place_file, place_line = f.details.get(file_key), f.details.get(line_key)
                if isinstance(place_file, str) and place_file and isinstance(place_line, int):
                    related.append({
                        "id": len(related) + 1,
                        "physicalLocation": {"artifactLocation": self._artifact(place_file),
                                             "region": {"startLine": place_line}},
                        "message": {"text": text},
                    })
            if related:
                result["relatedLocations"] = related
            if f.code in self._index:
                result["ruleIndex"] = self._index[f.code]
            self.out.write(("" if self._first else ",") + json_text(result))
            self._first = False

    def _notification(self, error: CheckError) -> Dict[str, Any]:
        location: Dict[str, Any] = {"artifactLocation": self._artifact(error.path)}
        if error.where is not None:
            location["region"] = {"startLine": error.line, "startColumn": error.col}
        return {
            "level": "error",
            "message": {"text": f"{shown(error.path)}: error: {error.reason}"},
            "descriptor": {"id": error.code},
            "locations": [{"physicalLocation": location}],
            "properties": {"path": shown(error.path), "reason": error.reason},
        }

    def _artifact(self, path: str) -> Dict[str, Any]:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute, self._cwd) if _inside(absolute, self._cwd) else None
        if relative is not None:
            return {"uri": _uri_path(relative), "uriBaseId": "%SRCROOT%"}
        return {"uri": "file://" + _uri_path(absolute)}

    def finish(self, errors: Sequence[CheckError]) -> None:
        notifications: List[Dict[str, Any]] = [self._notification(error) for error in errors]
        invocation: Dict[str, Any] = {"executionSuccessful": not errors}
        if notifications:
            invocation["toolExecutionNotifications"] = notifications
        self.out.write('], "invocations": ' + json_text([invocation]) + "}]}\n")


def json_text(value: Any) -> str:
    """`value` as JSON on one line, every character that does not print written as its `\\uXXXX` escape: the
    text is carried whole (a reader decodes it back exactly, a lone surrogate of an undecodable name included)
    while the report stays valid UTF-8 and puts no control character on a terminal that shows it."""
    text = json.dumps(value, ensure_ascii=False)
    if text.isprintable():
        return text
    # json.dumps writes its own structure in printable ASCII: whatever does not print is inside a string.
    return "".join(char if char.isprintable() else _json_escape(char) for char in text)


def _json_escape(char: str) -> str:
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))


def _uri_path(path: str) -> str:
    """A path percent-encoded from its bytes as the file system holds them (a URI can carry any name)."""
    return quote(os.fsencode(path.replace(os.sep, "/")))


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _directory_uri(path: str) -> str:
    return "file://" + _uri_path(path.rstrip(os.sep) + os.sep)


def github_data(text: str) -> str:
    """A workflow command's message, escaped as the runner unescapes it (% first, then CR and LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value: the message's escapes, and `:` and `,` that would end it."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubFormatter(Formatter):
    """GitHub Actions workflow commands, one per finding (`::warning file=...,line=...,col=...,endLine=...,
    endColumn=...,title=HTP101::message`), so findings show on a pull request's diff without code scanning.
    A file that could not be checked is an `::error` line."""

    def findings(self, path: str, reported: Sequence[Reported]) -> None:
        for entry in reported:
            item = entry.located
            f = item.finding
            props = [("file", shown(path)), ("line", str(f.line)), ("col", str(item.col_chars + 1))]
            if (f.end_line, item.end_col_chars) > (f.line, item.col_chars):
                props += [("endLine", str(f.end_line)), ("endColumn", str(item.end_col_chars + 1))]
            props.append(("title", f.code))
            mark = f" {FIX_MARK}" if entry.fix == FIX_SAFE else ""
            self._command("warning", props, f"{f.code}{mark} {f.message}")

    def _command(self, kind: str, props: Sequence[Tuple[str, str]], message: str) -> None:
        joined = ",".join(f"{key}={github_property(value)}" for key, value in props)
        # The runner reads CR and LF back from their escapes; any other control character is shown escaped.
        text = github_data(shown_except(message, "\r\n"))
        self.out.write(f"::{kind} {joined}::{text}\n")

    def error(self, error: CheckError) -> bool:
        props = [("file", shown(error.path))]
        if error.where is not None:
            props += [("line", str(error.line)), ("col", str(error.col))]
        props.append(("title", error.code))
        self._command("error", props, f"{error.code} {error.message}")
        return False  # the runner shows the ::error line; stderr still names the file for people


class GitlabFormatter(Formatter):
    """GitLab Code Quality JSON: an array of issues with description, check_name, fingerprint, severity and
    location {path, lines {begin}}. The fingerprint hashes the path, the code and the finding's source line
    (not its number, so a finding keeps its identity when lines move above it), plus how many identical
    (path, code, line) issues came before it: GitLab shows one issue per fingerprint."""

    def start(self) -> None:
        self.out.write("[")
        self._first = True
        self._seen: Dict[Tuple[str, str, str], int] = {}
        self._cwd = os.getcwd()

    def _issue(self, path: str, code: str, message: str, line: int, source_line: str, severity: str) -> None:
        shown = _relative(path, self._cwd)
        key = (shown, code, source_line.strip())
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        digest = hashlib.sha256("\0".join((*key, str(occurrence))).encode("utf-8", "surrogateescape")).hexdigest()
        issue = {
            "description": f"{code} {message}",
            "check_name": code,
            "fingerprint": digest[:32],
            "severity": severity,
            "location": {"path": shown, "lines": {"begin": line}},
        }
        self.out.write(("\n  " if self._first else ",\n  ") + json_text(issue))
        self._first = False

    def findings(self, path: str, reported: Sequence[Reported]) -> None:
        for entry in reported:
            f = entry.located.finding
            self._issue(path, f.code, f.message, f.line, entry.source_line, "minor")

    def finish(self, errors: Sequence[CheckError]) -> None:
        for error in errors:
            self._issue(error.path, error.code, error.message, error.line, "", "major")
        self.out.write("]\n" if self._first else "\n]\n")


class PylintFormatter(Formatter):
    """`path:line: [CODE] message`, as ruff's and pylint's parseable format; a file that could not be checked is
    an `[E999]` / `[E902]` line."""

    def findings(self, path: str, reported: Sequence[Reported]) -> None:
        for entry in reported:
            f = entry.located.finding
            self.out.write(f"{shown(path)}:{f.line}: [{f.code}] {shown(f.message)}\n")

    def error(self, error: CheckError) -> bool:
        self.out.write(f"{shown(error.path)}:{error.line}: [{error.code}] {shown(error.message)}\n")
        return error.where is not None  # an unreadable file is still named on stderr


def _relative(path: str, root: str) -> str:
    """A path as GitLab wants it: relative to the project (the working directory) with `/`, when inside it."""
    absolute = os.path.abspath(path)
    if _inside(absolute, root):
        path = os.path.relpath(absolute, root)
    return shown(path.replace(os.sep, "/"))


_CLASSES: Dict[str, type] = {
    "text": TextFormatter, "concise": TextFormatter, "full": FullFormatter, "json": JsonFormatter,
    "sarif": SarifFormatter, "github": GithubFormatter, "gitlab": GitlabFormatter, "pylint": PylintFormatter,
}


def make_formatter(name: str, out: TextIO, rules: Sequence[Rule], style: Style = PLAIN) -> Formatter:
    """The formatter called `name` (one of FORMATS); `style` colours the text formats only."""
    formatter: Formatter = _CLASSES[name](out, rules, style if name in TEXT_FORMATS else PLAIN)
    return formatter
