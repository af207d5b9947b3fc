"""The allocated-node integral's day series (the web page's Machine view) and its window."""

from __future__ import annotations

from batchd.metrics.busy import BusyIntegral


def test_series_is_the_mean_of_each_whole_step() -> None:
    busy = BusyIntegral(window=100, now=0, keep=1000)
    busy.update(50, 4)  # 0 nodes until 50, then 4
    busy.update(250, 2)  # 4 until 250, then 2
    start, means = busy.series(now=330, step=100, count=10)
    # steps [0,100) [100,200) [200,300); [300,400) is not over at 330
    assert start == 0
    assert means == [2.0, 4.0, 3.0]
    # The window beside it is unchanged by the longer keep: [230, 330) holds 20 s at 4, 80 at 2.
    assert busy.window_ratio(330, 8) == (20 * 4 + 80 * 2) / (8 * 100)


def test_series_covers_only_what_is_kept() -> None:
    busy = BusyIntegral(window=10, now=0, keep=300)
    for t in range(0, 1000, 50):
        busy.update(t, t // 50 % 3)
    start, means = busy.series(now=1000, step=100, count=24)
    # Points older than 300 s before the last update are gone: steps from 700 on.
    assert start == 700
    assert len(means) == 3
    # [700,750) at 14%3=2, [750,800) at 0 -> mean 1; [800,850) 1, [850,900) 2; [900,950) 0, [950,1000) 1
    assert means == [1.0, 1.5, 0.5]


def test_no_whole_step_yet() -> None:
    busy = BusyIntegral(window=10, now=1_000_050, keep=86_400)
    start, means = busy.series(now=1_000_080, step=900, count=96)
    assert means == []
