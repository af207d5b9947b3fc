"""``batchd serve``: the live daemon. Clock, listeners, the scheduling loop and signals.

Signal handlers only set events; the scheduling loop does the work (SIGTERM
and SIGINT: stop cleanly and save everything; SIGHUP: re-read the config).
While the state file takes no writes the daemon goes on: the loop's records wait
for a retry (``BatchService.save``), and requests that change something get 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import structlog
from aiohttp import web

from batchd.engine.clock import RealClock, ScaledClock
from batchd.execution.local import LocalExecutor
from batchd.model.times import CLOCK_MAX, CLOCK_RANGE, TIME_MIN
from batchd.sched.grid import widest_job
from batchd.server.app import create_app
from batchd.server.auth import daemon_user, load_tokens
from batchd.server.collector import Collector
from batchd.server.connlimit import (
    ConnectionGate,
    ConnectionLimits,
    LimitError,
    connection_limits,
)
from batchd.server.fdlimit import raise_nofile
from batchd.server.feed import ReplayFeed
from batchd.server.listener import BACKLOG, Listeners, tcp_listeners
from batchd.server.paths import default_socket, default_state_path
from batchd.server.serve_errors import ServeError
from batchd.server.service import BatchService
from batchd.server.service.kernels import KernelWarmer, starting_units
from batchd.server.service.scheduler import grid_refusal
from batchd.server.socketdir import ClaimedSocket, claim_socket
from batchd.server.store import SaveError, Store
from batchd.site.config import ConfigError, SiteConfig, load_site

log = structlog.get_logger("batchd")
HEARTBEAT_WALL_SECONDS = 1.0
EXIT_CRASHED = 1


@dataclass
class ServeOptions:
    config: str
    speed: float | None = None
    realtime: bool = False
    socket: str | None = None
    listen: str | None = None
    token_file: str | None = None
    state: str | None = None
    replay: str | None = None
    shrink: float = 1.0
    seed: int = 0
    sync: str = "full"
    start: str | None = None  # emulated start time of an accelerated clock


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ServeError(f"--listen {text!r}: expected [HOST:]PORT with a port in 1..65535")
    return (host.strip("[]") or "127.0.0.1"), int(port)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"


def check_clock(value: object, what: str) -> int:
    """``value`` as the emulated clock's time, or a ServeError naming ``what`` and the range."""
    if isinstance(value, bool) or not isinstance(value, int) or not TIME_MIN <= value <= CLOCK_MAX:
        raise ServeError(
            f"{what} {_shown(value)} is not a time the clock can run at: use {CLOCK_RANGE}"
        )
    return value


def start_time(opts: ServeOptions, nodes: int) -> int:
    """Where a fresh accelerated clock starts: ``--start`` (epoch seconds, an ISO date and
    time, or ``trace``: when the replayed trace's first job arrived, by its UnixStartTime),
    else now. ``nodes`` is the size of the machine the trace goes to."""
    if opts.start is None:
        return int(time.time())
    when = _start_time(opts, opts.start, nodes)
    if not TIME_MIN <= when <= CLOCK_MAX:
        raise ServeError(
            f"--start {opts.start}: {_shown(when)} is not a time the clock can run at: "
            f"use {CLOCK_RANGE}"
        )
    return when


def _start_time(opts: ServeOptions, text: str, nodes: int) -> int:
    if opts.realtime or opts.speed is None:
        raise ServeError("--start needs an accelerated clock (--speed F)")
    if text == "trace":
        if not opts.replay:
            raise ServeError("--start trace needs --replay TRACE")
        from batchd.workload.source import load_trace, trace_clock

        workload = load_trace(opts.replay, nodes, shrink=opts.shrink, seed=opts.seed)
        origin, _ = trace_clock(workload)
        first = workload.jobs[0].submit if workload.jobs else 0
        return origin + first
    if text.lstrip("-").isdigit():
        return int(text)
    import datetime as dt

    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ServeError(
            f"--start {text!r}: expected epoch seconds, an ISO date and time "
            "(2026-01-05T08:00+01:00) or 'trace'"
        ) from None
    return int(when.timestamp())


def check_executing(site: SiteConfig, opts: ServeOptions, config: str) -> None:
    """A machine whose jobs run for real runs on the real-time clock."""
    if opts.speed is None or opts.realtime or opts.speed == 1:
        return
    for i, m in enumerate(site.machine):
        if m.executes:
            raise ServeError(
                f"{config}: machine[{i}].executor: machine {m.name} runs job scripts for real "
                f'(executor = "local") on the real-time clock; --speed {opts.speed:g} is '
                "refused (leave --speed out, or make the machine emulate)"
            )


def make_executor(site: SiteConfig, state: Path, server: str) -> LocalExecutor | None:
    """The executor of a site whose machines run scripts: its spool beside the state file
    (``[execution] spool``), a cgroup per job where this host lets the daemon make them."""
    if not site.executes():
        return None
    from batchd.execution import cgroups
    from batchd.execution.spool import SpoolError

    conf = site.execution
    spool = conf.spool or str(state.with_suffix(".spool"))
    parent = None
    if conf.cgroups != "off":
        parent, why = cgroups.prepare(server, conf.cgroup_parent)
        if parent is not None and conf.cgroups == "auto" and not parent.memory:
            # Moving each job's process into its cgroup costs milliseconds (the kernel
            # waits for an RCU grace period); without the memory controller a cgroup
            # enforces nothing the supervisor's descendants do not give already.
            cgroups.remove(parent.path)
            parent, why = None, "the cgroups have no memory controller here"
        if parent is None:
            log.info("job_cgroups_off", reason=why)
    try:
        return LocalExecutor(spool, parent)
    except (SpoolError, OSError) as exc:
        raise ServeError(f"[execution] spool: {exc}") from None


async def serve(opts: ServeOptions) -> int:
    # Until the reload handler is in place, a SIGHUP must not kill a starting daemon.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    site, tokens, listen, limits = _checked_config(opts)
    sock_path = Path(opts.socket or default_socket())
    claimed, store, (svc, kernels, wake) = await _open_state(opts, site, sock_path)
    # The modules, config and restored state live as long as the daemon: keep them
    # out of the collector's full passes, whose pauses otherwise set the p99 latency.
    collector = Collector()
    collector.start()
    runner = await _listen(svc, tokens, limits, claimed, listen)
    stop, reload = _events(svc, wake, kernels)
    log.info(
        "daemon_started",
        server=svc.server,
        socket=str(sock_path),
        listen=opts.listen,
        state=str(store.path),
        clock="realtime" if svc.realtime else f"x{svc.speed:g}",
        now=svc.now,
        policy=[c.name for c in svc.scheduler.choices],
        pid=os.getpid(),
    )
    scheduler = asyncio.create_task(_schedule_loop(svc, wake, stop, reload, opts.config, collector))
    crashed = False
    try:
        await stop.wait()
    finally:
        scheduler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            crashed = await scheduler
        await runner.cleanup()
        crashed = crashed or svc.lost is not None
        all_saved = _close(svc, store, claimed, kernels, crashed)
        log.info(
            "daemon_stopped", now=svc.now, jobs=len(svc.records), crashed=crashed, saved=all_saved
        )
    return EXIT_CRASHED if crashed else 0


Listen = tuple[str, int]


def _checked_config(
    opts: ServeOptions,
) -> tuple[SiteConfig, dict[str, str] | None, Listen | None, ConnectionLimits]:
    """The site file, the tokens and the TCP address, and the connection limits, each
    checked before anything is opened (ServeError names what is wrong)."""
    site = load_site(opts.config)
    refused = grid_refusal(site)
    if refused is not None:
        raise ServeError(f"{opts.config}: {refused}")
    check_executing(site, opts, opts.config)
    tokens = load_tokens(opts.token_file) if opts.token_file else None
    if opts.listen and not tokens:
        raise ServeError("--listen needs --token-file: TCP callers are identified by token")
    listen = parse_listen(opts.listen) if opts.listen else None
    try:
        limits = connection_limits(site.connections, raise_nofile())
    except LimitError as exc:
        raise ServeError(f"{opts.config}: {exc}") from None
    return site, tokens, listen, limits


async def _open_state(
    opts: ServeOptions, site: SiteConfig, sock_path: Path
) -> tuple[ClaimedSocket, Store, tuple[BatchService, KernelWarmer, asyncio.Event]]:
    """The socket claimed, then the state file opened and the service restored from it;
    a refusal leaves no trace: the socket released, the state file as it was, closed."""
    claimed = claim_socket(sock_path)  # before the state is touched
    try:
        store = Store(opts.state or default_state_path(), sync=opts.sync)  # type: ignore[arg-type]
    except BaseException:
        claimed.close()
        raise
    try:
        return claimed, store, await _restore(opts, site, store)
    except BaseException:
        store.abandon()
        claimed.close()
        raise


async def _listen(
    svc: BatchService,
    tokens: dict[str, str] | None,
    limits: ConnectionLimits,
    claimed: ClaimedSocket,
    listen: Listen | None,
) -> web.AppRunner:
    """The API served on the Unix socket and the TCP listeners, behind the connection gate."""
    app = create_app(svc, tokens)
    runner = web.AppRunner(
        app, handle_signals=False, access_log=None, keepalive_timeout=limits.idle_timeout
    )
    await runner.setup()
    gate = ConnectionGate(
        limits, lambda user: svc.access.role_of(user) == "manager", svc.metrics.registry
    )
    listeners = Listeners(runner, gate)
    unix = claimed.bind()  # open to every user: peer credentials say who they are
    unix.listen(BACKLOG)
    await listeners.add(unix)
    if listen is not None:
        for sock in tcp_listeners(*listen):
            await listeners.add(sock)
    return runner


def _events(
    svc: BatchService, wake: asyncio.Event, kernels: KernelWarmer
) -> tuple[asyncio.Event, asyncio.Event]:
    """What wakes the scheduling loop (a change, a finished search, SIGHUP) and what stops
    it (SIGTERM, SIGINT, a lost state file); the other policies' kernels start compiling.
    Returns the stop and reload events."""
    stop = asyncio.Event()
    reload = asyncio.Event()
    svc.on_change.append(wake.set)
    svc.on_lost.append(stop.set)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def search_done() -> None:
        """On the search worker's thread: wake the loop for the pass that uses it."""
        loop.call_soon_threadsafe(wake.set)

    svc.searches.wakers.append(search_done)
    svc.kernels = kernels
    kernels.compile_ahead()  # the other policies' kernels, into the cache

    def hangup() -> None:
        reload.set()
        wake.set()

    loop.add_signal_handler(signal.SIGHUP, hangup)
    return stop, reload


def _close(
    svc: BatchService,
    store: Store,
    claimed: ClaimedSocket,
    kernels: KernelWarmer,
    crashed: bool,
) -> bool:
    """After the loop stopped: everything saved (unless it crashed), the state file, the
    socket, the launcher and the kernel worker closed. True if everything was saved."""
    all_saved = True
    try:
        if not crashed:
            svc.sync()
            all_saved = svc.save(clock=True, force=True)
    finally:
        if not all_saved:
            # Logged (state_save_failing); a restart goes on from the last commit.
            store.discard()
        try:
            store.close()
        except SaveError as exc:
            all_saved = False
            log.error("state_save_failing", error=exc.cause, state=str(store.path))
        claimed.close()
        if svc.executor is not None:
            svc.executor.close()  # the launcher goes; running jobs and their supervisors stay
        kernels.close()
    return all_saved


async def _restore(
    opts: ServeOptions, site: SiteConfig, store: Store
) -> tuple[BatchService, KernelWarmer, asyncio.Event]:
    """The service on the saved state (or a new one), its clock, its kernels and its
    executor started, and the replay it goes on with; ServeError when it cannot be."""
    saved = store.load()
    saved_now = saved.meta.get("now")
    if saved_now is not None:
        try:
            check_clock(saved_now, "the saved clock")
        except ServeError as exc:
            raise ServeError(
                f"{store.path}: {exc}; the state file is damaged or its clock ran out: "
                "start with another --state"
            ) from None
    speed = 1.0 if opts.realtime or opts.speed is None else opts.speed
    if opts.realtime or opts.speed is None:
        clock: RealClock | ScaledClock = RealClock()
        if saved_now is not None and saved_now > clock.now():
            raise ServeError(
                f"{store.path}: the state is from emulated time {saved_now}, ahead of real "
                "time; resume it with --speed F or start with another --state"
            )
    else:
        queue = site.queue_named(site.default_queue)
        nodes = site.machine[site.machine_index(queue.machine)].slots
        if site.grid_table is not None:  # what the grid takes
            nodes = widest_job(site.grid_table.structure, [m.nodes for m in site.machine])
        start = int(saved_now) if saved_now is not None else start_time(opts, nodes)
        clock = ScaledClock(speed, start=start)
    # The kernels of the policies it starts with, before it serves (compiled if need be).
    kernels = KernelWarmer()
    grid = site.grid_table is not None
    try:
        kernels.prepare(starting_units(site.server.policy, saved.meta, grid))
    except Exception as exc:
        raise ServeError(f"the compiled scheduling kernels could not be built: {exc}") from None
    executor = make_executor(site, store.path, site.server_name)
    wake = asyncio.Event()
    if executor is not None:
        executor.start(asyncio.get_running_loop(), wake.set)
    svc = BatchService(
        site,
        clock,
        store,
        daemon_user=daemon_user(),
        speed=speed,
        realtime=isinstance(clock, RealClock),
        executor=executor,
    )
    if saved.meta.get("now") is not None:
        try:
            svc.restore(saved)
        except ValueError as exc:
            if executor is not None:
                executor.close()  # its launcher goes with the refusal; jobs stay
            raise ServeError(f"{store.path}: {exc}") from None
    else:
        store.check_new()  # a state without its clock must be new, not one that lost it
        svc.save_meta(started=svc.now, machine=svc.machine_identity())
        svc.save()
    replay = saved.meta.get("replay")
    if replay is not None and replay["cursor"] >= replay["jobs"] and opts.replay:
        replay = None  # that replay is over: a new one may start
    if replay is not None:
        if opts.replay and opts.replay != replay["trace"]:
            log.warning("replay_ignored", asked=opts.replay, resuming=replay["trace"])
        svc.replay = ReplayFeed(
            svc,
            replay["trace"],
            shrink=replay["shrink"],
            seed=replay["seed"],
            origin=replay["origin"],
            cursor=replay["cursor"],
        )
        svc.replay.start()
    elif opts.replay:
        trace = opts.replay
        if Path(trace).is_file():
            trace = str(Path(trace).resolve())  # a restart may run from another directory
        svc.replay = ReplayFeed.starting_now(svc, trace, shrink=opts.shrink, seed=opts.seed)
        svc.replay.start()
    svc.save()
    return svc, kernels, wake


async def _schedule_loop(
    svc: BatchService,
    wake: asyncio.Event,
    stop: asyncio.Event,
    reload: asyncio.Event,
    config: str,
    collector: Collector,
) -> bool:
    """Run until stopped; True if scheduling failed (logged with its traceback)."""
    clock = svc.clock
    planned: float | None = None
    while not stop.is_set():
        nxt = svc.next_event_time()
        # Wake at least once a wall second, so the saved clock stays current.
        beat = clock.now() + max(1, int(svc.speed * HEARTBEAT_WALL_SECONDS))
        await clock.sleep_until(beat if nxt is None else min(nxt, beat), wake)
        if clock.now() > CLOCK_MAX:
            # Past the last date the clock may show: stop before anything is saved there.
            log.error("clock_ran_out", now=clock.now(), limit=CLOCK_MAX, range=CLOCK_RANGE)
            stop.set()
            return True
        if reload.is_set():
            reload.clear()
            _reload(svc, config)
        try:
            svc.tick()
            collector.tick()
            # The planned-schedule gauges need a full plan: made here, at most once
            # per interval, so that a scrape never plans.
            if planned is None or time.monotonic() - planned >= svc.site.metrics.plan_interval:
                svc.refresh_plan_gauges()
                planned = time.monotonic()
        except Exception:
            log.exception("scheduling_failed")
            stop.set()
            return True
        # Cleared after the tick, whose own commit sets it: the tick never yields,
        # so no API call can have set it meanwhile.
        wake.clear()
    return False


def _reload(svc: BatchService, path: str) -> None:
    try:
        svc.reload(load_site(path))
    except (ConfigError, ValueError) as exc:
        log.error("config_reload_refused", error=str(exc), config=path)
