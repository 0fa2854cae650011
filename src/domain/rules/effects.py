"""One rule's consequence checked and prepared at startup, and the consequences of the
rules that apply to a search merged into one ``RulePlan``.

Merging follows the rules' precedence (highest first): the query is the replacement of
the first rule that replaces it, else the original with every rule's edits applied in
turn (an edit removes or replaces each occurrence of its words anywhere in the query);
filters of every rule AND together with the search's own; a record promoted by several
rules takes the first rule's position; a hidden record is never promoted; ``userData``
lists every rule's, ``appliedRules`` every rule; the first rule with a facet ordering
gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from searchport.domain.errors import InvalidRequest
from searchport.domain.query import Filter, TermFilter
from searchport.domain.rules.format import (
    AutomaticFacetFilter,
    ConsequenceParams,
    FacetOrdering,
    QueryEdits,
    Rule,
)
from searchport.domain.rules.format import Condition as RuleCondition
from searchport.domain.rules.text import (
    FacetValues,
    Placeholder,
    Token,
    match_at,
    pattern_tokens,
    words,
)

Condition = tuple[tuple[Token, ...] | None, str, str | None, frozenset[tuple[str, str]]]
Fail = Callable[[str, str], ValueError]  # (key path, what to fix) -> the rule's error
ReadFilters = Callable[[str, str, Any], tuple[Filter, ...]]  # (key path, parameter, value)
# Shared by every compiled rule without one of its own (ten thousand rules hold ten thousand
# empty sets and dicts otherwise); never changed, as the rules are frozen.
NOTHING: frozenset[Any] = frozenset()
NO_FACETS: dict[str, AutomaticFacetFilter] = {}
NO_FIELDS: dict[str, str] = {}


class Promotion(msgspec.Struct, frozen=True):
    """A promoted record and the 0-based position asked for it; ``filtered``: shown only
    when it matches the search's filters (``filterPromotes``)."""

    object_id: str
    position: int
    filtered: bool = False


class CompiledRule(msgspec.Struct, frozen=True, kw_only=True):
    rule: Rule
    filters: tuple[Filter, ...] = ()
    automatic: dict[str, AutomaticFacetFilter] = msgspec.field(default_factory=dict)
    real: dict[str, str] = msgspec.field(default_factory=dict)  # automatic facets' fields
    replacement: str | None = None
    edits: tuple[tuple[tuple[Token, ...], str | None], ...] = ()
    edit_attributes: frozenset[str] = frozenset()
    windows: tuple[tuple[int | None, int | None], ...] = ()

    def active(self, now: float) -> bool:
        return not self.windows or any(
            (start is None or start <= now) and (until is None or now <= until)
            for start, until in self.windows)


class Matched(msgspec.Struct, frozen=True):
    rule: CompiledRule
    values: tuple[tuple[str, str], ...]  # facet values its placeholders took


class RulePlan(msgspec.Struct, frozen=True, kw_only=True):
    """What the applied rules do to one search (rules in precedence order)."""

    query: str
    filters: tuple[Filter, ...] = ()
    hidden: tuple[str, ...] = ()
    promoted: tuple[Promotion, ...] = ()  # by position, then precedence
    user_data: tuple[dict[str, Any], ...] = ()
    applied: tuple[str, ...] = ()  # objectIDs
    facet_ordering: FacetOrdering | None = None


def compile_rule(rule: Rule, real: Callable[[str], str],
                 read_filters: Callable[[str, Any], tuple[Filter, ...]]
                 ) -> tuple[CompiledRule, list[Condition]]:
    """Raises ``ValueError`` ("rule 'id': key.path: what to fix") for what searchport
    cannot honour."""

    def fail(path: str, message: str) -> ValueError:
        return ValueError(f"rule {rule.object_id!r}: {path}: {message}")

    def read(path: str, name: str, value: Any) -> tuple[Filter, ...]:
        try:
            return read_filters(name, value)
        except (InvalidRequest, ValueError) as exc:
            raise fail(path, getattr(exc, "message", str(exc))) from None

    conditions, placeholders = _conditions(rule, fail, read)
    params = rule.consequence.params
    filters: tuple[Filter, ...] = ()
    automatic: dict[str, AutomaticFacetFilter] = {}
    replacement: str | None = None
    edits: list[tuple[tuple[Token, ...], str | None]] = []
    if params is not None:
        filters = _consequence_filters(params, read)
        automatic = _automatic_facets(params, placeholders, fail)
        if isinstance(params.query, str):
            replacement = params.query
        elif isinstance(params.query, QueryEdits):
            edits = _edits(params.query, fail)
    edit_attributes = frozenset(t.attribute for tokens, _ in edits for t in tokens
                                if isinstance(t, Placeholder)) or NOTHING
    for i, window in enumerate(rule.validity):
        if window.start is not None and window.until is not None and window.start > window.until:
            raise fail(f"validity[{i}]", "from is after until")
    compiled = CompiledRule(
        rule=rule, filters=filters, automatic=automatic or NO_FACETS,
        real={a: real(a) for a in automatic} or NO_FIELDS, replacement=replacement,
        edits=tuple(edits),
        edit_attributes=edit_attributes,
        windows=tuple((w.start, w.until) for w in rule.validity))
    return compiled, conditions


def _conditions(rule: Rule, fail: Fail, read: ReadFilters
                ) -> tuple[list[Condition], set[str]]:
    """The rule's conditions (one that holds for every search when it has none), and the
    facet attributes its patterns' placeholders name."""
    if rule.conditions and rule.condition is not None:
        raise fail("condition", "give conditions or the older condition, not both")
    conditions: list[Condition] = []
    placeholders: set[str] = set()
    for i, cond in enumerate(rule.all_conditions):
        at = f"conditions[{i}]" if i < len(rule.conditions) else "condition"
        tokens = _pattern(cond, at, fail)
        placeholders.update(t.attribute for t in tokens or () if isinstance(t, Placeholder))
        if cond.alternatives:
            raise fail(f"{at}.alternatives", "patterns matching plurals, synonyms and typos "
                       "are not supported; set it to false")
        conditions.append((tokens, cond.anchoring or "contains", cond.context,
                           _condition_facets(cond, at, fail, read)))
    if not conditions:  # a rule without conditions applies to every search
        conditions.append((None, "contains", None, NOTHING))
    return conditions, placeholders


def _pattern(cond: RuleCondition, at: str, fail: Fail) -> tuple[Token, ...] | None:
    """The condition's pattern as tokens; ``None`` without one."""
    if cond.pattern is None:
        if cond.anchoring is not None:
            raise fail(f"{at}.pattern", "required with anchoring")
        return None
    if cond.anchoring is None:
        raise fail(f"{at}.anchoring", "required with a pattern")
    tokens = pattern_tokens(cond.pattern)
    if not tokens and cond.anchoring != "is":
        raise fail(f"{at}.pattern", "an empty pattern needs anchoring 'is'")
    return tokens


def _condition_facets(cond: RuleCondition, at: str, fail: Fail, read: ReadFilters
                      ) -> frozenset[tuple[str, str]]:
    """The (field, value) pairs the condition's ``filters`` ask the search to have."""
    if cond.filters is None:
        return NOTHING
    pairs: set[tuple[str, str]] = set()
    for f in read(f"{at}.filters", "filters", cond.filters):
        if not isinstance(f, TermFilter) or len(f.values) != 1:
            raise fail(f"{at}.filters", "a condition's filters are facet:value filters "
                       "joined by AND")
        pairs.add((f.field, str(f.values[0])))
    return frozenset(pairs) if pairs else NOTHING


def _consequence_filters(params: ConsequenceParams, read: ReadFilters) -> tuple[Filter, ...]:
    """The filters the consequence adds, from each of Algolia's three filter parameters."""
    filters: list[Filter] = []
    for name, value in (("filters", params.filters),
                        ("facetFilters", params.facet_filters),
                        ("numericFilters", params.numeric_filters)):
        if value is not None:
            filters += read(f"consequence.params.{name}", name, value)
    return tuple(filters)


def _automatic_facets(params: ConsequenceParams, placeholders: set[str], fail: Fail
                      ) -> dict[str, AutomaticFacetFilter]:
    """``automaticFacetFilters`` by facet, each the placeholder of a condition's pattern."""
    automatic: dict[str, AutomaticFacetFilter] = {}
    for i, auto in enumerate(params.automatic_facet_filters or ()):
        spec = AutomaticFacetFilter(facet=auto) if isinstance(auto, str) else auto
        at = f"consequence.params.automaticFacetFilters[{i}]"
        if spec.facet not in placeholders:
            raise fail(at, f"no condition's pattern has the placeholder {{facet:{spec.facet}}}")
        if spec.score != 1:
            raise fail(f"{at}.score", "filter scores are not supported")
        automatic[spec.facet] = spec
    return automatic


def _edits(query: QueryEdits, fail: Fail) -> list[tuple[tuple[Token, ...], str | None]]:
    found: list[tuple[tuple[Token, ...], str | None]] = []
    removed = [query.remove] if isinstance(query.remove, str) else query.remove or []
    for i, text in enumerate(removed):
        tokens = pattern_tokens(text)
        if not tokens:
            raise fail(f"consequence.params.query.remove[{i}]", "names no word")
        found.append((tokens, None))
    for i, edit in enumerate(query.edits):
        at = f"consequence.params.query.edits[{i}]"
        tokens = pattern_tokens(edit.delete)
        if not tokens:
            raise fail(f"{at}.delete", "names no word")
        if edit.type == "replace" and edit.insert is None:
            raise fail(f"{at}.insert", "required by a replace edit")
        if edit.type == "remove" and edit.insert is not None:
            raise fail(f"{at}.insert", "a remove edit inserts nothing; use type replace")
        found.append((tokens, edit.insert))
    return found


def edit_query(text: str, tokens: tuple[Token, ...], insert: str | None,
               facets: FacetValues) -> str:
    """``text`` with each occurrence of ``tokens`` removed, or replaced by ``insert``."""
    found = words(text)
    query = tuple(w.text for w in found)
    pieces: list[str] = []
    kept = 0  # characters of ``text`` already copied
    at = 0
    while at < len(query):
        match = match_at(tokens, query, at, facets)
        if match is None or match.end == at:
            at += 1
            continue
        pieces.append(text[kept:found[at].start])
        if insert:
            pieces.append(insert)
        kept = found[match.end - 1].end
        at = match.end
    if not pieces:
        return text
    return " ".join("".join([*pieces, text[kept:]]).split())


def plan(matched: list[Matched] | tuple[()], text: str, facets: FacetValues) -> RulePlan:
    if not matched:
        return RulePlan(query=text)
    query = text
    replacement = next((m.rule.replacement for m in matched
                        if m.rule.replacement is not None), None)
    if replacement is not None:
        query = replacement
    else:
        for m in matched:
            for tokens, insert in m.rule.edits:
                query = edit_query(query, tokens, insert, facets)
    filters: list[Filter] = []
    hidden: dict[str, None] = {}
    promoted: dict[str, Promotion] = {}
    user_data: list[dict[str, Any]] = []
    ordering: FacetOrdering | None = None
    for m in matched:
        rule = m.rule
        consequence = rule.rule.consequence
        filters += rule.filters
        filters += _automatic(rule, m.values)
        hidden.update((h.object_id, None) for h in consequence.hide)
        for promote in consequence.promote:
            for i, oid in enumerate(promote.ids):
                promoted.setdefault(oid, Promotion(oid, promote.position + i,
                                                   consequence.filter_promotes))
        if consequence.user_data is not None:
            user_data.append(consequence.user_data)
        params = consequence.params
        if ordering is None and params is not None and params.rendering_content is not None:
            ordering = params.rendering_content.facet_ordering
    placed = sorted((p for oid, p in promoted.items() if oid not in hidden),
                    key=lambda p: p.position)  # stable: precedence among equal positions
    return RulePlan(query=query, filters=tuple(filters), hidden=tuple(hidden),
                    promoted=tuple(placed), user_data=tuple(user_data),
                    applied=tuple(m.rule.rule.object_id for m in matched),
                    facet_ordering=ordering)


def _automatic(rule: CompiledRule, values: tuple[tuple[str, str], ...]) -> list[Filter]:
    found: list[Filter] = []
    grouped: dict[str, list[str]] = {}
    for attribute, value in values:
        spec = rule.automatic.get(attribute)
        if spec is None:
            continue
        if spec.disjunctive:
            grouped.setdefault(attribute, []).append(value)
        else:
            found.append(TermFilter(field=rule.real[attribute], values=(value,)))
    found += [TermFilter(field=rule.real[a], values=tuple(dict.fromkeys(vs)))
              for a, vs in grouped.items()]
    return found
