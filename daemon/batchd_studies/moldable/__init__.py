"""``batchd report moldable``: the evaluation of Sabin et al.'s moldable paper (sec. 5.2 and 6.2, Figs. 2-5 and
7-10) on batchd.

A trace (CTC-SP2 in the seed) is made moldable twice per offered load, as ``batchd
moldable`` does it: every job's speedup scales to the system size (A = system size),
or to a random multiple of its requested width (A random); runtimes and estimates are
scaled to reach each offered load. Each workload is replayed with the fair-share
scheme at every overbooking factor x efficiency factor, the iterative scheme, the
submit-time greedy scheme and the rigid baselines (EASY and conservative at the
requested widths). OUT/report.md holds the average turnaround by load and by job
size, the widths chosen, the seed's claims as checks and the figures; its Discussion
section is OUT/discussion.md, written by hand.

Modules: ``options`` (the command line; cheap to import), ``plan`` (schedulers,
workloads and runs), ``workloads`` (the moldable traces), ``runs`` (one replay and its
results entry), ``index`` (results by workload and scheduler), ``tables``,
``figures``, ``claims``, ``report`` and ``study`` (all of it in order).
"""
