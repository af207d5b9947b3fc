"""The aiohttp application, built by one factory that ``batchd serve`` and the tests use."""

from __future__ import annotations

from aiohttp import web

from batchd.metrics.exporter import make_registry
from batchd.server.auth import token_digests
from batchd.server.authguard import AuthGuard
from batchd.server.httplog import quiet_parse_errors
from batchd.server.keys import AUTH_GUARD, PLAN_FEED, REGISTRY, SERVICE, TOKENS
from batchd.server.middlewares import committed, errors, identity
from batchd.server.pages import routes as page_routes
from batchd.server.planfeed import PlanFeed
from batchd.server.routes import routes
from batchd.server.service import BatchService


def create_app(
    svc: BatchService, tokens: dict[str, str] | None = None, guard: AuthGuard | None = None
) -> web.Application:
    """The API over ``svc``; TCP callers need one of ``tokens`` (token -> user), and
    ``guard`` slows those that fail (its defaults unless given)."""
    app = web.Application(
        middlewares=[errors, identity, committed], client_max_size=svc.site.server.max_body
    )
    app[SERVICE] = svc
    app[TOKENS] = token_digests(tokens or {})
    app[AUTH_GUARD] = guard if guard is not None else AuthGuard()
    quiet_parse_errors()
    app[REGISTRY] = make_registry(svc)
    app[PLAN_FEED] = PlanFeed()
    app.add_routes(routes)
    app.add_routes(page_routes)
    return app
