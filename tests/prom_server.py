"""Run the real Prometheus server for a test: scrape one target, answer PromQL over HTTP.

    with PromServer("127.0.0.1:15001", tmp_path) as prom:
        prom.wait_for_scrapes(2)
        prom.query('up{job="batchd"}')  # -> [Sample(labels={...}, value=1.0, ...)]

Prometheus listens on a free loopback port, keeps its TSDB in a temporary folder
and scrapes the target every second (job "batchd"). Only the standard library is
used to talk to it (its HTTP API under /api/v1).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JOB = "batchd"
ENV_BINARY = "PROMETHEUS_BIN"

CONFIG = """\
global:
  scrape_interval: {interval}
  scrape_timeout: {interval}
  evaluation_interval: {interval}
scrape_configs:
  - job_name: {job}
    metrics_path: /metrics
    static_configs:
      - targets: ["{target}"]
"""


def prometheus_binary() -> str | None:
    """The prometheus server to run: $PROMETHEUS_BIN, else the one on PATH, else None."""
    given = os.environ.get(ENV_BINARY)
    if given:
        return given if os.access(given, os.X_OK) else None
    return shutil.which("prometheus")


def missing_reason() -> str:
    """Why :func:`prometheus_binary` found nothing, for a skip message."""
    given = os.environ.get(ENV_BINARY)
    if given:
        return f"${ENV_BINARY}={given} is not an executable file"
    return (
        "no `prometheus` on PATH (`make test` installs the Debian package with apt-get "
        f"when run as root or with passwordless sudo; or set ${ENV_BINARY})"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Sample:
    """One element of an instant vector (or a scalar, with no labels)."""

    labels: dict[str, str]
    value: float
    timestamp: float  # the evaluation time of the query, wall seconds


class PrometheusError(RuntimeError):
    pass


class PromServer:
    """One ``prometheus`` process scraping ``target`` (host:port) every ``interval`` seconds."""

    def __init__(
        self,
        target: str,
        workdir: str | Path | None = None,
        *,
        interval: int = 1,
        binary: str | None = None,
    ) -> None:
        binary = binary or prometheus_binary()
        if binary is None:
            raise PrometheusError(f"prometheus not installed: {missing_reason()}")
        self.binary = binary
        self.target = target
        self.interval = interval
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="prom-")
            workdir = self._tmp.name
        self.dir = Path(workdir) / "prometheus"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = self.dir / "prometheus.yml"
        self.log = self.dir / "prometheus.log"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- life cycle -------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> PromServer:
        self.config.write_text(
            CONFIG.format(interval=f"{self.interval}s", job=JOB, target=self.target)
        )
        self.port = free_port()
        argv = [
            self.binary,
            f"--config.file={self.config}",
            f"--storage.tsdb.path={self.dir / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--storage.tsdb.retention.time=1h",
            "--log.level=warn",
        ]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, cwd=self.dir
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PrometheusError(
                    f"prometheus exited with {self.proc.returncode}: {self.log_text()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.1)
        self.stop()
        raise PrometheusError(f"prometheus not ready within {timeout} s: {self.log_text()}")

    def stop(self, timeout: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> PromServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    # -- the HTTP API -----------------------------------------------------------

    def api(self, path: str, **params: str) -> Any:
        """GET /api/v1/PATH?params and return its ``data``; errors raise PrometheusError."""
        url = f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                body = json.load(resp)
        except urllib.error.HTTPError as exc:
            body = json.loads(exc.read() or b"{}")
        if body.get("status") != "success":
            raise PrometheusError(f"{path} {params}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, promql: str, at: float | None = None) -> list[Sample]:
        """Evaluate an instant query: the samples of the vector (one, unlabelled, for a scalar)."""
        params = {"query": promql}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = self.api("query", **params)
        kind, result = data["resultType"], data["result"]
        if kind in ("scalar", "string"):
            return [Sample({}, _number(result[1]), float(result[0]))]
        if kind != "vector":
            raise PrometheusError(f"{promql}: a {kind}, not an instant vector (use raw_samples)")
        return [
            Sample(dict(item["metric"]), _number(item["value"][1]), float(item["value"][0]))
            for item in result
        ]

    def value(self, promql: str) -> float | None:
        """The single value of a query, None when it returns nothing; several is an error."""
        samples = self.query(promql)
        if len(samples) > 1:
            raise PrometheusError(f"{promql}: {len(samples)} series, expected one: {samples}")
        return samples[0].value if samples else None

    def raw_samples(self, selector: str, window: str = "1h") -> list[tuple[float, float]]:
        """(scrape timestamp, value) of every stored sample of ``selector`` in the last window."""
        data = self.api("query", query=f"{selector}[{window}]")
        points: list[tuple[float, float]] = []
        for item in data["result"]:
            points.extend((float(t), _number(v)) for t, v in item["values"])
        return sorted(points)

    def targets(self) -> list[dict[str, Any]]:
        return self.api("targets")["activeTargets"]

    def scrapes_since(self, since: float) -> int:
        """Scrapes of the target that began after wall time ``since`` (and are stored)."""
        return sum(1 for t, _ in self.raw_samples(f'up{{job="{JOB}"}}') if t > since)

    def wait_for_scrapes(
        self, n: int, since: float | None = None, timeout: float | None = None
    ) -> float:
        """Wait until ``n`` scrapes that began after ``since`` (default: now) are stored.

        Returns the timestamp of the newest scrape. Such a scrape read the target's
        /metrics after ``since``, so it sees every change made before that.
        """
        since = time.time() if since is None else since
        timeout = timeout if timeout is not None else 10.0 + 3 * n * self.interval
        deadline = time.monotonic() + timeout
        while True:
            stamps = [t for t, _ in self.raw_samples(f'up{{job="{JOB}"}}') if t > since]
            if len(stamps) >= n:
                return max(stamps)
            if time.monotonic() > deadline:
                raise PrometheusError(
                    f"{len(stamps)} of {n} scrapes of {self.target} after {since:.3f} within "
                    f"{timeout} s; targets: {self.targets()}; log: {self.log_text()}"
                )
            time.sleep(0.2)


def _number(text: str) -> float:
    return float(text)  # Prometheus writes NaN, +Inf and -Inf as Python reads them


__all__ = [
    "JOB",
    "PromServer",
    "PrometheusError",
    "Sample",
    "free_port",
    "missing_reason",
    "prometheus_binary",
]
