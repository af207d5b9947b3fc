"""A plain Python batch simulator, as one would write it in an afternoon: the yardstick.

It reads an SWF trace with the standard library, runs FCFS, EASY or conservative
backfilling on lists and a heap, kills jobs at their estimate, and prints the
average wait and response. It shares no code with batchd. ``bench/startup.py``
times it beside ``batchd replay`` as whole processes.

    python bench/plain_sim.py TRACE.swf.gz --nodes 100 --policy easy
"""

from __future__ import annotations

import argparse
import gzip
import heapq


def read(path: str, nodes: int) -> list[tuple[int, int, int, int, int]]:
    """(id, submit, width, estimate, runtime) of the jobs that fit, by submit."""
    opener = gzip.open if path.endswith(".gz") else open
    jobs = []
    with opener(path, "rt") as fh:
        for line in fh:
            f = line.split()
            if not f or f[0].startswith(";"):
                continue
            jid, submit, runtime = int(f[0]), int(f[1]), int(float(f[3]))
            width = int(f[7]) if int(f[7]) > 0 else int(f[4])
            estimate = int(float(f[8])) if float(f[8]) > 0 else runtime
            if width <= 0 or runtime < 0 or width > nodes:
                continue
            jobs.append((jid, submit, width, estimate, runtime))
    jobs.sort(key=lambda j: j[1])
    return jobs


def simulate(jobs: list[tuple[int, int, int, int, int]], nodes: int, policy: str) -> list[int]:
    """Start times by job index."""
    starts = [-1] * len(jobs)
    free = nodes
    running: list[tuple[int, int, int]] = []  # heap of (end, index, width)
    plan: dict[int, tuple[int, int]] = {}  # conservative: index -> (start, end)
    queue: list[int] = []
    nxt = 0
    now = 0

    def dur(i: int) -> int:
        return max(jobs[i][3], 1)

    def start(i: int) -> None:
        nonlocal free
        starts[i] = now
        free -= jobs[i][2]
        heapq.heappush(running, (now + min(jobs[i][4], jobs[i][3]), i, jobs[i][2]))

    def free_at(t: int, busy: list[tuple[int, int, int]]) -> int:
        return nodes - sum(w for s, e, w in busy if s <= t < e)

    def earliest(i: int, busy: list[tuple[int, int, int]]) -> int:
        times = sorted({now} | {e for _, e, _ in busy if e > now})
        for t in times:
            points = [t] + [s for s, _, _ in busy if t < s < t + dur(i)]
            if all(free_at(p, busy) >= jobs[i][2] for p in points):
                return t
        raise AssertionError("no start")

    while nxt < len(jobs) or running or queue:
        times = []
        if nxt < len(jobs):
            times.append(jobs[nxt][1])
        if running:
            times.append(running[0][0])
        now = min(times) if times else now
        while running and running[0][0] == now:
            _, i, w = heapq.heappop(running)
            free += w
        while nxt < len(jobs) and jobs[nxt][1] == now:
            queue.append(nxt)
            if policy == "cons":
                busy = [(now, now + dur(k), jobs[k][2]) for _, k, _ in running]
                busy += [(s, e, jobs[k][2]) for k, (s, e) in plan.items()]
                s = earliest(nxt, busy)
                plan[nxt] = (s, s + dur(nxt))
            nxt += 1
        if policy == "fcfs":
            while queue and jobs[queue[0]][2] <= free:
                start(queue.pop(0))
        elif policy == "easy":
            while queue and jobs[queue[0]][2] <= free:
                start(queue.pop(0))
            if queue:
                head = queue[0]
                ends = sorted(
                    (s + dur(i), jobs[i][2]) for _, i, _ in running if (s := starts[i]) >= 0
                )
                avail, shadow = free, now
                for t, w in ends:
                    if avail >= jobs[head][2] and t > shadow:
                        break
                    avail, shadow = avail + w, t
                extra = avail - jobs[head][2]
                for i in list(queue[1:]):
                    w = jobs[i][2]
                    if w > free:
                        continue
                    if now + dur(i) <= shadow:
                        pass
                    elif w <= extra:
                        extra -= w
                    else:
                        continue
                    queue.remove(i)
                    start(i)
        else:  # conservative: the plan made at submission; start what is due
            for i in [k for k in queue if plan[k][0] == now]:
                queue.remove(i)
                del plan[i]
                start(i)
    return starts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--policy", choices=["fcfs", "easy", "cons"], default="easy")
    args = ap.parse_args()
    jobs = read(args.trace, args.nodes)
    starts = simulate(jobs, args.nodes, args.policy)
    waits = [s - j[1] for s, j in zip(starts, jobs, strict=True)]
    print(f"jobs {len(jobs)}  awt {sum(waits) / max(len(waits), 1):.2f}")


if __name__ == "__main__":
    main()
