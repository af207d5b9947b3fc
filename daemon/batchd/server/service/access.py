"""Who may do what: roles from the site's ``[auth]`` and the checks every operation makes.

Users act on their own jobs; operators on any job, on holds of type ``o`` and on
nodes; managers on everything, the scheduler and reservations included. Root and
the daemon's own user are managers.

Who sees a job follows PBS's server attribute ``query_other_jobs``: off (the default),
a user sees only their own jobs; on, every job. Operators and managers see every job
either way. A job's variables (``Variable_List``, where secrets travel) are shown to
its owner, operators and managers only, whatever the setting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from batchd.server.errors import ApiError, forbidden
from batchd.site.tables import AuthConfig

Role = Literal["user", "operator", "manager"]
RANK: dict[Role, int] = {"user": 0, "operator": 1, "manager": 2}
HOLD_NEEDS: dict[str, Role] = {"u": "user", "o": "operator", "s": "manager"}


@dataclass(frozen=True)
class Caller:
    user: str
    role: Role
    # query_other_jobs when the request came in: whether other users' jobs are shown
    sees_others: bool = False

    def at_least(self, role: Role) -> bool:
        return RANK[self.role] >= RANK[role]

    @property
    def sees_all(self) -> bool:
        """Whether the caller may see every user's jobs."""
        return self.sees_others or self.at_least("operator")

    def sees(self, owner: str) -> bool:
        """Whether the caller may see a job of ``owner`` at all."""
        return self.user == owner or self.sees_all

    def sees_variables(self, owner: str) -> bool:
        """Whether the caller may see the variables of a job of ``owner``."""
        return self.user == owner or self.at_least("operator")


def unauthorized(job_id: str) -> ApiError:
    """The answer about a job the caller may not see (PBS's words for PBSE_PERM)."""
    return forbidden(f"Unauthorized Request {job_id}")


def may_see(caller: Caller, owner: str, job_id: str) -> None:
    if not caller.sees(owner):
        raise unauthorized(job_id)


class Access:
    def __init__(
        self, auth: AuthConfig, daemon_user: str, query_other_jobs: Callable[[], bool]
    ) -> None:
        self.auth = auth  # replaced when the configuration is read again
        self.daemon_user = daemon_user
        self.query_other_jobs = query_other_jobs  # the server attribute as it is now

    def role_of(self, user: str) -> Role:
        if user in ("root", self.daemon_user) or user in self.auth.managers:
            return "manager"
        if user in self.auth.operators:
            return "operator"
        return "user"

    def caller(self, user: str) -> Caller:
        return Caller(user, self.role_of(user), self.query_other_jobs())


def require(caller: Caller, role: Role, what: str) -> None:
    """Refuse ``caller`` unless it has ``role``: "<user> may not <what> (<who may>)"."""
    if not caller.at_least(role):
        who = "operators and managers" if role == "operator" else "managers only"
        raise forbidden(f"{caller.user} may not {what} ({who})")


def may_act_on(caller: Caller, owner: str, what: str, job_id: str) -> None:
    may_see(caller, owner, job_id)  # a job it may not see is not named, nor its owner
    if caller.user != owner and not caller.at_least("operator"):
        raise forbidden(f"{caller.user} may not {what} job {job_id}, owned by {owner}")


def may_hold(caller: Caller, owner: str, types: str, what: str, job_id: str) -> None:
    """A hold or release of these types: the job's owner, and the rank each type needs."""
    may_act_on(caller, owner, what, job_id)
    for t in types:
        need = HOLD_NEEDS[t]
        if not caller.at_least(need):
            raise forbidden(
                f"{caller.user} may not {what} a hold of type {t} "
                f"({'operators and managers' if need == 'operator' else 'managers'} only)"
            )
