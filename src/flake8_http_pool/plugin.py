"""The flake8 entry point `HTP`: reuses flake8's tree and reports the engine's findings, including those whose
reason is in another module of the file's project (plugin_project.py: the project model through its cache)."""

from __future__ import annotations

import ast
import os
import sys
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from . import __version__
from .engine import check_lines, may_have_findings
from .escaping import shown
from .options import DEFAULT_OPTIONS, Options, split_list

# At most this many files named on flake8's command line (none a folder) are each answered from the modules that
# can matter to it when the cache holds no solve of their project (plugin_project.seeds_for's `focus`).
FOCUS_AT_MOST = 16


class HttpPoolChecker:
    """flake8 plugin: connection-pool mistakes in HTTP client code (codes HTP1xx-HTP4xx)."""

    name = "flake8-http-pool"
    version = __version__
    options: Options = DEFAULT_OPTIONS
    exclude: Tuple[str, ...] = ()  # flake8's exclude and extend-exclude: not part of the project either
    cache_dir: Optional[str] = None  # see parse_options
    # `flake8 -`: the buffer checked is not the file on disk; with --stdin-display-name it gets the seeds the
    # project on disk gives that file (plugin_project.buffer_seeds), without it none.
    from_stdin = False
    focus = False

    def __init__(self, tree: ast.Module, lines: Sequence[str], filename: str = "") -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option(
            "--http-pool-hot-decorators",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="Decorators (dotted names, comma separated) that mark a function as run many times, "
            "like a request handler or a task: its HTTP calls should go through a shared client (HTP102/HTP104).",
        )
        manager.add_option(
            "--http-pool-unpooled-calls",
            default="",
            parse_from_config=True,
            help="In-house calls that open their own connection, as ast-grep patterns, one per line "
            "(`mycorp.http.get($$$)`, `legacy_fetch($URL)`): they count as unpooled calls, like requests.get.",
        )
        manager.add_option(
            "--http-pool-cache-dir",
            default="",
            parse_from_config=True,
            normalize_paths=True,
            help="The whole-project analysis's cache folder (default: `cache-dir` of the project's "
            "[tool.flake8-http-pool], else FLAKE8_HTTP_POOL_CACHE_DIR, else .flake8-http-pool-cache at the project root).",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        patterns = _patterns(getattr(options, "http_pool_unpooled_calls", None))
        cls.options = Options(
            hot_decorators=split_list(getattr(options, "http_pool_hot_decorators", None)), unpooled_calls=patterns
        )
        cls.exclude = tuple(getattr(options, "exclude", None) or ()) + tuple(
            getattr(options, "extend_exclude", None) or ())
        # The cache folder flake8 was told, else (None) the one the project's config names. That one is read even
        # under `flake8 --isolated` (which flake8's parse hides from plugins): where the cache lives changes no
        # finding, and `check` and flake8 then share it.
        cls.cache_dir = getattr(options, "http_pool_cache_dir", None) or None
        filenames = list(getattr(options, "filenames", None) or ())
        cls.from_stdin = "-" in filenames
        # A few files named (pre-commit's changed files, an editor's buffer): each answered from the modules
        # that can matter to it when the project's solve is not cached, not after a cold solve of the whole
        # project; a folder, or more files, and the whole project is solved for all of them, by each of
        # flake8's workers as it meets its first file (plugin_project.py), never in flake8's main process: that
        # only loads the solves the cache holds, for the workers to inherit.
        cls.focus = cls.from_stdin or (0 < len(filenames) <= FOCUS_AT_MOST
                                       and all(os.path.isfile(name) for name in filenames))
        if not cls.from_stdin and not cls.focus:
            from .plugin_project import prepare

            prepare(filenames or ["."], cls.options, cls.exclude, cls.cache_dir)

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        seeds = None
        findings: Optional[List] = None
        text: Optional[str] = None  # the lines joined, once needed
        if self.from_stdin and self.filename and self.filename not in ("-", "stdin"):
            # An editor's buffer named by --stdin-display-name: checked with what the project on disk says of it.
            from .plugin_project import buffer_seeds, seeds_for

            text = "".join(self.lines)
            seeds = buffer_seeds(seeds_for(self.filename, self.options, self.exclude, self.cache_dir, self.focus),
                                 os.path.abspath(self.filename), text.encode("utf-8", "surrogateescape"))
        elif self.filename and not self.from_stdin and self.filename not in ("-", "stdin"):
            from .plugin_project import known_findings, passed_over, seeds_for

            seeds = seeds_for(self.filename, self.options, self.exclude, self.cache_dir, self.focus)
            if seeds is None:
                if passed_over(self.filename, self.options):
                    findings = []  # the text gate's answer too (see passed_over), without joining the lines
                else:
                    # check_lines' own gate, once; past it, the project's solve walked this module already and
                    # kept what it found there.
                    text = "".join(self.lines)
                    findings = known_findings(self.filename, text, self.options) \
                        if may_have_findings(text, self.options) else []
        if findings is None:
            findings = check_lines(self.tree, self.lines, self.options, seeds, text)
        for finding in findings:
            # flake8 prints the text as given: a finding read back from a cache the repository holds may say
            # anything, so it is escaped as every other output is.
            yield finding.line, finding.col, shown(finding.text()), type(self)


def _patterns(value: Any) -> Tuple[str, ...]:
    """One ast-grep pattern per line (a pattern holds commas, so commas cannot separate them); checked once here."""
    if not value:
        return ()
    items = value.splitlines() if isinstance(value, str) else [line for item in value for line in str(item).splitlines()]
    patterns = tuple(item.strip() for item in items if item.strip())
    if patterns:
        from .custom_calls import PatternError, validate_patterns
        from .extras import MissingExtra

        # An option that cannot work stops flake8 once with one line, before any file is read: skipping the
        # patterns quietly would pass code the user asked to have checked.
        try:
            validate_patterns(patterns)
        except PatternError as error:
            # One line and exit 2, as for a bad option on flake8's own command line (SystemExit("...") exits 1).
            sys.stderr.write(f"flake8-http-pool: --http-pool-unpooled-calls: {shown(str(error))}\n")
            raise SystemExit(2) from None
        except MissingExtra as error:
            sys.stderr.write(f"flake8-http-pool: {shown(str(error))}\n")
            raise SystemExit(2) from None
    return patterns
