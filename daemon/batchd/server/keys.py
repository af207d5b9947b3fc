"""The typed keys of the app's shared state and of each request's."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry

from batchd.server.authguard import AuthGuard
from batchd.server.planfeed import PlanFeed
from batchd.server.service import BatchService, Caller

SERVICE = web.AppKey("service", BatchService)
TOKENS = web.AppKey("tokens", dict)  # token digest -> user (auth.token_digests)
AUTH_GUARD = web.AppKey("auth_guard", AuthGuard)
REGISTRY = web.AppKey("registry", CollectorRegistry)
PLAN_FEED = web.AppKey("plan_feed", PlanFeed)
CALLER = web.RequestKey("caller", Caller)
