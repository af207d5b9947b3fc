"""The batch system behind the API, one part per job.

``facade.BatchService`` is what the app and the daemon use; the parts: ``access``
(roles and permission checks), ``admission`` (queue limits and windows at
submission), ``lifecycle`` (a job's transitions as PBS users see them),
``dependencies``, ``nodes``, ``reservations``, ``scheduler`` (each machine's policy
and plan), ``journal`` (what is saved, and when), ``history`` (finished jobs, kept
in the database for job_history_duration) and ``restore`` (starting again from
the state file).
"""

from batchd.server.service.access import Caller
from batchd.server.service.facade import BatchService

__all__ = ["BatchService", "Caller"]
