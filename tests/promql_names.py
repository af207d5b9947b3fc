"""The metric names that PromQL expressions refer to, for checking monitoring files.

``metric_names`` reads one expression; ``dashboard_exprs`` collects the
expressions of a Grafana dashboard and ``rule_exprs`` those of a Prometheus
rules file, so the tests can check every name against the metric catalog.
"""

from __future__ import annotations

import re

# Functions and aggregation operators of PromQL (Prometheus 2.42).
FUNCTIONS = frozenset((
    "abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh",
    "avg_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh",
    "count_over_time", "day_of_month", "day_of_week", "day_of_year", "days_in_month", "deg",
    "delta", "deriv", "exp", "floor", "histogram_count", "histogram_fraction",
    "histogram_quantile", "histogram_sum", "holt_winters", "hour", "idelta", "increase",
    "irate", "label_join", "label_replace", "last_over_time", "ln", "log10", "log2",
    "mad_over_time", "max_over_time", "min_over_time", "minute", "month", "pi",
    "predict_linear", "present_over_time", "quantile_over_time", "rad", "rate", "resets",
    "round", "scalar", "sgn", "sin", "sinh", "sort", "sort_desc", "sqrt", "stddev_over_time",
    "stdvar_over_time", "sum_over_time", "tan", "tanh", "time", "timestamp", "vector", "year",
    "start", "end",  # of the @ modifier
))  # fmt: skip
AGGREGATIONS = frozenset((
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile",
))  # fmt: skip
# Words that are never metric names where they stand.
KEYWORDS = frozenset((
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "bool", "offset", "atan2",
))  # fmt: skip
# by (...) and the like: the identifiers in the following parentheses are label names.
LABEL_LIST_KEYWORDS = frozenset(("by", "without", "on", "ignoring", "group_left", "group_right"))

# Grafana's template variables: $name, ${name}, ${name:format}, [[name]].
_GRAFANA_VAR = re.compile(r"\$\{[^}]*\}|\$\w+|\[\[\w+(?::\w+)?\]\]")
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<duration>(?:\d+(?:ms|s|m|h|d|w|y))+(?!\w))
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|==|!=|<=|>=|[-+*/%^<>=,@()\[\]{}])
    """,
    re.VERBOSE,
)
_CLOSING = {"(": ")", "[": "]", "{": "}"}


def _tokens(expr: str) -> list[tuple[str, str]]:
    text = _GRAFANA_VAR.sub(" ", expr)
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot read PromQL at {text[pos : pos + 20]!r} in {expr!r}")
        kind = m.lastgroup
        assert kind is not None
        if kind not in ("space", "comment"):
            out.append((kind, m.group()))
        pos = m.end()
    return out


def _unquote(literal: str) -> str:
    if literal[0] == "`":
        return literal[1:-1]
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def metric_names(expr: str) -> set[str]:
    """The metric names ``expr`` selects, including ``{__name__="..."}`` selectors.

    Raises ValueError for text that is not PromQL: unbalanced brackets, an
    unknown function, a character PromQL does not have.
    """
    tokens = _tokens(expr)
    names: set[str] = set()
    stack: list[str] = []  # open brackets; "L" for the parentheses of a label list
    label_list_next = False
    for i, (kind, value) in enumerate(tokens):
        nxt = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        inside = stack[-1] if stack else ""
        after_list_keyword, label_list_next = label_list_next, False
        if kind == "op" and value in "([{":
            stack.append("L" if value == "(" and after_list_keyword else value)
            continue
        if kind == "op" and value in ")]}":
            if not stack or _CLOSING.get(stack[-1], ")") != value:
                raise ValueError(f"unbalanced {value!r} in {expr!r}")
            stack.pop()
            continue
        if inside == "[":  # a range or a subquery step: durations and variables only
            continue
        if inside == "{":  # label matchers
            if (
                kind == "ident"
                and value == "__name__"
                and nxt == "="
                and i + 2 < len(tokens)
                and tokens[i + 2][0] == "string"
            ):
                names.add(_unquote(tokens[i + 2][1]))
            continue
        if inside == "L":  # by (pool, state)
            if kind not in ("ident", "string") and value != ",":
                raise ValueError(f"unexpected {value!r} in a label list in {expr!r}")
            continue
        if kind != "ident":
            continue
        lower = value.lower()
        if lower in KEYWORDS:
            label_list_next = lower in LABEL_LIST_KEYWORDS
            continue
        if lower in ("inf", "nan") and nxt != "{":
            continue
        if value in AGGREGATIONS and nxt.lower() in ("by", "without"):
            continue  # sum by (pool) (...)
        if nxt == "(":
            if value not in FUNCTIONS and value not in AGGREGATIONS:
                raise ValueError(f"unknown PromQL function {value!r} in {expr!r}")
            continue
        names.add(value)
    if stack:
        raise ValueError(f"unclosed {stack[-1]!r} in {expr!r}")
    return names


# Grafana variable queries of the Prometheus data source.
_LABEL_VALUES = re.compile(r"^\s*label_values\((.*),\s*[a-zA-Z_]\w*\s*\)\s*$", re.DOTALL)
_LABEL_VALUES_ONLY = re.compile(r"^\s*label_(?:values|names)\(\s*[a-zA-Z_]*\s*\)\s*$")
_QUERY_RESULT = re.compile(r"^\s*query_result\((.*)\)\s*$", re.DOTALL)
_METRICS = re.compile(r"^\s*metrics\(.*\)\s*$", re.DOTALL)


def _variable_exprs(query: str) -> list[str]:
    for pattern in (_LABEL_VALUES, _QUERY_RESULT):
        m = pattern.match(query)
        if m:
            return [m.group(1)]
    if _LABEL_VALUES_ONLY.match(query) or _METRICS.match(query):
        return []
    return [query]


def _panels(panels: list[dict]) -> list[dict]:
    out: list[dict] = []
    for p in panels:
        out.append(p)
        out.extend(_panels(p.get("panels", [])))
    return out


def dashboard_exprs(doc: dict) -> list[str]:
    """Every expression of a dashboard: the targets of every panel (rows' panels too),
    the query variables and the annotation queries."""
    exprs: list[str] = []
    for panel in _panels(doc.get("panels", [])):
        for target in panel.get("targets", []):
            if target.get("expr"):
                exprs.append(target["expr"])
    for annotation in doc.get("annotations", {}).get("list", []):
        if annotation.get("expr"):
            exprs.append(annotation["expr"])
    for var in doc.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        query = var.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        if query:
            exprs.extend(_variable_exprs(query))
    return exprs


_EXPR_LINE = re.compile(r"^(?P<indent>\s*(?:-\s+)?)expr:\s*(?P<rest>.*)$")


def _plain_scalar(rest: str) -> str:
    rest = rest.strip()
    if rest.startswith("'") and rest.endswith("'") and len(rest) > 1:
        return rest[1:-1].replace("''", "'")
    if rest.startswith('"') and rest.endswith('"') and len(rest) > 1:
        return re.sub(r"\\(.)", r"\1", rest[1:-1])
    return re.sub(r"\s+#.*$", "", rest)


def rule_exprs(text: str) -> list[str]:
    """The ``expr`` of every rule of a Prometheus rules file.

    A small line reader for the forms rule files use: ``expr: plain``, quoted
    scalars and ``|``/``>`` block scalars (the lines indented deeper than the key).
    """
    lines = text.splitlines()
    exprs: list[str] = []
    i = 0
    while i < len(lines):
        m = _EXPR_LINE.match(lines[i])
        i += 1
        if m is None or lines[i - 1].lstrip().startswith("#"):
            continue
        rest = m.group("rest").strip()
        if not re.match(r"^[|>][-+]?\d*\s*(#.*)?$", rest):
            exprs.append(_plain_scalar(rest))
            continue
        key_col = len(m.group("indent"))
        block: list[str] = []
        while i < len(lines):
            line = lines[i]
            if line.strip() and len(line) - len(line.lstrip()) <= key_col:
                break
            block.append(line.strip())
            i += 1
        exprs.append("\n".join(block).strip())
    return exprs
