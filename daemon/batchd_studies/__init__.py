"""The studies of batchd: the seed papers' evaluations, replayed with batchd.

``batchd report dynp`` (A. Streit's self-tuning dynP, sec. 5), ``batchd report primetime``
(prime/non-prime time limits, sec. 4-5), ``batchd report grid`` (grid scheduling
structures, sec. 5), ``batchd report utility`` (utility functions and the GA scheduler,
sec. 7-8) and ``batchd report moldable`` (moldable jobs, sec. 5-6).

A package beside batchd that uses batchd's public modules only (``batchd.replay``,
``batchd.sweep``, ``batchd.metrics``, ``batchd.workload``, ``batchd.model``; see
tests/test_layers.py); batchd never imports it, and loads ``cli`` by name for its
``report`` command.

``framework`` holds what the studies share, ``Study`` among it; ``dynp``, ``primetime``,
``grid``, ``utility`` and ``moldable`` hold each study's runs, tables, figures, claims and
text. The numbers a seed paper prints and a study sets beside batchd's (dynp, primetime,
utility) are data: the study's ``paper.json``, read by its ``paper`` module.
"""
