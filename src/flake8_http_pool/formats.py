"""Output formats of `check`: flake8-style text, JSON and SARIF 2.1.0, each written as results arrive."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Sequence, TextIO, Tuple
from urllib.parse import quote

from . import __version__
from .checking import Located
from .rule import Rule

FORMATS = ("text", "json", "sarif")
INFORMATION_URI = "https://pypi.org/project/flake8-http-pool/"
# Each rule's docs page, as committed under docs/rules/ in the repository.
DOCS_URL = "https://github.com/flake8-http-pool/flake8-http-pool/blob/main/docs/rules/{code}.md"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class Formatter:
    """Writes findings to `out` as they arrive: `start()`, `findings(path, located)` per file, `finish(errors)`."""

    def __init__(self, out: TextIO, rules: Sequence[Rule]) -> None:
        self.out = out
        self.rules = rules

    def start(self) -> None:
        """Called once before any finding."""

    def findings(self, path: str, located: Sequence[Located]) -> None:
        """Called once per file that has findings."""
        raise NotImplementedError

    def finish(self, errors: Sequence[Tuple[str, str]]) -> None:
        """Called once at the end with the files that could not be checked, as (path, reason)."""


class TextFormatter(Formatter):
    """`path:line:col: CODE message`, exactly as flake8 prints it (columns from 1)."""

    def findings(self, path: str, located: Sequence[Located]) -> None:
        for item in located:
            f = item.finding
            self.out.write(f"{path}:{f.line}:{f.col + 1}: {f.code} {f.message}\n")


def _json_safe(details: Mapping[str, Any]) -> Dict[str, Any]:
    # Details are for fixes and may hold tree nodes; only plain values go out.
    plain = (str, int, float, bool, type(None))
    return {k: v for k, v in details.items() if isinstance(v, plain)}


class JsonFormatter(Formatter):
    """A JSON array of objects: path, code, message, line, col (from 1), end_line, end_col, rule name."""

    def start(self) -> None:
        self.out.write("[")
        self._first = True
        self._names = {rule.code: rule.name for rule in self.rules}

    def findings(self, path: str, located: Sequence[Located]) -> None:
        for item in located:
            f = item.finding
            record = {
                "path": path,
                "code": f.code,
                "name": self._names.get(f.code, ""),
                "message": f.message,
                "line": f.line,
                "col": f.col + 1,
                "end_line": f.end_line,
                "end_col": f.end_col + 1,
                "details": _json_safe(f.details),
            }
            self.out.write(("\n  " if self._first else ",\n  ") + json.dumps(record, ensure_ascii=False))
            self._first = False

    def finish(self, errors: Sequence[Tuple[str, str]]) -> None:
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
        self.out.write(json.dumps(head, ensure_ascii=False)[:-1] + ', "runs": [')
        self.out.write(json.dumps(run_head, ensure_ascii=False)[:-1] + ', "results": [')
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

    def findings(self, path: str, located: Sequence[Located]) -> None:
        location = self._artifact(path)
        for item in located:
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
            }
            if f.code in self._index:
                result["ruleIndex"] = self._index[f.code]
            self.out.write(("" if self._first else ",") + json.dumps(result, ensure_ascii=False))
            self._first = False

    def _artifact(self, path: str) -> Dict[str, Any]:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute, self._cwd) if _inside(absolute, self._cwd) else None
        if relative is not None:
            return {"uri": quote(relative.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}
        return {"uri": "file://" + quote(absolute.replace(os.sep, "/"))}

    def finish(self, errors: Sequence[Tuple[str, str]]) -> None:
        notifications: List[Dict[str, Any]] = [
            {
                "level": "error",
                "message": {"text": f"{path}: error: {reason}"},
                "locations": [{"physicalLocation": {"artifactLocation": self._artifact(path)}}],
            }
            for path, reason in errors
        ]
        invocation: Dict[str, Any] = {"executionSuccessful": not errors}
        if notifications:
            invocation["toolExecutionNotifications"] = notifications
        self.out.write('], "invocations": ' + json.dumps([invocation], ensure_ascii=False) + "}]}\n")


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _directory_uri(path: str) -> str:
    return "file://" + quote(path.replace(os.sep, "/").rstrip("/") + "/")


def make_formatter(name: str, out: TextIO, rules: Sequence[Rule]) -> Formatter:
    """The formatter called `name` (one of FORMATS)."""
    classes: Dict[str, type] = {"text": TextFormatter, "json": JsonFormatter, "sarif": SarifFormatter}
    formatter: Formatter = classes[name](out, rules)
    return formatter

