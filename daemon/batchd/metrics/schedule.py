"""Offline metrics of a finished schedule (seed 000, sec. 5.1, and common extras)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from batchd.model.job import Job

SUMMARY_KEYS = (
    "jobs",
    "skipped",
    "killed",
    "utilization",
    "makespan",
    "awt",
    "art",
    "artww",
    "sldww60",
    "sldww300",
    "bsld10",
    "wait_p50",
    "wait_p90",
    "wait_p99",
    "policy",
    "nodes",
    "wall_seconds",
)


def _weighted_slowdown(w: np.ndarray, resp: np.ndarray, run: np.ndarray, bound: int) -> float:
    sld = np.maximum(resp, bound) / np.maximum(run, bound)
    return float((w * sld).sum() / w.sum())


def schedule_metrics(jobs: Sequence[Job], nodes: int) -> dict[str, float | int]:
    """UTIL, ART, ARTwW, SLDwW (60 s and 300 s bounds), bounded slowdown and waits.

    UTIL = sum(width * run) / (nodes * (last end - first submit)); run = end - start
    as simulated (killed jobs count up to their kill). Makespan is last end - first
    submit. Wait percentiles use linear interpolation between order statistics.
    """
    if not jobs:
        return {
            "jobs": 0,
            "killed": 0,
            "utilization": 0.0,
            "makespan": 0,
            "awt": 0.0,
            "art": 0.0,
            "artww": 0.0,
            "sldww60": 0.0,
            "sldww300": 0.0,
            "bsld10": 0.0,
            "wait_p50": 0.0,
            "wait_p90": 0.0,
            "wait_p99": 0.0,
        }
    w = np.fromiter((j.width for j in jobs), dtype=np.float64, count=len(jobs))
    submit = np.fromiter((j.submit for j in jobs), dtype=np.int64, count=len(jobs))
    start = np.fromiter((j.start for j in jobs), dtype=np.int64, count=len(jobs))
    end = np.fromiter((j.end for j in jobs), dtype=np.int64, count=len(jobs))
    wait = start - submit
    resp = end - submit
    run = end - start
    span = int(end.max() - submit.min())
    util = float((w * run).sum() / (nodes * span)) if span > 0 else 0.0
    p50, p90, p99 = np.percentile(wait, [50, 90, 99]).tolist()
    return {
        "jobs": len(jobs),
        "killed": sum(1 for j in jobs if j.killed),
        "utilization": util,
        "makespan": span,
        "awt": float(wait.mean()),
        "art": float(resp.mean()),
        "artww": float((w * resp).sum() / w.sum()),
        "sldww60": _weighted_slowdown(w, resp, run, 60),
        "sldww300": _weighted_slowdown(w, resp, run, 300),
        "bsld10": float(np.maximum(1.0, resp / np.maximum(run, 10)).mean()),
        "wait_p50": float(p50),
        "wait_p90": float(p90),
        "wait_p99": float(p99),
    }
