"""Reads `[tool.flake8-http-pool]` from the nearest `pyproject.toml` that has it, looking up from a folder."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, NamedTuple, Optional, Tuple

from .options import split_list

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

SECTION = "flake8-http-pool"
# Keys as written in pyproject.toml; underscores are accepted too, as ruff accepts both.
KEYS = ("select", "ignore", "extend-select", "exclude", "unpooled-calls", "hot-decorators", "extend-safe-fixes",
        "extend-unsafe-fixes", "application", "max-file-size")
# Keys that take true or false rather than a list of strings.
BOOLEAN_KEYS = frozenset({"application"})


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file."""


class Config(NamedTuple):
    """The settings of one `[tool.flake8-http-pool]` table; empty tuples where a key is absent."""

    path: Optional[str] = None  # the pyproject.toml read, None when there was none
    select: Optional[Tuple[str, ...]] = None  # None: not set, so the default (every rule) applies
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    unpooled_calls: Tuple[str, ...] = ()
    hot_decorators: Tuple[str, ...] = ()
    extend_safe_fixes: Tuple[str, ...] = ()  # codes or prefixes whose unsafe fixes `fix` applies as safe
    extend_unsafe_fixes: Tuple[str, ...] = ()  # codes or prefixes whose safe fixes need --unsafe-fixes
    application: bool = False  # no caller outside the project: HTP104 may change any function's signature
    max_file_size: Optional[str] = None  # `4M`, `512K` or bytes; read by cli._max_file_size (None: the default)

    @property
    def base(self) -> str:
        """The folder relative patterns of this config are anchored to."""
        return os.path.dirname(self.path) if self.path else os.getcwd()


def find_config_file(start: str) -> Optional[str]:
    """The nearest `pyproject.toml` at or above `start` holding a `[tool.flake8-http-pool]` table.

    As ruff does, a pyproject.toml without our table is passed over, so a sub-package's own pyproject.toml
    does not hide the settings of the repository root.
    """
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate) and _has_section(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _has_section(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    # Cheap test first; only a file that names the table is parsed (and then must parse).
    return SECTION.encode() in data and SECTION in _load(path, data).get("tool", {})


def _load(path: str, data: bytes) -> Dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None


def load_config(path: str, require_table: bool = False) -> Config:
    """The `[tool.flake8-http-pool]` table of `path`, checked: unknown keys and wrong types are errors.

    `require_table` (a file named by `--config`): a file without the table is an error, not an empty config.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {(error.strerror or str(error)).lower()}") from None
    tool = _load(path, data).get("tool", {})
    if require_table and not (isinstance(tool, dict) and SECTION in tool):
        raise ConfigError(f"{path}: no [tool.{SECTION}] table")
    table = tool.get(SECTION, {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    values: Dict[str, Tuple[str, ...]] = {}
    flags: Dict[str, bool] = {}
    for key, value in table.items():
        name = key.replace("_", "-")
        if name not in KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.{SECTION}] (known: {', '.join(KEYS)})")
        if name == "max-file-size":
            if not isinstance(value, (int, str)) or isinstance(value, bool):
                raise ConfigError(f'{path}: {key} must be a size: a number of bytes, or a string such as "4M"')
            flags[name] = str(value)  # type: ignore[assignment]  # a size: checked by cli._max_file_size
        elif name in BOOLEAN_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: {key} must be true or false")
            flags[name] = value
        elif isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            values[name] = split_list(value) if name != "unpooled-calls" else _patterns(value)
        else:
            raise ConfigError(f"{path}: {key} must be a list of strings")
    return Config(
        path=os.path.abspath(path),
        select=values.get("select"),
        ignore=values.get("ignore", ()),
        extend_select=values.get("extend-select", ()),
        exclude=values.get("exclude", ()),
        unpooled_calls=values.get("unpooled-calls", ()),
        hot_decorators=values.get("hot-decorators", ()),
        extend_safe_fixes=values.get("extend-safe-fixes", ()),
        extend_unsafe_fixes=values.get("extend-unsafe-fixes", ()),
        application=flags.get("application", False),
        max_file_size=flags.get("max-file-size"),  # type: ignore[arg-type]
    )


def _patterns(value: "str | list[str]") -> Tuple[str, ...]:
    """ast-grep patterns hold commas (`get($A, $B)`), so a list keeps each item whole; a string is one per line."""
    items = value.splitlines() if isinstance(value, str) else value
    return tuple(item.strip() for item in items if item.strip())


def discover_config(start: Optional[str] = None) -> Config:
    """The config found from `start` (default: the working directory) upwards, or an empty one."""
    path = find_config_file(start or os.getcwd())
    return load_config(path) if path else Config()
