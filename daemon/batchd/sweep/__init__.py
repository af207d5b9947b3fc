"""``batchd sweep``: a declared grid of replays, run by one executor, resumable.

- ``experiment``: the experiment file (TOML, validated; errors name file and key).
- ``plan``: the file expanded into runs in declaration order, each keyed by a hash
  of what determines its result.
- ``files``: content checksums, and a worker's local copy of a trace or site file
  (the path when it has the checksum, else the bytes the sweep shipped).
- ``work``: one run on a worker: the replay and its record.
- ``store``: OUT/runs/KEY.json, one finished run each, written atomically.
- ``executor`` and ``dask``: where runs execute (in this process, a local process
  pool, a Dask cluster), with ``progress`` on the terminal; the studies of
  ``batchd report`` run through the same executors.
- ``table`` and ``output``: rows of finished runs, results.csv, results.parquet
  and summary.md.
- ``driver``: a sweep from file to outputs; ``cli``: the command line.
"""

from __future__ import annotations


class SweepError(ValueError):
    """A sweep that cannot run: a bad experiment file, option or output directory."""
