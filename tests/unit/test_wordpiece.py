"""The builtin embedder's tokenizer gives the ids the model was trained on: the same as the
Hugging Face ``tokenizers`` library's uncased BERT tokenizer over the same vocabulary (the
reference, installed by the test extra), on chosen texts and on generated ones."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from searchport.adapters.semantic.wordpiece import VOCABULARY, WordPiece, words

tokenizers = pytest.importorskip("tokenizers")

TEXTS = [
    "", "Paris", "a big city by the sea, with beaches!", "Ünïcödé àccents — and dashes",
    "São Paulo; Zürich's old-town (Altstadt)", "東京 is Tokyo", "tab\tnew\nline\r\x00zero",
    "unaffable antidisestablishmentarianism", "x" * 150, "e-mail: someone@example.com",
    "İstanbul ǅ ﬁ ß", "emoji 🙂 and \u200b zero width", "1,234.56 km²", "naïve café",
]


@pytest.fixture(scope="module")
def reference() -> object:
    from tokenizers import BertWordPieceTokenizer

    tokenizer = BertWordPieceTokenizer(str(VOCABULARY), lowercase=True)
    tokenizer.enable_truncation(256)
    return tokenizer


@pytest.fixture(scope="module")
def ours() -> WordPiece:
    return WordPiece()


@pytest.mark.parametrize("text", TEXTS)
def test_the_ids_are_the_reference_tokenizers(text: str, ours: WordPiece,
                                               reference: object) -> None:
    assert ours.encode(text) == reference.encode(text).ids  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
def stable(char: str) -> bool:
    """A character of Unicode 3.2 whose category has not changed since: the reference's
    Unicode tables are older than Python's, and the two disagree on characters added or
    changed since (a few hundred, none in the model's vocabulary)."""
    category = unicodedata.category(char)
    return category not in ("Cn", "Cs") and unicodedata.ucd_3_2_0.category(char) == category


STABLE = [chr(code) for code in range(0x30000) if stable(chr(code))]


def test_every_stable_character_is_read_as_the_reference_reads_it(
        ours: WordPiece, reference: object) -> None:
    wrong = [f"U+{ord(c):04X}" for c in STABLE
             if ours.encode(f"a{c}0 {c}") != reference.encode(f"a{c}0 {c}").ids]  # type: ignore[attr-defined]
    assert wrong == []


@given(text=st.text(st.sampled_from(STABLE), max_size=80))
def test_any_text_gives_the_reference_ids(text: str) -> None:
    from tokenizers import BertWordPieceTokenizer

    # the reference reads "[CLS]" written in a text as its special token; searchport reads
    # what people type as text
    assume(not any(f"[{name}]" in text.lower() for name in ("cls", "sep", "pad", "unk", "mask")))

    reference = BertWordPieceTokenizer(str(VOCABULARY), lowercase=True)
    reference.enable_truncation(256)
    assert WORDPIECE.encode(text) == reference.encode(text).ids


def test_a_long_text_is_cut_to_the_models_length(ours: WordPiece) -> None:
    ids = ours.encode("word " * 1000)
    assert len(ids) == 256 and ids[0] == ours.cls and ids[-1] == ours.sep


def test_punctuation_is_a_word_of_its_own() -> None:
    assert words("Hello, World!") == ["hello", ",", "world", "!"]


WORDPIECE = WordPiece()
