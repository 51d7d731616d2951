"""Shared fixtures of the package's tests: the repository's folders and the CLI."""

import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def cli_path():
    """The retrysim binary: $RETRYSIM, else target/release/retrysim, else on PATH."""
    env = os.environ.get("RETRYSIM")
    if env:
        return env
    built = ROOT / "target" / "release" / "retrysim"
    if built.exists():
        return str(built)
    return shutil.which("retrysim")


@pytest.fixture(scope="session")
def cli():
    path = cli_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("the retrysim binary is missing: set RETRYSIM or build target/release/retrysim")
        pytest.skip("the retrysim binary is missing (set RETRYSIM)")
    return path


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Runs the test in a fresh folder (the current directory)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
