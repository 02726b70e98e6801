"""The real flake8 over real code (the shared corpus, the standard library): it must finish without crashing."""

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


def _corpus_dir() -> Path:
    configured = os.environ.get("FLAKE8_HTTP_POOL_CORPUS")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "flake8-http-pool" / "corpus"


def _fetch_corpus() -> Path:
    """Download (or reuse the cached) corpus; skip when the script or the network is missing."""
    if not FETCH.is_file():
        pytest.skip(f"corpus script not found: {FETCH}")
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
        pytest.skip(f"could not fetch the corpus: {exc}")
    fetched = [p for p in dest.iterdir() if p.is_dir() and p.name != "_archives"]
    if result.returncode != 0:
        if not fetched:
            pytest.skip(f"could not fetch the corpus (no network?): {result.stderr.strip()[-500:]}")
        if "sha256 mismatch" in result.stderr:
            pytest.fail(f"corpus archives do not match packages.tsv:\n{result.stderr}")
        # Some packages failed to download (network hiccup): check the ones we have.
    return dest


def _run_flake8(target: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", str(target), "--exclude", "_archives"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)


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
    _assert_no_crash(_run_flake8(stdlib))
