"""Reads our settings: `[tool.flake8-http-pool]` in pyproject.toml, or our part of a `[flake8]` section.

Where they are found (per checked file, see `settings`): in each folder from the file's up, a pyproject.toml
with our table wins; else the first of setup.cfg, tox.ini, .flake8 with a `[flake8]` section (flake8's order),
if that section says something to us. The nearest folder with either wins whole; nothing is merged across
folders, as ruff does without `extend`. So in one folder pyproject.toml beats the [flake8] section, and a
sub-package's [flake8] section with our keys beats the pyproject.toml of the repository above it. flake8 itself
reads its section in (or above) the working directory only; looking in each file's folder gives the same
answer whenever the command runs where flake8 would, and a better one for a monorepo.

What is taken from a `[flake8]` section, and why:
- `http-pool-hot-decorators`, `http-pool-unpooled-calls`: ours, as the plugin reads them. Another
  `http-pool-*` key is a typo: a warning names it.
- `select`, `extend-select`, `ignore`, `extend-ignore`, `per-file-ignores`: only their HTP entries (or a
  prefix of HTP, like `H`). `select = E,W,F` is written for flake8's own checks; taking it whole would make
  `check` find nothing (flake8 would report no HTP either, but a user who runs `check` plainly wants it to
  check). When select names HTP codes, those are the selection, exactly as flake8 then selects them.
- `exclude`, `extend-exclude`: taken whole when the section is ours, since skipping the same files is what
  one config for both doors means; they never make a section ours on their own, so a plain flake8 config
  (line lengths, excludes) never hides our table in a pyproject.toml above it.
Everything else (max-line-length, ...) is flake8's and is left alone without a word.
"""

from __future__ import annotations

import configparser
import os
import re
import sys
from typing import Any, Dict, NamedTuple, Optional, Tuple

from .options import split_list


SECTION = "flake8-http-pool"
# Keys as written in pyproject.toml; underscores are accepted too, as ruff accepts both.
KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores", "unpooled-calls",
        "hot-decorators", "extend-safe-fixes", "extend-unsafe-fixes", "application", "max-file-size",
        "preview", "cache-dir")
# Keys that take true or false rather than a list of strings.
BOOLEAN_KEYS = frozenset({"application", "preview"})
# The files flake8 reads its `[flake8]` section from, in the order flake8 tries them in one folder.
FLAKE8_FILES = ("setup.cfg", "tox.ini", ".flake8")
FLAKE8_SECTION = "flake8"
# Our own keys in a `[flake8]` section (the plugin registers them with flake8 as --http-pool-...).
FLAKE8_OWN_KEYS = ("http-pool-hot-decorators", "http-pool-unpooled-calls", "http-pool-cache-dir")
# flake8's own keys whose HTP part is ours: the rest of each value (E501, W6...) is flake8's business.
FLAKE8_CODE_KEYS = ("select", "extend-select", "ignore", "extend-ignore")
FLAKE8_FILE_KEYS = ("exclude", "extend-exclude")
OUR_PREFIX = "HTP"


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file (`path`, when known)."""

    def __init__(self, message: str, path: Optional[str] = None) -> None:
        super().__init__(message)
        self.path = path


class Config(NamedTuple):
    """The settings of one `[tool.flake8-http-pool]` table (or `[flake8]` section); empty where a key is absent."""

    path: Optional[str] = None  # the file read, None when there was none
    select: Optional[Tuple[str, ...]] = None  # None: not set, so the default (every rule) applies
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    unpooled_calls: Tuple[str, ...] = ()
    hot_decorators: Tuple[str, ...] = ()
    extend_safe_fixes: Tuple[str, ...] = ()  # codes or prefixes whose unsafe fixes `fix` applies as safe
    extend_unsafe_fixes: Tuple[str, ...] = ()  # codes or prefixes whose safe fixes need --unsafe-fixes
    application: bool = False  # no caller outside the project: HTP104 may change any function's signature
    preview: bool = False  # accepted for compatibility: the whole-project analysis is on by default now
    cache_dir: Optional[str] = None  # the project model's cache folder (relative: to the config's folder)
    extend_exclude: Tuple[str, ...] = ()  # added to `exclude` (and to --exclude when that replaces it)
    # (glob, codes): files matching the glob (relative to `base`, or a bare file name) do not get those codes.
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    warnings: Tuple[str, ...] = ()  # things worth a warning line (unknown keys), said once by the main process
    max_file_size: Optional[str] = None  # `4M`, `512K` or bytes, checked when read (None: the default)

    @property
    def base(self) -> str:
        """The folder relative patterns of this config are anchored to."""
        return os.path.dirname(self.path) if self.path else os.getcwd()


def find_config_file(start: str) -> Optional[str]:
    """The nearest config for us at or above the folder `start` (see `config_in_directory`), or None.

    As ruff does, a pyproject.toml without our table is passed over, so a sub-package's own pyproject.toml
    does not hide the settings of the repository root.
    """
    directory = os.path.abspath(start)
    while True:
        found = config_in_directory(directory)
        if found is not None:
            return found
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def config_in_directory(directory: str) -> Optional[str]:
    """The file in `directory` whose settings are ours, or None.

    `pyproject.toml` with a `[tool.flake8-http-pool]` table first; else the first of setup.cfg, tox.ini and
    .flake8 holding a `[flake8]` section (flake8's own order), and only when that section says something to
    us (an http-pool-* key, or an HTP code in select/ignore/per-file-ignores): a `[flake8]` section about
    line lengths must not hide the pyproject.toml of the repository above it.
    """
    candidate = os.path.join(directory, "pyproject.toml")
    if os.path.isfile(candidate) and _has_section(candidate):
        return candidate
    for name in FLAKE8_FILES:
        candidate = os.path.join(directory, name)
        if not os.path.isfile(candidate):
            continue
        section = _flake8_section(candidate)
        if section is None:
            continue
        return candidate if _flake8_values(candidate, section)[0] else None
    return None


def _read(path: str) -> bytes:
    """A config file's bytes, through the one reader of a tree's files (source_files.read_bytes: regular files
    only, never blocking, at most the default --max-file-size: the config sets the limit, so it cannot be read
    under it). Raises ConfigError."""
    from .source_files import DEFAULT_MAX_FILE_SIZE, SourceError, read_bytes

    try:
        return read_bytes(path, DEFAULT_MAX_FILE_SIZE)
    except SourceError as error:
        raise ConfigError(f"{path}: {error.reason}", path) from None


def _has_section(path: str) -> bool:
    try:
        data = _read(path)
    except ConfigError:
        return False
    # Cheap test first; only a file that names the table is parsed (and then must parse).
    return SECTION.encode() in data and SECTION in _load(path, data).get("tool", {})


def _load(path: str, data: bytes) -> Dict[str, Any]:
    # Imported here: most projects' pyproject.toml names no table of ours, and flake8's editor lint finds that
    # out without the TOML parser.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on older interpreters only
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: invalid TOML: {error}", path) from None
    except RecursionError:  # the parser recurses per nested array or table: `a = [[[...]]]` 3,000 deep
        raise ConfigError(f"{path}: invalid TOML: nested too deeply (recursion limit reached)", path) from None


def is_flake8_file(path: str) -> bool:
    """Whether `path` is read as flake8 reads it (an INI file with a `[flake8]` section), not as pyproject.toml."""
    name = os.path.basename(path)
    return name in FLAKE8_FILES or name.endswith((".cfg", ".ini"))


def load_any(path: str, require_table: bool = False) -> Config:
    """The settings of `path`: a pyproject.toml's table, or a setup.cfg / tox.ini / .flake8 `[flake8]` section."""
    if is_flake8_file(path):
        return load_flake8_config(path, require_table)
    return load_config(path, require_table)


def load_config(path: str, require_table: bool = False) -> Config:
    """The `[tool.flake8-http-pool]` table of `path`, checked: wrong types are errors, unknown keys warnings.

    `require_table` (a file named by `--config`): a file without the table is an error, not an empty config.
    An unknown key (a typo, or a key of a newer release) is named in `Config.warnings` and otherwise left
    alone, as ruff warns rather than stopping a run a newer config file would otherwise break.
    """
    data = _read(path)
    tool = _load(path, data).get("tool", {})
    if require_table and not (isinstance(tool, dict) and SECTION in tool):
        raise ConfigError(f"{path}: no [tool.{SECTION}] table")
    table = tool.get(SECTION, {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    values: Dict[str, Tuple[str, ...]] = {}
    flags: Dict[str, bool] = {}
    ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    warnings = []
    for key, value in table.items():
        name = key.replace("_", "-")
        if name not in KEYS:
            warnings.append(f"{path}: unknown key {key!r} in [tool.{SECTION}], ignored (known: {', '.join(KEYS)})")
            continue
        if name == "max-file-size":
            if not isinstance(value, (int, str)) or isinstance(value, bool):
                raise ConfigError(f'{path}: {key} must be a size: a number of bytes, or a string such as "4M"')
            from .source_files import parse_size

            try:
                parse_size(str(value))
            except ValueError as error:
                raise ConfigError(f"{path}: {key}: {error}") from None
            flags[name] = str(value)  # type: ignore[assignment]
        elif name == "cache-dir":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{path}: {key} must be a folder (a string)")
            flags[name] = _folder_beside(path, value)  # type: ignore[assignment]
        elif name in BOOLEAN_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: {key} must be true or false")
            flags[name] = value
        elif name == "per-file-ignores":
            ignores = _per_file_ignores_table(path, key, value)
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
        preview=flags.get("preview", False),
        extend_exclude=values.get("extend-exclude", ()),
        per_file_ignores=ignores,
        warnings=tuple(warnings),
        max_file_size=flags.get("max-file-size"),  # type: ignore[arg-type]
        cache_dir=flags.get("cache-dir"),  # type: ignore[arg-type]
    )


def _per_file_ignores_table(path: str, key: str, value: Any) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """ruff's form: a table of glob -> list of codes (`{"tests/*" = ["HTP101"]}`)."""
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key} must be a table of glob = [codes] (like {{\"tests/*\" = [\"HTP101\"]}})")
    out = []
    for glob, codes in value.items():
        if not (isinstance(codes, str) or (isinstance(codes, list) and all(isinstance(c, str) for c in codes))):
            raise ConfigError(f"{path}: {key}: {glob!r} must be a list of codes")
        out.append((glob, split_list(codes)))
    return tuple(out)


def _patterns(value: "str | list[str]") -> Tuple[str, ...]:
    """ast-grep patterns hold commas (`get($A, $B)`), so a list keeps each item whole; a string is one per line."""
    items = value.splitlines() if isinstance(value, str) else value
    return tuple(item.strip() for item in items if item.strip())


# -- flake8's [flake8] section ------------------------------------------------------------------------
def _flake8_section(path: str) -> Optional[Dict[str, str]]:
    """The `[flake8]` section of an INI file as flake8 reads it (keys with `_` or `-`), None when it has none."""
    parser = configparser.RawConfigParser()
    try:
        text = _read(path).decode("utf-8")
        if "[flake8" not in text:  # cheap test first: most setup.cfg files have no [flake8] section
            return None
        parser.read_string(text, source=path)
    except (OSError, UnicodeDecodeError, configparser.Error) as error:
        raise ConfigError(f"{path}: cannot read as an INI file: {error}", path) from None
    if not parser.has_section(FLAKE8_SECTION):
        return None
    return {key.replace("_", "-").lower(): value for key, value in parser.items(FLAKE8_SECTION)}


def _ours(code: str) -> bool:
    """Whether a flake8 selector concerns our codes: HTP, HTP1, HTP101, or a shorter prefix of them (H, HT)."""
    code = code.strip().upper()
    return bool(code) and (code.startswith(OUR_PREFIX) or OUR_PREFIX.startswith(code))


def _flake8_values(path: str, section: Dict[str, str]) -> Tuple[Dict[str, Any], Tuple[str, ...]]:
    """What we take from a `[flake8]` section (empty when nothing concerns us), and warnings."""
    taken: Dict[str, Any] = {}
    warnings = []
    for key, value in section.items():
        if key in FLAKE8_OWN_KEYS:
            taken[key] = value
        elif key.startswith("http-pool-"):
            warnings.append(f"{path}: unknown key {key!r} in [{FLAKE8_SECTION}], ignored "
                            f"(known: {', '.join(FLAKE8_OWN_KEYS)})")
        elif key in FLAKE8_CODE_KEYS:
            codes = tuple(code.upper() for code in split_list(value.split()) if _ours(code))
            if codes:
                taken[key] = codes
        elif key == "per-file-ignores":
            pairs = tuple((glob, tuple(c for c in codes if _ours(c))) for glob, codes in parse_flake8_mapping(value))
            pairs = tuple((glob, codes) for glob, codes in pairs if codes)
            if pairs:
                taken[key] = pairs
    if taken:
        # Which files are skipped concerns every checker alike, so it comes along, but never decides alone
        # whether the section is ours (a plain flake8 config must not hide a pyproject.toml above it).
        for key in FLAKE8_FILE_KEYS:
            if key in section:
                taken[key] = split_list(section[key])
    return taken, tuple(warnings)


def parse_flake8_mapping(value: str) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """flake8's per-file-ignores string: `glob, glob: CODE, CODE  other.py: CODE` (lines or spaces between)."""
    out = []
    globs: list = []
    codes: list = []
    seen_colon = False
    for token in re.findall(r"[^\s,:]+|:", value):
        if token == ":":
            seen_colon = True
        elif seen_colon and re.fullmatch(r"[A-Z]+[0-9]*", token):
            codes.append(token)
        else:
            if seen_colon:  # a file name after codes starts the next pair
                out.extend((glob, tuple(codes)) for glob in globs)
                globs, codes, seen_colon = [], [], False
            globs.append(token)
    if seen_colon:
        out.extend((glob, tuple(codes)) for glob in globs)
    return tuple(out)


def load_flake8_config(path: str, require_table: bool = False) -> Config:
    """Our settings in the `[flake8]` section of `path`: see the module docstring for what is taken and why."""
    section = _flake8_section(path) if os.path.isfile(path) or not require_table else None
    if section is None:
        if require_table:
            if not os.path.isfile(path):
                raise ConfigError(f"{path}: cannot read: no such file")
            raise ConfigError(f"{path}: no [{FLAKE8_SECTION}] section")
        return Config(path=os.path.abspath(path))
    taken, warnings = _flake8_values(path, section)
    select = taken.get("select")
    return Config(
        path=os.path.abspath(path),
        select=select,
        ignore=taken.get("ignore", ()) + taken.get("extend-ignore", ()),
        extend_select=taken.get("extend-select", ()),
        exclude=taken.get("exclude", ()),
        extend_exclude=taken.get("extend-exclude", ()),
        per_file_ignores=taken.get("per-file-ignores", ()),
        hot_decorators=split_list(taken.get("http-pool-hot-decorators")),
        unpooled_calls=_patterns(taken.get("http-pool-unpooled-calls", "")),
        cache_dir=_folder_beside(path, taken["http-pool-cache-dir"]) if taken.get("http-pool-cache-dir") else None,
        warnings=warnings,
    )


def _folder_beside(config_path: str, value: str) -> str:
    """A folder named in a config file: a relative one is taken from that file's folder."""
    return os.path.join(os.path.dirname(os.path.abspath(config_path)), os.path.expanduser(value.strip()))


def discover_config(start: Optional[str] = None) -> Config:
    """The config found from `start` (default: the working directory) upwards, or an empty one."""
    path = find_config_file(start or os.getcwd())
    return load_any(path) if path else Config()
