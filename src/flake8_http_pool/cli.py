"""The `flake8-http-pool` command: `check`, `rules` and `explain` subcommands, and the exit codes.

Exit codes: 0 nothing found, 1 findings (0 with --exit-zero, as ruff's), 2 a usage error or a file that could
not be checked (with --exit-zero too: it is about findings, and a broken file must not pass CI): a source Python
refuses gets flake8's `path:line:col: E999 SyntaxError: ...` line on stdout with the findings (text format), a
file that cannot be read one `path: error: reason` line on stderr; the other files are still checked.

`-` among the paths is the source on standard input (shown as `stdin`, or `--stdin-filename`'s name); a list
of paths comes with `--files-from FILE` (`-`: standard input).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, TextIO, Tuple

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
        "Exit 0: clean; 1: findings (0 with --exit-zero); 2: usage error or a file that could not be checked.",
    )
    add_scan_arguments(check, "report")
    add_report_arguments(check)
    # The whole-project analysis is on by default; --preview stays accepted (it asked for it when it was not).
    check.add_argument("--preview", action="store_true", help=argparse.SUPPRESS)
    add_cache_arguments(check)
    check.set_defaults(handler=run_check)

    from .fix_command import add_fix_parser, run_fix  # stdlib only: libcst waits for a file with work

    add_fix_parser(commands).set_defaults(handler=run_fix)

    from .merge_command import add_merge_parser

    add_merge_parser(commands)

    rules = commands.add_parser("rules", help="list the rules", description="List every rule: code, name, fix, summary.")
    rules.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    rules.set_defaults(handler=run_rules)

    explain = commands.add_parser("explain", help="show a rule's documentation",
                                  description="Show a rule's documentation, e.g. `explain HTP101`.")
    explain.add_argument("code", metavar="CODE", help="a rule code (HTP101) or name (unpooled-call-in-loop)")
    explain.set_defaults(handler=run_explain)
    return parser


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """The project model's cache: where it is, or none."""
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the cache of the whole-project analysis")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="the cache folder (default: .flake8-http-pool-cache at the project root; config: "
                        "cache-dir; environment: FLAKE8_HTTP_POOL_CACHE_DIR)")


def open_project_cache(args: argparse.Namespace, config: Any, paths: Iterable[str],
                       note: Callable[[str], None]) -> Any:
    """The project model's cache for this run (project_cache.ProjectCache), or None: --no-cache, or a folder
    that cannot be written (said once through `note`)."""
    if getattr(args, "no_cache", False):
        return None
    from itertools import chain

    from .project import project_root
    from .project_cache import ProjectCache, cache_folder

    given = iter(paths)
    first = next(given, None)
    root = project_root(["."] if first is None else chain([first], given))
    configured = getattr(args, "cache_dir", None) or getattr(config, "cache_dir", None)
    return ProjectCache.open(cache_folder(root, configured), note, root)


def add_report_arguments(check: argparse.ArgumentParser) -> None:
    """`check`'s reporting flags: the format, where the report goes, colour, counts and the exit code."""
    from .formats import FORMATS

    check.add_argument("--output-format", "--format", dest="format", choices=FORMATS, default="text",
                       help="text (flake8's lines; `concise` is the same), full (with the source line and a "
                       "caret), json, sarif, github (workflow commands), gitlab (Code Quality JSON), pylint "
                       "(default: text)")
    check.add_argument("--output-file", "-o", metavar="FILE",
                       help="write the report to FILE (whole, once the run ends) instead of standard output")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even with findings (usage errors and files that could not be checked still "
                       "exit 2)")
    check.add_argument("--statistics", action="store_true",
                       help="after the findings, the number of findings per code")
    check.add_argument("--count", action="store_true", help="after everything else, the total number of findings")
    check.add_argument("--quiet", "-q", action="store_true",
                       help="only the findings: no closing summary line")
    add_color_argument(check)


def add_color_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto",
                        help="colour the text formats: auto (on a terminal, unless NO_COLOR is set), always or "
                        "never (default: auto)")


def add_scan_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """The arguments `check` and `fix` share: what to scan, which codes, and the settings that feed `Options`."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); "
                        "`-` reads the source to check from standard input")
    parser.add_argument("--stdin-filename", metavar="NAME",
                        help="the path of the source read from `-`: shown in messages and used to find the "
                        "config and project and to apply excludes (default: shown as `stdin`)")
    parser.add_argument("--files-from", metavar="FILE",
                        help="also read the paths to scan from FILE, one per line (`-`: standard input)")
    parser.add_argument("--project-from", metavar="FILE",
                        help="the whole project's paths, one per line (`-`: standard input): the project model "
                        "reads them all, but only the paths to scan are reported and fixed (one shard of a run "
                        "split across CI jobs; see docs/sharding.md)")
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
    parser.add_argument("--max-file-size", type=_size, metavar="SIZE",
                        help="skip (with one line, exit 2) files larger than this: bytes, or 512K, 4M, 1G "
                        "(default: 4M; 0: no limit)")
    parser.add_argument("--config", metavar="PYPROJECT",
                        help="read every file's settings from this pyproject.toml (or setup.cfg, tox.ini, .flake8 "
                        "[flake8] section) instead of each file's nearest config")
    parser.add_argument("--isolated", action="store_true", help="read no config file")


class ScanSettings(NamedTuple):
    """What the command line and the config decide together, for `check` and `fix` alike.

    `options`, `codes`, `exclude` and `config` are those of the start folder (the working directory, or
    --stdin-filename's folder); `resolver` gives each file its own (see `settings`).
    """

    options: Options
    codes: frozenset
    exclude: List[Tuple[str, str]]  # (glob, the folder it is relative to)
    config: Any = None  # the Config read (fix takes its fix-safety settings from it)
    resolver: Any = None  # settings.Resolver: the settings key of each file, and exclusion per folder


CONFIG_WANTED = ("it wants a pyproject.toml with a [tool.flake8-http-pool] table, or a setup.cfg, tox.ini or "
                 ".flake8 with a [flake8] section")


def scan_settings(args: argparse.Namespace, stderr: Optional[TextIO] = None) -> ScanSettings:
    """Read the start folder's config, merge the command line over it, and refuse bad values as usage errors.

    Warnings (an unknown key in a config) go to `stderr`, one line each, once per config file.
    """
    from .config import ConfigError, load_any
    from .selection import SelectionError
    from .settings import Overrides, Resolver, SettingsError, check_selectors, merge

    try:
        check_selectors([("--select", args.select), ("--ignore", args.ignore), ("--extend-select", args.extend_select)])
    except SettingsError as error:
        raise UsageError(str(error)) from None
    overrides = Overrides.from_args(args)
    _check_patterns(overrides.unpooled_calls)
    out = stderr if stderr is not None else sys.stderr

    def warn(line: str) -> None:
        from .escaping import shown

        out.write(f"flake8-http-pool: warning: {shown(line)}\n")  # a config's path and keys are the tree's
        out.flush()

    path: Optional[str] = None
    try:
        if args.isolated:
            mode = "isolated"
        elif args.config:
            mode, path = "explicit", load_any(args.config, require_table=True).path
        else:
            mode = "nearest"
    except ConfigError as error:
        # Say what --config wants: people pass a file of flake8's or black's here out of habit.
        raise UsageError(f"--config {error} ({CONFIG_WANTED})") from None
    resolver = Resolver(overrides, mode, path, warn)
    if mode == "nearest":
        path = resolver.config_path_for_directory(os.path.abspath(_config_start(args) or os.getcwd()))
    try:
        config = resolver.load(path)
        selected = merge(config, overrides)
    except (ConfigError, SettingsError) as error:
        raise UsageError(str(error)) from None
    except SelectionError as error:
        raise UsageError(str(error)) from None
    if args.exclude is not None:
        exclude = [(pattern, os.getcwd()) for pattern in args.exclude]
    else:
        exclude = [(pattern, config.base) for pattern in config.exclude]
    exclude += [(pattern, config.base) for pattern in config.extend_exclude]
    exclude += [(pattern, os.getcwd()) for pattern in args.extend_exclude]
    return ScanSettings(selected.options, selected.codes, exclude, config, resolver)


def _size(value: str) -> int:
    from .source_files import parse_size

    try:
        return parse_size(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


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
    """Files that could not be checked: each shown at once (by the report when its format shows it there, else as
    `path: error: reason` on stderr), kept for the exit code and the report's end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.formatter: Any = None
        self.items: List[Any] = []

    def __call__(self, path: str, reason: str, where: Optional[Tuple[int, int]] = None) -> None:
        from .formats import CheckError

        error = CheckError(path, reason, where)
        if self.formatter is None or not self.formatter.error(error):
            from .escaping import shown

            # The reason may quote what the file holds (a config's text, a report's): escaped as the path is.
            self.stream.write(f"{shown(path)}: error: {shown(reason)}\n")
            self.stream.flush()
        self.items.append(error)


def _note(stderr: TextIO) -> Callable[[str], None]:
    """Writes one `flake8-http-pool: ...` line on stderr: something the user asked for was adjusted."""
    def note(message: str) -> None:
        from .escaping import shown

        stderr.write(f"flake8-http-pool: {shown(message)}\n")  # notes name the tree's files and folders
        stderr.flush()
    return note


STDIN = "-"
STDIN_NAME = "stdin"  # flake8's name for a source read from standard input


def _config_start(args: argparse.Namespace) -> Optional[str]:
    """Where to look for the config from: the folder of --stdin-filename when the source comes from `-`."""
    if args.stdin_filename and STDIN in (args.paths or ()):
        return os.path.dirname(os.path.abspath(args.stdin_filename)) or None
    return None


def scan_paths(args: argparse.Namespace, stdin: TextIO, on_error: Callable[[str, str], None]) -> Iterable[str]:
    """The paths to scan: the command line's (without `-`), then those of --files-from; `.` when none at all."""
    from .discovery import paths_from_file

    named = [path for path in args.paths if path != STDIN]
    if args.files_from is not None:
        return _chain(named, paths_from_file(args.files_from, stdin, on_error))
    if not named and STDIN not in args.paths:
        return ["."]
    return named


def _chain(first: Iterable[str], then: Iterable[str]) -> Iterator[str]:
    yield from first
    yield from then


def check_usage(args: argparse.Namespace) -> None:
    """Refuse the combinations of `-`, --files-from, --project-from and --stdin-filename that cannot work."""
    if args.paths.count(STDIN) > 1:
        raise UsageError("`-` (source on standard input) may be given once")
    wanting = [name for name, wants in (("`-`", STDIN in args.paths), ("`--files-from -`", args.files_from == STDIN),
                                         ("`--project-from -`", args.project_from == STDIN)) if wants]
    if len(wanting) > 1:
        both = "both" if len(wanting) == 2 else "all"
        raise UsageError(f"{' and '.join(wanting)} {both} want standard input; give one of them")


def read_stdin_bytes(stdin: TextIO) -> bytes:
    """Standard input's bytes as sent (an editor's buffer): the coding cookie and BOM are honoured later."""
    binary = getattr(stdin, "buffer", None)
    if binary is not None:
        return binary.read()
    return stdin.read().encode("utf-8")


def stdin_excluded(excluder: Any, name: str) -> bool:
    """Whether a walk would have skipped `name`: it, or a folder on its way down from the working directory."""
    path = os.path.normpath(name)
    if os.path.isabs(path):
        relative = os.path.relpath(path)
        if relative.startswith(os.pardir):
            return excluder.excluded(path)  # outside the working directory: no walk would have gone through
        path = relative
    while path and path not in (os.curdir, os.pardir, os.sep):
        if excluder.excluded(path):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return False


def stdin_display(args: argparse.Namespace) -> str:
    return args.stdin_filename or STDIN_NAME


def _crashed(candidate: Any) -> Any:
    from .checking import FileResult
    from .reporting import FileReport

    return FileReport(FileResult(candidate.path, error="the worker process checking it died"))


def stdin_key(args: argparse.Namespace, resolver: Any, on_error: Callable[[str, str], None]) -> Any:
    """The settings key of the source on standard input: that of --stdin-filename's path, else of the cwd's."""
    return resolver.key_for(os.path.abspath(args.stdin_filename or STDIN_NAME), on_error)


def stdin_on_disk(args: argparse.Namespace) -> Optional[str]:
    """The file (absolute path) that the source on standard input is a buffer of: --stdin-filename's, when `-`
    is among the paths and that names a file."""
    if STDIN not in (args.paths or ()) or not args.stdin_filename:
        return None
    path = os.path.abspath(args.stdin_filename)
    return path if os.path.isfile(path) else None


def _stdin_results(args: argparse.Namespace, stdin: TextIO, resolver: Any,
                   on_error: Callable[[str, str], None], seeds: Optional[Dict[str, Any]] = None) -> Iterator[Any]:
    """The results for the source on standard input (checked in this process), none when it is excluded.
    `seeds`: the project's solve, when its file is part of one (see plugin_project.buffer_seeds)."""
    from .checking import check_source
    from .discovery import _kinds
    from .settings import resolved

    data = read_stdin_bytes(stdin)
    name = stdin_display(args)
    if args.stdin_filename and stdin_excluded(resolver, args.stdin_filename):
        return  # as flake8 does: an excluded --stdin-display-name is not checked
    key = stdin_key(args, resolver, on_error)
    if key is None:
        return
    from .reporting import annotate

    settings = resolved(resolver.overrides, key)
    facts_path = os.path.abspath(args.stdin_filename) if args.stdin_filename else None
    own = None
    if seeds and facts_path in seeds:
        from .plugin_project import buffer_seeds

        own = buffer_seeds(seeds[facts_path], facts_path, data)
    for kind in _kinds(os.path.basename(name), explicit=True):
        result = check_source(name, data, kind, settings.options, settings.codes, own)
        yield annotate(result, kind, settings.fix_facts(), data, facts_path)


def run_check(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """`check`: discover, check (in parallel), report; the exit code."""
    from .discovery import Discovery
    from .report_output import write_report
    from .runner import worker_count
    from .shards import context_candidates, stdin_project, stdin_seeds

    check_usage(args)
    settings = scan_settings(args, stderr)
    resolver = settings.resolver

    errors = _Errors(stderr)
    # Each folder's config decides what is excluded below it (see settings.Resolver.excluded).
    discovery = Discovery(resolver, errors)
    paths: Iterable[str] = scan_paths(args, stdin, errors)
    # Workers get the command line once and a small settings key per file, never whole settings per file.
    jobs = worker_count(args.jobs, _note(stderr))

    def results() -> Iterator[Any]:
        from .file_table import FileTable
        from .project_check import project_results

        # The project model needs every module's summary before any file's findings that other modules cause:
        # the candidates are listed (on disk: file_table.py), checked and summarized in the workers, solved here,
        # and the few files that get seeds are checked again (project_check.py).
        buffer_of = stdin_on_disk(args)
        if buffer_of is not None and args.project_from is None and args.files_from is None \
                and set(args.paths) == {STDIN}:
            # Only an editor's buffer: the seeds of its file from the modules that can matter to it.
            seeds = stdin_seeds(buffer_of, resolver, lambda files: open_project_cache(
                args, settings.config, files, _note(stderr)), _note(stderr))
            return iter(_stdin_results(args, stdin, resolver, errors, seeds))
        table = FileTable()
        table.add(resolver.keyed(discovery.candidates(paths, table.remember), errors))
        if args.project_from is not None:
            table.add_context(context_candidates(args.project_from, stdin, resolver))
        else:
            # An editor's buffer (`-` with --stdin-filename naming a file of a project): the project on disk is
            # read, as the flake8 plugin reads it, and the buffer is checked last, under the seeds of the file it
            # stands for.
            if buffer_of is not None:
                table.add_context(stdin_project(buffer_of, resolver))
        cache = open_project_cache(args, settings.config, table.python_paths(), _note(stderr)) \
            if table.has_python() else None
        seeds: Dict[str, Any] = {}
        # A shard answers for its own files from the modules that can matter to them; a buffer among them is
        # checked under seeds of a file that is not (`seeds`), so that run solves the whole project.
        found: Iterable[Any] = project_results(table, resolver.overrides, cache, jobs, _crashed, _note(stderr),
                                               on_seeds=seeds.update,
                                               focused=args.project_from is not None and STDIN not in args.paths)
        if STDIN in args.paths:
            found = _chain(found, _stdin_results(args, stdin, resolver, errors, seeds))
        return iter(found)

    found = write_report(args, results, errors, stdout, stderr)
    return exit_code(args, bool(errors.items), found)


def exit_code(args: argparse.Namespace, failed: bool, found: bool) -> int:
    """`check`'s exit code (and `merge`'s): 2 when something could not be checked or read, even with
    --exit-zero; 1 for findings unless --exit-zero; else 0."""
    if failed:
        return EXIT_ERROR
    return EXIT_FINDINGS if found and not args.exit_zero else EXIT_CLEAN


def _check_patterns(patterns: Sequence[str]) -> None:
    """Refuse an unusable ast-grep pattern once, up front, instead of once per file."""
    if not patterns:
        return
    from .custom_calls import PatternError, validate_patterns
    from .extras import MissingExtra

    try:
        validate_patterns(patterns)
    except PatternError as error:
        raise UsageError(f"unpooled-calls: {error}") from None
    except MissingExtra as error:  # ast-grep-py is the [patterns] extra
        raise UsageError(str(error)) from None


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
    try:
        parser = build_parser()  # imports the subcommands' modules: the first thing a memory limit can stop
    except MemoryError:
        return _out_of_memory()
    except Exception as error:  # an import a memory limit broke half-way (or a bug): one line, as below
        return _internal_error(error)
    args = parser.parse_args(argv)  # exits 2 with a usage message on a bad command line
    handler: Handler = args.handler
    if not getattr(sys.unraisablehook, "drops_memory_errors", False):  # main() called again in one process
        sys.unraisablehook = _unraisable_hook(sys.unraisablehook)
    try:
        return handler(args, sys.stdin, sys.stdout, sys.stderr)
    except UsageError as error:
        from .escaping import shown

        # A config error names the config and may quote it: the repository's text, escaped as all output is.
        sys.stderr.write(f"flake8-http-pool: error: {shown(str(error))}\n")
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
    except MemoryError:
        return _out_of_memory()
    except Exception as error:  # a bug of ours: one line, not a traceback
        if type(error).__module__ == "sqlite3":  # the run's tables on disk (ondisk.py): the disk, not a bug
            sys.stderr.write(f"flake8-http-pool: error: the run's temporary files could not be written ({error}); "
                             "free space where TMPDIR points, or point it elsewhere\n")
            return EXIT_ERROR
        return _internal_error(error)


def _internal_error(error: Exception) -> int:
    """One line for an exception nothing else caught (a bug of ours), or for what a memory limit made of loading
    a C extension (dlopen's `failed to map segment`: ENOMEM in its words)."""
    # source_files.no_memory_to_load's test, without importing it: the import that failed may have been its.
    if isinstance(error, ImportError) and "failed to map segment" in str(error):
        return _out_of_memory()
    if isinstance(error, OSError) and error.errno == 12:  # ENOMEM: a package's folder the loader could not list
        return _out_of_memory()
    # CPython's words when a C function failed without setting an error: under a memory limit, an allocation.
    if isinstance(error, SystemError) and "without exception set" in str(error):
        return _out_of_memory()
    from .escaping import shown

    sys.stderr.write(f"flake8-http-pool: internal error: {type(error).__name__}: {shown(str(error))}\n")
    return EXIT_ERROR


def _unraisable_hook(previous: Callable[[Any], None]) -> Callable[[Any], None]:
    """A hook that drops what a destructor, a finalizer or a thread's start could not do because memory ran out
    (Python prints those as a traceback); the run says `out of memory` itself, or works on in one process when a
    pool's thread could not start. An allocation that failed can also surface as CPython's `SystemError: error
    return without exception set` (a SystemError is the interpreter's, never the user's to act on). Anything
    else goes to `previous`."""
    def hook(unraisable: Any) -> None:
        # Nothing here may allocate much: the hook itself runs out of memory where it is needed.
        try:
            if isinstance(unraisable.exc_value, (MemoryError, SystemError)):
                return
            previous(unraisable)
        except MemoryError:
            pass
    hook.drops_memory_errors = True  # type: ignore[attr-defined]
    return hook


_OUT_OF_MEMORY = b"flake8-http-pool: error: out of memory\n"


def _out_of_memory() -> int:
    """Not a bug: the machine, or a limit on this process (`ulimit -v`), left too little; one line says so.

    The line is bytes made at import and written to the descriptor: sys.stderr's text layer may need memory
    to encode and buffer it, and a line lost there left a run that stopped without a word."""
    try:
        sys.stderr.flush()
    except (MemoryError, OSError, ValueError):
        pass
    try:
        os.write(2, _OUT_OF_MEMORY)
    except (MemoryError, OSError):
        pass
    return EXIT_ERROR


def console_main() -> None:
    """`python -m flake8_http_pool`."""
    sys.exit(main())
