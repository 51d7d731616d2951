"""A sweep of 64 runs from Python, to time against the same sweep through the CLI:

    hyperfine -w 1 -r 5 \\
      'python python/bench/sweep64.py' \\
      'target/release/retrysim sweep scenarios/capacity_planning.toml --set replications=4 --no-plots --quiet --force --out /tmp/sweep64'

capacity_planning.toml's grid has 16 cells; 4 replications each make 64 runs.
"""

import pathlib
import sys

import retrysim

ROOT = pathlib.Path(__file__).resolve().parents[2]

s = retrysim.sweep(ROOT / "scenarios" / "capacity_planning.toml", set={"replications": 4})
assert s.runs == 64, s.runs
if "-v" in sys.argv:
    print(s, file=sys.stderr)
