"""``batchd report NAME``: the ``report`` command with one sub-command per study.

``batchd`` loads this module by name when it builds its ``report`` command. The studies'
``options`` modules import the standard library (and batchd's argument types) only: the
heavy modules (replay, numpy, matplotlib) load only when a report runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["add_report_command"]


def add_report_command(sub: Any) -> None:
    """Add ``report`` with its studies to argparse subparsers."""
    from batchd_studies.dynp.options import add_arguments as add_dynp_arguments
    from batchd_studies.grid.options import add_arguments as add_grid_arguments
    from batchd_studies.moldable.options import add_arguments as add_moldable_arguments
    from batchd_studies.primetime.options import add_arguments as add_primetime_arguments
    from batchd_studies.utility.options import add_arguments as add_utility_arguments

    report = sub.add_parser(
        "report",
        help="study reports built on replay (dynp: the self-tuning dynP evaluation; "
        "primetime: prime/non-prime time limits; grid: grid scheduling structures; "
        "utility: utility functions and the GA scheduler; moldable: moldable jobs)",
        description="Study reports built on trace replay.",
    )
    kinds = report.add_subparsers(dest="report", required=True, metavar="REPORT")
    dynp = kinds.add_parser(
        "dynp",
        help="FCFS/SJF/LJF-cons, basic and self-tuning dynP over shrink factors",
        description=(
            "Replay job sets with the single policies, basic dynP and self-tuning dynP "
            "(simple/advanced decider x quality ARTwW/ART/MS) over shrinking factors, "
            "in parallel worker processes; write OUT/results.json and OUT/report.md with "
            "the paper's Tables 4-6 and Figs. 2-5 and 8."
        ),
    )
    add_dynp_arguments(dynp)
    primetime = kinds.add_parser(
        "primetime",
        help="prime/non-prime time queues over runtime x jobsize limits, FCFS and EASY",
        description=(
            "Replay a trace with the primetime policy for every pair of prime-time limits "
            "(runtime in %% of the prime slot x jobsize in %% of the machine, 10..100), for "
            "FCFS and EASY and each machine size, in parallel worker processes; write "
            "OUT/results.json and OUT/report.md with the paper's figures, Table 3 and a check "
            "of its rules of thumb."
        ),
    )
    add_primetime_arguments(primetime)
    grid = kinds.add_parser(
        "grid",
        help="grid structures x schedulers x strategies (Table 2) on the Table 1 grids",
        description=(
            "Draw job sets from traces' models sized to each grid, replay every grid "
            "structure, scheduler and selection strategy of Table 2 of Hamscher et al.'s grid paper on them, in "
            "parallel worker processes; write OUT/results.json and OUT/report.md with a table "
            "per structure, figures and a check of every claim of sec. 5.2."
        ),
    )
    add_grid_arguments(grid)
    utility = kinds.add_parser(
        "utility",
        help="Cons, EASY, Priority-FIFO and GA by aggregate utility (Lee's utility paper, Tables 1-2)",
        description=(
            "Cut jobs 5,000-10,000 out of a trace, give them synthetic utility functions "
            "(two augmentations), replay Conservative, EASY, Priority-FIFO, utility-easy and "
            "GA (two GA seeds per augmentation) with the users' and exact runtimes, over "
            "inter-arrival and deadline factors, in parallel worker processes; write "
            "OUT/results.json and OUT/report.md with the paper's Tables 1 and 2 beside "
            "batchd's, Figs. 5 and 7-10 and a check of its claims."
        ),
    )
    add_utility_arguments(utility)
    moldable = kinds.add_parser(
        "moldable",
        help="fair share (ObF x EF), iterative, greedy and rigid schedulers on moldable jobs "
        "(Sabin et al.'s moldable paper, Figs. 2-5 and 7-10)",
        description=(
            "Make a trace moldable (Downey speedups, A the system size and A random) at "
            "several offered loads, replay the fair-share scheme over overbooking and "
            "efficiency factors, the iterative scheme, the submit-time greedy scheme and "
            "rigid EASY and conservative backfilling, in parallel worker processes; write "
            "OUT/results.json and OUT/report.md with the average turnaround by load and by "
            "job size, the widths chosen, the seed's figures and a check of its claims."
        ),
    )
    add_moldable_arguments(moldable)
