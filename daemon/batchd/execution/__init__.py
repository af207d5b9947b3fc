"""Running jobs for real on this host, as PBS's MoM runs them.

The daemon decides; this package carries out. A job is launched through a small
supervisor process of its own (``supervisor``), forked by a launcher process that
the daemon starts (``launcher``), so that the daemon never forks and the
supervisor outlives a daemon that stops or dies. The supervisor starts the job's
process as its owner (``child``), keeps its process tree together (``cgroups``,
``procs``), enforces the walltime, the memory limit and the daemon's signals, and
writes the job's end where the daemon finds it, then or after a restart
(``spool``). ``local`` is the daemon's side: it launches, signals and watches.

Only the standard library and the modules of this package are imported here: the
launcher and every supervisor run this code, as root under a root daemon.
"""
