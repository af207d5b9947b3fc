"""Workloads: SWF traces read and written, turned into jobs, and a small synthetic one."""

from batchd.workload.loader import SKIP_REASONS, Workload, load_swf, shrink_submits
from batchd.workload.swf import (
    SWF_FIELDS,
    SWFError,
    SWFHeader,
    iter_swf,
    iter_swf_tokens,
    open_text,
    read_header,
)
from batchd.workload.swf_write import write_jobs_csv, write_swf
from batchd.workload.synthetic import synthetic_header, synthetic_jobs

__all__ = [
    "SKIP_REASONS",
    "SWF_FIELDS",
    "SWFError",
    "SWFHeader",
    "Workload",
    "iter_swf",
    "iter_swf_tokens",
    "load_swf",
    "open_text",
    "read_header",
    "shrink_submits",
    "synthetic_header",
    "synthetic_jobs",
    "write_jobs_csv",
    "write_swf",
]
