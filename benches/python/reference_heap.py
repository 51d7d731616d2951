#!/usr/bin/env python3
"""A plain-Python heap simulator of scenarios/reference.toml, the yardstick of the
performance claims in the README ("retrysim is N times faster than a plain-Python heap
simulation of the same model").

The model, as retrysim implements it: one poisson fleet at 900 logical requests/s for
300 s (then up to 60 s of drain); a dependency of 10 servers with exponential service
times of mean 10 ms and a FIFO queue of 100 (an attempt arriving at a full queue is
rejected at once); one retry layer of 3 attempts, each with a 100 ms timeout that does
not cancel the work (orphans are still served), exponential backoff base 10 ms, cap
1 s, full jitter, retrying rejected, error and timeout; an outage from 60 s to 90 s
during which every attempt that starts service fails after 1 ms.

Usage: python3 benches/python/reference_heap.py [seed]
Prints the run's counts; time it with `time` or hyperfine.
"""
import heapq
import random
import sys
from collections import deque

RATE = 900.0
SERVERS = 10
MEAN_SERVICE = 0.010
QUEUE_LIMIT = 100
MAX_ATTEMPTS = 3
TIMEOUT = 0.100
BASE, CAP = 0.010, 1.0
OUTAGE = (60.0, 90.0)
FAIL_AFTER = 0.001
DURATION, DRAIN = 300.0, 60.0

ARRIVAL, SERVICE_DONE, TIMEOUT_EV, RETRY = range(4)


def main(seed):
    rng = random.Random(seed)
    events = []
    seq = 0

    def push(t, kind, a=0, b=0):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, a, b))
        seq += 1

    # request state: [attempts, current attempt id, done]
    requests = []
    # attempt state: [request, live]
    attempts = []
    queue = deque()
    busy = 0
    stats = dict(logical=0, succeeded=0, failed=0, attempts=0, rejected=0, errors=0, timeouts=0)

    def in_outage(t):
        return OUTAGE[0] <= t < OUTAGE[1]

    def start_service(t, att):
        nonlocal busy
        busy += 1
        if in_outage(t):
            push(t + FAIL_AFTER, SERVICE_DONE, att, 0)
        else:
            push(t + rng.expovariate(1.0 / MEAN_SERVICE), SERVICE_DONE, att, 1)

    def send_attempt(t, req):
        r = requests[req]
        r[0] += 1
        att = len(attempts)
        attempts.append([req, True])
        r[1] = att
        stats["attempts"] += 1
        push(t + TIMEOUT, TIMEOUT_EV, att)
        if busy < SERVERS:
            start_service(t, att)
        elif len(queue) < QUEUE_LIMIT:
            queue.append(att)
        else:
            stats["rejected"] += 1
            attempt_failed(t, att)

    def attempt_failed(t, att):
        req, live = attempts[att]
        if not live:
            return
        attempts[att][1] = False
        r = requests[req]
        if r[0] >= MAX_ATTEMPTS:
            r[2] = True
            stats["failed"] += 1
            return
        ceiling = min(CAP, BASE * 2 ** (r[0] - 1))
        push(t + rng.uniform(0, ceiling), RETRY, req)

    push(rng.expovariate(RATE), ARRIVAL)
    while events:
        t, _, kind, a, b = heapq.heappop(events)
        if t > DURATION + DRAIN:
            break
        if kind == ARRIVAL:
            req = len(requests)
            requests.append([0, -1, False])
            stats["logical"] += 1
            send_attempt(t, req)
            nxt = t + rng.expovariate(RATE)
            if nxt < DURATION:
                push(nxt, ARRIVAL)
        elif kind == SERVICE_DONE:
            busy -= 1
            req, live = attempts[a]
            if b == 0:
                stats["errors"] += 1
                attempt_failed(t, a)
            elif live:
                attempts[a][1] = False
                requests[req][2] = True
                stats["succeeded"] += 1
            while queue and busy < SERVERS:
                start_service(t, queue.popleft())
        elif kind == TIMEOUT_EV:
            if attempts[a][1]:
                stats["timeouts"] += 1
                attempt_failed(t, a)
        elif kind == RETRY:
            send_attempt(t, a)
    print(" ".join(f"{k}={v}" for k, v in stats.items()),
          f"amplification={stats['attempts'] / stats['logical']:.4f}",
          f"success_fraction={stats['succeeded'] / stats['logical']:.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
