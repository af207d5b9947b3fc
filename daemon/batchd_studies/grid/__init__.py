"""``batchd report grid``: the evaluation of Hamscher et al.'s grid paper (sec. 5, Table 2) on batchd.

For each ``--trace`` a workload model is fitted (``batchd analyze``) and, for each
grid configuration (Table 1: ``conf/grid-nrw.toml``, ``grid-equal.toml``,
``grid-4small-4big.toml``, ``grid-2pown.toml``), a probabilistic job set is drawn
from it, sized to the grid's total nodes (``--jobs-per-node`` jobs per node,
inter-arrival times scaled so the offered load per node is the trace's). Every
structure, scheduler and strategy of Table 2 is replayed on every set
(``variants``), and a few on a doubled set (the paper's remedy for too little
backlog). OUT/report.md holds the job sets, a table per structure, the figures, a
check of each claim of sec. 5.2 and the run times; its Discussion section is
OUT/discussion.md, written by hand.

Modules: ``options`` (the command line; cheap to import), ``variants`` (the runs
of Table 2), ``jobsets`` (the job sets), ``runs`` (one replay and its results
entry), ``tables``, ``claims`` (sec. 5.2 against the numbers), ``figures``,
``report`` (the text) and ``study`` (all of it in order).
"""
