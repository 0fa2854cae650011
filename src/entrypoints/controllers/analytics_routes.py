"""Algolia's Insights API (``POST /1/events``) and Analytics API (``GET /2/...``) on
searchport: the events go to the query log, the figures come from it (docs/analytics.md).

Every answer of ``/1/events`` is Insights' ``{status, message}`` (``error_bodies``), and its
body may be as large as Insights takes (2 MB, past ``limits.maxBodyBytes``), in whatever
``Content-Type`` (``navigator.sendBeacon`` sends ``text/plain``). The ``/2/`` routes answer
in the shapes of Algolia's Analytics specification; their parameters are its own.

These routes are documented in docs/analytics.md and by Algolia's specifications, not in
searchport's own OpenAPI document.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from litestar import Request, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.params import QueryParameter

from searchport.domain.analytics.period import AnalyticsRequest
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of
from searchport.entrypoints.http.error_bodies import EVENTS_PATH, InsightsBody
from searchport.entrypoints.http.http_cache import Prepared, json_body

EVENTS_MAX_BYTES = 2 * 1024 * 1024  # Insights: "the request body must be smaller than 2 MB"
_encode = msgspec.json.Encoder().encode
OK = _encode(InsightsBody(status=200, message="OK"))
AnyRequest = Request[Any, Any, Any]

Text = Annotated[str | None, QueryParameter(required=False)]


def analytics_routes(uc: UseCases, reports: tuple[str, ...]) -> list[HTTPRouteHandler]:
    """``POST /1/events``, and one ``GET`` route per path of ``reports`` (the container's
    ``ANALYTICS_REPORTS``)."""

    @post(EVENTS_PATH, status_code=200, request_max_body_size=EVENTS_MAX_BYTES,
          include_in_schema=False)
    async def events(request: AnyRequest) -> Prepared:
        await uc.send_events()(await request.body(), access_of(request.scope))
        return json_body(OK)

    def report_route(path: str) -> HTTPRouteHandler:
        async def report(
            request: AnyRequest,
            index: Text = None,
            start_date: Annotated[str | None, QueryParameter(name="startDate")] = None,
            end_date: Annotated[str | None, QueryParameter(name="endDate")] = None,
            limit: Annotated[int, QueryParameter()] = 10,
            offset: Annotated[int, QueryParameter()] = 0,
            tags: Text = None,
            click_analytics: Annotated[bool, QueryParameter(name="clickAnalytics")] = False,
            revenue_analytics: Annotated[bool,
                                         QueryParameter(name="revenueAnalytics")] = False,
            order_by: Annotated[str | None, QueryParameter(name="orderBy")] = None,
            direction: Text = None,
            search: Text = None,
        ) -> Prepared:
            asked = AnalyticsRequest(
                index=index, start_date=start_date, end_date=end_date, limit=limit,
                offset=offset, tags=tags, click_analytics=click_analytics,
                revenue_analytics=revenue_analytics, order_by=order_by, direction=direction,
                search=search, attribute=request.path_params.get("attribute"))
            answer = await uc.analytics_reports()[path](asked, access_of(request.scope))
            return json_body(_encode(answer))

        report.__name__ = "analytics" + re.sub(r"\W", "_", path.split("{")[0])
        return get(path, include_in_schema=False, name=report.__name__)(report)

    return [events, *(report_route(path) for path in reports)]
