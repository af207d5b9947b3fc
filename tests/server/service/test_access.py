"""Who may do what, rule by rule: roles, seeing a job, acting on it, holds of each type."""

from __future__ import annotations

import pytest

from batchd.server.errors import ApiError
from batchd.server.service.access import (
    Access,
    Caller,
    Role,
    may_act_on,
    may_hold,
    may_see,
    require,
    unauthorized,
)
from batchd.site.tables import AuthConfig

ROLES: tuple[Role, ...] = ("user", "operator", "manager")


def refusal(check: object, *args: object) -> str:
    """The message of the 403 that ``check(*args)`` raises."""
    assert callable(check)
    with pytest.raises(ApiError) as refused:
        check(*args)
    assert (refused.value.status, refused.value.code) == (403, "forbidden")
    return refused.value.message


def test_roles_come_from_the_auth_table_root_and_the_daemons_user() -> None:
    others = [True]
    access = Access(AuthConfig(managers=["boss"], operators=["oper"]), "batchd", lambda: others[0])
    assert [access.role_of(u) for u in ("root", "batchd", "boss", "oper", "alice")] == [
        "manager",
        "manager",
        "manager",
        "operator",
        "user",
    ]
    assert access.caller("oper") == Caller("oper", "operator", True)
    others[0] = False  # the server attribute as it is when the request comes in
    assert access.caller("alice") == Caller("alice", "user", False)


def test_a_manager_named_also_as_operator_is_a_manager() -> None:
    access = Access(AuthConfig(managers=["boss"], operators=["boss"]), "batchd", lambda: False)
    assert access.role_of("boss") == "manager"


def test_each_role_is_at_least_the_roles_below_it() -> None:
    for i, role in enumerate(ROLES):
        caller = Caller("x", role)
        assert [caller.at_least(r) for r in ROLES] == [j <= i for j in range(3)]


@pytest.mark.parametrize(
    ("role", "others", "sees_bob", "variables_of_bob"),
    [
        ("user", False, False, False),
        ("user", True, True, False),
        ("operator", False, True, True),
        ("manager", False, True, True),
    ],
)
def test_who_sees_a_job_and_its_variables(
    role: Role, others: bool, sees_bob: bool, variables_of_bob: bool
) -> None:
    alice = Caller("alice", role, others)
    assert alice.sees("alice") and alice.sees_variables("alice")
    assert alice.sees_all is sees_bob
    assert alice.sees("bob") is sees_bob
    assert alice.sees_variables("bob") is variables_of_bob


def test_a_job_one_may_not_see_is_refused_without_its_owner() -> None:
    assert unauthorized("7.mini").message == "Unauthorized Request 7.mini"
    may_see(Caller("alice", "user"), "alice", "7.mini")
    message = refusal(may_see, Caller("alice", "user"), "bob", "7.mini")
    assert message == "Unauthorized Request 7.mini"
    # Acting on it says the same, not who owns it.
    message = refusal(may_act_on, Caller("alice", "user"), "bob", "delete", "7.mini")
    assert message == "Unauthorized Request 7.mini"


def test_users_act_on_their_own_jobs_operators_and_managers_on_any() -> None:
    may_act_on(Caller("alice", "user"), "alice", "delete", "7.mini")
    may_act_on(Caller("oper", "operator"), "alice", "delete", "7.mini")
    may_act_on(Caller("boss", "manager"), "alice", "delete", "7.mini")
    seeing = Caller("bob", "user", sees_others=True)
    message = refusal(may_act_on, seeing, "alice", "delete", "7.mini")
    assert message == "bob may not delete job 7.mini, owned by alice"


def test_require_names_the_role_an_operation_needs() -> None:
    require(Caller("oper", "operator"), "operator", "offline nodes")
    require(Caller("boss", "manager"), "operator", "offline nodes")
    require(Caller("boss", "manager"), "manager", "change the scheduler")
    assert refusal(require, Caller("alice", "user"), "operator", "offline nodes") == (
        "alice may not offline nodes (operators and managers)"
    )
    assert refusal(require, Caller("oper", "operator"), "manager", "change the scheduler") == (
        "oper may not change the scheduler (managers only)"
    )


@pytest.mark.parametrize(
    ("role", "allowed"),
    [("user", "u"), ("operator", "uo"), ("manager", "uos")],
)
def test_each_hold_type_needs_its_rank(role: Role, allowed: str) -> None:
    caller = Caller("alice", role)
    for t in "uos":
        if t in allowed:
            may_hold(caller, "alice", t, "hold", "7.mini")
            continue
        need = "operators and managers" if t == "o" else "managers"
        assert refusal(may_hold, caller, "alice", t, "hold", "7.mini") == (
            f"alice may not hold a hold of type {t} ({need} only)"
        )
    # Several types: every one must be allowed, the first one that is not is named.
    if allowed != "uos":
        refused = next(t for t in "uos" if t not in allowed)
        assert f"type {refused} " in refusal(may_hold, caller, "alice", "uos", "hold", "7.mini")


def test_a_hold_on_another_users_job_needs_an_operator_first() -> None:
    seeing = Caller("bob", "user", sees_others=True)
    assert refusal(may_hold, seeing, "alice", "u", "release", "7.mini") == (
        "bob may not release job 7.mini, owned by alice"
    )
    may_hold(Caller("oper", "operator"), "alice", "uo", "release", "7.mini")
