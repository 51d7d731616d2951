"""A sweep of 64 runs from Python, to time against the same sweep through the CLI
(capacity_planning.toml's grid has 16 cells; 4 replications each make 64 runs):

    hyperfine -w 1 -r 5 -p 'rm -rf /tmp/sweep64' \\
      'python python/bench/sweep64.py' \\
      'target/release/retrysim sweep scenarios/capacity_planning.toml --set replications=4 --no-plots --quiet --out /tmp/sweep64'

(the CLI's folder is removed before each run: a sweep resumes the runs it finds).
`python python/bench/sweep64.py -v` prints the sweep's own time, without the start of
the interpreter and the import of pandas.
"""

import pathlib
import sys
import time

import retrysim

ROOT = pathlib.Path(__file__).resolve().parents[2]

start = time.perf_counter()
s = retrysim.sweep(ROOT / "scenarios" / "capacity_planning.toml", set={"replications": 4})
took = time.perf_counter() - start
assert s.runs == 64, s.runs
if "-v" in sys.argv:
    print(f"{s}: {took:.3f} s in retrysim.sweep", file=sys.stderr)
