#!/usr/bin/env bash
# CI: deploy/slurm-array.sbatch on a real single-node Slurm cluster (Debian's Slurm
# 22.05 and munge): the shards as an array job, the merge as a job that depends on it,
# and the merged folder byte for byte against an unsharded `retrysim sweep`.
#
# Everything lives in a temporary folder (the munge key, slurm.conf, the daemons'
# state, logs and the results); munged, slurmctld and slurmd run in the foreground of
# background jobs and are stopped by their PIDs on exit, whatever happens. Each wait is
# bounded. Runs as root (the daemons' user here); installs the packages when missing.
#
#   sudo env RETRYSIM=target/release/retrysim bash .ci/slurm.sh   # the binary's default
set -euo pipefail
cd "$(dirname "$0")/.."

# A shipped scenario with a header (question and answer) and a small grid: 24 runs,
# about 0.2 s of CPU; 3 shards, so that the 2-CPU node runs tasks side by side and one
# waits for a free CPU.
SCENARIO=scenarios/independent_vs_correlated.toml
SHARDS=3
# Seconds each wait may take: the daemons' start, and the jobs.
START_TIMEOUT=60
JOBS_TIMEOUT=300

bin=${RETRYSIM:-$PWD/target/release/retrysim}
bin=$(realpath "$bin")
fail() { echo "error: slurm: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "no retrysim binary at $bin (cargo build --release, or set RETRYSIM)"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
    || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurmctld slurmd slurm-client munge >/dev/null
fi
[ "$(id -u)" -eq 0 ] || fail "the daemons run as root here (SlurmUser=root); run this as root"

work=$(mktemp -d /tmp/retrysim-slurm.XXXXXX)
chmod 755 "$work"
pids=()
stop() {
    local status=$?
    # The daemons, newest first, by the PIDs this script started: TERM, then KILL
    # after 10 s.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill -TERM "${pids[i]}" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "slurm: pid $pid did not stop on TERM; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    if [ "$status" -ne 0 ]; then
        for log in "$work"/*.log "$work"/logs/*; do
            [ -f "$log" ] || continue
            echo "---- $log (last 30 lines)" >&2
            tail -n 30 "$log" >&2
        done
    fi
    rm -rf "$work"
    exit "$status"
}
trap stop EXIT
trap 'exit 130' INT TERM

# munge: a fresh key; the socket's folder must be searchable by all, the key's not.
mkdir -m 700 "$work/munge-key" "$work/munge-lib"
mkdir -m 755 "$work/munge-run"
mungekey --create --keyfile="$work/munge-key/munge.key"
socket="$work/munge-run/munge.socket.2"
munged --foreground --key-file="$work/munge-key/munge.key" --socket="$socket" \
    --pid-file="$work/munge-run/munged.pid" --log-file="$work/munge-lib/munged.log" \
    --seed-file="$work/munge-lib/munged.seed" >"$work/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 "$START_TIMEOUT"); do
    [ -S "$socket" ] && break
    kill -0 "${pids[0]}" 2>/dev/null || fail "munged exited at start"
    sleep 1
done
[ -S "$socket" ] || fail "munged did not open its socket within $START_TIMEOUT s"

# One node, this host, 2 CPUs; ports off the defaults, so that a Slurm already
# running on the machine is left alone.
host=$(hostname -s)
mkdir -p "$work/state" "$work/spool" "$work/logs" "$work/results"
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=retrysimci
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=2 RealMemory=512 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=10 State=UP
EOF
slurmctld -D -i >"$work/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D >"$work/slurmd.log" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 1 "$START_TIMEOUT"); do
    for pid in "${pids[@]}"; do
        kill -0 "$pid" 2>/dev/null || fail "a daemon exited at start (pid $pid)"
    done
    state=$(sinfo -h -n "$host" -o '%T' 2>/dev/null || true)
    [ "$state" = "idle" ] && break
    sleep 1
done
[ "$state" = "idle" ] || fail "node $host is not idle after $START_TIMEOUT s (state: '${state:-no answer}')"
echo "slurm: node $host idle"

# The README's two commands, with this node's resources: the script asks for 4 CPUs
# and 4 GB a task, more than the node has.
fit=(--cpus-per-task=1 --mem=64M --time=5)
out="$work/results"
export RETRYSIM="$bin"
jid=$(sbatch --parsable "${fit[@]}" --array=0-$((SHARDS - 1)) --output="$work/logs/run-%A_%a.log" \
    deploy/slurm-array.sbatch run "$SCENARIO" "$out" "$SHARDS")
mid=$(sbatch --parsable "${fit[@]}" --dependency=afterok:"$jid" --output="$work/logs/merge-%j.log" \
    deploy/slurm-array.sbatch merge "$SCENARIO" "$out" "$SHARDS")
echo "slurm: array job $jid ($SHARDS shards of $SCENARIO), merge job $mid after it"

# Wait for the merge job to leave the queue; a job that cannot run (a failed
# dependency) stays pending with a reason that says so.
waited=0
while [ -n "$(squeue -h -j "$jid,$mid" -o '%i' 2>/dev/null)" ]; do
    if squeue -h -j "$mid" -o '%r' 2>/dev/null | grep -q DependencyNeverSatisfied; then
        fail "the merge job will never run: a shard failed"
    fi
    [ "$waited" -lt "$JOBS_TIMEOUT" ] || fail "jobs still queued after $JOBS_TIMEOUT s: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
    sleep 1
    waited=$((waited + 1))
done
for job in "$jid" "$mid"; do
    # Finished jobs stay known to slurmctld for MinJobAge (300 s).
    states=$(scontrol -o show job "$job" | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')
    [ "$states" = "JobState=COMPLETED " ] || fail "job $job ended $states"
done
echo "slurm: jobs done in about $waited s"

# The merge's output (tables, manifest, charts, report) against an unsharded sweep of
# the same file, which draws its charts too.
"$bin" sweep "$SCENARIO" -q --out "$work/unsharded"
if ! diff -r "$out/merged" "$work/unsharded"; then
    fail "the merged folder differs from an unsharded sweep (above)"
fi
echo "slurm: merged folder of $SHARDS shards is byte-identical to the unsharded sweep ($(find "$out/merged" -type f | wc -l) files)"
