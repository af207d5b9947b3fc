"""A long profile's steps held in blocks that a search and a change pass over whole.

In a deep queue of long jobs a window runs through most of the profile: on the
deepest plans of RICC-2010-2 (10,000 waiting jobs, 2,600 steps) each search walked,
and each reservation changed, some 2,300 steps. Here the steps are held in blocks of
at most ``block`` steps, each block with the fewest and the most free nodes of its
steps and a number of free nodes still to be added to all of them. A search passes
over a block with no room for the job, or, inside the window, one with room at every
step; a change adds to whole blocks at once; a new step moves only the steps of its
block. Searches and changes give the starts and the steps ``kernels.profile`` gives
one step at a time (``blocked_plan`` and ``blocked_compression`` use them).

The state is a few arrays: ``bt``/``bf`` (block, slot) the steps' times and free
nodes less the block's ``lag``; ``count`` the steps of each block; ``least``/``most``
their free nodes with the lag; ``order`` the blocks in time order; ``sizes`` the
number of blocks in order and of blocks made.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER

BLOCK = 64  # steps a block holds at most
# From this many steps plans and compressions are made on blocks (kernels.blocked_plan,
# blocked_compression): below it, one step at a time is as fast or faster.
BLOCKED_FROM = 256

_IN_ORDER = 0  # sizes[_IN_ORDER]: blocks in time order
_MADE = 1  # sizes[_MADE]: blocks made (a block emptied is dropped from the order only)


@njit(cache=True, nogil=True)
def cut(
    t: np.ndarray, f: np.ndarray, n: int, new_steps: int, block: int
) -> tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]:
    """The ``n`` steps in half-full blocks of ``block`` (>= 2) steps, with room for
    ``new_steps`` more: (bt, bf, count, lag, least, most, order, sizes)."""
    fill = block // 2
    made = n // fill + 1 + (2 * new_steps) // block + 4
    bt = np.empty((made, block), dtype=np.int64)
    bf = np.empty((made, block), dtype=np.int64)
    count = np.zeros(made, dtype=np.int64)
    lag = np.zeros(made, dtype=np.int64)
    least = np.zeros(made, dtype=np.int64)
    most = np.zeros(made, dtype=np.int64)
    order = np.zeros(made, dtype=np.int64)
    sizes = np.zeros(2, dtype=np.int64)
    blocks = 0
    for lo in range(0, n, fill):
        hi = min(n, lo + fill)
        bt[blocks, : hi - lo] = t[lo:hi]
        bf[blocks, : hi - lo] = f[lo:hi]
        count[blocks] = hi - lo
        order[blocks] = blocks
        bounds(bf, count, lag, least, most, blocks)
        blocks += 1
    sizes[_IN_ORDER] = blocks
    sizes[_MADE] = blocks
    return bt, bf, count, lag, least, most, order, sizes


@njit(cache=True, nogil=True)
def join(
    t: np.ndarray,
    f: np.ndarray,
    bt: np.ndarray,
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
) -> int:
    """The blocks' steps written back to ``t``/``f``; returns their count."""
    n = 0
    for q in range(sizes[_IN_ORDER]):
        b = order[q]
        for x in range(count[b]):
            t[n] = bt[b, x]
            f[n] = bf[b, x] + lag[b]
            n += 1
    return n


@njit(cache=True, nogil=True)
def bounds(
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    least: np.ndarray,
    most: np.ndarray,
    b: int,
) -> None:
    low = bf[b, 0]
    high = low
    for x in range(1, count[b]):
        v = bf[b, x]
        if v < low:
            low = v
        if v > high:
            high = v
    least[b] = low + lag[b]
    most[b] = high + lag[b]


@njit(cache=True, nogil=True)
def locate(
    bt: np.ndarray, count: np.ndarray, order: np.ndarray, blocks: int, time: int
) -> tuple[int, int]:
    """(place in the order, slot) of the step that holds ``time`` (the first if before)."""
    lo = 0
    hi = blocks
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if bt[order[mid], 0] <= time:
            lo = mid
        else:
            hi = mid
    b = order[lo]
    low = 0
    high = count[b]
    while high - low > 1:
        mid = (low + high) >> 1
        if bt[b, mid] <= time:
            low = mid
        else:
            high = mid
    return lo, low


@njit(cache=True, nogil=True)
def window(
    bt: np.ndarray,
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    least: np.ndarray,
    most: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    width: int,
    dur: int,
    floor: int,
    limit: int = NEVER,
) -> tuple[int, int]:
    """(start, room): ``kernels.profile.window``'s start, and the fewest free nodes of
    the steps its window covers; (NEVER, 0) if there is none before ``limit``."""
    blocks = sizes[_IN_ORDER]
    k, i = locate(bt, count, order, blocks, floor)
    while True:
        while True:  # the first step from (k, i) with room
            b = order[k]
            if i == 0 and most[b] < width:
                k += 1
                if k == blocks or bt[order[k], 0] >= limit:
                    return NEVER, 0
                continue
            c = count[b]
            z = lag[b]
            while i < c and bf[b, i] + z < width:
                i += 1
            if i < c:
                break
            k += 1
            i = 0
            if k == blocks:
                return NEVER, 0
        first = bt[b, i]
        start = first if first > floor else floor
        if start >= limit:
            return NEVER, 0
        end = start + dur
        room = bf[b, i] + z
        kj = k
        j = i + 1
        while True:  # the window's steps after the first, until one is short of room
            if kj == blocks:
                return start, room  # it runs into the last step, which lasts for ever
            bj = order[kj]
            cj = count[bj]
            if j >= cj:
                kj += 1
                j = 0
                continue
            if j == 0 and least[bj] >= width and bt[bj, cj - 1] < end:
                if least[bj] < room:
                    room = least[bj]
                kj += 1
                continue
            if bt[bj, j] >= end:
                return start, room
            v = bf[bj, j] + lag[bj]
            if v < width:
                break
            if v < room:
                room = v
            j += 1
        k = kj  # no start before the end of the first step short of room
        i = j


@njit(cache=True, nogil=True)
def value(bf: np.ndarray, lag: np.ndarray, order: np.ndarray, k: int, i: int) -> int:
    b = order[k]
    value: int = bf[b, i] + lag[b]
    return value


@njit(cache=True, nogil=True)
def before(count: np.ndarray, order: np.ndarray, k: int, i: int) -> tuple[int, int]:
    """The step before (k, i), which is not the first step."""
    if i > 0:
        return k, i - 1
    return k - 1, count[order[k - 1]] - 1


@njit(cache=True, nogil=True)
def fewest(
    bt: np.ndarray,
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    a: int,
    b: int,
) -> int:
    """The fewest free nodes over [a, b) (a < b)."""
    blocks = sizes[_IN_ORDER]
    k, i = locate(bt, count, order, blocks, a)
    low = value(bf, lag, order, k, i)
    while True:
        i += 1
        if i == count[order[k]]:
            k += 1
            i = 0
            if k == blocks:
                return low
        if bt[order[k], i] >= b:
            return low
        v = value(bf, lag, order, k, i)
        if v < low:
            low = v


@njit(cache=True, nogil=True)
def take(
    bt: np.ndarray,
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    least: np.ndarray,
    most: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    start: int,
    end: int,
    width: int,
) -> None:
    """``kernels.profile.take``: ``width`` nodes over [start, end), which fit there;
    steps split and merge as there (a step is known by its time, unique).

    Each block the reservation changes in part is changed in one pass (its new steps,
    the steps that lose nodes, the steps that merge), and its bounds made once; where a
    block must split or would empty, the changes are made one at a time.
    """
    blocks = sizes[_IN_ORDER]
    size = bt.shape[1]
    k, i = locate(bt, count, order, blocks, start)
    ke, je = locate(bt, count, order, blocks, end)
    b = order[k]
    be = order[ke]
    held = value(bf, lag, order, k, i)  # the free nodes of the steps holding start
    right = value(bf, lag, order, ke, je)  # and end
    split_left = bt[b, i] < start
    merge_left = False
    if not split_left and (k > 0 or i > 0):
        pk, pi = before(count, order, k, i)
        merge_left = value(bf, lag, order, pk, pi) == held - width
    split_right = bt[be, je] != end  # the step holding end begins before it
    merge_right = False
    if not split_right:
        pk, pi = before(count, order, ke, je)
        merge_right = right == value(bf, lag, order, pk, pi) - width
    c = count[b]
    ce = count[be]
    grow_left = int(split_left) - int(merge_left)
    grow_right = int(split_right) - int(merge_right)
    if k == ke:
        grow_left += grow_right
        grow_right = 0
    if not (0 < c + grow_left <= size and 0 < ce + grow_right <= size):
        if split_right:
            insert(bt, bf, count, lag, least, most, order, sizes, end, right)
        if split_left:
            insert(bt, bf, count, lag, least, most, order, sizes, start, held)
        add(bt, bf, count, lag, least, most, order, sizes, start, end, -width)
        if merge_right:
            delete(bt, bf, count, lag, least, most, order, sizes, end)
        if merge_left:
            delete(bt, bf, count, lag, least, most, order, sizes, start)
        return
    # The steps that begin in [start, end) lose width; of the step holding end, its
    # part from end on keeps its nodes (free: its value before, less the lag).
    kept = bf[be, je]
    first = i + 1 if split_left else i
    if k == ke:
        last = je if split_right else je - 1
        for x in range(first, last + 1):
            bf[b, x] -= width
    else:
        for x in range(first, c):
            bf[b, x] -= width
        for q in range(k + 1, ke):  # the blocks between, whole
            m = order[q]
            lag[m] -= width
            least[m] -= width
            most[m] -= width
        for x in range(0, je + 1 if split_right else je):
            bf[be, x] -= width
    # Steps merge first (a full block may gain one after losing one), the one at end
    # before the one at start; then the new steps, the one at end first.
    if merge_right:
        _close(bt, bf, count, be, je)
    if merge_left:
        _close(bt, bf, count, b, i)
        if be == b:
            je -= 1
    if split_right:
        _open(bt, bf, count, be, je + 1, end, kept)
    if split_left:
        _open(bt, bf, count, b, i + 1, start, bf[b, i] - width)
    bounds(bf, count, lag, least, most, b)
    if be != b:
        bounds(bf, count, lag, least, most, be)


@njit(cache=True, nogil=True)
def _open(
    bt: np.ndarray, bf: np.ndarray, count: np.ndarray, b: int, i: int, time: int, free: int
) -> None:
    """A step (time, free less the lag) as slot ``i`` of block ``b``, which has room."""
    c = count[b]
    for x in range(c, i, -1):
        bt[b, x] = bt[b, x - 1]
        bf[b, x] = bf[b, x - 1]
    bt[b, i] = time
    bf[b, i] = free
    count[b] = c + 1


@njit(cache=True, nogil=True)
def _close(bt: np.ndarray, bf: np.ndarray, count: np.ndarray, b: int, i: int) -> None:
    """Slot ``i`` of block ``b`` dropped; the block keeps a step."""
    c = count[b] - 1
    for x in range(i, c):
        bt[b, x] = bt[b, x + 1]
        bf[b, x] = bf[b, x + 1]
    count[b] = c


@njit(cache=True, nogil=True)
def insert(
    bt: np.ndarray,
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    least: np.ndarray,
    most: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    time: int,
    free: int,
) -> None:
    """A step at ``time`` inside a step that has ``free`` nodes: the step split in two.
    Both halves are in one block, so its fewest and most free nodes stand."""
    blocks = sizes[_IN_ORDER]
    k, i = locate(bt, count, order, blocks, time)
    b = order[k]
    i += 1
    size = bt.shape[1]
    if count[b] == size:  # full: its upper half goes to a new block after it
        new = sizes[_MADE]
        sizes[_MADE] = new + 1
        half = size // 2
        bt[new, : size - half] = bt[b, half:size]
        bf[new, : size - half] = bf[b, half:size]
        count[new] = size - half
        count[b] = half
        lag[new] = lag[b]
        bounds(bf, count, lag, least, most, b)
        bounds(bf, count, lag, least, most, new)
        for q in range(blocks, k + 1, -1):
            order[q] = order[q - 1]
        order[k + 1] = new
        sizes[_IN_ORDER] = blocks + 1
        if i > half:
            b = new
            i -= half
    c = count[b]
    for x in range(c, i, -1):
        bt[b, x] = bt[b, x - 1]
        bf[b, x] = bf[b, x - 1]
    bt[b, i] = time
    bf[b, i] = free - lag[b]
    count[b] = c + 1


@njit(cache=True, nogil=True)
def delete(
    bt: np.ndarray,
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    least: np.ndarray,
    most: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    time: int,
) -> None:
    """Drop the step that begins at ``time``: the step before it runs on."""
    blocks = sizes[_IN_ORDER]
    k, i = locate(bt, count, order, blocks, time)
    b = order[k]
    c = count[b] - 1
    for x in range(i, c):
        bt[b, x] = bt[b, x + 1]
        bf[b, x] = bf[b, x + 1]
    count[b] = c
    if c == 0:
        for q in range(k, blocks - 1):
            order[q] = order[q + 1]
        sizes[_IN_ORDER] = blocks - 1
    else:
        bounds(bf, count, lag, least, most, b)


@njit(cache=True, nogil=True)
def add(
    bt: np.ndarray,
    bf: np.ndarray,
    count: np.ndarray,
    lag: np.ndarray,
    least: np.ndarray,
    most: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    start: int,
    end: int,
    delta: int,
) -> None:
    """``delta`` free nodes more at every step that begins in [start, end); a step
    begins at ``start``."""
    blocks = sizes[_IN_ORDER]
    k, i = locate(bt, count, order, blocks, start)
    while k < blocks:
        b = order[k]
        c = count[b]
        if i == 0 and bt[b, c - 1] < end:  # the whole block
            lag[b] += delta
            least[b] += delta
            most[b] += delta
            k += 1
            continue
        while i < c and bt[b, i] < end:
            bf[b, i] += delta
            i += 1
        bounds(bf, count, lag, least, most, b)
        if i < c:
            return
        k += 1
        i = 0
