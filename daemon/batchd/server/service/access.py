"""Who may do what: roles from the site's ``[auth]`` and the checks every operation makes.

Users act on their own jobs; operators on any job, on holds of type ``o`` and on
nodes; managers on everything, the scheduler and reservations included. Root and
the daemon's own user are managers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from batchd.server.errors import forbidden
from batchd.site.config import AuthConfig

Role = Literal["user", "operator", "manager"]
RANK: dict[Role, int] = {"user": 0, "operator": 1, "manager": 2}
HOLD_NEEDS: dict[str, Role] = {"u": "user", "o": "operator", "s": "manager"}


@dataclass(frozen=True)
class Caller:
    user: str
    role: Role

    def at_least(self, role: Role) -> bool:
        return RANK[self.role] >= RANK[role]


class Access:
    def __init__(self, auth: AuthConfig, daemon_user: str) -> None:
        self.auth = auth  # replaced when the configuration is read again
        self.daemon_user = daemon_user

    def role_of(self, user: str) -> Role:
        if user in ("root", self.daemon_user) or user in self.auth.managers:
            return "manager"
        if user in self.auth.operators:
            return "operator"
        return "user"

    def caller(self, user: str) -> Caller:
        return Caller(user, self.role_of(user))


def require(caller: Caller, role: Role, what: str) -> None:
    """Refuse ``caller`` unless it has ``role``: "<user> may not <what> (<who may>)"."""
    if not caller.at_least(role):
        who = "operators and managers" if role == "operator" else "managers only"
        raise forbidden(f"{caller.user} may not {what} ({who})")


def may_act_on(caller: Caller, owner: str, what: str, job_id: str) -> None:
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
