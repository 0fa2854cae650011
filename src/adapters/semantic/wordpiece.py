"""The uncased BERT tokenizer: text to the word-piece ids the builtin model reads.

The steps of BERT's own ``BasicTokenizer`` and ``WordpieceTokenizer`` (as the Hugging Face
``tokenizers`` library's ``BertNormalizer``, ``BertPreTokenizer`` and ``WordPiece`` do
them, which ``tests/unit/test_wordpiece.py`` checks it against): control characters
dropped, white space folded, CJK ideographs split apart, accents stripped, lower case;
words split at white space and punctuation; each word the longest vocabulary pieces from
its start, ``##`` marking a piece inside a word, ``[UNK]`` for a word it cannot spell.
Written here (150 lines) rather than installed: the ``tokenizers`` package brings a model
hub client and 35 MB with it, for the one tokenizer this model needs.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path

VOCABULARY = Path(__file__).with_name("vocab.txt")  # see VOCAB-NOTICE.txt
MAX_WORD_CHARS = 100  # a longer word is one [UNK], as in BERT
CLS, SEP, PAD, UNK = "[CLS]", "[SEP]", "[PAD]", "[UNK]"


def _is_cjk(code: int) -> bool:
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF
            or 0x20000 <= code <= 0x2A6DF or 0x2A700 <= code <= 0x2B73F
            or 0x2B740 <= code <= 0x2B81F or 0x2B820 <= code <= 0x2CEAF
            or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F)


def _is_control(char: str) -> bool:
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


def _is_punctuation(char: str) -> bool:
    return (char.isascii() and not char.isalnum() and char.isprintable() and char != " ") or (
        unicodedata.category(char).startswith("P"))


def normalised(text: str) -> str:
    """BERT's normalisation of uncased text."""
    out = []
    for char in text:
        if char in "\x00\ufffd" or _is_control(char):
            continue
        if char.isspace():
            out.append(" ")
        elif _is_cjk(ord(char)):
            out.append(f" {char} ")
        else:
            out.append(char)
    decomposed = unicodedata.normalize("NFD", "".join(out))
    # each character lowered alone: str.lower() would make a word's last sigma final
    return "".join(c.lower() for c in decomposed if unicodedata.category(c) != "Mn")


def words(text: str) -> list[str]:
    """Normalised text split at white space, each punctuation character a word of its own."""
    found: list[str] = []
    for chunk in normalised(text).split():
        start = 0
        for i, char in enumerate(chunk):
            if _is_punctuation(char):
                if start < i:
                    found.append(chunk[start:i])
                found.append(char)
                start = i + 1
        if start < len(chunk):
            found.append(chunk[start:])
    return found


class WordPiece:
    """Text to the model's input ids, ``[CLS] pieces [SEP]``, at most ``max_length``."""

    def __init__(self, vocabulary: Path = VOCABULARY, max_length: int = 256) -> None:
        with vocabulary.open(encoding="utf-8") as file:
            self.ids = {line.rstrip("\n"): i for i, line in enumerate(file)}
        self.max_length = max_length
        self.cls, self.sep, self.pad, self.unk = (self.ids[t] for t in (CLS, SEP, PAD, UNK))
        self._pieces = lru_cache(maxsize=65_536)(self._word_ids)

    def encode(self, text: str) -> list[int]:
        ids = [self.cls]
        room = self.max_length - 1
        for word in words(text):
            ids.extend(self._pieces(word))
            if len(ids) >= room:
                del ids[room:]
                break
        ids.append(self.sep)
        return ids

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return (self.unk,)
            start = end
        return tuple(pieces)
