"""retrysim: a deterministic discrete-event simulator of retry storms, for notebooks.

The same engine and numbers as the ``retrysim`` command, with results as pandas data
frames instead of files::

    import retrysim
    r = retrysim.run("scenarios/thundering_herd.toml", seed=7)
    r.summary          # one row a replication, the columns of summary.csv
    r.timeseries       # timeseries.csv
    s = retrysim.sweep("scenarios/amplification.toml")
    s.aggregate        # aggregate.csv

A scenario is a path (``str`` ending in ``.toml``, or ``pathlib.Path``), TOML text
(any other ``str``), a ``dict`` (written as TOML), or ``None`` (the embedded default
scenario). The data files a scenario given as text or as a dict names resolve
against the current directory; those of a file, against its folder.

Every simulation runs with the GIL released; Ctrl-C (a notebook's interrupt) stops
it and raises ``KeyboardInterrupt``. Errors are ``ScenarioError`` (a ``ValueError``)
for a scenario or argument that is not usable, ``FileNotFoundError`` / ``OSError``
for files, and ``RetrysimError`` for the rest; ``str(e)`` is the message the
command line prints after ``error:``.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import tempfile
import warnings
from typing import Any, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _native

__version__ = _native.__version__

__all__ = [
    "run",
    "sweep",
    "check",
    "explain",
    "search",
    "Result",
    "SweepResult",
    "CheckResult",
    "Explanation",
    "Lint",
    "SearchResult",
    "RetrysimError",
    "ScenarioError",
    "TruncatedWarning",
]

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any], None]
Sets = Union[Mapping[str, Any], Sequence[str], str, None]


class RetrysimError(Exception):
    """An error of retrysim. ``str(e)`` is the message ``retrysim`` prints after
    ``error:``; ``file`` and ``field`` say where, when it is about a scenario."""

    def __init__(self, message: str, file: Optional[str] = None, field: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field


class ScenarioError(RetrysimError, ValueError):
    """A scenario, an override or an argument that is not usable (the command line's
    exit code 2). ``field`` is the field's path (``fleets[0].layers[1].max_attempts``),
    the key of a ``set`` or of the sweep, or None."""


class TruncatedWarning(RuntimeWarning):
    """Runs stopped early at one of their ``[limits]``: their rows are marked
    ``truncated = true`` (the command line exits with code 2 then)."""


def _raise(e: "_native.NativeError", names: Mapping[str, str]) -> None:
    kind, message, file, field = e.args
    for temp, shown in names.items():
        message = message.replace(temp, shown)
        if file == temp:
            file = shown
    if kind == "bad_input":
        raise ScenarioError(message, file, field) from None
    if kind == "not_found":
        err = FileNotFoundError(message)
        err.filename = file
        raise err from None
    if kind == "io":
        err = OSError(message)
        err.filename = file
        raise err from None
    if kind == "interrupted":
        raise KeyboardInterrupt(message) from None
    raise RetrysimError(message, file, field) from None


def _toml_value(v: Any) -> str:
    """A Python value as a TOML value (for ``set``)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return _toml_value(v.item())
    raise TypeError(f"set: cannot write {type(v).__name__} {v!r} as a TOML value")


def _sets(set: Sets) -> List[str]:
    """``set`` as the command line's ``--set KEY=VALUE`` strings."""
    if set is None:
        return []
    if isinstance(set, str):
        return [set]
    if isinstance(set, Mapping):
        return [f"{k}={_toml_value(v)}" for k, v in set.items()]
    return [str(s) for s in set]


def _no_none(v: Any, at: str) -> None:
    """Refuses a None in a scenario dict (TOML has no null), naming its field."""
    if v is None:
        raise ScenarioError(
            f"scenario '<dict>': {at}: None has no TOML form (leave the key out for its default)",
            "<dict>",
            at,
        )
    if isinstance(v, Mapping):
        for k, x in v.items():
            _no_none(x, f"{at}.{k}" if at else str(k))
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _no_none(x, f"{at}[{i}]")


def _source(scenario: Scenario):
    """(kind, value, name) of a scenario as the native module takes it."""
    if scenario is None:
        return "default", "", None
    if isinstance(scenario, Mapping):
        _no_none(scenario, "")
        try:
            text = json.dumps(scenario)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"scenario '<dict>': {e}", "<dict>", None) from None
        return "text", _call(_native.json_to_toml, text), "<dict>"
    if isinstance(scenario, os.PathLike):
        return "path", os.fspath(scenario), None
    if isinstance(scenario, str):
        if "\n" not in scenario and scenario.strip().endswith(".toml"):
            return "path", scenario, None
        return "text", scenario, "<string>"
    raise TypeError(
        "scenario must be a path (str ending in .toml, or pathlib.Path), TOML text, "
        f"a dict or None (found {type(scenario).__name__})"
    )


def _seed(seed: Optional[int]) -> Optional[int]:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int (found {type(seed).__name__})")
    seed = int(seed)
    if seed < 0:
        raise ScenarioError(f"seed must be at least 0 (found {seed})", None, "seed")
    return seed


def _jobs(jobs: Optional[int]) -> Optional[int]:
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or int(jobs) < 1:
        raise ScenarioError(f"jobs must be a whole number of at least 1 (found {jobs!r})", None, "jobs")
    return int(jobs)


def _frame(columns) -> pd.DataFrame:
    """A data frame from the native module's typed columns."""
    data = {}
    for name, col in columns:
        if isinstance(col, list):
            col = pd.Series(col, dtype=object)
        data[name] = col
    return pd.DataFrame(data)


def _call(fn, *args, names: Optional[Mapping[str, str]] = None, **kwargs):
    try:
        return fn(*args, **kwargs)
    except _native.NativeError as e:
        _raise(e, names or {})


def _warn(truncation: Optional[str]) -> None:
    if truncation:
        warnings.warn(truncation, TruncatedWarning, stacklevel=3)


class Result:
    """One ``retrysim run`` in memory: each table of its results folder as a data frame
    (columns named and ordered as the CSV file has them; empty with those columns when
    the scenario has none of it)."""

    summary: pd.DataFrame
    """``summary.csv``: one row a replication."""
    aggregate: Optional[pd.DataFrame]
    """``aggregate.csv`` (mean and 95% interval of each metric), with replications; else None."""
    timeseries: Optional[pd.DataFrame]
    """``timeseries.csv`` (None with ``series=False``, as the next three)."""
    herd: Optional[pd.DataFrame]
    """``herd.csv``."""
    attempts_by_ordinal: Optional[pd.DataFrame]
    """``attempts_by_ordinal.csv``."""
    services: Optional[pd.DataFrame]
    """``services.csv`` (rows only for a service graph)."""
    traces: pd.DataFrame
    """``traces.csv`` (rows only when the scenario traces requests: ``trace=N``)."""
    manifest: dict
    """``manifest.toml`` as a dict."""
    truncation: Optional[str]
    """The message of the runs that stopped at a limit, or None."""

    def __init__(self, d: Mapping[str, Any]):
        self.summary = _frame(d["summary"])
        self.aggregate = None if d["aggregate"] is None else _frame(d["aggregate"])
        for t in ("timeseries", "herd", "attempts_by_ordinal", "services"):
            setattr(self, t, _frame(d[t]) if t in d else None)
        self.traces = _frame(d["traces"])
        self.manifest = json.loads(d["manifest"])
        self.truncation = d["truncation"]

    def __repr__(self) -> str:
        name = self.manifest.get("scenario", {}).get("name", "?")
        return f"<retrysim.Result '{name}': {len(self.summary)} run(s)>"


class SweepResult:
    """A ``retrysim sweep`` in memory: its ``summary.csv`` (one row a run, in plan
    order) and ``aggregate.csv`` (one row a grid cell); with ``series=True`` also its
    ``timeseries``, ``herd``, ``attempts_by_ordinal`` and ``services`` tables (else
    None: a run's series are dropped as it ends)."""

    summary: pd.DataFrame
    aggregate: pd.DataFrame
    timeseries: Optional[pd.DataFrame]
    herd: Optional[pd.DataFrame]
    attempts_by_ordinal: Optional[pd.DataFrame]
    services: Optional[pd.DataFrame]
    runs: int
    truncation: Optional[str]

    def __init__(self, d: Mapping[str, Any]):
        self.summary = _frame(d["summary"])
        self.aggregate = _frame(d["aggregate"])
        for t in ("timeseries", "herd", "attempts_by_ordinal", "services"):
            setattr(self, t, _frame(d[t]) if t in d else None)
        self.runs = d["runs"]
        self.truncation = d["truncation"]

    def __repr__(self) -> str:
        return f"<retrysim.SweepResult: {self.runs} runs, {len(self.aggregate)} cells>"


class Lint(NamedTuple):
    """A lint that fired: its id, the fleet, the layer (when about one) and why."""

    id: str
    fleet: str
    layer: Optional[str]
    message: str


class Explanation:
    """``retrysim explain``: the text it prints, the lints that fired, and those of
    ``deny`` among them (``denied``: the command exits 1 when any)."""

    def __init__(self, text: str, lints: List[Lint], denied: List[Lint]):
        self.text = text
        self.lints = lints
        self.denied = denied

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<retrysim.Explanation: {len(self.lints)} lint(s) fired>"


class CheckResult:
    """``retrysim check``: the table it prints (``scenario, cell, metric, bound, value,
    result``, then ``pass`` as a flag and ``mean`` as a number) and whether every row
    passes (``passed``; ``bool(result)`` too)."""

    def __init__(self, table: pd.DataFrame, passed: bool, truncation: Optional[str], wrote: List[str]):
        self.table = table
        self.passed = passed
        self.truncation = truncation
        self.baselines_written = wrote

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        failed = int((~self.table["pass"]).sum()) if len(self.table) else 0
        return f"<retrysim.CheckResult: {len(self.table) - failed} passed, {failed} failed>"


class SearchResult:
    """``retrysim search``: the answer (None when no value in the range holds), the
    value one step past it, every value tried (``probes``: value, pass) and their check
    rows."""

    def __init__(self, d: Mapping[str, Any]):
        conv = int if d["integer"] else float
        self.key = d["key"]
        self.answer = None if d["answer"] is None else conv(d["answer"])
        self.neighbour = None if d["neighbour"] is None else conv(d["neighbour"])
        self.probes = _frame(d["probes"])
        self.rows = _frame(d["rows"])
        self.runs = d["runs"]

    def __repr__(self) -> str:
        return f"<retrysim.SearchResult {self.key} = {self.answer}: {len(self.probes)} values tried>"


def run(
    scenario: Scenario = None,
    *,
    seed: Optional[int] = None,
    set: Sets = None,
    trace: Optional[int] = None,
    series: bool = True,
) -> Result:
    """Runs a scenario's base point (its replications, in parallel; any ``[sweep]``
    left out) as ``retrysim run`` does, in memory.

    ``seed`` is ``--seed``; ``set`` is ``--set`` (a dict ``{"dependency.servers": 8}``
    or ``"KEY=VALUE"`` strings); ``trace=N`` traces N requests of replication 0
    (``--trace N``) into ``Result.traces``. Runs stopped at a limit give a
    ``TruncatedWarning``. ``series=False`` drops each run's series as it ends
    (``timeseries``, ``herd``, ``attempts_by_ordinal`` and ``services`` are then None):
    for many replications whose summaries alone are wanted."""
    sets = _sets(set)
    if trace is not None:
        if isinstance(trace, bool) or not isinstance(trace, (int, np.integer)):
            raise TypeError(f"trace must be an int (found {type(trace).__name__})")
        sets.append(f"trace.sample={int(trace)}")
    kind, value, name = _source(scenario)
    d = _call(_native.run, kind, value, name, sets, _seed(seed), bool(series))
    _warn(d["truncation"])
    return Result(d)


def sweep(
    scenario: Scenario,
    *,
    seed: Optional[int] = None,
    set: Sets = None,
    jobs: Optional[int] = None,
    series: bool = False,
) -> SweepResult:
    """Runs every run of a scenario's ``[sweep]`` grid (cells × replications) in memory,
    in parallel on ``jobs`` threads (None: every core), as ``retrysim sweep`` does.
    With ``series=True`` every run's time series, herd, ordinal and service tables are
    kept and returned too (memory grows with runs × horizon)."""
    kind, value, name = _source(scenario)
    d = _call(_native.sweep, kind, value, name, _sets(set), _seed(seed), _jobs(jobs), bool(series))
    _warn(d["truncation"])
    return SweepResult(d)


def explain(scenario: Scenario, *, set: Sets = None, deny: Iterable[str] = ()) -> Explanation:
    """Explains and lints a scenario as ``retrysim explain`` does: the resolved model in
    words and the lints that fired. ``deny`` names lints that must not fire (``"all"``:
    every one); those that did are in ``Explanation.denied``."""
    if isinstance(deny, str):
        deny = [deny]
    kind, value, name = _source(scenario)
    text, lints, denied_ids = _call(_native.explain, kind, value, name, _sets(set), list(deny))
    lints = [Lint(*l) for l in lints]
    denied = [l for l in lints if l.id in set_of(denied_ids)]
    return Explanation(text, lints, denied)


def set_of(ids: Iterable[str]):
    """The ids as a set (``set`` is a keyword argument of this module's functions)."""
    return frozenset(ids)


class _Files:
    """Scenarios given as text or dicts written to temporary files in the current
    directory (so their data files resolve as ``run``'s do), removed on exit; each
    file's name is shown as ``<string>`` or ``<dict>``."""

    def __init__(self, scenarios):
        self.scenarios = scenarios
        self.paths: List[str] = []
        self.names: dict = {}
        self.temps: List[str] = []

    def __enter__(self):
        for s in self.scenarios:
            kind, value, name = _source(s)
            if kind == "path":
                self.paths.append(value)
                continue
            if kind == "default":
                raise TypeError("check and search need a scenario (a path, TOML text or a dict)")
            fd, path = tempfile.mkstemp(prefix=".retrysim-", suffix=".toml", dir=os.getcwd())
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(value)
            rel = os.path.basename(path)
            self.temps.append(path)
            self.paths.append(rel)
            self.names[rel] = name
        return self

    def __exit__(self, *exc):
        for p in self.temps:
            try:
                os.remove(p)
            except OSError:
                pass
        return False

    def shown(self, df: pd.DataFrame) -> pd.DataFrame:
        if self.names and "scenario" in df.columns and len(df):
            df["scenario"] = df["scenario"].map(lambda s: self.names.get(s, s)).astype(object)
        return df


def _tolerance(t: Union[float, str]) -> float:
    if isinstance(t, str):
        s = t.strip()
        try:
            return float(s[:-1]) / 100 if s.endswith("%") else float(s)
        except ValueError:
            raise ScenarioError(f"tolerance must be a number or a percentage like 5% (found {t!r})", None, "tolerance") from None
    return float(t)


def check(
    scenarios,
    *,
    seed: Optional[int] = None,
    set: Sets = None,
    baseline: Union[str, "os.PathLike[str]", None] = None,
    tolerance: Union[float, str] = 0.05,
    write_baseline: bool = False,
    jobs: Optional[int] = None,
) -> CheckResult:
    """Checks scenarios as ``retrysim check`` does: each one's ``[[expect]]`` rows over
    its grid and replications, then the drift from ``baseline`` (a summary CSV; with
    ``write_baseline=True`` it is written instead). ``scenarios`` is one scenario or a
    list. Every scenario is validated before anything runs."""
    if isinstance(scenarios, (str, os.PathLike, Mapping)):
        scenarios = [scenarios]
    with _Files(list(scenarios)) as files:
        table, passed, truncation, wrote = _call(
            _native.check,
            files.paths,
            _sets(set),
            _seed(seed),
            None if baseline is None else os.fspath(baseline),
            _tolerance(tolerance),
            bool(write_baseline),
            _jobs(jobs),
            names=files.names,
        )
        table = files.shown(_frame(table))
    _warn(truncation)
    return CheckResult(table, bool(passed), truncation, list(wrote))


def search(
    scenario: Scenario,
    key: str,
    range: str,
    *,
    seed: Optional[int] = None,
    set: Sets = None,
    tolerance: Optional[float] = None,
    largest: bool = False,
    jobs: Optional[int] = None,
) -> SearchResult:
    """Searches ``key`` over ``range`` (``"1..200"``, ``"0.5..2.0"``) for the smallest
    value (``largest=True``: the largest) at which every ``[[expect]]`` of the scenario
    holds, as ``retrysim search`` does; ``tolerance`` is the width to stop at for a
    float key."""
    with _Files([scenario]) as files:
        d = _call(
            _native.search,
            files.paths[0],
            str(key),
            str(range),
            _sets(set),
            _seed(seed),
            None if tolerance is None else float(tolerance),
            bool(largest),
            _jobs(jobs),
            names=files.names,
        )
        r = SearchResult(d)
        files.shown(r.rows)
    return r
