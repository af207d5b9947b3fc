"""Operations on advance reservations (pbs_rsub, pbs_rdel)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from batchd.model.reservation import Reservation
from batchd.server.admin_schemas import ReservationCreate
from batchd.server.service.access import Caller, require

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


def create(svc: BatchService, caller: Caller, body: ReservationCreate) -> Reservation:
    with svc.change():
        require(caller, "manager", "create reservations")
        machine = svc.machine_named(body.machine)
        resv = svc.reservations.create(
            svc.engine, machine, svc.site.machine[machine].nodes, caller.user, body
        )
    log.info("reservation_created", resv=svc.resv_id(resv.id), start=resv.start, nodes=body.nodes)
    return resv


def delete(svc: BatchService, caller: Caller, text: str) -> Reservation:
    with svc.change():
        require(caller, "manager", "delete reservations")
        resv = svc.reservations.find(text)
        svc.reservations.delete(svc.engine, resv)
    log.info("reservation_deleted", resv=svc.resv_id(resv.id), by=caller.user)
    return resv
