"""A raw tantivy query read before tantivy parses it: what it names, checked and explained.

tantivy's own messages about a query are terse ("Field does not exist: 'region'") and some
queries fail only when they run ("Field name is not a fast field" for ``name:*``). Both are
the caller's query, not an engine failure, so each becomes a 400 that says what works:

- ``field:*`` and ``field:[* TO *]`` (exists) run as a lookup of searchport's per-row list of
  present fields, on every field type: tantivy tests presence only on columns (``name:*`` on
  a text field fails when it runs) and finds nothing for ``[* TO *]`` on a keyword.
- a field that is not in the index: an alias (raw queries use the index's own field names),
  a geo point (not readable by the query language), searchport's internal columns
  (``__...``, never exposed), or unknown: each named, with the fields that can be used.
- ``word~N``: tantivy's language has no fuzzy terms (``~N`` is a phrase's word distance);
  it would silently match nothing, so it is refused.
- ``word*`` (one word): tantivy reads it as the word itself, not as a prefix (only a phrase
  of two words or more takes a prefix, ``"new yo"*``), so ``lond*`` would silently find no
  London; it is refused with the range that does the same (``name:[lond TO lone}``).
"""

from __future__ import annotations

import re

from searchport.adapters.tantivy.schema import PRESENT_FIELD, IndexLayout
from searchport.domain.errors import InvalidQuery

# A quoted phrase (skipped), or a field reference `name:` with what follows it.
_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"'
    r"|(?<![\w.\\])(?P<field>[A-Za-z_][\w.]*)\s*:\s*"
    r"(?P<exists>\*(?=[\s)]|$)|\[\s*\*\s+TO\s+\*\s*\](?=[\s)^]|$))?"
)
_FUZZY = re.compile(r'"(?:[^"\\]|\\.)*"|(?P<term>[\w*]+)~\d*')
# A quoted phrase (skipped, with its optional phrase-prefix star), or one word ending in *,
# with its field: `lond*`, `name:lond*`.
_WORD_PREFIX = re.compile(
    r'"(?:[^"\\]|\\.)*"\*?'
    r"|(?<![\w*\\])(?:(?P<field>[A-Za-z_][\w.]*):)?(?P<word>\w[^\s\"()\[\]{}:^~*]*)\*"
    r"(?=[\s)^]|$)"
)


def prepare_raw_query(text: str, layout: IndexLayout) -> str:
    """The query tantivy should parse, or an ``InvalidQuery`` naming what to change."""
    for match in _FUZZY.finditer(text):
        if match.group("term"):
            raise InvalidQuery(
                f"{match.group(0)}: the tantivy query language has no fuzzy terms (~N after a "
                'phrase is the distance between its words, as in "new york"~2); search '
                "the word itself, or the words starting with it with a range, as in "
                "name:[lond TO lone}"
            )
    for match in _WORD_PREFIX.finditer(text):
        if match.group("word"):
            raise InvalidQuery(_no_word_prefix(match.group("field"), match.group("word")))
    out: list[str] = []
    last = 0
    for match in _TOKEN.finditer(text):
        name = match.group("field")
        if name is None:
            continue
        spec = layout.spec(name)
        if spec is None:
            raise InvalidQuery(_unknown_field(name, layout))
        if match.group("exists"):
            out.append(text[last:match.start()])
            out.append(f'{PRESENT_FIELD}:"{name}"')
            last = match.end()
        elif spec.type == "geo_point":
            raise InvalidQuery(
                f"{name} is a geo_point field: the raw query can only test that it exists "
                f"({name}:*); search an area with geoGrid bounds on /search"
            )
    out.append(text[last:])
    return "".join(out)


def _unknown_field(name: str, layout: IndexLayout) -> str:
    usable = ", ".join(spec.name for spec in layout.fields.values()
                       if spec.type != "geo_point")
    real = layout.aliases.get(name)
    if real is not None and layout.spec(real) is not None:
        return (f"{name} is an alias: raw queries use the index's own field names, "
                f"here {real}")
    if name == layout.id_field:
        return (f"{name} is the id field, not a searchable field: fetch one document with "
                f"GET /<handle>/documents/<id>; the fields a raw query can name: {usable}")
    return f"Unknown field {name} in the raw query; the fields it can name: {usable}"


def _no_word_prefix(field: str | None, word: str) -> str:
    name = field or "name"
    low = word.lower()
    after = chr(ord(low[-1]) + 1)
    example = (f"{name}:[{low} TO {low[:-1]}{after}}}" if after.isalnum()
               else f"{name}:[lond TO lone}}")
    written = f"{field}:{word}*" if field else f"{word}*"
    return (f"{written}: tantivy's query language has no prefix on a single word ({word}* "
            f"finds only the word {word} itself); use a range of words, as in {example} "
            '(from the prefix to the next one), a phrase prefix of two words or more, as in '
            '"new yo"*, or /search?q=..., which completes the last word')
