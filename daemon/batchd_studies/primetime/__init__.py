"""``batchd report primetime``: the prime/non-prime time study of Lo and Mache's prime-time paper on batchd.

Lo and Mache, *Job Scheduling for Prime Time vs. Non-prime Time* (sec. 4-5): the
``primetime`` policy is replayed on a trace for every pair of prime-time limits
(runtime limit in % of the weekday prime slot x jobsize limit in % of the
machine, 10%..100% each), for FCFS and EASY within each class, at one or more
machine sizes (a smaller machine is a heavier load, as in the paper).

Runs go to a pool of spawned worker processes, the longest first. Every result
is written to OUT/results.json as soon as it arrives; a rerun replays only what
is missing there and ``--report-only`` replays nothing. OUT/report.md holds the
paper's figures (response time of small and large jobs, prime and non-prime
utilization, slowdown with and without the two queues), Table 3 (ratios to the
best value of the sweep and percentages at 30-100, 80-100, 100-100) and a check
of each of the paper's rules of thumb against the numbers.

Modules: ``options`` (the command line; cheap to import), ``runs`` (one replay
and its results entry), ``replays`` (the one module that calls the core's
replay, the ``primetime`` policy's calendar and its metrics), ``facts`` (the
trace against the calendar), ``tables``, ``rules`` (the rules of thumb),
``figures``, ``report`` (the text) and ``study`` (all of it in order).
"""
