"""Reading `check`'s JSON and SARIF reports back into findings and errors, for `merge`.

Both formats carry every field the formats show (formats._exact): a finding read back is written out again
exactly as `check` wrote it, in any format. Reports written before those fields existed still read: the
columns in characters are then taken for the byte columns (the same on ASCII lines), the source line is empty,
and SARIF's related locations give back the places in other modules.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union
from urllib.parse import unquote, urlparse

from .checking import Located
from .finding import Finding
from .formats import RELATED_PLACES, CheckError
from .reporting import Reported

TOOL_NAME = "flake8-http-pool"


class ReportError(Exception):
    """A report that cannot be read: missing, not JSON, or not one of `check`'s JSON or SARIF reports."""


class ReadFinding(NamedTuple):
    """One finding of a report: the path as the report shows it, and the finding as `check` reported it."""

    path: str
    reported: Reported


Entry = Union[ReadFinding, CheckError]


def read_report(name: str) -> List[Entry]:
    """The findings and errors of one report, in its order (`-`: standard input is not read here)."""
    try:
        with open(name, "rb") as stream:
            data = stream.read()
    except OSError as error:
        raise ReportError(f"cannot be read: {(error.strerror or str(error)).lower()}") from None
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ReportError(f"not JSON ({error})") from None
    except RecursionError:  # json's decoder recurses per nested array or object: `[[[...]]]` 100,000 deep
        raise ReportError("not a report: nested too deeply (recursion limit reached)") from None
    try:
        if isinstance(document, list):
            return [_from_record(record) for record in document]
        if isinstance(document, dict) and "runs" in document:
            return _from_sarif(document)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise ReportError(f"not a {TOOL_NAME} report: a finding lacks or garbles {error}") from None
    raise ReportError(f"not a {TOOL_NAME} JSON or SARIF report")


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(repr(value))
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(repr(value))
    return value


def _from_record(record: Mapping[str, Any]) -> Entry:
    """A JSON record (formats.JsonFormatter), or a SARIF result rebuilt as one."""
    path, code, message = _text(record["path"]), _text(record["code"]), _text(record["message"])
    line, col = _int(record["line"]), _int(record["col"])
    if record.get("name") == "error":
        where = record.get("where", ...)
        if where is ...:  # a report from before `where` was written: E902 is the code of a file not read
            where = None if code == "E902" else (line, col)
        elif where is not None:
            where = (_int(where[0]), _int(where[1]))
        reason = record.get("reason")
        if reason is None:
            reason = message if where is None or code == "E902" else f"{code} {message}"
        return CheckError(path, _text(reason), where)
    end_line = _int(record.get("end_line", line))
    end_col = _int(record.get("end_col", col))
    details = record.get("details") or {}
    if not isinstance(details, dict):
        raise TypeError(repr(details))
    fix = record.get("fix")
    if fix not in (None, "safe", "unsafe"):
        raise ValueError(repr(fix))
    finding = Finding(code, line, col - 1, end_line, end_col - 1, message, details)
    located = Located(finding, _int(record.get("char_col", col)) - 1, _int(record.get("end_char_col", end_col)) - 1)
    return ReadFinding(path, Reported(located, fix, _text(record.get("source_line", ""))))


def _from_sarif(document: Mapping[str, Any]) -> List[Entry]:
    entries: List[Entry] = []
    for run in document["runs"]:
        name = run["tool"]["driver"].get("name")
        if name != TOOL_NAME:
            raise ReportError(f"a SARIF report of {name!r}, not of {TOOL_NAME}")
        for result in run.get("results") or ():
            entries.append(_from_record(_sarif_record(result)))
        for invocation in run.get("invocations") or ():
            for note in invocation.get("toolExecutionNotifications") or ():
                entries.append(_sarif_error(note))
    return entries


def _sarif_record(result: Mapping[str, Any]) -> Dict[str, Any]:
    physical = result["locations"][0]["physicalLocation"]
    region = physical["region"]
    line, column = region["startLine"], region.get("startColumn", 1)
    end_column = region.get("endColumn", column)
    record: Dict[str, Any] = {
        "path": _sarif_path(physical["artifactLocation"]), "code": result["ruleId"],
        "message": result["message"]["text"], "line": line, "col": column, "end_line": region.get("endLine", line),
        "end_col": end_column, "char_col": column, "end_char_col": end_column, "details": _related(result),
    }
    record.update(result.get("properties") or {})
    return record


def _related(result: Mapping[str, Any]) -> Dict[str, Any]:
    """The places in other modules, from the related locations (a report from before SARIF carried details)."""
    keys = {text: (file_key, line_key) for file_key, line_key, text in RELATED_PLACES}
    details: Dict[str, Any] = {}
    for place in result.get("relatedLocations") or ():
        found = keys.get(place.get("message", {}).get("text"))
        if found is not None:
            physical = place["physicalLocation"]
            details[found[0]] = _sarif_path(physical["artifactLocation"])
            details[found[1]] = physical["region"]["startLine"]
    return details


def _sarif_error(note: Mapping[str, Any]) -> CheckError:
    properties = note.get("properties") or {}
    physical = note["locations"][0]["physicalLocation"]
    path = properties.get("path") or _sarif_path(physical["artifactLocation"])
    reason = properties.get("reason")
    if reason is None:
        text = note["message"]["text"]
        reason = text.split(": error: ", 1)[1] if ": error: " in text else text
    region = physical.get("region")
    where: Optional[Tuple[int, int]] = None
    if region is not None:
        where = (_int(region["startLine"]), _int(region.get("startColumn", 1)))
    return CheckError(_text(path), _text(reason), where)


def _sarif_path(artifact: Mapping[str, Any]) -> str:
    """A path from an artifact location: relative to the folder `check` ran in (`%SRCROOT%`), or absolute."""
    uri = _text(artifact["uri"])
    if artifact.get("uriBaseId") == "%SRCROOT%" or not urlparse(uri).scheme:
        return unquote(uri, errors="surrogateescape").replace("/", os.sep)
    return unquote(urlparse(uri).path, errors="surrogateescape").replace("/", os.sep)
