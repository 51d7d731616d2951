"""Every shipped scenario gives the package the numbers `retrysim run` writes: each
table compared field by field with the CSV files of the command line."""

import math
import subprocess

import numpy as np
import pandas as pd
import pytest

import retrysim

from conftest import ROOT, SCENARIOS

SHIPPED = sorted(SCENARIOS.glob("*.toml")) + sorted(SCENARIOS.glob("*/*.toml"))


def uncell(text):
    """A CSV field's text without the leading ' that keeps a spreadsheet from running it."""
    if text.startswith("'") and text[1:2] in ("=", "+", "-", "@", "\t", "\r"):
        return text[1:]
    return text


def same(value, text):
    """Whether a typed value is the CSV field `text`."""
    if text == "":
        return value is None or (isinstance(value, float) and math.isnan(value))
    if isinstance(value, (bool, np.bool_)):
        return text == ("true" if value else "false")
    if isinstance(value, (int, np.integer)):
        return text == str(int(value))
    if isinstance(value, (float, np.floating)):
        return float(text) == float(value)
    return uncell(text) == value


def compare(frame, csv_path, what):
    expected = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    assert list(frame.columns) == list(expected.columns), what
    assert len(frame) == len(expected), what
    for col in expected.columns:
        got = frame[col].tolist()
        for i, text in enumerate(expected[col].tolist()):
            assert same(got[i], text), f"{what}: row {i}, column {col}: {got[i]!r} != CSV {text!r}"


def runs_on_cli(cli, scenario, out):
    p = subprocess.run(
        [cli, "run", str(scenario), "--out", str(out), "--no-plots", "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return p


@pytest.mark.parametrize("scenario", SHIPPED, ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_every_shipped_scenario_gives_the_numbers_of_the_command_line(cli, scenario, tmp_path):
    out = tmp_path / "out"
    p = runs_on_cli(cli, scenario, out)
    if p.returncode != 0:
        # Not a runnable scenario (a library of presets): the package refuses it too.
        with pytest.raises(retrysim.RetrysimError) as e:
            retrysim.run(scenario)
        assert p.stderr.strip() == f"error: {e.value}"
        return
    r = retrysim.run(scenario)
    compare(r.summary, out / "summary.csv", "summary")
    compare(r.timeseries, out / "timeseries.csv", "timeseries")
    compare(r.herd, out / "herd.csv", "herd")
    compare(r.attempts_by_ordinal, out / "attempts_by_ordinal.csv", "attempts_by_ordinal")
    if (out / "services.csv").exists():
        compare(r.services, out / "services.csv", "services")
    else:
        assert len(r.services) == 0
    if (out / "aggregate.csv").exists():
        compare(r.aggregate, out / "aggregate.csv", "aggregate")
    else:
        assert r.aggregate is None
    if (out / "traces.csv").exists():
        compare(r.traces, out / "traces.csv", "traces")
    else:
        assert len(r.traces) == 0
