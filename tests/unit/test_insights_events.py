"""Insights events read as Algolia's Insights specification says (``tests/specs/
insights.json``: the pushEvents request at a pinned commit of algolia/api-clients-automation).

The examples are the specification's own (``specs/insights/paths/pushEvents.yml``); every
refusal is checked to be one the specification's schema makes too, but for the rules it
cannot express (timestamps, equal lengths, the anchored patterns its documented 422
sentences state)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.domain.analytics.insights import InvalidEvents, read_events
from searchport.domain.errors import Forbidden
from tests.specs.checker import check, problems

NOW = 1_780_000_000.0  # seconds since the Unix epoch
QID = "7dfe2ada7bca48bdd0629649df0bee07"
BASE = {"index": "test-index", "userToken": "anonymous-user-1",
        "authenticatedUserToken": "user-1"}

SPEC_EXAMPLES: list[dict[str, Any]] = [
    {"eventName": "Products Clicked", "eventType": "click", **BASE, "objectIDs": ["object-1"],
     "positions": [1], "queryID": QID},
    {"eventName": "Articles Liked", "eventType": "conversion", **BASE,
     "objectIDs": ["article-1"], "queryID": QID},
    {"eventName": "Products Added To Cart", "eventType": "conversion",
     "eventSubtype": "addToCart", **BASE, "objectIDs": ["product-1"],
     "objectData": [{"price": 50, "quantity": 1}], "currency": "USD", "queryID": QID},
    {"eventName": "Products Purchased", "eventType": "conversion", "eventSubtype": "purchase",
     **BASE, "objectIDs": ["product-1", "product-2"],
     "objectData": [{"price": 49.99, "discount": 1.99, "quantity": 1, "queryID": QID},
                    {"price": 9.99, "discount": 0, "quantity": 2,
                     "queryID": "54ed4c9d94050a25e4e5ccf5d256ca42"}],
     "value": 69.97, "currency": "USD"},
    {"eventName": "Products Clicked", "eventType": "click", **BASE, "objectIDs": ["object-1"]},
    {"eventName": "Products Added To Cart", "eventType": "conversion", **BASE,
     "objectIDs": ["object-1"]},
    {"eventName": "Products Added To Cart", "eventType": "conversion",
     "eventSubtype": "addToCart", **BASE, "objectIDs": ["product-1"],
     "objectData": [{"price": 19.99, "quantity": 1}], "currency": "EUR"},
    {"eventName": "Products Purchased", "eventType": "conversion", "eventSubtype": "purchase",
     **BASE, "objectIDs": ["product-1", "product-2"],
     "objectData": [{"price": 49.99, "quantity": 1}, {"price": 9.99, "quantity": 2}],
     "currency": "USD", "value": 69.97},
    {"eventName": "Category Clicked", "eventType": "click", **BASE,
     "filters": ["category:books"]},
    {"eventName": "Category Converted", "eventType": "conversion", **BASE,
     "filters": ["category:books"]},
    {"eventName": "Products Viewed", "eventType": "view", **BASE, "objectIDs": ["object-1"]},
    {"eventName": "Category Viewed", "eventType": "view", **BASE,
     "filters": ["category:books"]},
]
SPEC_USAGE_EVENTS: list[dict[str, Any]] = [
    {"eventName": "Instantsearch Telemetry", "eventType": "instantsearch",
     "userToken": "anonymous-user-1"},
    {"eventName": "Instantsearch Telemetry", "eventType": "instantsearch",
     "userToken": "anonymous-user-1", "agentID": "agent-session-123"},
]
# what instantsearch.js 4.118's insights middleware sends on a page load: no userToken yet,
# and fields no specification lists
INSTANTSEARCH_START = {"eventType": "instantsearch", "timestamp": 1_780_000_000_000,
                       "sessionID": "s-1", "eventName": "__start__", "version": "4.118.1",
                       "applicationId": "app", "performance": {"bootstrapMs": 12},
                       "widgets": [{"type": "ais.instantSearch", "params": ["insights"]}]}


def body(*events: dict[str, Any]) -> bytes:
    return json.dumps({"events": list(events)}).encode()


def test_every_example_of_the_specification_is_taken_as_written() -> None:
    for example in SPEC_EXAMPLES + SPEC_USAGE_EVENTS:
        check("insights", "events.request", {"events": [example]})
    kept = read_events(body(*SPEC_EXAMPLES, *SPEC_USAGE_EVENTS), NOW)
    assert len(kept) == len(SPEC_EXAMPLES)  # the usage events are dropped
    for event, sent in zip(kept, SPEC_EXAMPLES, strict=True):
        assert (event.name, event.type, event.subtype, event.handle, event.user_token,
                event.authenticated_user_token, event.object_ids, event.positions,
                event.query_id, event.filters, event.at) == (
            sent["eventName"], sent["eventType"], sent.get("eventSubtype"), sent["index"],
            sent["userToken"], sent.get("authenticatedUserToken"),
            tuple(sent.get("objectIDs", ())), tuple(sent.get("positions", ())),
            sent.get("queryID"), tuple(sent.get("filters", ())), NOW)


def test_what_instantsearch_adds_is_accepted() -> None:
    click = {**SPEC_EXAMPLES[0], "algoliaSource": ["instantsearch", "instantsearch-internal"]}
    (event,) = read_events(body(INSTANTSEARCH_START, click), NOW)
    assert event.object_ids == ("object-1",) and event.positions == (1,)
    assert read_events(body(INSTANTSEARCH_START), NOW) == []


def test_a_timestamp_is_kept_in_seconds() -> None:
    sent = {**SPEC_EXAMPLES[4], "timestamp": int((NOW - 86_400) * 1000)}
    (event,) = read_events(body(sent), NOW)
    assert event.at == NOW - 86_400


def with_(example: int, /, **changes: Any) -> dict[str, Any]:
    event = copy.deepcopy(SPEC_EXAMPLES[example])
    for key, value in changes.items():
        if value is ...:
            event.pop(key)
        else:
            event[key] = value
    return event


REFUSED = [  # (event, expected message, the specification refuses it too)
    (with_(0, eventName=...), "events[0].eventName: EventName is required", True),
    (with_(0, eventName="x" * 65), "events[0].eventName: EventName must contain only "
     "visible ASCII characters", True),
    (with_(0, eventName="Clické"), "events[0].eventName: EventName must contain only", False),
    (with_(0, eventType=...), "events[0].eventType: EventType is required", True),
    (with_(0, eventType="purchase"), 'events[0].eventType: EventType must be one of "click"',
     True),
    (with_(0, index=...), "events[0].index: The index field is required", True),
    (with_(0, userToken=...), "events[0].userToken: The userToken field is required", True),
    (with_(0, userToken="x" * 130), "events[0].userToken: UserToken must contain only", True),
    (with_(0, userToken="john doe"), "events[0].userToken: UserToken must contain only",
     False),
    (with_(4, objectIDs=...), "events[0].objectIDs: Event should specify either some "
     "ObjectIDs or some Filters", True),
    (with_(4, filters=["a:b"]), "events[0].filters: Event should specify ObjectIDs or "
     "Filters, but not both", True),
    (with_(4, objectIDs=[f"o{i}" for i in range(21)]), "events[0].objectIDs: objectIDs must "
     "have between 1 and 20 items", True),
    (with_(8, filters=[]), "events[0].filters: filters must have between 1 and 20", True),
    (with_(1, positions=[1]), "events[0].positions: Only event of type click should specify "
     "the positions attribute", True),
    (with_(0, queryID=...), "events[0].queryID: Event of type click with positions should "
     "specify a queryID", True),
    (with_(0, positions=[0]), "events[0].positions: Event of type click may only have "
     "strictly positive positions", True),
    (with_(0, positions=[1, 2]), "events[0].positions: Event of type click should have the "
     "same number of ObjectIDs and Positions", False),  # its 422 list, not its schema
    (with_(0, positions=...), "events[0].positions: Event of type click should have the "
     "same number of ObjectIDs and Positions", True),
    (with_(0, queryID="7DFE2ADA7BCA48BDD0629649DF0BEE07"), "events[0].queryID: Query ID "
     "must be a search query ID", True),
    (with_(0, eventSubtype="purchase"), "events[0].eventSubtype: EventSubtype must be", True),
    (with_(3, objectData=[{"price": 1}]), "events[0].objectData: objectData must have one "
     "entry per objectID", False),
    (with_(3, objectData=[{"queryID": "x"}, {}]), "events[0].objectData[0].queryID: Query "
     "ID must be a search query ID", True),
    (with_(0, positions=["1"]), "events[0].positions[0]: Expected `int`, got `str`", True),
    (with_(0, userToken=42), "events[0].userToken: Expected `str | null`, got `int`", True),
    (with_(4, timestamp=int((NOW - 31 * 86_400) * 1000)), "events[0].timestamp: The "
     "timestamp is too far in the past", False),
    (with_(4, timestamp=int((NOW + 7200) * 1000)), "events[0].timestamp: The timestamp is "
     "in the future", False),
]


@pytest.mark.parametrize(("event", "message", "spec_refuses"), REFUSED,
                         ids=[r[1][:60] for r in REFUSED])
def test_a_refused_event_is_named_with_its_field(event: dict[str, Any], message: str,
                                                 spec_refuses: bool) -> None:
    with pytest.raises(InvalidEvents) as refused:
        read_events(body(event), NOW)
    assert refused.value.message.startswith(message), refused.value.message
    assert bool(problems("insights", "events.request", {"events": [event]})) is spec_refuses


def test_the_index_of_the_first_bad_event_is_named_and_none_is_kept() -> None:
    with pytest.raises(InvalidEvents, match=r"^events\[2\]\.userToken: "):
        read_events(body(SPEC_EXAMPLES[0], INSTANTSEARCH_START, with_(1, userToken="a b")), NOW)


@pytest.mark.parametrize(("sent", "message"), [
    (b"", "The body is not valid JSON"),
    (b"{", "The body is not valid JSON"),
    (b"[]", "The body must be an object with an events array"),
    (b"{}", "Object missing required field `events`"),
    (b'{"events": {}}', "events: Expected `array`, got `object`"),
    (b'{"events": []}', "No events to process"),
    (body(*[SPEC_EXAMPLES[4]] * 1001), "Cannot process more than 1000 events in a batch"),
    (b'{"events": [1]}', "events[0]: Expected `object`, got `int`"),
])
def test_a_refused_batch(sent: bytes, message: str) -> None:
    with pytest.raises(InvalidEvents) as refused:
        read_events(sent, NOW)
    assert refused.value.message == message


def test_a_full_batch_is_taken() -> None:
    events = [with_(0, objectIDs=[f"o{i}"]) for i in range(1000)]
    kept = read_events(body(*events), NOW)
    assert [e.object_ids for e in kept] == [(f"o{i}",) for i in range(1000)]


# the documented 422 rules the specification's schema cannot express
BEYOND_THE_SCHEMA = ("should have the same number of ObjectIDs and Positions",
                     "objectData must have one entry per objectID")
TOKENS = st.from_regex(r"\A[a-zA-Z0-9_=/+-]{1,129}\Z")
NAMES = st.from_regex(r"\A[\x20-\x7E]{1,64}\Z")
IDS = st.lists(st.text("abcxyz-0123456789", min_size=1, max_size=8), min_size=1, max_size=20)
SHAPES = ["click after search", "click", "click filters", "conversion after search",
          "conversion", "conversion filters", "view", "view filters"]


@st.composite
def valid_events(draw: st.DrawFn) -> dict[str, Any]:
    """One event of one of the specification's shapes, valid."""
    shape = draw(st.sampled_from(SHAPES))
    kind = shape.split()[0]
    event: dict[str, Any] = {"eventName": draw(NAMES), "eventType": kind,
                             "index": draw(st.sampled_from(["books", "films"])),
                             "userToken": draw(TOKENS)}
    if draw(st.booleans()):
        event["authenticatedUserToken"] = draw(TOKENS)
    if shape.endswith("filters"):
        event["filters"] = [f"genre:{v}" for v in draw(IDS)]
    else:
        event["objectIDs"] = draw(IDS)
    subtype = None
    if kind == "conversion" and not shape.endswith("filters") and draw(st.booleans()):
        subtype = event["eventSubtype"] = draw(st.sampled_from(["addToCart", "purchase"]))
    if shape.endswith("after search") and subtype == "purchase":  # one search per object
        event["objectData"] = [{"queryID": draw(st.sampled_from([QID, QID[::-1]])),
                                "quantity": 1} for _ in event["objectIDs"]]
    elif shape.endswith("after search"):
        event["queryID"] = draw(st.sampled_from([QID, "message_agent-1"]))
        if kind == "click":
            event["positions"] = draw(st.lists(st.integers(1, 1000),
                                               min_size=len(event["objectIDs"]),
                                               max_size=len(event["objectIDs"])))
    if draw(st.booleans()):
        event["timestamp"] = int((NOW - draw(st.integers(0, 29 * 86_400))) * 1000)
    return event


MUTATIONS = [
    ("drop", "eventName"), ("drop", "eventType"), ("drop", "index"), ("drop", "userToken"),
    ("drop", "objectIDs"), ("drop", "positions"), ("drop", "queryID"),
    ("set", "eventName", ""), ("set", "eventName", "n" * 65), ("set", "userToken", ""),
    ("set", "userToken", "t" * 130), ("set", "eventType", "refund"),
    ("set", "objectIDs", [f"o{i}" for i in range(21)]), ("set", "objectIDs", []),
    ("set", "filters", ["a:b"]), ("set", "positions", [0]), ("set", "positions", [1]),
    ("set", "queryID", "abc"), ("set", "queryID", QID.upper()),
    ("set", "eventSubtype", "refund"), ("set", "eventSubtype", "purchase"),
]


@settings(max_examples=300, deadline=None)
@given(valid_events(), st.one_of(st.none(), st.sampled_from(MUTATIONS)))
def test_what_the_specification_accepts_is_taken(event: dict[str, Any],
                                                 mutation: tuple[Any, ...] | None) -> None:
    """A valid event of every shape is taken as sent; a mutated one is refused when the
    specification refuses it, and taken when the specification takes it."""
    if mutation is not None:
        if mutation[0] == "drop":
            event.pop(mutation[1], None)
        else:
            event[mutation[1]] = mutation[2]
    spec_accepts = not problems("insights", "events.request", {"events": [event]})
    assert spec_accepts or mutation is not None, "the generator makes valid events"
    try:
        (kept,) = read_events(body(event), NOW)
    except InvalidEvents as exc:
        assert not spec_accepts or exc.message.endswith(BEYOND_THE_SCHEMA), (
            f"refused what the specification accepts: {exc.message}")
        return
    assert (kept.handle, kept.object_ids, kept.filters, kept.query_id, kept.positions,
            kept.object_query_ids) == (
        event["index"], tuple(event.get("objectIDs", ())), tuple(event.get("filters", ())),
        event.get("queryID"), tuple(event.get("positions", ())),
        tuple(d["queryID"] for d in event.get("objectData", ())))


def test_events_for_a_handle_the_key_may_not_read_are_refused() -> None:
    allowed = {"test-index"}.__contains__
    assert len(read_events(body(SPEC_EXAMPLES[0]), NOW, allowed)) == 1
    other = {**SPEC_EXAMPLES[4], "index": "secret"}
    with pytest.raises(Forbidden) as refused:
        read_events(body(SPEC_EXAMPLES[0], INSTANTSEARCH_START, other), NOW, allowed)
    assert refused.value.message == ("events[2].index: this key may not send events for "
                                     "'secret'")
