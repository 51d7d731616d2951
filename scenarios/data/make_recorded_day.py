#!/usr/bin/env python3
"""Writes the data of scenarios/recorded_day.toml (run once; its output is committed).

A day (2026-03-03, UTC) of an API's request rate per minute: a diurnal shape (trough
150/s at 04:00, peak 700/s at 16:00), +/-3% noise and a flash-sale spike of +450/s
from 19:30 to 19:45. Written twice, as a CSV table (day.csv) and as the JSON answer
of Prometheus' /api/v1/query_range for `sum(rate(http_requests_total{job="api"}[1m]))`
at step 60 (day.json); plus the dependency's latency as Prometheus classic buckets
(latency.csv) and the day's incident timeline (incidents.csv).

Deterministic, standard library only: python3 scenarios/data/make_recorded_day.py
"""

import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
START = 1772496000  # 2026-03-03T00:00:00Z


def rate(minute, rng):
    h = minute / 60.0
    base = 150 + 550 * ((1 - math.cos(2 * math.pi * (h - 4) / 24)) / 2) ** 1.5
    if 19 * 60 + 30 <= minute < 19 * 60 + 45:
        base += 450
    return round(base * (1 + rng.uniform(-0.03, 0.03)), 1)


def main():
    rng = random.Random(43)
    rows = [(START + 60 * m, rate(m, rng)) for m in range(1440)]
    with open(os.path.join(HERE, "day.csv"), "w", newline="\n") as f:
        f.write("time,rps\n")
        for t, v in rows:
            f.write(f"{t},{v}\n")
    answer = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"job": "api"},
                    "values": [[t, repr(v)] for t, v in rows],
                }
            ],
        },
    }
    with open(os.path.join(HERE, "day.json"), "w", newline="\n") as f:
        json.dump(answer, f, separators=(",", ":"))
        f.write("\n")
    # The dependency's latency over the day, http_request_duration_seconds_bucket
    # (cumulative; a median near 8 ms, a p99 near 45 ms, a few up to 250 ms).
    buckets = [
        ("0.0025", 41000),
        ("0.005", 182000),
        ("0.01", 611000),
        ("0.025", 902000),
        ("0.05", 991500),
        ("0.1", 998400),
        ("0.25", 999950),
        ("+Inf", 1000000),
    ]
    with open(os.path.join(HERE, "latency.csv"), "w", newline="\n") as f:
        f.write("le,count\n")
        for le, c in buckets:
            f.write(f"{le},{c}\n")
    # The incident of the day: the database down to 6 servers for 20 minutes at
    # 11:00, then an error burst as they come back.
    with open(os.path.join(HERE, "incidents.csv"), "w", newline="\n") as f:
        f.write("start,end,mode,servers,p\n")
        f.write("2026-03-03T11:00:00Z,2026-03-03T11:20:00Z,capacity,6,\n")
        f.write("2026-03-03T11:20:00Z,2026-03-03T11:25:00Z,error_rate,,0.2\n")


if __name__ == "__main__":
    main()
