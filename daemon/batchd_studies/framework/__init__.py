"""What every study report shares, so that a study writes only its runs, tables and text.

- ``study``: the ``Study`` base a study subclasses (its inputs, runs, results file and
  report), and ``run_study``, the skeleton every study runs through: run the missing
  runs, stop there for a shard, record the invocation, write the report.
- ``cli``: the options every study has (``--trace``, ``--workers``, ``--dask``,
  ``--out``, ``--resume``, ``--report-only``, ``--shard I/N``, ``--collect``: the
  ``Scope`` of an invocation) and the command-line echo; standard library only, so
  building the ``batchd`` parser stays cheap.
- ``traces``: a trace file's short name, digest and header facts.
- ``results``: OUT/results.json, one entry per run, keyed by the run's content.
- ``stored``: results.json and OUT/runs/KEY.json (the sweep's store: one record per
  run, written as it finishes), combined into results.json by a pass that writes the
  outputs.
- ``runs``: run what is not stored yet (all of it, or a shard's share) on the sweep's
  executors (``pool``: local processes or Dask), then report the outcome on the
  terminal.
- ``files``: input files a study makes in OUT, written so that parallel shards can.
- ``meta``: who made the report (command, date, machine), kept in OUT/study.json.
- ``markdown``: tables, number formats and the sections every report has (the header's
  provenance among them).
- ``paper``: a study's paper.json, the seed paper's own numbers, shipped as package data.
- ``plots``: matplotlib details the studies' figures share.

A study's runs are frozen dataclasses (pickled to the workers), each with
``identity()`` (a plain dict of everything that determines its result; its digest
is the run's key) and ``label()`` (a short text for the progress bar and messages);
its ``work``, a module-level function, replays one run and returns its results entry.
"""

from __future__ import annotations


class StudyError(ValueError):
    """Study options or files that cannot be used (printed as one line by the CLI)."""
