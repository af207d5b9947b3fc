"""Operations on advance reservations (pbs_rsub, pbs_rdel)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from batchd.model.reservation import Reservation
from batchd.server.admin_schemas import ReservationCreate
from batchd.server.errors import forbidden
from batchd.server.service.access import Caller
from batchd.server.service.resources import ResourceRules

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


def create(svc: BatchService, caller: Caller, body: ReservationCreate) -> Reservation:
    """Any user reserves nodes, as with PBS's pbs_rsub; the reservation is theirs."""
    with svc.change():
        machine = svc.machine_named(body.machine)
        select = ""
        if body.select is not None:
            rules = ResourceRules(svc.site)
            select = rules.reservation_select(body.select, body.nodes, machine)
        resv = svc.reservations.create(
            svc.engine, machine, svc.site.machine[machine].nodes, caller.user, body
        )
        resv.select = select
    log.info(
        "reservation_created",
        resv=svc.resv_id(resv.id),
        start=resv.start,
        nodes=body.nodes,
        owner=caller.user,
    )
    return resv


def delete(svc: BatchService, caller: Caller, text: str) -> Reservation:
    """Its owner deletes a reservation, operators and managers any (pbs_rdel)."""
    with svc.change():
        resv = svc.reservations.find(text)
        if resv.owner != caller.user and not caller.at_least("operator"):
            raise forbidden(
                f"{caller.user} may not delete reservation {svc.resv_id(resv.id)}, "
                f"owned by {resv.owner} (its owner, operators and managers may)"
            )
        svc.reservations.delete(svc.engine, resv)
    log.info("reservation_deleted", resv=svc.resv_id(resv.id), by=caller.user)
    return resv
