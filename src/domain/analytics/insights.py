"""The events of Algolia's Insights API (``POST /1/events``), read and checked as its
OpenAPI specification says (algolia/api-clients-automation, ``specs/insights``).

``instantsearch`` events (InstantSearch's usage reports, sent on every page load) are
accepted and dropped, whatever they carry; fields searchport does not use
(``algoliaSource``, ``agentID``...) are accepted and ignored. All events must be valid or
none is kept: the first problem is reported as ``events[i].field: sentence`` (a 422; a
403 for an event on a handle the caller may not send events for).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from searchport.domain.analytics.records import USER_TOKEN
from searchport.domain.errors import Forbidden, Unprocessable

MAX_EVENTS = 1000
MAX_ITEMS = 20  # objectIDs, filters, positions
MAX_AGE_SECONDS = 30 * 86_400  # "Must be no older than 30 days"
MAX_AHEAD_SECONDS = 3600  # searchport's own bound: a clock may run ahead, not by days

EventType = Literal["click", "conversion", "view"]
_KEPT: dict[str, EventType] = {"click": "click", "conversion": "conversion", "view": "view"}
_SUBTYPES = ("addToCart", "purchase")

_EVENT_NAME = re.compile(r"[\x20-\x7E]{1,64}")
_QUERY_ID = re.compile(r"[0-9a-f]{32}|message_[!-~]+")
_OBJECT_QUERY_ID = re.compile(r"[0-9a-f]{32}")


class InvalidEvents(Unprocessable):
    """A batch that cannot be taken (422); ``message`` names the event and its field."""


Fail = Callable[[str, str], InvalidEvents]  # (field, sentence) -> the event's error


class InsightsEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One click, conversion or view, as kept in the log."""

    at: float  # seconds since the Unix epoch (UTC)
    handle: str
    type: EventType
    subtype: str | None  # conversions: addToCart, purchase or None
    name: str
    user_token: str
    authenticated_user_token: str | None = None
    object_ids: tuple[str, ...] = ()
    positions: tuple[int, ...] = ()  # clicks after a search: 1-based, one per object
    query_id: str | None = None
    filters: tuple[str, ...] = ()  # ``attribute:value``, the value URL-encoded
    # conversions: the search each object came from (``objectData[i].queryID``, as a
    # purchase after several searches gives them), "" for an object without one
    object_query_ids: tuple[str, ...] = ()
    # conversions: ``value`` (the event's total) and ``currency``; each object's
    # ``price`` x ``quantity`` - ``discount`` from ``objectData``, when it gives a price
    revenue: float | None = None
    currency: str | None = None
    object_revenues: tuple[float | None, ...] = ()


class _Batch(msgspec.Struct):
    events: list[msgspec.Raw]


class _Kind(msgspec.Struct, rename="camel"):
    event_type: Any = None


class _Event(msgspec.Struct, kw_only=True, rename="camel"):
    event_name: str | None = None
    event_type: str | None = None
    event_subtype: str | None = None
    index: str | None = None
    user_token: str | None = None
    authenticated_user_token: str | None = None
    object_ids: list[str] | None = msgspec.field(default=None, name="objectIDs")
    positions: list[int] | None = None
    query_id: str | None = msgspec.field(default=None, name="queryID")
    filters: list[str] | None = None
    timestamp: int | None = None
    object_data: list[dict[str, Any]] | None = None
    algolia_source: list[str] | None = None  # InstantSearch's own mark, accepted
    value: float | str | None = None
    currency: str | None = None


_batch = msgspec.json.Decoder(_Batch)
_kind = msgspec.json.Decoder(_Kind)
_event = msgspec.json.Decoder(_Event)


def _where(error: msgspec.ValidationError, prefix: str) -> str:
    """msgspec's ``Expected `str`, got `int` - at `$.userToken``` as ``prefix.userToken:
    Expected `str`, got `int```."""
    detail, _, at = str(error).partition(" - at `$")
    path = f"{prefix}{at.rstrip('`')}".lstrip(".")
    return f"{path}: {detail}" if path else detail


def read_events(body: bytes, now: float,
                may_send: Callable[[str], bool] | None = None) -> list[InsightsEvent]:
    """The clicks, conversions and views of a request body (JSON, whatever its content
    type said) arrived at ``now``; an event for a handle ``may_send`` refuses is
    ``Forbidden``."""
    try:
        batch = _batch.decode(body)
    except msgspec.ValidationError as exc:
        if str(exc).startswith("Expected `object`"):
            raise InvalidEvents("The body must be an object with an events array") from None
        raise InvalidEvents(_where(exc, "")) from None
    except msgspec.DecodeError:
        raise InvalidEvents("The body is not valid JSON") from None
    if not batch.events:
        raise InvalidEvents("No events to process")
    if len(batch.events) > MAX_EVENTS:
        raise InvalidEvents(f"Cannot process more than {MAX_EVENTS} events in a batch")
    kept: list[InsightsEvent] = []
    for i, raw in enumerate(batch.events):
        where = f"events[{i}]"
        try:
            if _kind.decode(raw).event_type == "instantsearch":
                continue  # usage reports: accepted, never kept
            event = _event.decode(raw)
        except msgspec.ValidationError as exc:
            raise InvalidEvents(_where(exc, where)) from None
        checked = _checked(event, where, now)
        if may_send is not None and not may_send(checked.handle):
            raise Forbidden(f"{where}.index: this key may not send events for "
                            f"{checked.handle!r}")
        kept.append(checked)
    return kept


def _checked(event: _Event, where: str, now: float) -> InsightsEvent:
    def fail(field: str, sentence: str) -> InvalidEvents:
        return InvalidEvents(f"{where}.{field}: {sentence}")

    name, kind = _name_and_type(event, fail)
    handle = event.index
    if not handle:
        raise fail("index", "The index field is required")
    _check_user_tokens(event, fail)
    _check_objects(event, fail)
    if event.query_id is not None and (len(event.query_id) > 128
                                       or not _QUERY_ID.fullmatch(event.query_id)):
        raise fail("queryID", "Query ID must be a search query ID (32 characters "
                              "hexadecimal string)")
    _check_positions(event, fail)
    object_query_ids = _object_query_ids(event, fail)
    return InsightsEvent(
        at=_event_time(event, now, fail), handle=handle, type=kind,
        subtype=event.event_subtype, name=name, user_token=event.user_token or "",
        authenticated_user_token=event.authenticated_user_token,
        object_ids=tuple(event.object_ids or ()), positions=tuple(event.positions or ()),
        query_id=event.query_id, filters=tuple(event.filters or ()),
        object_query_ids=object_query_ids,
        revenue=_amount(event.value), currency=event.currency[:3] if event.currency else None,
        object_revenues=_object_revenues(event),
    )


def _name_and_type(event: _Event, fail: Fail) -> tuple[str, EventType]:
    if event.event_name is None:
        raise fail("eventName", "EventName is required")
    if not _EVENT_NAME.fullmatch(event.event_name):
        raise fail("eventName", "EventName must contain only visible ASCII characters, and "
                                "be between 1 and 64 characters long")
    kind = event.event_type
    if kind is None:
        raise fail("eventType", "EventType is required")
    if kind not in _KEPT:
        raise fail("eventType", 'EventType must be one of "click", "conversion", "view" or '
                                '"instantsearch"')
    if event.event_subtype is not None and (kind != "conversion"
                                            or event.event_subtype not in _SUBTYPES):
        raise fail("eventSubtype", 'EventSubtype must be "addToCart" or "purchase", on a '
                                   "conversion event")
    return event.event_name, _KEPT[kind]


def _check_user_tokens(event: _Event, fail: Fail) -> None:
    for field, token in (("userToken", event.user_token),
                         ("authenticatedUserToken", event.authenticated_user_token)):
        if token is None and field == "userToken":
            raise fail(field, "The userToken field is required")
        if token is not None and not USER_TOKEN.fullmatch(token):
            raise fail(field, f"{field[0].upper()}{field[1:]} must contain only "
                              "alphanumeric, equal, plus, slash, hyphen, or underscore "
                              "characters, and be between 1 and 129 characters long")


def _check_objects(event: _Event, fail: Fail) -> None:
    objects, filters = event.object_ids, event.filters
    if objects is None and filters is None:
        raise fail("objectIDs", "Event should specify either some ObjectIDs or some Filters")
    if objects is not None and filters is not None:
        raise fail("filters", "Event should specify ObjectIDs or Filters, but not both")
    for field, items in (("objectIDs", objects), ("filters", filters),
                         ("objectData", event.object_data)):
        if items is not None and not 1 <= len(items) <= MAX_ITEMS:
            raise fail(field, f"{field} must have between 1 and {MAX_ITEMS} items")
    if event.object_data is not None and len(event.object_data) != len(objects or ()):
        raise fail("objectData", "objectData must have one entry per objectID")


def _event_time(event: _Event, now: float, fail: Fail) -> float:
    if event.timestamp is None:
        return now
    at = event.timestamp / 1000
    if at < now - MAX_AGE_SECONDS:
        raise fail("timestamp", "The timestamp is too far in the past (at most 30 days)")
    if at > now + MAX_AHEAD_SECONDS:
        raise fail("timestamp", "The timestamp is in the future")
    return at


def _amount(value: object) -> float | None:
    """A number, or a number written as text (Insights takes both); else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _object_revenues(event: _Event) -> tuple[float | None, ...]:
    found: list[float | None] = []
    for data in event.object_data or ():
        price = _amount(data.get("price"))
        quantity = _amount(data.get("quantity"))
        discount = _amount(data.get("discount")) or 0.0
        found.append(None if price is None
                     else price * (quantity if quantity is not None else 1.0) - discount)
    return tuple(found) if any(v is not None for v in found) else ()


def _object_query_ids(event: _Event, fail: Fail) -> tuple[str, ...]:
    found = []
    for i, data in enumerate(event.object_data or ()):
        query_id = data.get("queryID")
        if query_id is not None and not (isinstance(query_id, str)
                                         and _OBJECT_QUERY_ID.fullmatch(query_id)):
            raise fail(f"objectData[{i}].queryID", "Query ID must be a search query ID (32 "
                                                   "characters hexadecimal string)")
        found.append(query_id or "")
    return tuple(found) if any(found) else ()


def _check_positions(event: _Event, fail: Fail) -> None:
    positions = event.positions
    if positions is None:
        if event.event_type == "click" and event.query_id and event.object_ids is not None:
            raise fail("positions", "Event of type click should have the same number of "
                                    "ObjectIDs and Positions")
        return
    if event.event_type != "click":
        raise fail("positions", "Only event of type click should specify the positions "
                                "attribute")
    if event.query_id is None:
        raise fail("queryID", "Event of type click with positions should specify a queryID")
    if any(p < 1 for p in positions):
        raise fail("positions", "Event of type click may only have strictly positive "
                                "positions")
    if len(positions) != len(event.object_ids or ()):
        raise fail("positions", "Event of type click should have the same number of "
                                "ObjectIDs and Positions")
