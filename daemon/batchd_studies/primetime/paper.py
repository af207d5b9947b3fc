"""The paper's Table 3 (EASY, NAS SP/2 at 80 nodes), from paper.json."""

from __future__ import annotations

from batchd_studies.framework.paper import paper_data, section

PACKAGE = "batchd_studies.primetime"
_DATA = paper_data(PACKAGE)

# The (runtime %, jobsize %) limits of its columns: 30-100, 80-100, 100-100.
TABLE3_COLUMNS: tuple[tuple[int, int], ...] = tuple(
    (int(runtime), int(jobsize)) for runtime, jobsize in section(_DATA, "table3_columns", PACKAGE)
)
# Row -> one value per column: ratios to the best of the sweep, then percentages.
PAPER_TABLE3: dict[str, tuple[float, ...]] = {
    row: tuple(values) for row, values in section(_DATA, "table3", PACKAGE).items()
}
