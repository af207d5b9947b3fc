"""EASY's rules written out naively (lists, recomputed sums, no incremental state): the
reference the what-if simulations are checked against."""

from __future__ import annotations

from collections.abc import Sequence

from batchd.model.times import NEVER


def dur(estimate: int) -> int:
    """What a job holds its nodes for: its estimate, at least one second."""
    return max(estimate, 1)


def naive_easy(
    now: int,
    capacity: int,
    ends: Sequence[int],
    rwidths: Sequence[int],
    widths: Sequence[int],
    estimates: Sequence[int],
    submits: Sequence[int],
) -> list[int]:
    """EASY at every event time: the jobs present in candidate order, EasyPolicy's rules."""
    n = len(widths)
    out = [NEVER] * n
    running = [(e, w) for e, w in zip(ends, rwidths, strict=True) if e > now]
    pending = [p for p in range(n) if widths[p] <= capacity]
    t = now
    while pending:
        running = [(e, w) for e, w in running if e > t]
        queue = [p for p in pending if submits[p] <= t]
        free = capacity - sum(w for _, w in running)
        k = 0
        while k < len(queue) and widths[queue[k]] <= free:
            p = queue[k]
            free -= widths[p]
            out[p] = t
            running.append((t + dur(estimates[p]), widths[p]))
            k += 1
        if k < len(queue) and free > 0:
            need = widths[queue[k]]

            def free_after(x: int, busy: list[tuple[int, int]] = running) -> int:
                return capacity - sum(w for e, w in busy if e > x)

            shadow = min(e for e, _ in running if free_after(e) >= need)
            extra = free_after(shadow) - need
            backfilled = []
            for p in queue[k + 1 :]:
                w, end = widths[p], t + dur(estimates[p])
                if w > free:
                    continue
                if end > shadow:
                    if w > extra:
                        continue
                    extra -= w
                free -= w
                out[p] = t
                backfilled.append((end, w))
            running += backfilled
        pending = [p for p in pending if out[p] == NEVER]
        later = [e for e, _ in running] + [submits[p] for p in pending if submits[p] > t]
        if not later:
            break
        t = min(later)
    return out
