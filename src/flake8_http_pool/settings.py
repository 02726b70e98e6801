"""Settings per checked file: the nearest config of each file's folder, merged under the command line.

As ruff does, each file gets the settings of the nearest folder at or above it holding a config for us (see
`config.config_in_directory`); `--config FILE` gives every file that one, `--isolated` none. Command-line
options override every config. The lookup is cached per folder, so a walk costs one look per folder, not per
file.

Worker processes get a small key per file, `(config path or None, per-file-ignored selectors)`, never the
settings themselves: each worker reads a config file once (`resolved` caches per process) and merges it under
the command-line `Overrides` it was given once at start. The main process has read and checked each config
before any file under it is sent, so a worker never meets a config error the run has not already reported.
"""

from __future__ import annotations

import argparse
import os
from typing import (TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional,
                    Sequence, Tuple)

from .config import Config, ConfigError, load_any
from .discovery import Excluder
from .options import Options

if TYPE_CHECKING:
    from .fix_facts import FixFacts

# A file's settings key: the config read (None: none) and the per-file-ignores selectors that match it.
Key = Tuple[Optional[str], Tuple[str, ...]]
NO_KEY: Key = (None, ())


class Overrides(NamedTuple):
    """What the command line says; None where it says nothing, so the config decides."""

    select: Optional[Tuple[str, ...]] = None
    ignore: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    exclude: Optional[Tuple[str, ...]] = None
    extend_exclude: Tuple[str, ...] = ()
    hot_decorators: Tuple[str, ...] = ()
    unpooled_calls: Tuple[str, ...] = ()
    cwd: str = ""  # command-line globs are relative to the working directory
    max_file_size: Optional[int] = None  # --max-file-size in bytes (None: the config's, else the default)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Overrides":
        return cls(
            select=tuple(args.select) if args.select is not None else None,
            ignore=tuple(args.ignore) if args.ignore is not None else None,
            extend_select=tuple(args.extend_select),
            exclude=tuple(args.exclude) if args.exclude is not None else None,
            extend_exclude=tuple(args.extend_exclude),
            hot_decorators=tuple(args.hot_decorators),
            unpooled_calls=tuple(p.strip() for p in args.unpooled_calls if p.strip()),
            cwd=os.getcwd(),
            max_file_size=getattr(args, "max_file_size", None),
        )


class Resolved(NamedTuple):
    """What checking or fixing one file needs."""

    options: Options
    codes: FrozenSet[str]
    application: bool = False
    extend_safe: Tuple[str, ...] = ()
    extend_unsafe: Tuple[str, ...] = ()

    def fix_facts(self) -> "FixFacts":
        """The fix-safety settings of this file's config, as the planners take them (check's marks, fix)."""
        from .fix_facts import NO_FACTS

        return NO_FACTS._replace(application=self.application, extend_safe=self.extend_safe,
                                 extend_unsafe=self.extend_unsafe)


class SettingsError(Exception):
    """A config whose values cannot be used (an unknown code, a bad pattern): the message names the file."""


# Per process: configs read and settings merged, by path and by key.
_CONFIGS: Dict[str, Config] = {}
_RESOLVED: Dict[Tuple[Overrides, Key], Resolved] = {}


def read_config(path: Optional[str]) -> Config:
    """The config at `path` (None: the empty one), read once per process."""
    if path is None:
        return Config()
    config = _CONFIGS.get(path)
    if config is None:
        config = _CONFIGS[path] = load_any(path)
    return config


def resolved(overrides: Overrides, key: Key) -> Resolved:
    """The settings of a file with `key`, the command line over its config; cached per process."""
    found = _RESOLVED.get((overrides, key))
    if found is None:
        found = _RESOLVED[(overrides, key)] = merge(read_config(key[0]), overrides, key[1])
    return found


def merge(config: Config, overrides: Overrides, dropped: Tuple[str, ...] = ()) -> Resolved:
    """`config` under `overrides`; the codes `dropped` (per-file-ignores) are taken out at the end."""
    from .rules import ALL_RULES
    from .selection import Selection

    selection = Selection(
        select=overrides.select if overrides.select is not None else config.select,
        ignore=(overrides.ignore if overrides.ignore is not None else config.ignore) + tuple(dropped),
        extend_select=tuple(config.extend_select) + overrides.extend_select,
    )
    codes = frozenset(selection.codes(rule.code for rule in ALL_RULES))
    if dropped:
        # A per-file ignore removes its codes whatever a longer select prefix says, as ruff and flake8 do.
        codes = frozenset(c for c in codes if not any(c.startswith(p.upper()) for p in dropped))
    options = Options(
        hot_decorators=tuple(config.hot_decorators) + overrides.hot_decorators,
        unpooled_calls=tuple(config.unpooled_calls) + overrides.unpooled_calls,
        max_file_size=_max_file_size(config, overrides),
    )
    return Resolved(options, codes, config.application, config.extend_safe_fixes, config.extend_unsafe_fixes)


def _max_file_size(config: Config, overrides: Overrides) -> int:
    """--max-file-size, else the config's `max-file-size` (checked when the config was read), else the default."""
    from .source_files import DEFAULT_MAX_FILE_SIZE, parse_size

    if overrides.max_file_size is not None:
        return overrides.max_file_size
    return parse_size(config.max_file_size) if config.max_file_size is not None else DEFAULT_MAX_FILE_SIZE


def check_selectors(lists: Iterable[Tuple[str, Optional[Sequence[str]]]]) -> None:
    """Raise SettingsError for a selector that matches no rule (a typo would silently check nothing: ruff
    refuses it too); each (where it was written, its codes) list is checked on its own so the message can say
    where the unknown code was written."""
    from .rules import ALL_RULES
    from .selection import Selection, SelectionError

    known = [rule.code for rule in ALL_RULES]
    for option, values in lists:
        if not values:
            continue
        try:
            unknown = Selection(select=values).unknown(known)
        except SelectionError as error:
            raise SettingsError(str(error).replace("--select", option, 1)) from None
        if unknown:
            raise SettingsError(f"{option}: unknown rule selector{'s' if len(unknown) > 1 else ''} "
                                f"{', '.join(unknown)} (this tool's codes are {known[0]}-{known[-1]}; "
                                "see `flake8-http-pool rules`)")


def check_config(config: Config, overrides: Overrides) -> None:
    """Refuse what a config holds that would silently check nothing or fail in every file: SettingsError."""
    where = f" in {config.path}" if config.path else ""
    lists = [
        (f"select{where}", config.select if overrides.select is None else None),
        (f"ignore{where}", config.ignore if overrides.ignore is None else None),
        (f"extend-select{where}", config.extend_select),
    ]
    lists += [(f"per-file-ignores{where} ({glob!r})", codes) for glob, codes in config.per_file_ignores]
    check_selectors(lists)
    if config.unpooled_calls:
        from .custom_calls import PatternError, validate_patterns
        from .extras import MissingExtra

        try:
            validate_patterns(config.unpooled_calls)
        except PatternError as error:
            raise SettingsError(f"unpooled-calls{where}: {error}") from None
        except MissingExtra as error:  # ast-grep-py is the [patterns] extra: said once per config, like the above
            raise SettingsError(str(error)) from None


class Resolver:
    """Finds each file's config (once per folder), reports each config's problems once, hands out keys.

    `mode`: "isolated" (no config), "explicit" (`--config`: `path` for every file) or "nearest".
    `warn(line)` gets each config's warnings the first time it is read.
    """

    def __init__(self, overrides: Overrides, mode: str, path: Optional[str], warn: Callable[[str], None]) -> None:
        self.overrides = overrides
        self.mode = mode
        self.path = path
        self.warn = warn
        self._by_directory: Dict[str, Optional[str]] = {}
        self._checked: Dict[Optional[str], Optional[str]] = {}  # config path -> None (usable) or its error
        self._excluders: Dict[Optional[str], Excluder] = {}
        self._reported: set = set()
        self._ignores: Dict[Optional[str], List[Tuple[Excluder, Tuple[str, ...]]]] = {}
        self._keys: Dict[Any, Any] = {}  # each settings key made, so files sharing one share the tuple

    # -- which config ------------------------------------------------------------------------------------
    def config_path_for_directory(self, directory: str) -> Optional[str]:
        """The config governing files in `directory` (absolute); one look per folder, shared with its parents."""
        if self.mode != "nearest":
            return self.path
        found = self._by_directory.get(directory, False)
        if found is not False:
            return found  # type: ignore[return-value]
        from .config import config_in_directory

        walked = []
        current = directory
        result: Optional[str] = None
        while True:
            cached = self._by_directory.get(current, False)
            if cached is not False:
                result = cached  # type: ignore[assignment]
                break
            walked.append(current)
            try:
                here = config_in_directory(current)
            except ConfigError as error:
                # A config that does not parse governs its folder all the same: the files under it are not
                # checked with settings it did not mean, and the error is said once (see key_for).
                here = error.path or os.path.join(current, "pyproject.toml")
                self._checked[here] = str(error)
            if here is not None:
                result = here
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for seen in walked:
            self._by_directory[seen] = result
        return result

    def load(self, path: Optional[str]) -> Config:
        """The config at `path`, checked; raises ConfigError or SettingsError. Warnings are said once."""
        first = path not in self._checked
        if not first and self._checked[path] is not None:
            raise SettingsError(self._checked[path])
        try:
            config = read_config(path)
            check_config(config, self.overrides)
        except (ConfigError, SettingsError) as error:
            self._checked[path] = str(error)
            raise
        if first:
            self._checked[path] = None
            for line in config.warnings:
                self.warn(line)
        return config

    # -- per file --------------------------------------------------------------------------------------
    def key_for(self, path: str, on_error: Callable[[str, str], None]) -> Optional[Key]:
        """The settings key of the file `path`, or None when its config cannot be used (said once, on_error)."""
        absolute = os.path.abspath(path)
        config_path = self.config_path_for_directory(os.path.dirname(absolute))
        if config_path not in self._ignores:
            error = self._checked.get(config_path)
            if error is None:
                try:
                    config = self.load(config_path)
                except (ConfigError, SettingsError) as problem:
                    error = str(problem)
            if error is not None:
                if config_path not in self._reported:
                    self._reported.add(config_path)
                    on_error(config_path or path, _without_path(error, config_path))
                return None
            # Matched as exclude globs are: the file's name, or (holding a `/`) its path from the config's folder.
            self._ignores[config_path] = [(Excluder([(glob, config.base)]), codes)
                                          for glob, codes in config.per_file_ignores]
        dropped: Tuple[str, ...] = ()
        for globs, codes in self._ignores[config_path]:
            if globs.excluded(absolute):
                dropped += codes
        key = (config_path, tuple(sorted(set(dropped))))
        return self._keys.setdefault(key, key)  # one tuple per distinct key, not one per file of a big tree

    def keyed(self, candidates: Iterable, on_error: Callable[[str, str], None]) -> Iterator:
        """Each candidate with its settings key; those under an unusable config are left out (said once)."""
        for candidate in candidates:
            key = self.key_for(candidate.path, on_error)
            if key is not None:
                yield candidate._replace(key=key)

    # -- exclusion -------------------------------------------------------------------------------------
    def excluder_for(self, config_path: Optional[str]) -> Excluder:
        found = self._excluders.get(config_path)
        if found is None:
            try:
                config = self.load(config_path)
            except (ConfigError, SettingsError):
                config = Config()  # its error is said when a file under it is met
            cwd = self.overrides.cwd
            if self.overrides.exclude is not None:
                patterns = [(p, cwd) for p in self.overrides.exclude]
            else:
                patterns = [(p, config.base) for p in config.exclude]
            patterns += [(p, config.base) for p in config.extend_exclude]
            patterns += [(p, cwd) for p in self.overrides.extend_exclude]
            found = self._excluders[config_path] = Excluder(patterns)
        return found

    def excluded(self, path: str) -> bool:
        """Whether `path` (a file or folder) is excluded by the config of the folder holding it."""
        absolute = os.path.abspath(path)
        # The path as given: a bare pattern meets the name written (`.` is never a folder name).
        return self.excluder_for(self.config_path_for_directory(os.path.dirname(absolute))).excluded(path)


def _without_path(message: str, path: Optional[str]) -> str:
    """The error text after `path: `, as `path: error: reason` lines want it."""
    if path and message.startswith(path + ": "):
        return message[len(path) + 2:]
    return message
