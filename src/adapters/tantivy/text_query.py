"""The full-text part of a search: tiered relevance over the searched fields.

User text is analysed with the index's own analyzers and turned into query objects, so it
is never read as tantivy query syntax: ``title:x AND (`` is just three words.

Every query word matches a document's words exactly, with typos (``typos.allowed_typos``,
tantivy's ``FuzzyTermQuery``, a transposition counting as one) or, for the word being typed
(the last one, no space after it), as a prefix, also with typos. Each way scores a
constant, so a document's score is a whole number, its relevance tier (``Tiers``): more
matched words first, then fewer typos, then more adjacent query words, then the better
field (by configured weight). Equal tiers are ordered by the handle's custom ranking
(``ranking.py``), never by word statistics. The typed word counts the same whether it
equals a word or starts one ("par" finds Paris before Pār on the demo, by population).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import msgspec
import tantivy

from searchport.adapters.tantivy import values
from searchport.adapters.tantivy.filters import any_of, field_spec, must
from searchport.adapters.tantivy.matched_terms import MatchedTerms
from searchport.adapters.tantivy.schema import (
    MAX_PREFIX_CHARS,
    FieldSpec,
    IndexLayout,
    fold_analyzer,
    fold_field,
    prefix_field,
    text_analyzer,
)
from searchport.adapters.tantivy.typo_words import Vocabulary
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import FieldWeight
from searchport.domain.typos import allowed_typos

MATCHES_CACHED = 2_048  # built text queries kept per index
_NOT_BUILT = object()
_MAX_WORDS = 32  # beyond this a query is a paste, not a search; extra words are ignored
_BEST_FIELD = 2  # the field level of the highest weight; the next weight is 1, others 0

_REGEX_META = frozenset("\\.+*?()|[]{}^$#&-~")


def regex_escape(literal: str) -> str:
    """Escape the characters that are syntax in tantivy's (Rust) regex language."""
    return "".join("\\" + c if c in _REGEX_META else c for c in literal)


class Tiers:
    """The constant each match scores, chosen so that sums compare lexicographically:
    matched words, then typos, then adjacent pairs, then field levels."""

    def __init__(self, words: int) -> None:
        n = max(1, words)
        self.field = 1  # a field level is 0..2 per word: at most 2n in all
        self.adjacent = 2 * n + 1  # n - 1 adjacent pairs at most
        self.exactness = self.adjacent * n  # 2 - typos per word: at most 2n in all
        self.word = self.exactness * (2 * n + 1)

    def word_score(self, typos: int, level: int) -> float:
        return float(self.word + (2 - typos) * self.exactness + level * self.field)

    def every_word_exact(self, words: int) -> float:
        """The lowest tier of a document matching ``words`` words without a typo: above
        every tier with fewer words, or with a typo (adjacency and field levels add less
        than one typo costs)."""
        return float(words * (self.word + 2 * self.exactness))


class QueryWord(msgspec.Struct, frozen=True, kw_only=True):
    text: str  # analysed, as in the text fields' index
    prefix: bool  # the word being typed: it also matches the start of a word
    typos: int  # how many typos it may have


class Ways(msgspec.Struct, kw_only=True):
    """The ways one query word matches one field: scored without a typo, scored with
    typos, and the widest of them unscored (the documents of all of them)."""

    exact: list[tantivy.Query] = msgspec.field(default_factory=list)
    typos: list[tantivy.Query] = msgspec.field(default_factory=list)
    widest: list[tantivy.Query] = msgspec.field(default_factory=list)
    # the terms of a listed one-typo way (typo_words.py); None: an automaton, or none
    near: frozenset[str] | None = None
    # the (field, term) of each exact way; None: one of them is not a term (a regex)
    exact_terms: list[tuple[str, str]] | None = msgspec.field(default_factory=list)


class TextMatch(msgspec.Struct, frozen=True, kw_only=True):
    """The query for a text, and what a highlighter needs to mark the same words.

    ``query`` scores every match with its tier. ``matching`` matches the same documents
    unscored, with one clause per word and field (the widest of its ways), for counts and
    aggregations. ``exact`` is ``query`` without its typo ways (``None`` when it has none,
    or when numbers are searched): its documents of tier ``exact_floor`` or more match every
    word without a typo and score the same in ``query``, where no other document reaches
    that tier, so a page of such documents is the page of ``query``."""

    query: tantivy.Query
    matching: tantivy.Query
    exact: tantivy.Query | None
    exact_floor: float
    # at most this many documents match every word without a typo (the terms' document
    # frequencies; None: not known), so reach ``exact_floor``
    exact_most: int | None = None
    words: tuple[QueryWord, ...]
    folded: frozenset[str]  # the whole text and each word, folded like keywords
    text_fields: tuple[str, ...]  # the text fields searched
    # for a word with one typo listed on every text field: the words, or for the word being
    # typed the shortest prefixes, within one typo of it on any of them
    near: dict[str, frozenset[str]] = msgspec.field(default_factory=dict)
    # what the highlighters of this text keep between requests (``highlight.highlighter``)
    kept: dict[tuple[str, ...], object] = msgspec.field(default_factory=dict)
    # built once for later requests of the same text (``TextQueryBuilder.build`` keeps it)
    lasting: bool = False

    @property
    def terms(self) -> frozenset[str]:
        return frozenset(w.text for w in self.words)


class TextQueryBuilder:
    def __init__(self, layout: IndexLayout, schema: tantivy.Schema,
                 vocabulary: Vocabulary | None = None, matched: MatchedTerms | None = None,
                 doc_freq: Callable[[str, str], int] | None = None) -> None:
        self._layout = layout
        self._schema = schema
        self._vocabulary = vocabulary
        self._matched = matched
        self._doc_freq = doc_freq
        self._typos = layout.typos
        self._prefix_search = layout.prefix_search
        self._text = text_analyzer()
        self._fold = fold_analyzer()
        self._starting_with = functools.lru_cache(maxsize=4096)(self._prefix_query)
        # Built queries are immutable and search-as-you-type asks the same texts again and
        # again: each is built once. (Those built before the vocabulary was read are built
        # again once it is: the key holds whether it was.)
        self._built: dict[tuple[str, tuple[FieldWeight, ...], bool, bool,
                                tuple[str, ...] | None], TextMatch | None] = {}

    def build(self, text: str, search_fields: tuple[FieldWeight, ...],
              prefix_last_word: bool, required: tuple[str, ...] | None = None
              ) -> TextMatch | None:
        """``None`` for a blank text, which matches every document. ``required``: the words
        every match must hold (``SearchQuery.required_words``); ``None``: any word."""
        ready = self._vocabulary is None or self._vocabulary.ready
        key = (text, search_fields, prefix_last_word, ready, required)
        found = self._built.get(key, _NOT_BUILT)
        if found is not _NOT_BUILT:
            return found  # type: ignore[return-value]  # a TextMatch or None
        deferred: list[str] = []  # words whose listed typo ways wait for a second search
        match = self._build(text, search_fields, prefix_last_word, deferred, required)
        if not deferred:
            if len(self._built) >= MATCHES_CACHED:
                self._built.clear()
            if match is not None:
                match = msgspec.structs.replace(match, lasting=True)
            self._built[key] = match
        return match

    def words(self, text: str, prefix_last_word: bool) -> list[QueryWord]:
        analysed = self._text.analyze(text)
        tokens = list(dict.fromkeys(analysed))[:_MAX_WORDS]
        # "castle " (trailing space) means the last word is complete.
        typing = (analysed[-1] if analysed and prefix_last_word and self._prefix_search
                  and text[-1].isalnum() else None)
        return [QueryWord(text=t, prefix=t == typing, typos=allowed_typos(t, self._typos))
                for t in tokens]

    def _build(self, text: str, search_fields: tuple[FieldWeight, ...],
               prefix_last_word: bool, deferred: list[str],
               required: tuple[str, ...] | None = None) -> TextMatch | None:
        if not text.strip():
            return None
        targets = self._targets(search_fields)
        words = self.words(text, prefix_last_word)
        raw_words = [text.strip(), *text.split()][: _MAX_WORDS + 1]
        folded = frozenset(f for word in raw_words for f in self._fold.analyze(word) if f)
        whole = frozenset(self._fold.analyze(text.strip()))
        tiers = Tiers(len(words))
        levels = _field_levels(targets)
        scored, exact, matching = [], [], []
        must_hold = (None if required is None else
                     {t for word in required for t in self._text.analyze(word)})
        every: list[tantivy.Query] = []  # one clause per required word
        near: dict[str, frozenset[str]] = {}
        any_typos = False
        exact_most: int | None = None if self._doc_freq is None else 1 << 62
        for word in words:
            exact_ways, typo_ways, widest = [], [], []
            listed: list[frozenset[str] | None] = []
            word_most: int | None = 0
            for spec, weight in targets:
                found = self._ways(spec, word, levels[weight], tiers, whole, deferred)
                if word_most is not None and found.exact_terms is not None and self._doc_freq:
                    word_most += sum(self._doc_freq(f, t) for f, t in found.exact_terms)
                else:
                    word_most = None
                exact_ways.extend(found.exact)
                typo_ways.extend(found.typos)
                widest.extend(found.widest)
                if spec.type == "text" and word.typos:
                    listed.append(found.near)
            known = [terms for terms in listed if terms is not None]
            if listed and len(known) == len(listed):
                near[word.text] = frozenset(itertools.chain.from_iterable(known))
            any_typos = any_typos or bool(typo_ways)
            # a document of every word without a typo holds one of this word's exact terms
            exact_most = (None if exact_most is None or word_most is None
                          else min(exact_most, word_most))
            if exact_ways or typo_ways:
                scored.append(tantivy.Query.disjunction_max_query(exact_ways + typo_ways))
            if exact_ways:
                exact.append(tantivy.Query.disjunction_max_query(exact_ways))
            matching.extend(widest)
            if must_hold is not None and word.text in must_hold:
                every.append(any_of(widest + self._numbers(targets, [word.text], tiers)))
        adjacent = self._adjacent(words, targets, tiers)
        numbers = self._numbers(targets, raw_words[1:], tiers)
        matching.extend(numbers)
        query = any_of(scored + adjacent + numbers)
        if every:  # every required word matches: the others only add to the score
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, query),
                 *((tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0))
                   for q in every)])
        return TextMatch(
            query=query,
            matching=must(every) if every else any_of(matching),
            exact=any_of(exact + adjacent) if any_typos and exact and not numbers else None,
            exact_floor=tiers.every_word_exact(len(words)),
            exact_most=exact_most,
            words=tuple(words),
            folded=folded,
            text_fields=tuple(spec.name for spec, _ in targets if spec.type == "text"),
            near=near,
        )

    def _ways(self, spec: FieldSpec, word: QueryWord, level: int, tiers: Tiers,
              whole: frozenset[str], deferred: list[str]) -> Ways:
        """Every way ``word`` can match ``spec``, each scoring its tier."""
        def scoring(query: tantivy.Query, typos: int = 0) -> tantivy.Query:
            return tantivy.Query.const_score_query(query, tiers.word_score(typos, level))

        name = spec.name
        if spec.type == "keyword":  # whole values only: the text, or this word
            folded = {word.text, *whole}
            terms = [tantivy.Query.term_query(self._schema, fold_field(name), f) for f in folded]
            return Ways(exact=[scoring(term) for term in terms], widest=terms,
                        exact_terms=[(fold_field(name), f) for f in folded])
        if spec.type != "text":
            return Ways()
        exact = tantivy.Query.term_query(self._schema, name, word.text)
        ways = Ways(exact=[scoring(exact)], widest=[exact], exact_terms=[(name, word.text)])
        if word.prefix:
            starting = self._starting_with(name, word.text)
            ways.exact.append(scoring(starting))
            ways.widest[:] = [starting]  # a word is one of its own prefixes
            ways.exact_terms = ([(prefix_field(name), word.text)]  # (holds the word's too)
                                if len(word.text) <= MAX_PREFIX_CHARS else None)
        for typos in range(1, word.typos + 1):
            fuzzy, ways.near = self._fuzzy(name, word, typos, deferred)
            ways.typos.append(scoring(fuzzy, typos))
            ways.widest[:] = [fuzzy]  # within more typos: within fewer too
        return ways

    def _fuzzy(self, field: str, word: QueryWord, typos: int, deferred: list[str]
               ) -> tuple[tantivy.Query, frozenset[str] | None]:
        listed = (self._vocabulary.words(field)
                  if self._vocabulary is not None and typos == 1 else None)
        if listed is not None and (not word.prefix or len(word.text) < MAX_PREFIX_CHARS):
            if listed.asked_before(word.text, word.prefix):
                # the same terms as the automata below, listed once per word (typo_words.py)
                return (listed.prefix_way(word.text) if word.prefix
                        else listed.word_way(word.text))
            deferred.append(word.text)
        automaton = self._automaton(field, word, typos)
        if (typos == 2 and self._matched is not None
                and self._matched.listable(word.text, word.prefix)):
            # the terms it matched, read back once asked again (matched_terms.py)
            listed_way, settled = self._matched.way(field, word.text, word.prefix, automaton)
            if listed_way is not None:
                return listed_way, None
            if not settled:
                deferred.append(word.text)
        return automaton, None

    def _automaton(self, field: str, word: QueryWord, typos: int) -> tantivy.Query:
        if word.prefix and len(word.text) + typos <= MAX_PREFIX_CHARS:
            # A word starts within ``typos`` of the typed one when one of its prefixes is
            # within ``typos`` of it: the prefix field holds those prefixes, and its
            # automaton stops at their length instead of walking every longer word.
            return tantivy.Query.fuzzy_term_query(
                self._schema, prefix_field(field), word.text, distance=typos,
                transposition_cost_one=True, prefix=False)
        return tantivy.Query.fuzzy_term_query(
            self._schema, field, word.text, distance=typos, transposition_cost_one=True,
            prefix=word.prefix)

    def _adjacent(self, words: list[QueryWord], targets: list[tuple[FieldSpec, float]],
                  tiers: Tiers) -> list[tantivy.Query]:
        """A bonus per pair of whole query words found side by side in a text field."""
        pairs = []
        texts = [spec.name for spec, _ in targets if spec.type == "text"]
        for first, second in itertools.pairwise(words):
            if second.prefix or not texts:
                continue
            found = [tantivy.Query.phrase_query(self._schema, name, [first.text, second.text])
                     for name in texts]
            pairs.append(tantivy.Query.const_score_query(
                tantivy.Query.disjunction_max_query(found), float(tiers.adjacent)))
        return pairs

    def _numbers(self, targets: list[tuple[FieldSpec, float]], raw_words: list[str],
                 tiers: Tiers) -> list[tantivy.Query]:
        found = []
        for spec, _ in targets:
            if spec.type not in ("integer", "float"):
                continue
            coerce = values.as_integer if spec.type == "integer" else values.as_float
            for word in raw_words:  # "1.5" is one number but two analysed tokens
                try:
                    number = coerce(word)
                except values.BadValue:
                    continue
                found.append(tantivy.Query.const_score_query(
                    tantivy.Query.term_query(self._schema, spec.name, number),
                    tiers.word_score(0, 0)))
        return found

    def _prefix_query(self, field: str, prefix: str) -> tantivy.Query:
        if len(prefix) <= MAX_PREFIX_CHARS:  # indexed: one term, however common the prefix
            starts = tantivy.Query.term_query(self._schema, prefix_field(field), prefix)
        else:
            # Few words share a long prefix, so walking the terms is cheap; compiling the
            # regex is not (a Unicode automaton), hence the cache around this.
            # (phrase_prefix_query would stop at the first 50 words.)
            pattern = regex_escape(prefix) + "[^\\x00]*"
            starts = tantivy.Query.regex_query(self._schema, field, pattern)
        return starts

    def _targets(self, search_fields: tuple[FieldWeight, ...]) -> list[tuple[FieldSpec, float]]:
        if not search_fields:
            return [(spec, 1.0) for spec in self._layout.fields.values()
                    if spec.type in ("text", "keyword")]
        targets = []
        for fw in search_fields:
            spec = field_spec(self._layout, fw.field, "search")
            if fw.weight <= 0:
                raise InvalidRequest(f'The weight of "{fw.field}" must be above 0')
            targets.append((spec, fw.weight))
        return targets


def _field_levels(targets: list[tuple[FieldSpec, float]]) -> dict[float, int]:
    """Each weight's field level: 2 for the highest weight, 1 for the next, 0 below."""
    ranked = sorted({weight for _, weight in targets}, reverse=True)
    return {weight: max(0, _BEST_FIELD - i) for i, weight in enumerate(ranked)}
