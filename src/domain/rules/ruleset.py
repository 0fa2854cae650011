"""A handle's rules, checked and indexed at startup, and which of them apply to a search.

Which rules apply follows Algolia's rule-matching algorithm ("Rules matching algorithm",
algolia.com/doc/guides/managing-results/rules/rules-overview/in-depth/rule-matching-algorithm):
every matching rule is sorted by precedence, a rule that conflicts with one of higher
precedence is left out, and the others all apply. Precedence compares, each criterion only
on a tie of the ones before it:

1. position: the match closest to the beginning of the query wins;
2. match length: more query words matched, plus the condition's filters matched, wins;
3. anchoring: ``is`` > ``startsWith`` > ``endsWith`` > ``contains``;
4. context: a condition with a context wins;
5. filters: a condition with filters wins;
6. literals over placeholders: a pattern without ``{facet:...}`` wins;
7. temporary over permanent: a rule with ``validity`` windows wins;
8. rule ID: the smaller ``objectID`` (in code-point order) wins.

Each condition of a rule counts as a rule of its own; a rule applies once, through its
best non-conflicting condition. Two rules conflict when their patterns matched a common
query word ("multiple rules can match a query provided they match a distinct set of
words"), or when both replace the whole query. A condition without a pattern (context or
filters only) and a rule without conditions match no words.

Matching is indexed: a literal pattern is found by dictionary lookups of the query's word
sequences (``is``: the whole query; ``startsWith``/``endsWith``: its first/last words;
``contains``: every run of as many words as some pattern has), a pattern-less condition by
its context or its first filter. Only patterns with ``{facet:...}`` placeholders are tried
one by one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

from searchport.domain.query import AllOf, AnyOf, Filter, TermFilter
from searchport.domain.rules.effects import CompiledRule, Matched, RulePlan, compile_rule, plan
from searchport.domain.rules.format import Rule
from searchport.domain.rules.text import FacetValues, Found, Placeholder, Token, keys, match_at

ANCHORING_RANK = {"is": 0, "startsWith": 1, "endsWith": 2, "contains": 3}
FilterReader = Callable[[str, Any], tuple[Filter, ...]]
"""A handle's reader of Algolia filter parameters (``filters``, ``facetFilters``,
``numericFilters``) into domain filters on real fields; ``InvalidRequest`` when invalid."""


class RuleQuery(msgspec.Struct, frozen=True, kw_only=True):
    """What rules look at: the query text, the ``ruleContexts``, and the facet values the
    search's filters select (real field, value)."""

    text: str = ""
    contexts: frozenset[str] = frozenset()
    selected: frozenset[tuple[str, str]] = frozenset()


def selected_values(filters: Iterable[Filter]) -> frozenset[tuple[str, str]]:
    """The (field, value) pairs a search's filters select: its ``TermFilter`` values, also
    inside an ``AnyOf``/``AllOf`` (a refinement among others is still selected)."""
    found: set[tuple[str, str]] = set()
    stack = list(filters)
    while stack:
        f = stack.pop()
        if isinstance(f, TermFilter):
            found.update((f.field, _text(v)) for v in f.values)
        elif isinstance(f, AnyOf | AllOf):
            stack.extend(f.filters)
    return frozenset(found)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Cond(msgspec.Struct, frozen=True):
    rule: CompiledRule
    tokens: tuple[Token, ...] | None  # None: no pattern
    anchoring: str
    context: str | None
    filters: frozenset[tuple[str, str]]
    literal: bool


class _Match(msgspec.Struct, frozen=True):
    key: tuple[Any, ...]
    cond: _Cond
    spans: tuple[Found, ...]


class RuleSet:
    """The enabled rules of one handle, indexed; ``apply`` gives the plan for one search."""

    def __init__(self, rules: Sequence[Rule], *, real: Callable[[str], str],
                 read_filters: FilterReader, clock: Callable[[], float] = time.time) -> None:
        """Raises ``ValueError`` naming the rule's objectID and key path for a rule that
        cannot be honoured."""
        self.rules = tuple(rules)
        self._clock = clock
        self._literal: dict[tuple[str, ...], tuple[_Cond, ...]] = {}  # by the pattern's words
        self._lengths: list[int] = []  # of the literal patterns (in words), each once
        self._placeholder: list[_Cond] = []
        self._by_context: dict[str, list[_Cond]] = {}
        self._by_filter: dict[tuple[str, str], list[_Cond]] = {}
        self._always: list[_Cond] = []
        self.facet_attributes: frozenset[str] = frozenset()
        seen: set[str] = set()
        attributes: set[str] = set()
        for rule in self.rules:
            if rule.object_id in seen:
                raise ValueError(f"rule {rule.object_id!r}: objectID: used by another rule")
            seen.add(rule.object_id)
            compiled, conditions = compile_rule(rule, real, read_filters)
            if not rule.enabled:
                continue
            for tokens, anchoring, context, pairs in conditions:
                self._index(_Cond(compiled, tokens, anchoring, context, pairs,
                                  tokens is None or all(isinstance(t, str) for t in tokens)))
                attributes.update(t.attribute for t in tokens or () if isinstance(t, Placeholder))
            attributes.update(compiled.edit_attributes)
        self.facet_attributes = frozenset(attributes)
        self._empty = not any((self._literal, self._placeholder, self._by_context,
                               self._by_filter, self._always))

    def _index(self, cond: _Cond) -> None:
        if cond.tokens is None:
            if cond.context is not None:
                self._by_context.setdefault(cond.context, []).append(cond)
            elif cond.filters:
                self._by_filter.setdefault(min(cond.filters), []).append(cond)
            else:
                self._always.append(cond)
        elif cond.literal:
            words: tuple[str, ...] = cond.tokens  # type: ignore[assignment]
            self._literal[words] = (*self._literal.get(words, ()), cond)  # mostly one
            if words and len(words) not in self._lengths:
                self._lengths.append(len(words))
        else:
            self._placeholder.append(cond)

    def apply(self, query: RuleQuery, facets: FacetValues | None = None) -> RulePlan:
        """The plan of the rules that apply to ``query`` (``facets``: the values
        ``{facet:...}`` placeholders may take)."""
        if self._empty:
            return plan((), query.text, {})
        facets = facets or {}
        words = keys(query.text)
        matches = self._matches(query, words, facets)
        return plan(self._resolve(matches), query.text, facets)

    def _matches(self, query: RuleQuery, words: tuple[str, ...],
                 facets: FacetValues) -> list[_Match]:
        hits = self._hits(query, words, facets)
        if not hits:
            return []
        found: list[_Match] = []
        now: float | None = None  # read once, and only when a rule has windows
        for cond, spans in hits.values():
            if cond.context is not None and cond.context not in query.contexts:
                continue
            if cond.filters and not cond.filters <= query.selected:
                continue
            if cond.rule.windows:
                now = self._clock() if now is None else now
                if not cond.rule.active(now):
                    continue
            found.append(_Match(self._key(cond, tuple(spans), len(words)), cond, tuple(spans)))
        return found

    def _hits(self, query: RuleQuery, words: tuple[str, ...],
              facets: FacetValues) -> dict[int, tuple[_Cond, list[Found]]]:
        """The conditions the query's words, contexts or filters may meet, each with where
        its pattern occurs (by ``id`` of the condition); their other requirements are
        ``_matches``' to check."""
        hits = self._literal_hits(words)
        for cond in self._placeholder:
            found_spans = _placeholder_spans(cond, words, facets)
            if found_spans:
                hits[id(cond)] = (cond, list(found_spans))
        for context in query.contexts:
            for cond in self._by_context.get(context, ()):
                hits[id(cond)] = (cond, [])
        for pair in query.selected:
            for cond in self._by_filter.get(pair, ()):
                hits[id(cond)] = (cond, [])
        for cond in self._always:
            hits[id(cond)] = (cond, [])
        return hits

    def _literal_hits(self, words: tuple[str, ...]) -> dict[int, tuple[_Cond, list[Found]]]:
        """The literal patterns found in ``words`` where their anchoring allows, each with
        its occurrences (none overlapping)."""
        n = len(words)
        hits: dict[int, tuple[_Cond, list[Found]]] = {}
        literal = self._literal
        if n == 0:
            for cond in literal.get((), ()):
                hits[id(cond)] = (cond, [])
        for k in self._lengths:  # every run of words as long as some literal pattern
            for start in range(n - k + 1):
                for cond in literal.get(words[start:start + k], ()):
                    if _anchored(cond.anchoring, start, k, n):
                        spans = hits.setdefault(id(cond), (cond, []))[1]
                        if not spans or spans[-1].end <= start:
                            spans.append(Found(start, start + k))
        return hits

    @staticmethod
    def _key(cond: _Cond, spans: tuple[Found, ...], n: int) -> tuple[Any, ...]:
        start = spans[0].start if spans else n
        length = sum(s.end - s.start for s in spans) + len(cond.filters)
        rule = cond.rule
        return (start, -length, ANCHORING_RANK[cond.anchoring], cond.context is None,
                not cond.filters, not cond.literal, not rule.windows, rule.rule.object_id)

    @staticmethod
    def _resolve(matches: list[_Match]) -> list[Matched]:
        matches.sort(key=lambda m: m.key)
        applied: list[Matched] = []
        done: set[str] = set()
        used: set[int] = set()
        replaced = False
        for m in matches:
            rule = m.cond.rule
            if rule.rule.object_id in done:
                continue
            words = {i for s in m.spans for i in range(s.start, s.end)}
            if words & used or (replaced and rule.replacement is not None):
                continue
            done.add(rule.rule.object_id)
            used |= words
            replaced = replaced or rule.replacement is not None
            applied.append(Matched(rule, tuple(v for s in m.spans for v in s.values)))
        return applied


def _anchored(anchoring: str, start: int, length: int, n: int) -> bool:
    """Whether a pattern of ``length`` words found at ``start`` in a query of ``n`` words
    sits where its anchoring asks (``is``: the whole query)."""
    return (anchoring == "contains" or (start == 0 and (anchoring == "startsWith" or length == n))
            or (anchoring == "endsWith" and start + length == n))


def _placeholder_spans(cond: _Cond, words: tuple[str, ...],
                       facets: FacetValues) -> tuple[Found, ...]:
    tokens = cond.tokens or ()
    n = len(words)
    if cond.anchoring in ("is", "startsWith"):
        found = match_at(tokens, words, 0, facets, n if cond.anchoring == "is" else None)
        return () if found is None else (found,)
    spans: list[Found] = []
    start = 0
    while start < n:
        ends = cond.anchoring == "endsWith"
        found = match_at(tokens, words, start, facets, n if ends else None)
        if found is not None and found.end > start:
            if ends:
                return (found,)
            else:
                spans.append(found)
                start = found.end
                continue
        start += 1
    return tuple(spans)
