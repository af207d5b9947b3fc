"""``batchd report utility``: the evaluation of Lee's utility paper (sec. 7-8, Tables 1 and 2) on batchd.

The jobs numbered 5,000 to 10,000 of a trace (SDSC-BLUE in the seed) are cut out,
given synthetic utility functions twice (two seeds; and for Fig. 8 at other deadline
factors), and replayed with Conservative, EASY, Priority-FIFO, batchd's
``utility-easy`` and GA (two GA seeds per augmentation) in every scenario the
tables and figures need: the users' and exact runtimes, inter-arrival factors,
deadline factors. OUT/report.md holds Tables 1 and 2 beside the seed's numbers,
the seed's claims as tests, Figs. 5 and 7-10 with their numbers, the GA's search
figures and the run times; its Discussion section is OUT/discussion.md, written
by hand.

Modules: ``options`` (the command line; cheap to import), ``workloads`` (the slice
and its augmentations), ``plan`` (scenarios and runs), ``runs`` (one replay and its
results entry), ``measures`` (the seed's percentile direction and trimming),
``index`` (means over trials), ``paper`` (the seed's numbers), ``tables``,
``charts`` and ``figures``, ``claims``, ``text`` and ``report``, and ``study``
(all of it in order).
"""
