"""Algolia's rule object, as its Search API specification declares it
(``specs/search/paths/rules/common/schemas.yml`` in algolia/api-clients-automation).

The structs decode one rule object and encode it back unchanged for the read-only rule
routes. Only what searchport honours is declared: any other key (``redirect``,
``automaticOptionalFacetFilters``, a consequence parameter such as ``hitsPerPage``...) is
an unknown field, so a rule holding it is refused at startup with its key path, never
silently ignored. Attribute names may be a handle's aliases.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

Anchoring = Literal["is", "startsWith", "endsWith", "contains"]
Context = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]+$")]
ObjectID = Annotated[str, msgspec.Meta(min_length=1)]
MAX_POSITION = 1000  # a promoted hit's position, 0-based


class _Part(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True,
            omit_defaults=True):
    pass


class Condition(_Part, frozen=True):
    """When a rule applies: a query pattern, a context, filters; all those given must hold.
    ``{facet:attribute}`` in a pattern stands for any value of that facet."""

    pattern: str | None = None
    anchoring: Anchoring | None = None
    alternatives: bool = False
    context: Context | None = None
    filters: str | None = None


class TimeRange(_Part, frozen=True):
    """Seconds since the Unix epoch; a missing end is open."""

    start: int | None = msgspec.field(default=None, name="from")
    until: int | None = None


class Edit(_Part, frozen=True):
    type: Literal["remove", "replace"]
    delete: Annotated[str, msgspec.Meta(min_length=1)]
    insert: str | None = None


class QueryEdits(_Part, frozen=True):
    remove: list[str] | str | None = None  # the older form of ``edits`` of type remove
    edits: tuple[Edit, ...] = ()


class AutomaticFacetFilter(_Part, frozen=True):
    facet: Annotated[str, msgspec.Meta(min_length=1)]
    score: int = 1
    disjunctive: bool = False


class FacetValuesOrder(_Part, frozen=True, rename="camel"):
    order: tuple[str, ...] = ()
    sort_remaining_by: Literal["count", "alpha", "hidden"] | None = None
    hide: tuple[str, ...] = ()


class FacetsOrder(_Part, frozen=True):
    order: tuple[str, ...] = ()


class FacetOrdering(_Part, frozen=True):
    facets: FacetsOrder | None = None
    values: dict[str, FacetValuesOrder] = msgspec.field(default_factory=dict)


class RenderingContent(_Part, frozen=True, rename="camel"):
    facet_ordering: FacetOrdering | None = None


NestedFilters = str | list[str | list[str]]


class ConsequenceParams(_Part, frozen=True, rename="camel"):
    query: str | QueryEdits | None = None
    filters: str | None = None
    facet_filters: NestedFilters | None = None
    numeric_filters: NestedFilters | None = None
    automatic_facet_filters: list[AutomaticFacetFilter | str] | None = None
    rendering_content: RenderingContent | None = None


class Promote(_Part, frozen=True, kw_only=True):
    """One record (``objectID``) or a group (``objectIDs``, in order) from ``position``."""

    object_id: ObjectID | None = msgspec.field(default=None, name="objectID")
    object_ids: Annotated[list[ObjectID], msgspec.Meta(min_length=1, max_length=100)] | None = \
        msgspec.field(default=None, name="objectIDs")
    position: Annotated[int, msgspec.Meta(ge=0, le=MAX_POSITION)]

    def __post_init__(self) -> None:
        if (self.object_id is None) == (self.object_ids is None):
            raise ValueError("a promote names either objectID or objectIDs")

    @property
    def ids(self) -> list[str]:
        return [self.object_id] if self.object_id is not None else list(self.object_ids or ())


class Hide(_Part, frozen=True):
    object_id: ObjectID = msgspec.field(name="objectID")


class Consequence(_Part, frozen=True):
    params: ConsequenceParams | None = None
    promote: Annotated[tuple[Promote, ...], msgspec.Meta(max_length=300)] = ()
    filter_promotes: bool = msgspec.field(default=False, name="filterPromotes")
    hide: Annotated[tuple[Hide, ...], msgspec.Meta(max_length=50)] = ()
    user_data: dict[str, Any] | None = msgspec.field(default=None, name="userData")


class Rule(_Part, frozen=True, kw_only=True):
    object_id: ObjectID = msgspec.field(name="objectID")
    conditions: Annotated[tuple[Condition, ...], msgspec.Meta(max_length=25)] = ()
    condition: Condition | None = None  # the older single-condition form
    consequence: Consequence
    description: str | None = None
    enabled: bool = True
    validity: tuple[TimeRange, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def all_conditions(self) -> list[Condition]:
        return [*self.conditions, *([self.condition] if self.condition else [])]


BOOKKEEPING = ("_metadata", "_highlightResult")  # what Algolia adds to exported rules


class ExportedRule(Rule, frozen=True, kw_only=True):
    """A rule as Algolia's exports hold it: the bookkeeping keys it adds are read, then
    dropped by ``plain``."""

    metadata: Any = msgspec.field(default=None, name="_metadata")
    highlight_result: Any = msgspec.field(default=None, name="_highlightResult")

    def plain(self) -> Rule:
        if self.metadata is None and self.highlight_result is None:
            return self
        return Rule(**{name: getattr(self, name) for name in Rule.__struct_fields__})


def decode_rule(raw: Any) -> Rule:
    """One rule object (a parsed JSON value) without Algolia's bookkeeping keys;
    ``msgspec.ValidationError`` names the path."""
    return msgspec.convert(without_bookkeeping(raw), Rule)


def without_bookkeeping(raw: Any) -> Any:
    if isinstance(raw, dict) and any(k in raw for k in BOOKKEEPING):
        return {k: v for k, v in raw.items() if k not in BOOKKEEPING}
    return raw
