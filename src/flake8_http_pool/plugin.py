"""The flake8 entry point `HTP`: reuses flake8's tree and reports the engine's findings."""

from __future__ import annotations

import ast
from typing import Any, Iterator, List, Sequence, Tuple

from . import __version__
from .engine import check_lines
from .options import DEFAULT_OPTIONS, Options, split_list


class HttpPoolChecker:
    """flake8 plugin: connection-pool mistakes in HTTP client code (codes HTP1xx-HTP4xx)."""

    name = "flake8-http-pool"
    version = __version__
    options: Options = DEFAULT_OPTIONS

    def __init__(self, tree: ast.Module, lines: Sequence[str]) -> None:
        self.tree = tree
        self.lines = lines

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

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.options = Options(hot_decorators=split_list(getattr(options, "http_pool_hot_decorators", None)))

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        findings: List = check_lines(self.tree, self.lines, self.options)
        for finding in findings:
            yield finding.line, finding.col, finding.text(), type(self)
