"""Runs the installed `flake8-http-pool` console script in a subprocess, as users and pre-commit run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple, Union


def command() -> list:
    """The console script next to this interpreter, else `python -m flake8_http_pool`."""
    script = Path(sys.executable).with_name("flake8-http-pool")
    if script.exists():
        return [str(script)]
    found = shutil.which("flake8-http-pool")
    return [found] if found else [sys.executable, "-m", "flake8_http_pool"]


def run_cli(
    args: Sequence[Union[str, Path]],
    cwd: Optional[Path] = None,
    stdin: Optional[str] = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """Run the command; stdout and stderr as text. HOME points nowhere useful so no user config leaks in."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [*command(), *map(str, args)],
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def assert_no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout


def processes() -> Iterator[Tuple[str, List[str]]]:
    """Every process of the machine as (pid, the fields of /proc/<pid>/stat after its name: state, parent,
    process group, ...); one that ends while it is read is left out."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                yield entry, handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
