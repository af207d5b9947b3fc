"""``batchd report dynp``: the evaluation of Streit's dynP paper (sec. 5) on batchd.

For each ``--trace`` (an SWF file used as is, or ``synthetic-from:PATH``: a job
set generated from the model of the trace PATH, sec. 4) and each shrinking
factor, every configuration is replayed once:

* FCFS, SJF and LJF with conservative backfilling (``fcfs-cons`` ...),
* basic dynP with lower bound 7200 s and upper bound 9000 s (``dynp-basic``),
* self-tuning dynP, simple and advanced decider x quality ARTwW, ART, MS;
  with ``--configs as-queued`` again with ``fcfs_candidate=as-queued`` and (ARTwW)
  ``as-queued-sjf``.

Runs go to a pool of spawned worker processes, the longest first. Each summary
is appended to OUT/results.json as soon as it arrives, so ``--resume`` after an
interruption only runs what is missing, and ``--report-only`` runs nothing.
OUT/report.md holds Tables 4-6 of the paper (per FCFS candidate run, and for
CTC_syn and KTH_syn beside the paper's own numbers), a table per trace over the
shrink factors, Figs. 2-5 and 8 and the run times; its Discussion section is
OUT/discussion.md, written by a person.

Modules: ``options`` (the command line; cheap to import), ``configs`` (the
scheduler configurations), ``jobsets`` (the job sets), ``runs`` (one replay and
its results entry), ``replays`` (the one module that calls the core's replay and
policy registry), ``tables``, ``seed`` (the paper's numbers beside ours),
``figures``, ``report`` (the text) and ``study`` (all of it in order).
"""
