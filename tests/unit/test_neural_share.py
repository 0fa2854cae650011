"""The share of meaning of an Algolia search (NeuralSearch) and the text autocomplete
searches by meaning (its complete words)."""

from __future__ import annotations

import msgspec
import pytest

from searchport.domain.config import IndexConfig, SemanticConfig
from searchport.domain.semantic import complete_words, neural_search, neural_share

PLAIN = IndexConfig(engine="tantivy", path="unused")
NEURAL = msgspec.structs.replace(PLAIN, semantic=SemanticConfig(fields=["a"], ratio=0.4))


@pytest.mark.parametrize(("typed", "meaning"), [
    ("", ""), ("mumb", ""), ("  mumb", ""), ("where are movies ma", "where are movies"),
    ("where are movies made ", "where are movies made"), ("two  wo", "two"), ("   ", ""),
])
def test_complete_words_leave_out_the_word_being_typed(typed: str, meaning: str) -> None:
    assert complete_words(typed) == meaning


def test_neural_search_is_a_primary_with_a_ratio() -> None:
    assert neural_search(NEURAL)
    assert not neural_search(PLAIN)
    assert not neural_search(msgspec.structs.replace(
        NEURAL, semantic=SemanticConfig(fields=["a"])))  # ratio 0
    assert not neural_search(msgspec.structs.replace(NEURAL, replica_of="primary"))


def test_the_share_of_an_algolia_search() -> None:
    assert neural_share(NEURAL, "movies") == 0.4
    assert neural_share(NEURAL, "  ") == 0.0  # nothing to mean
    assert neural_share(NEURAL, "movies", keyword_mode=True) == 0.0
    assert neural_share(PLAIN, "movies") == 0.0
