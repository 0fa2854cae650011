"""API keys: the secured-key format against the stock clients, the keyring's answers and
its constant-time comparisons, named keys in the config, the document matcher."""

from __future__ import annotations

import base64
import hmac
import json
import subprocess
from typing import Any

import msgspec
import pytest
from algoliasearch.search.client import SearchClientSync
from hypothesis import given, settings
from hypothesis import strategies as st

from searchport.adapters.config_loader import parse_config
from searchport.domain.config import Config, ConfigError
from searchport.domain.query import (
    AllOf,
    AnyOf,
    ExistsFilter,
    Negated,
    NotFilter,
    RangeFilter,
    TermFilter,
)
from searchport.domain.record_match import holds, verdict
from searchport.entrypoints.keys import keyring as keyring_module
from searchport.entrypoints.keys.keyring import Keyring
from searchport.entrypoints.keys.secured import mint, restrictions, split
from tests.npm_packages import npm_project

ALGOLIA = SearchClientSync("app", "unused")

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
restriction_sets = st.fixed_dictionaries({}, optional={
    "filters": text,
    "validUntil": st.integers(0, 2**40),
    "restrictIndices": st.lists(st.from_regex(r"[a-z*_]{1,8}", fullmatch=True),
                                min_size=1, max_size=3),
    "restrictSources": st.sampled_from(["10.0.0.0/8", "192.168.1.7/32", "2001:db8::/32"]),
    "userToken": st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True),
})


@settings(max_examples=200, deadline=None)
@given(parent=text.filter(bool), limits=restriction_sets)
def test_mint_writes_what_the_python_client_writes(parent: str, limits: dict[str, Any]
                                                   ) -> None:
    assert mint(parent, limits) == ALGOLIA.generate_secured_api_key(parent, dict(limits))


@settings(max_examples=200, deadline=None)
@given(limits=restriction_sets)
def test_restrictions_read_back_what_was_minted(limits: dict[str, Any]) -> None:
    limits.pop("filters", None)  # random text is rarely a filter; see the filter tests
    claimed = split(ALGOLIA.generate_secured_api_key("p", limits).encode())
    assert claimed is not None
    got = restrictions(claimed[1])
    assert got.valid_until == limits.get("validUntil")
    assert got.indices == (tuple(limits["restrictIndices"]) if "restrictIndices" in limits
                           else None)
    assert got.user_token == limits.get("userToken")
    assert (got.sources is None) == ("restrictSources" not in limits)


def test_keys_of_the_javascript_client_are_read_alike() -> None:
    project = npm_project()  # installs the npm packages when needed; skips without node
    script = """
const { algoliasearch } = require("algoliasearch");
const c = algoliasearch("app", "k");
console.log(c.generateSecuredApiKey({parentApiKey: "parent-key", restrictions: {
  filters: "genre:fiction OR year > 2000", validUntil: 4102444800,
  restrictIndices: ["books*", "stock"], userToken: "u-1",
  searchParams: {facetFilters: [["language:fr", "language:de"]]}}}));
"""
    key = subprocess.run(["node", "-e", script], cwd=project, capture_output=True,
                         text=True, timeout=60, check=True).stdout.strip()
    config = msgspec.convert({"apiKey": "parent-key"}, Config)
    principal = Keyring(config).resolve(key.encode(), "127.0.0.1")
    assert principal is not None and principal.access.restricted
    assert principal.access.allows("books-2") and principal.access.allows("stock")
    assert not principal.access.allows("other")
    claimed = split(key.encode())
    assert claimed is not None
    # the client joins the nested list with commas: Algolia's string form, read as an AND
    assert len(restrictions(claimed[1]).filters) == 3


# ----------------------------------------------------------------- the keyring

CONFIG = msgspec.convert({
    "apiKey": ["plain-a", "plain-b"],
    "keys": {
        "tenant": {"key": "tenant-key", "handles": ["books", "dev_*"],
                   "rateLimit": {"limit": 5}},
        "gone": {"key": "gone-key", "expires": "2001-01-01T00:00:00Z"},
    },
}, Config)


def test_the_keyring_knows_each_kind_of_key() -> None:
    ring = Keyring(CONFIG, clock=lambda: 900_000_000.0)
    plain = ring.resolve(b"plain-b", "127.0.0.1")
    assert plain is not None and not plain.access.restricted and plain.access.raw_query
    tenant = ring.resolve(b"tenant-key", "127.0.0.1")
    assert tenant is not None and tenant.identity == "key:tenant"
    assert tenant.rule is not None and tenant.rule.limit == 5
    assert tenant.access.allows("dev_x") and not tenant.access.allows("prod")
    assert not tenant.access.raw_query  # restricted, rawQuery not set
    # the clock (1998) is before its expiry
    assert ring.resolve(b"gone-key", "127.0.0.1") is not None
    assert Keyring(CONFIG).resolve(b"gone-key", "127.0.0.1") is None
    assert ring.resolve(b"", "127.0.0.1") is None
    assert ring.resolve(b"plain-", "127.0.0.1") is None


def test_a_secured_keys_user_token_is_its_rate_limit_identity() -> None:
    ring = Keyring(CONFIG)
    one = mint("tenant-key", {"userToken": "alice", "validUntil": 4102444800})
    two = mint("tenant-key", {"userToken": "alice", "filters": "genre:a"})
    other = mint("tenant-key", {"userToken": "bob"})
    found = [ring.resolve(k.encode(), "127.0.0.1") for k in (one, two, other)]
    assert all(p is not None for p in found)
    identities = [p.identity for p in found if p is not None]
    assert identities[0] == identities[1] != identities[2]
    assert "alice" not in identities[0] and "tenant-key" not in identities[0]
    # a child of a named key is inside it
    assert found[0] is not None and not found[0].access.allows("prod")


def count_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = hmac.compare_digest

    def counting(a: Any, b: Any) -> bool:
        calls[0] += 1
        return original(a, b)

    monkeypatch.setattr(keyring_module.hmac, "compare_digest", counting)
    return calls


@pytest.mark.parametrize("token", [b"plain-a", b"tenant-key", b"nothing-like-it"])
def test_every_key_is_compared_whichever_matches(monkeypatch: pytest.MonkeyPatch,
                                                 token: bytes) -> None:
    calls = count_comparisons(monkeypatch)
    Keyring(CONFIG).resolve(token, "127.0.0.1")
    assert calls[0] == 4  # the four keys, whether the first, the last or none matched


@pytest.mark.parametrize("parent", ["plain-a", "gone-key", "foreign"])
def test_every_parent_is_compared_for_a_secured_key(monkeypatch: pytest.MonkeyPatch,
                                                    parent: str) -> None:
    key = mint(parent, {"filters": "a:b"}).encode()
    calls = count_comparisons(monkeypatch)
    Keyring(CONFIG).resolve(key, "127.0.0.1")
    assert calls[0] == 8  # four plain comparisons, then four HMACs


def test_a_secured_key_refused_says_why_in_the_log_only(caplog: pytest.LogCaptureFixture
                                                        ) -> None:
    key = mint("plain-a", {"validUntil": 1})
    assert Keyring(CONFIG).resolve(key.encode(), "127.0.0.1") is None
    assert "validUntil" in caplog.text
    assert key not in caplog.text and "plain-a" not in caplog.text


def test_a_token_that_is_not_base64_is_no_secured_key() -> None:
    assert split(b"not base64 at all!") is None
    assert split(base64.b64encode(b"short")) is None
    assert split(base64.b64encode(b"Z" * 64 + b"filters=a")) is None


# ----------------------------------------------------------------- the config

def config(keys: str, indexes: str = "books: {engine: tantivy, path: /tmp/x}") -> Config:
    return parse_config(f"apiKey: master\nkeys:\n{keys}\nindexes:\n  {indexes}\n", {})


def test_named_keys_load() -> None:
    loaded = config("  t: {key: k1, handles: [books], filters: {books: {genre: a}}, "
                    "rawQuery: true, expires: '2030-01-01T00:00:00Z', rateLimit: {limit: 9}}")
    key = loaded.keys["t"]
    assert key.handles == ["books"] and key.filters == {"books": {"genre": "a"}}
    assert key.raw_query is True and key.rate_limit is not None and key.expires is not None


@pytest.mark.parametrize(("keys", "message"), [
    ("  t: {key: master}", "keys.t.key: the same secret as another key"),
    ("  t: {key: k1, handles: [bookz]}", "keys.t.handles: 'bookz' is not a configured handle"),
    ("  t: {key: k1, filters: {stock: {a: 1}}}", "keys.t.filters: 'stock' matches no"),
    ("  t: {key: k1, filters: {books: {a: {min: 5, max: 1}}}}", "keys.t.filters.books: "),
    ("  t: {key: ''}", "keys[...].key: Expected `str` of length >= 1"),
])
def test_named_key_mistakes_name_their_key(keys: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        config(keys)
    assert str(raised.value).startswith(message), str(raised.value)
    assert "master" not in str(raised.value) and "k1" not in str(raised.value)


# ----------------------------------------------------------------- the document matcher

DOC = {"genre": "Fiction", "tags": ["a", "b"], "year": 1999, "title": "The Night Train",
       "missing": None, "published": "2020-05-10T12:00:00Z", "flag": True}


@pytest.mark.parametrize(("f", "expected"), [
    (TermFilter(field="tags", values=("b",)), True),
    (TermFilter(field="tags", values=("c",)), False),
    (TermFilter(field="genre", values=("fiction",)), None),  # the engine may fold case
    (TermFilter(field="title", values=("night",)), None),  # or analyse the text
    (Negated(filter=TermFilter(field="title", values=("night",))), None),
    (NotFilter(field="tags", values=("a",)), False),
    (TermFilter(field="year", values=(1999.0,)), True),
    (TermFilter(field="year", values=("1999",)), None),
    (TermFilter(field="flag", values=(True,)), True),
    (TermFilter(field="flag", values=("true",)), True),  # Algolia's facet form of a boolean
    (TermFilter(field="flag", values=("false",)), False),
    (RangeFilter(field="year", min=1990, max=1999, max_exclusive=True), False),
    (RangeFilter(field="year", min=1990, max=1999), True),
    (RangeFilter(field="published", min="2020-01-01"), True),
    (RangeFilter(field="published", max="2020-05-10"), None),  # a day covers the instant
    (ExistsFilter(field="nowhere", exists=False), True),
    (ExistsFilter(field="missing", exists=True), None),
    (AnyOf(filters=(TermFilter(field="tags", values=("z",)),
                    TermFilter(field="year", values=(1999,)))), True),
    (AllOf(filters=(TermFilter(field="tags", values=("a",)),
                    TermFilter(field="genre", values=("fiction",)))), None),
])
def test_the_matcher_is_sure_or_says_it_is_not(f: Any, expected: bool | None) -> None:
    assert verdict(f, DOC) is expected
    assert holds((f,), DOC) is (expected is True)


def test_the_matcher_is_json_safe() -> None:
    assert holds((TermFilter(field="a.b", values=(1,)),), json.loads('{"a": [{"b": 2}, {"b": 1}]}'))


def test_an_expiry_needs_its_offset() -> None:
    with pytest.raises(ConfigError) as raised:
        config("  t: {key: k1, expires: '2030-01-01T00:00:00'}")
    assert str(raised.value).startswith("keys[...].expires:")
