"""The full-text part of a search: any-word BM25 over the searched fields.

User text is analysed with the index's own analyzers and turned into query objects, so it
is never read as tantivy query syntax: ``title:x AND (`` is just three words.
"""

from __future__ import annotations

import functools

import msgspec
import tantivy

from searchport.adapters.tantivy import values
from searchport.adapters.tantivy.filters import any_of, field_spec
from searchport.adapters.tantivy.schema import (
    MAX_PREFIX_CHARS,
    FieldSpec,
    IndexLayout,
    fold_analyzer,
    fold_field,
    prefix_field,
    text_analyzer,
)
from searchport.domain.errors import InvalidRequest
from searchport.domain.query import FieldWeight

# A prefix match is weaker evidence than a whole word: "ca" should rank "ca" above "cat".
_PREFIX_BOOST = 0.5
_MAX_WORDS = 32  # beyond this a query is a paste, not a search; extra words are ignored


_REGEX_META = frozenset("\\.+*?()|[]{}^$#&-~")


def regex_escape(literal: str) -> str:
    """Escape the characters that are syntax in tantivy's (Rust) regex language."""
    return "".join("\\" + c if c in _REGEX_META else c for c in literal)


class TextMatch(msgspec.Struct, frozen=True, kw_only=True):
    """The query for a text, and what a highlighter needs to mark the same words."""

    query: tantivy.Query
    terms: frozenset[str]  # analysed words, as they are in the text fields' index
    prefix: str | None  # the last analysed word, matched as a prefix
    folded: frozenset[str]  # the whole text and each word, folded like keywords
    text_fields: tuple[str, ...]  # the text fields searched


class TextQueryBuilder:
    def __init__(self, layout: IndexLayout, schema: tantivy.Schema) -> None:
        self._layout = layout
        self._schema = schema
        self._text = text_analyzer()
        self._fold = fold_analyzer()
        self._starting_with = functools.lru_cache(maxsize=4096)(self._prefix_query)

    def build(self, text: str, search_fields: tuple[FieldWeight, ...],
              prefix_last_word: bool) -> TextMatch | None:
        """``None`` for a blank text, which matches every document."""
        if not text.strip():
            return None
        targets = self._targets(search_fields)
        analysed = self._text.analyze(text)
        tokens = list(dict.fromkeys(analysed))[:_MAX_WORDS]
        # "castle " (trailing space) means the last word is complete.
        prefix = analysed[-1] if analysed and prefix_last_word and text[-1].isalnum() else None
        words = [text.strip(), *text.split()][: _MAX_WORDS + 1]
        folded = frozenset(f for word in words for f in self._fold.analyze(word) if f)
        per_field = []
        for spec, weight in targets:
            clauses = self._clauses(spec, tokens, prefix, folded, words[1:])
            if clauses:
                per_field.append(tantivy.Query.boost_query(any_of(clauses), weight))
        return TextMatch(
            query=any_of(per_field),
            terms=frozenset(tokens),
            prefix=prefix,
            folded=folded,
            text_fields=tuple(spec.name for spec, _ in targets if spec.type == "text"),
        )

    def _prefix_query(self, field: str, prefix: str) -> tantivy.Query:
        if len(prefix) <= MAX_PREFIX_CHARS:  # indexed: one term, however common the prefix
            starts = tantivy.Query.term_query(self._schema, prefix_field(field), prefix)
        else:
            # Few words share a long prefix, so walking the terms is cheap; compiling the
            # regex is not (~0.3 ms, a Unicode automaton), hence the cache around this.
            # (phrase_prefix_query would stop at the first 50 words.)
            pattern = regex_escape(prefix) + "[^\\x00]*"
            starts = tantivy.Query.regex_query(self._schema, field, pattern)
        return tantivy.Query.boost_query(starts, _PREFIX_BOOST)

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

    def _clauses(self, spec: FieldSpec, tokens: list[str], prefix: str | None,
                 folded: frozenset[str], words: list[str]) -> list[tantivy.Query]:
        name = spec.name
        if spec.type == "text":
            clauses = [tantivy.Query.term_query(self._schema, name, t) for t in tokens]
            if prefix is not None:
                clauses.append(self._starting_with(name, prefix))
            return clauses
        if spec.type == "keyword":  # whole values only: the text, or one of its words
            return [tantivy.Query.term_query(self._schema, fold_field(name), f) for f in folded]
        if spec.type in ("integer", "float"):
            coerce = values.as_integer if spec.type == "integer" else values.as_float
            numbers = []
            for word in words:  # "1.5" is one number but two analysed tokens
                try:
                    numbers.append(coerce(word))
                except values.BadValue:
                    continue
            return [tantivy.Query.term_query(self._schema, name, n) for n in numbers]
        return []  # booleans, dates and points have no words to match
