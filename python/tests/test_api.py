"""The package's functions, their arguments and every error type."""

import pathlib
import threading
import time
import warnings

import numpy as np
import pandas as pd
import pytest

import retrysim
from retrysim import _native

from conftest import ROOT, SCENARIOS

HERD = SCENARIOS / "thundering_herd.toml"

SMALL = """
name = "small"
duration = "20s"

[dependency]
servers = 4
service_time = "20ms"

[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100 }
"""


def test_run_takes_a_path_a_string_path_text_a_dict_or_none():
    by_path = retrysim.run(HERD)
    by_str = retrysim.run(str(HERD))
    assert by_path.summary.equals(by_str.summary)
    text = retrysim.run(SMALL)
    assert text.manifest["scenario"]["name"] == "small"
    as_dict = retrysim.run(
        {
            "name": "small",
            "duration": "20s",
            "dependency": {"servers": 4, "service_time": "20ms"},
            "fleets": [{"name": "web", "arrival": {"kind": "poisson", "rate": 100}}],
        }
    )
    assert as_dict.summary.equals(text.summary)
    default = retrysim.run(None)
    assert len(default.summary) >= 1
    with pytest.raises(TypeError):
        retrysim.run(42)


def test_run_returns_every_table_with_the_columns_and_types_of_its_csv_file():
    r = retrysim.run(HERD)
    assert list(r.summary.columns[:4]) == ["run", "replication", "seed", "logical"]
    assert r.summary["logical"].dtype == np.int64
    assert r.summary["amplification"].dtype == np.float64
    assert r.summary["truncated"].dtype == bool
    assert list(r.timeseries.columns[:3]) == ["run", "replication", "t"]
    assert list(r.herd.columns) == ["run", "replication", "t", "inbound"]
    assert list(r.attempts_by_ordinal.columns) == ["run", "layer", "ordinal", "outcome", "count"]
    assert r.attempts_by_ordinal["outcome"].dtype == object
    # No service graph and no traces: empty frames with their columns.
    assert len(r.services) == 0 and "service" in r.services.columns
    assert len(r.traces) == 0 and "request" in r.traces.columns
    assert r.manifest["run"]["kind"] == "run"
    assert r.aggregate is not None and len(r.aggregate) == 1  # 3 replications
    assert "thundering_herd" in repr(r)


def test_a_run_without_series_returns_its_summary_alone():
    full = retrysim.run(HERD)
    slim = retrysim.run(HERD, series=False)
    assert slim.summary.equals(full.summary) and slim.aggregate.equals(full.aggregate)
    assert slim.timeseries is None and slim.herd is None and slim.services is None


def test_seed_set_and_trace_are_the_command_lines_options():
    a = retrysim.run(SMALL, seed=1)
    b = retrysim.run(SMALL, seed=2)
    assert a.summary["seed"][0] == 1 and b.summary["seed"][0] == 2
    assert not a.summary.equals(b.summary)
    s = retrysim.run(SMALL, set={"dependency.servers": 8, "duration": "10s"})
    assert s.manifest["scenario"]["dependency"]["servers"] == 8
    assert s.manifest["run"]["identity"] == "<string>"
    assert len(s.timeseries) == 10
    listed = retrysim.run(SMALL, set=["dependency.servers=8", 'duration="10s"'])
    assert listed.summary.equals(s.summary)
    t = retrysim.run(SMALL, trace=3)
    assert t.traces["request"].nunique() == 3
    assert t.traces["send"].dtype == np.float64
    with pytest.raises(TypeError):
        retrysim.run(SMALL, trace="3")
    with pytest.raises(TypeError):
        retrysim.run(SMALL, seed=1.5)


def test_a_bad_field_is_a_scenario_error_naming_the_file_and_the_field():
    with pytest.raises(retrysim.ScenarioError) as e:
        retrysim.run(SMALL, set={"dependency.servers": 0})
    assert isinstance(e.value, ValueError)
    assert e.value.file == "<string>"
    assert e.value.field == "dependency.servers"
    assert str(e.value).startswith("scenario '<string>': dependency.servers")
    with pytest.raises(retrysim.ScenarioError) as e:
        retrysim.run({"duration": "x"})
    assert e.value.file == "<dict>"
    with pytest.raises(retrysim.ScenarioError) as e:
        retrysim.run(SMALL + "\nnot toml [")
    assert "is not valid TOML" in str(e.value) and e.value.field is None
    with pytest.raises(retrysim.ScenarioError):
        retrysim.run(SMALL, seed=-1)
    with pytest.raises(retrysim.ScenarioError) as e:
        retrysim.run({"name": "x", "fleets": [{"name": None}]})
    assert e.value.file == "<dict>" and e.value.field == "fleets[0].name"


def test_the_message_is_what_the_command_line_prints(cli, tmp_path):
    import subprocess

    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.replace("servers = 4", "servers = 0"))
    p = subprocess.run([cli, "run", str(bad), "--no-plots", "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert p.returncode == 2
    with pytest.raises(retrysim.ScenarioError) as e:
        retrysim.run(bad)
    assert p.stderr.strip() == f"error: {e.value}"
    assert e.value.file == str(bad) and e.value.field == "dependency.servers"


def test_a_missing_file_is_file_not_found_and_a_folder_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        retrysim.run(tmp_path / "missing.toml")
    assert "missing.toml" in str(e.value)
    assert e.value.filename == str(tmp_path / "missing.toml")
    folder = tmp_path / "dir.toml"
    folder.mkdir()
    with pytest.raises(OSError) as e:
        retrysim.run(folder)
    assert not isinstance(e.value, retrysim.ScenarioError)


def test_other_errors_are_retrysim_errors():
    for kind in ("internal", "stopped"):
        with pytest.raises(retrysim.RetrysimError) as e:
            retrysim._raise(_native.NativeError(kind, "it broke", None, None), {})
        assert str(e.value) == "it broke" and not isinstance(e.value, ValueError)
    with pytest.raises(KeyboardInterrupt):
        retrysim._raise(_native.NativeError("interrupted", "stopped", None, None), {})
    with pytest.raises(OSError):
        retrysim._raise(_native.NativeError("io", "cannot write", "f", None), {})


def test_runs_stopped_at_a_limit_warn_and_are_marked_truncated():
    with pytest.warns(retrysim.TruncatedWarning, match="stopped early"):
        r = retrysim.run(SMALL, set={"limits.max_events": 1000})
    assert r.summary["truncated"].all()
    assert r.truncation is not None


def test_sweep_returns_the_summary_and_aggregate_of_its_folder(cli, tmp_path):
    import subprocess

    s = retrysim.sweep(SCENARIOS / "amplification.toml", jobs=2)
    out = tmp_path / "o"
    p = subprocess.run(
        [cli, "sweep", str(SCENARIOS / "amplification.toml"), "--out", str(out), "--no-plots", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    from test_same_as_cli import compare

    compare(s.summary, out / "summary.csv", "summary")
    compare(s.aggregate, out / "aggregate.csv", "aggregate")
    assert s.timeseries is None
    full = retrysim.sweep(SCENARIOS / "amplification.toml", series=True)
    assert full.summary.equals(s.summary)
    compare(full.timeseries, out / "timeseries.csv", "timeseries")
    compare(full.herd, out / "herd.csv", "herd")
    compare(full.attempts_by_ordinal, out / "attempts_by_ordinal.csv", "attempts_by_ordinal")
    assert len(full.services) == 0
    assert s.runs == len(s.summary)
    assert "param_fleets.*.layers.*.max_attempts" in s.summary.columns
    assert s.summary["param_fleets.*.layers.*.max_attempts"].dtype == np.int64
    with pytest.raises(retrysim.ScenarioError, match=r"has no \[sweep\] table"):
        retrysim.sweep(SMALL)
    with pytest.raises(retrysim.ScenarioError):
        retrysim.sweep(SCENARIOS / "amplification.toml", jobs=0)


def test_a_sweep_of_a_service_graph_returns_its_services_table(cli, tmp_path):
    import subprocess

    from test_same_as_cli import compare

    scenario = SCENARIOS / "cascade.toml"
    out = tmp_path / "o"
    sets = {"replications": 1, "duration": "20s"}
    args = sum((["--set", f"{k}={retrysim._toml_value(v)}"] for k, v in sets.items()), [])
    p = subprocess.run([cli, "sweep", str(scenario), "--out", str(out), "--no-plots", "--quiet", *args], capture_output=True, text=True)
    if p.returncode != 0 and "no [sweep] table" in p.stderr:
        pytest.skip("cascade.toml has no [sweep]")
    assert p.returncode == 0, p.stderr
    s = retrysim.sweep(scenario, set=sets, series=True)
    compare(s.summary, out / "summary.csv", "summary")
    compare(s.services, out / "services.csv", "services")
    compare(s.timeseries, out / "timeseries.csv", "timeseries")


def test_sweep_gives_the_same_rows_whatever_the_threads():
    a = retrysim.sweep(SCENARIOS / "capacity_planning.toml", jobs=1, set={"replications": 2})
    b = retrysim.sweep(SCENARIOS / "capacity_planning.toml", jobs=2, set={"replications": 2})
    assert a.summary.equals(b.summary) and a.aggregate.equals(b.aggregate)


def test_check_returns_the_table_and_the_overall_result(tmp_path):
    c = retrysim.check(HERD)
    assert c.passed and bool(c)
    assert list(c.table.columns) == ["scenario", "cell", "metric", "bound", "value", "result", "pass", "mean"]
    assert c.table["pass"].dtype == bool and c.table["mean"].dtype == np.float64
    failing = HERD.read_text() + '\n[[expect]]\nmetric = "amplification"\nmax = 0.5\n'
    f = retrysim.check(failing)
    assert not f.passed and not f.table["pass"].all()
    assert (f.table["scenario"] == "<string>").all()
    assert "FAIL" in f.table["result"].tolist()
    base = tmp_path / "base.csv"
    w = retrysim.check(HERD, baseline=base, write_baseline=True)
    assert base.exists() and w.baselines_written == [str(base)]
    again = retrysim.check(HERD, baseline=base, tolerance="1%")
    assert again.passed
    with pytest.raises(retrysim.ScenarioError, match="does not exist"):
        retrysim.check(HERD, baseline=tmp_path / "none.csv")
    with pytest.raises(retrysim.ScenarioError, match="tolerance"):
        retrysim.check(HERD, tolerance="lots")


def test_check_of_text_leaves_no_file_behind(in_tmp):
    retrysim.check(SMALL)
    assert list(in_tmp.iterdir()) == []
    with pytest.raises(retrysim.ScenarioError) as e:
        retrysim.check(SMALL.replace("servers = 4", "servers = 0"))
    assert e.value.file == "<string>" and "<string>" in str(e.value)
    assert list(in_tmp.iterdir()) == []


def test_explain_returns_its_text_and_the_lints_that_fired():
    e = retrysim.explain(SCENARIOS / "amplification.toml")
    assert "fleet 'three_layers'" in e.text and str(e) == e.text
    ids = {l.id for l in e.lints}
    assert "multi-layer-retries-without-budget" in ids
    assert e.denied == []
    d = retrysim.explain(SCENARIOS / "amplification.toml", deny="all")
    assert d.denied == d.lints
    with pytest.raises(retrysim.ScenarioError, match="unknown lint"):
        retrysim.explain(SMALL, deny=["no-such-lint"])


NEEDS_SERVERS = SMALL.replace("rate = 100", "rate = 400") + """
[[expect]]
metric = "latency_p99_ms"
max = 100
"""


def test_search_finds_the_smallest_value_that_holds():
    s = retrysim.search(NEEDS_SERVERS, "dependency.servers", "1..20")
    assert isinstance(s.answer, int)
    assert s.probes["pass"].dtype == bool
    held = s.probes[s.probes["pass"]]["value"]
    assert s.answer == held.min()
    assert s.neighbour == s.answer - 1
    assert not s.probes[s.probes["value"] == s.neighbour]["pass"].any()
    assert s.runs >= len(s.probes)
    assert (s.rows["scenario"] == "<string>").all()
    with pytest.raises(retrysim.ScenarioError):
        retrysim.search(NEEDS_SERVERS, "dependency.servers", "20..1")


def test_a_run_holds_the_gil_for_none_of_its_simulation():
    long = {"duration": "4000s", "replications": 1}
    counted = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            counted[0] += 1

    # How far the counter gets alone in a given time.
    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.3)
    done.set()
    t.join()
    alone = counted[0] / 0.3
    counted[0] = 0
    done.clear()
    t = threading.Thread(target=count)
    t.start()
    start = time.perf_counter()
    retrysim.run(None, set=long)
    took = time.perf_counter() - start
    done.set()
    t.join()
    assert took > 0.2, "the run is too short to tell"
    # Held for the run, the GIL would leave the counter where it was.
    assert counted[0] > 0.2 * alone * took, (counted[0], alone, took)


def test_ctrl_c_stops_a_sweep_and_a_run():
    import _thread

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        retrysim.sweep(SCENARIOS / "amplification.toml", set={"duration": "3000s", "replications": 20}, jobs=1)
    assert time.perf_counter() - start < 5
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        retrysim.run(None, set={"duration": "20000s", "replications": 1})
    assert time.perf_counter() - start < 1.5
    # The runs under way stopped too (within a few hundred events): the process uses
    # no CPU now, where the 20000 s run alone would take seconds more of it.
    time.sleep(0.1)
    cpu = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - cpu < 0.2, "a run goes on after Ctrl-C"
