"""Algolia's Insights API (``POST /1/events``) and Analytics API (``GET /2/...``) on
searchport (docs/analytics.md). Every answer of ``/1/events`` is Insights' ``{status,
message}``, and its body may be as large as Insights takes (2 MB, past
``limits.maxBodyBytes``), in whatever ``Content-Type`` (``navigator.sendBeacon`` sends
``text/plain``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from litestar import Request, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter

from searchport.domain.analytics import answers as shapes
from searchport.domain.analytics.period import AnalyticsRequest
from searchport.entrypoints.controllers.use_cases import UseCases
from searchport.entrypoints.http.auth import access_of
from searchport.entrypoints.http.error_bodies import (
    EVENTS_PATH,
    AlgoliaErrorBody,
    InsightsBody,
)
from searchport.entrypoints.http.http_cache import Prepared, json_body

EVENTS_MAX_BYTES = 2 * 1024 * 1024  # Insights: "the request body must be smaller than 2 MB"
_encode = msgspec.json.Encoder().encode
OK = _encode(InsightsBody(status=200, message="OK"))
AnyRequest = Request[Any, Any, Any]

Text = Annotated[str | None, QueryParameter(required=False)]

# route -> (its answer, what it says), for the OpenAPI document
ANSWERS: dict[str, tuple[Any, str]] = {
    "/2/searches": (shapes.TopSearchesAnswer, "The most frequent searches (orderBy, "
                    "direction), with click, conversion (clickAnalytics) and revenue "
                    "(revenueAnalytics) figures."),
    "/2/searches/count": (shapes.SearchesCountAnswer, "Searches in the period, and per day."),
    "/2/searches/noResults": (shapes.SearchesNoResultsAnswer, "The most frequent searches "
                              "that found nothing."),
    "/2/searches/noClicks": (shapes.SearchesNoClicksAnswer, "The most frequent tracked "
                             "searches no click followed."),
    "/2/searches/noResultRate": (shapes.NoResultsRateAnswer, "Searches without results "
                                 "divided by searches, and per day."),
    "/2/searches/noClickRate": (shapes.NoClickRateAnswer, "Tracked searches without a click "
                                "divided by tracked searches, and per day."),
    "/2/clicks/clickThroughRate": (shapes.ClickThroughRateAnswer, "Tracked searches with at "
                                   "least one click divided by tracked searches, and per day."),
    "/2/clicks/averageClickPosition": (shapes.AverageClickPositionAnswer, "The mean position "
                                       "of the clicks, and per day."),
    "/2/clicks/positions": (shapes.ClickPositionsAnswer, "Clicks per position range."),
    "/2/conversions/conversionRate": (shapes.ConversionRateAnswer, "Tracked searches with at "
                                      "least one conversion divided by tracked searches, and "
                                      "per day."),
    "/2/hits": (shapes.TopHitsAnswer, "The objectIDs the searches returned most often."),
    "/2/users/count": (shapes.UsersCountAnswer, "Distinct users in the period, and per day."),
    "/2/filters": (shapes.TopFilterAttributesAnswer, "The attributes refined most often."),
    "/2/filters/noResults": (shapes.TopFiltersNoResultsAnswer, "The combinations of "
                             "refinements of the searches that found nothing."),
    "/2/filters/{attribute:str}": (shapes.TopFilterForAttributeAnswer, "The values of one "
                                   "attribute refined most often."),
    "/2/status": (shapes.StatusAnswer, "When the handle's last search was logged."),
}


def _algolia_error(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=AlgoliaErrorBody, description=description)


def _insights(description: str) -> ResponseSpec:
    return ResponseSpec(data_container=InsightsBody, description=description)


REPORT_ERRORS = {
    400: _algolia_error("A parameter is invalid; the sentence names it."),
    401: _algolia_error("A key is configured and the request has none that is valid."),
    403: _algolia_error("The key may not read analytics."),
    404: _algolia_error("No such handle, or not one this key may read."),
    414: _algolia_error("The query string is longer than limits.maxQueryBytes."),
    429: _algolia_error("Rate limited (rateLimit)."),
}
EVENT_ANSWERS = {
    200: _insights('The events are taken: {"status": 200, "message": "OK"}.'),
    401: _insights("A key is configured and the request has none that is valid (the key may "
                   "come in the X-Algolia-API-Key query parameter)."),
    403: _insights("An event names a handle this key may not read."),
    413: _insights("The body is larger than 2 MB."),
    422: _insights("An event is invalid; the message names it and its field, and no event "
                   "of the batch is kept."),
    429: _insights("Rate limited (rateLimit)."),
}


def analytics_routes(uc: UseCases, reports: tuple[str, ...]) -> list[HTTPRouteHandler]:
    """``POST /1/events``, and one ``GET`` route per path of ``reports`` (the container's
    ``ANALYTICS_REPORTS``)."""

    @post(EVENTS_PATH, status_code=200, request_max_body_size=EVENTS_MAX_BYTES,
          tags=["analytics"], responses=EVENT_ANSWERS,
          summary="Send click, conversion and view events (Algolia's Insights API)",
          description="Up to 1,000 events in Insights' shape, JSON whatever the "
                      "Content-Type; see docs/analytics.md.")
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
        body, said = ANSWERS[path]
        return get(path, name=report.__name__, tags=["analytics"],
                   summary=said.split(" (")[0].rstrip("."), description=said,
                   responses={200: ResponseSpec(data_container=body, generate_examples=False,
                                                description=said), **REPORT_ERRORS},
                   )(report)

    return [events, *(report_route(path) for path in reports)]
