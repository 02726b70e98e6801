"""The `flake8-http-pool` command: `check`, `rules` and `explain` subcommands, and the exit codes.

Exit codes: 0 nothing found, 1 findings, 2 a usage error or a file that could not be checked (each such file
gets one `path: error: reason` line on stderr, and the other files are still checked).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Iterable, List, NamedTuple, Optional, Sequence, TextIO, Tuple

from . import __version__
from .options import Options, split_list

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class UsageError(Exception):
    """A bad command line or config: one message on stderr, exit 2."""


# -- the parser --------------------------------------------------------------------------------------
def _comma_list(value: str) -> List[str]:
    return list(split_list(value))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subparser per subcommand (`fix` joins them with the codemod)."""
    parser = argparse.ArgumentParser(
        prog="flake8-http-pool",
        description="Find HTTP-client code that throws connections away (codes HTP101-HTP403).",
    )
    parser.add_argument("--version", action="version", version=f"flake8-http-pool {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    check = commands.add_parser(
        "check",
        help="report findings in Python files and dependency files",
        description="Report findings, one `path:line:col: CODE message` line each. Directories are walked for "
        "*.py files and dependency files (requirements*.txt, pyproject.toml, setup.cfg, setup.py). "
        "Exit 0: clean; 1: findings; 2: usage error or a file that could not be checked.",
    )
    add_scan_arguments(check, "report")
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format (default: text)")
    check.set_defaults(handler=run_check)

    from .fix_command import add_fix_parser, run_fix  # stdlib only: libcst waits for a file with work

    add_fix_parser(commands).set_defaults(handler=run_fix)

    rules = commands.add_parser("rules", help="list the rules", description="List every rule: code, name, fix, summary.")
    rules.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    rules.set_defaults(handler=run_rules)

    explain = commands.add_parser("explain", help="show a rule's documentation",
                                  description="Show a rule's documentation, e.g. `explain HTP101`.")
    explain.add_argument("code", metavar="CODE", help="a rule code (HTP101) or name (unpooled-call-in-loop)")
    explain.set_defaults(handler=run_explain)
    return parser


def add_scan_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """The arguments `check` and `fix` share: what to scan, which codes, and the settings that feed `Options`."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); "
                        "`-` alone reads the list of paths from standard input, one per line")
    parser.add_argument("--select", type=_comma_list, metavar="CODES",
                        help=f"{verb} only these codes or prefixes (default: HTP)")
    parser.add_argument("--ignore", type=_comma_list, metavar="CODES", help=f"do not {verb} these codes or prefixes")
    parser.add_argument("--extend-select", type=_comma_list, default=[], metavar="CODES",
                        help="add codes to those selected")
    parser.add_argument("--exclude", type=_comma_list, metavar="GLOBS",
                        help="skip files and folders matching these globs (replaces the config's exclude)")
    parser.add_argument("--extend-exclude", type=_comma_list, default=[], metavar="GLOBS", help="add globs to exclude")
    parser.add_argument("--unpooled-calls", action="append", default=[], metavar="PATTERN",
                        help="an in-house call that opens its own connection, as an ast-grep pattern "
                        "(`mycorp.http.get($$$)`); repeat for more")
    parser.add_argument("--hot-decorators", type=_comma_list, default=[], metavar="NAMES",
                        help="decorators that mark a function as run many times (comma separated)")
    parser.add_argument("--jobs", "-j", type=_positive_int, metavar="N",
                        help="worker processes (default: the core count)")
    parser.add_argument("--config", metavar="PYPROJECT",
                        help="read settings from this pyproject.toml instead of the nearest one")
    parser.add_argument("--isolated", action="store_true", help="read no config file")


class ScanSettings(NamedTuple):
    """What the command line and `[tool.flake8-http-pool]` decide together, for `check` and `fix` alike."""

    options: Options
    codes: frozenset
    exclude: List[Tuple[str, str]]  # (glob, the folder it is relative to)
    config: Any = None  # the Config read (fix takes its fix-safety settings from it)


def scan_settings(args: argparse.Namespace) -> ScanSettings:
    """Read the config, merge the command line over it, and refuse bad values as usage errors."""
    from .config import Config, ConfigError, discover_config, load_config
    from .rules import ALL_RULES
    from .selection import Selection, SelectionError

    try:
        config = Config() if args.isolated else (load_config(args.config) if args.config else discover_config())
    except ConfigError as error:
        raise UsageError(str(error)) from None
    try:
        selection = Selection(
            select=args.select if args.select is not None else config.select,
            ignore=args.ignore if args.ignore is not None else config.ignore,
            extend_select=list(config.extend_select) + args.extend_select,
        )
    except SelectionError as error:
        raise UsageError(str(error)) from None
    options = Options(
        hot_decorators=tuple(config.hot_decorators) + tuple(args.hot_decorators),
        unpooled_calls=tuple(config.unpooled_calls) + tuple(p.strip() for p in args.unpooled_calls if p.strip()),
    )
    _check_patterns(options.unpooled_calls)
    if args.exclude is not None:
        exclude = [(pattern, os.getcwd()) for pattern in args.exclude]
    else:
        exclude = [(pattern, config.base) for pattern in config.exclude]
    exclude += [(pattern, os.getcwd()) for pattern in args.extend_exclude]
    codes = frozenset(selection.codes(rule.code for rule in ALL_RULES))
    return ScanSettings(options, codes, exclude, config)


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


# -- check -------------------------------------------------------------------------------------------
class _Errors:
    """Files that could not be checked: printed at once, kept (path, reason) for the SARIF invocation."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.items: List[Tuple[str, str]] = []

    def __call__(self, path: str, reason: str) -> None:
        self.stream.write(f"{path}: error: {reason}\n")
        self.stream.flush()
        self.items.append((path, reason))


def _check_job(shared: Tuple[Options, frozenset], candidate: Any) -> Any:
    from .checking import check_file

    options, codes = shared
    return check_file(candidate.path, candidate.kind, options, codes)


def _crashed(candidate: Any) -> Any:
    from .checking import FileResult

    return FileResult(candidate.path, error="the worker process checking it died")


def run_check(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """`check`: discover, check (in parallel), report; the exit code."""
    from .discovery import Discovery, Excluder, expand_arguments
    from .formats import make_formatter
    from .rules import ALL_RULES
    from .runner import Runner, default_jobs

    settings = scan_settings(args)
    options, codes, exclude = settings.options, settings.codes, settings.exclude

    errors = _Errors(stderr)
    discovery = Discovery(Excluder(exclude), errors)
    paths: Iterable[str] = expand_arguments(args.paths or ["."], stdin)
    rules = [rule for rule in ALL_RULES if rule.code in codes]
    formatter = make_formatter(args.format, stdout, rules)
    runner = Runner(_check_job, (options, codes), _crashed, args.jobs or default_jobs())

    found = False
    formatter.start()
    for result in runner.run(discovery.candidates(paths)):
        if result.error is not None:
            errors(result.path, result.error)
        elif result.findings:
            found = True
            formatter.findings(result.path, result.findings)
    formatter.finish(errors.items)
    stdout.flush()
    if errors.items:
        return EXIT_ERROR
    return EXIT_FINDINGS if found else EXIT_CLEAN


def _check_patterns(patterns: Sequence[str]) -> None:
    """Refuse an unusable ast-grep pattern once, up front, instead of once per file."""
    if not patterns:
        return
    from .custom_calls import PatternError, validate_patterns

    try:
        validate_patterns(patterns)
    except PatternError as error:
        raise UsageError(f"unpooled-calls: {error}") from None


# -- rules and explain -------------------------------------------------------------------------------
def run_rules(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """`rules`: one line per rule (or a JSON list)."""
    from .rules import ALL_RULES

    if args.format == "json":
        records = [
            {"code": r.code, "name": r.name, "summary": r.summary, "message": r.message, "fix": r.fix,
             "fix_sites": r.fix_sites}
            for r in ALL_RULES
        ]
        stdout.write(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
        return EXIT_CLEAN
    width = max(len(r.name) for r in ALL_RULES)
    for rule in ALL_RULES:
        # `*`: the class holds at most sites; `explain` says where it differs or the fix is not offered.
        fix = f"fix: {rule.fix}{'*' if rule.fix_sites else ''}"
        stdout.write(f"{rule.code}  {rule.name:<{width}}  {fix:<12}  {rule.summary}\n")
    stdout.write("\nfix: safe - `fix` applies it; unsafe - only `fix --unsafe-fixes`; none - report only.\n"
                 "* decided per site: `flake8-http-pool explain CODE` says where the fix is unsafe or not offered.\n")
    return EXIT_CLEAN


def run_explain(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """`explain CODE`: the rule's docs page, as Markdown text."""
    from .formats import DOCS_URL, rule_help_markdown
    from .rules import ALL_RULES, RULES_BY_CODE

    wanted = args.code.strip()
    rule = RULES_BY_CODE.get(wanted.upper()) or next((r for r in ALL_RULES if r.name == wanted.lower()), None)
    if rule is None:
        known = ", ".join(r.code for r in ALL_RULES)
        raise UsageError(f"explain: unknown rule {args.code!r} (known: {known})")
    stdout.write(rule_help_markdown(rule))
    stdout.write(f"\nMessage: {rule.message}\nFix: {rule.fix}" + (f" ({rule.fix_title})" if rule.fix_title else ""))
    if rule.fix_sites:
        stdout.write(f"\nPer site: {rule.fix_sites}")
    stdout.write(f"\nDocs: {DOCS_URL.format(code=rule.code)}\n")
    return EXIT_CLEAN


# -- entry point -------------------------------------------------------------------------------------
Handler = Callable[[argparse.Namespace, TextIO, TextIO, TextIO], int]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The console script. Never lets a traceback reach the user."""
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 with a usage message on a bad command line
    handler: Handler = args.handler
    try:
        return handler(args, sys.stdin, sys.stdout, sys.stderr)
    except UsageError as error:
        sys.stderr.write(f"flake8-http-pool: error: {error}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("flake8-http-pool: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python from complaining at exit.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_ERROR
    except Exception as error:  # a bug of ours: one line, not a traceback
        sys.stderr.write(f"flake8-http-pool: internal error: {type(error).__name__}: {error}\n")
        return EXIT_ERROR


def console_main() -> None:
    """`python -m flake8_http_pool`."""
    sys.exit(main())
