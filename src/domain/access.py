"""What one API key may read: its handles, the filters forced on every read, raw queries.

An ``Access`` is resolved from the key by the HTTP layer and handed to every use case, which
applies it itself, so every route gets the same rules:

- a handle the access does not allow is unknown (``IndexNotFound``, the 404 of a handle that
  does not exist: a key never learns that a handle it cannot read exists);
- the forced filters of a handle travel as one ``AllOf`` ANDed to whatever the request
  asks: the request can narrow the result, never widen it (an ``OR`` in its filters stays
  inside), and no facet count drops it (an ``AllOf`` is never a facet's own filter);
- a raw query is refused under restricted access unless the key allows them, and then carries the
  forced filters to an engine that can keep them.

``fingerprint`` names the restrictions (a digest, never key material): answers under one
key's access are cached and tagged apart from another's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from searchport.domain.catalog import Catalog, IndexEntry
from searchport.domain.errors import Forbidden, IndexNotFound
from searchport.domain.params import parse_filters
from searchport.domain.query import AllOf, Filter

# the forced filters of one handle, in its real field names (empty: none)
ForcedFilters = Callable[[IndexEntry], tuple[Filter, ...]]
EVERY_HANDLE = ("*",)


def _no_filters(entry: IndexEntry) -> tuple[Filter, ...]:
    return ()


def handle_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Handle names or patterns where ``*`` stands for any characters (``dev_*``)."""
    alternatives = ("|".join(".*".join(re.escape(part) for part in p.split("*"))
                             for p in patterns))
    return re.compile(f"(?:{alternatives})" if patterns else "(?!)")


def filters_by_handle(filters: Mapping[str, Any]) -> ForcedFilters:
    """A named key's ``filters``: handle (or ``*`` pattern) -> the ``filters`` parameter's
    JSON; the first pattern that matches a handle gives its filters."""
    patterns = [(handle_pattern((pattern,)), value) for pattern, value in filters.items()]

    def forced(entry: IndexEntry) -> tuple[Filter, ...]:
        for pattern, value in patterns:
            if pattern.fullmatch(entry.handle):
                return parse_filters(value, entry.fields)
        return ()

    return forced


class Access:
    """The restrictions of one key (``Access()``: none, what a plain key has)."""

    __slots__ = ("_filters", "_forced", "_matchers", "analytics", "filtered", "fingerprint",
                 "handle_limited", "raw_query")

    def __init__(
        self,
        *,
        handles: tuple[str, ...] = EVERY_HANDLE,
        forced: ForcedFilters = _no_filters,
        filtered: bool = False,
        raw_query: bool | None = None,
        fingerprint: str = "",
        analytics: bool = True,
    ) -> None:
        """``filtered``: ``forced`` may force a filter on some handle; ``raw_query``:
        ``None`` allows raw queries only when nothing is restricted; ``analytics``: the key
        may read the analytics (``/2/`` routes) of the handles it may read."""
        self._matchers: tuple[re.Pattern[str], ...] = (handle_pattern(handles),)
        self.handle_limited = handles != EVERY_HANDLE
        self._forced = forced
        self.filtered = filtered
        self.raw_query = not self.restricted if raw_query is None else raw_query
        self.fingerprint = fingerprint
        self.analytics = analytics
        self._filters: dict[str, tuple[Filter, ...]] = {}

    @property
    def restricted(self) -> bool:
        return self.filtered or self.handle_limited

    def allows(self, handle: str) -> bool:
        return all(m.fullmatch(handle) is not None for m in self._matchers)

    def entry(self, catalog: Catalog, handle: str) -> IndexEntry:
        """The handle's entry; ``IndexNotFound`` when it is unknown *or* not allowed."""
        if not self.allows(handle):
            raise IndexNotFound(handle)
        return catalog.get_entry(handle)

    def forced(self, entry: IndexEntry) -> tuple[Filter, ...]:
        """The filters forced on this handle, as one ``AllOf`` (or nothing)."""
        known = self._filters.get(entry.handle)
        if known is None:
            own = self._forced(entry) if self.filtered else ()
            known = (AllOf(filters=own),) if own else ()
            self._filters[entry.handle] = known
        return known

    def restrict(self, entry: IndexEntry, filters: tuple[Filter, ...]) -> tuple[Filter, ...]:
        """The request's filters with the forced ones ANDed around them."""
        return filters + self.forced(entry)

    def raw_filters(self, entry: IndexEntry) -> tuple[Filter, ...]:
        """The filters a raw query must keep; ``Forbidden`` when this key may not send one."""
        if not self.raw_query:
            raise Forbidden("This API key may not run raw queries: it is restricted to some "
                            "handles or records, and its configuration does not allow them")
        return self.forced(entry)

    def analytics_entry(self, catalog: Catalog, handle: str) -> IndexEntry:
        """``entry``, for reading the handle's analytics: ``Forbidden`` when this key may
        not read analytics at all."""
        if not self.analytics:
            raise Forbidden("This API key may not read analytics: use the apiKey, or a named "
                            "key with analytics: true")
        return self.entry(catalog, handle)

    def within(self, outer: Access) -> Access:
        """This access inside ``outer`` (a secured key inside its parent's): both must allow
        a handle, both sets of forced filters hold, raw queries need both to allow them; it
        never reads analytics (a secured key is handed to browsers)."""
        inner = self

        def forced(entry: IndexEntry) -> tuple[Filter, ...]:
            both = outer.forced(entry) + inner.forced(entry)
            return tuple(f for group in both if isinstance(group, AllOf) for f in group.filters)

        access = Access(forced=forced, filtered=self.filtered or outer.filtered,
                        raw_query=self.raw_query and outer.raw_query,
                        fingerprint=f"{outer.fingerprint}/{self.fingerprint}",
                        analytics=False)
        access._matchers = outer._matchers + self._matchers
        access.handle_limited = outer.handle_limited or self.handle_limited
        return access


FULL_ACCESS = Access()
