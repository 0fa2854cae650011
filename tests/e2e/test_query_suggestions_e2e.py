"""Query Suggestions through a real ``searchport serve``: searches on the JSON and Algolia
routes are logged, the ``cities_query_suggestions`` handle is rebuilt in the background and
answers on every route in Algolia's record shape. The expected suggestions are computed
here from the searches sent and the sample rows."""

from __future__ import annotations

import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import Server, sample_config

pytestmark = pytest.mark.e2e
Row = dict[str, Any]

SUGGESTIONS = """
  cities_query_suggestions:
    engine: querySuggestions
    source: cities
    path: index/suggestions
    minCount: 2
    minHits: 1
    refresh: 1
    facets: [{ attribute: country, amount: 2 }]
"""
# what is searched, and on which route: (query as typed, times)
JSON_SEARCHES = (("  London ", 2), ("LONDON", 1), ("shanghai", 1), ("lon", 3), ("zzqxv", 3),
                 ("santa", 1))
ALGOLIA_SEARCHES = (("Shanghai", 2), ("london", 1))


def suggestions_config(extra_top: str = "") -> str:
    return sample_config(extra_top=f"{extra_top}\nanalytics:\n  flushInterval: 0.1\n",
                         extra_index=SUGGESTIONS)


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def matches(row: Row, word: str) -> bool:
    """A one-word query on the sample handle: a word of ``name`` or ``alternateNames``
    starting with it, or the whole ``country`` (a searchable keyword)."""
    texts = [row["name"], *row.get("alternateNames", [])]
    words = [w for text in texts for w in re.findall(r"[^\W_]+", fold(text))]
    return any(w.startswith(fold(word)) for w in words) or fold(row["country"]) == fold(word)


def expected(rows: list[Row], searched: Counter[str], *, min_count: int = 2,
             min_letters: int = 4, min_hits: int = 1, amount: int = 2) -> list[Row]:
    """The records of the one-word queries searched, most popular first."""
    made = []
    for query, count in searched.items():
        found = [row for row in rows if matches(row, query)]
        if count < min_count or len(query) < min_letters or len(found) < min_hits:
            continue
        countries = Counter(row["country"] for row in found)
        top = sorted(countries.items(), key=lambda kv: (-kv[1], kv[0]))[:amount]
        made.append({"objectID": query, "query": query, "popularity": count, "nb_words": 1,
                     "cities": {"exact_nb_hits": len(found), "facets": {"exact_matches": {
                         "country": [{"value": v, "count": n} for v, n in top]}}}})
    return sorted(made, key=lambda r: (-r["popularity"], r["query"]))


def search_all(server: Server, headers: dict[str, str] | None = None) -> Counter[str]:
    """Sends the searches; the queries as the log keeps them (trimmed, case-folded)."""
    searched: Counter[str] = Counter()
    for query, times in JSON_SEARCHES:
        for _ in range(times):
            answer = server.client.get("/cities/search", params={"q": query}, headers=headers)
            assert answer.status_code == 200, answer.text
            searched[" ".join(query.split()).casefold()] += 1
    for query, times in ALGOLIA_SEARCHES:
        for _ in range(times):
            answer = server.client.post("/1/indexes/cities/query", json={"query": query},
                                        headers=headers)
            assert answer.status_code == 200, answer.text
            searched[query.casefold()] += 1
    return searched


def served(server: Server, q: str = "", headers: dict[str, str] | None = None) -> list[Row]:
    answer = server.client.get("/cities_query_suggestions/search",
                               params={"q": q, "highlight": "false"}, headers=headers)
    assert answer.status_code == 200, answer.text
    return [{k: v for k, v in hit.items() if not k.startswith("_")}
            for hit in answer.json()["hits"]]


def wait_for(server: Server, want: list[Row], headers: dict[str, str] | None = None,
             timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while (found := served(server, headers=headers)) != want:
        assert time.monotonic() < deadline, f"suggestions {found}, expected {want}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def suggesting(server_factory: Callable[..., Server]) -> Server:
    return server_factory(suggestions_config())


@pytest.fixture(scope="module")
def searched(suggesting: Server) -> Counter[str]:
    assert served(suggesting) == []  # no suggestion before any search
    return search_all(suggesting)


def test_popular_searches_become_suggestions(suggesting: Server, searched: Counter[str],
                                             rows: list[Row]) -> None:
    want = expected(rows, searched)
    assert [r["query"] for r in want] == ["london", "shanghai"]  # the others fall short
    wait_for(suggesting, want)


def test_suggestions_answer_on_the_algolia_route_with_highlights(
        suggesting: Server, searched: Counter[str], rows: list[Row]) -> None:
    wait_for(suggesting, expected(rows, searched))
    answer = suggesting.client.post("/1/indexes/*/queries", json={"requests": [{
        "indexName": "cities_query_suggestions",
        "params": "query=shang&hitsPerPage=5&highlightPreTag=__aa-highlight__"
                  "&highlightPostTag=__%2Faa-highlight__"}]})
    assert answer.status_code == 200, answer.text
    (hit,) = answer.json()["results"][0]["hits"]
    assert hit["objectID"] == hit["query"] == "shanghai"
    assert hit["_highlightResult"]["query"]["value"] == (
        "__aa-highlight__shang__/aa-highlight__hai")
    typo = suggesting.client.get("/cities_query_suggestions/search", params={"q": "lodnon"})
    assert [h["query"] for h in typo.json()["hits"]] == ["london"]


def test_the_suggestions_handle_is_listed(suggesting: Server) -> None:
    answer = suggesting.client.get("/indexes")
    assert answer.status_code == 200
    assert "cities_query_suggestions" in answer.text
    assert "querySuggestions" in answer.text
