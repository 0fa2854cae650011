"""``SearchBuffer``: the searches waiting for the recorder's next write, packed into bytes.

Each search is encoded (MessagePack) at the end of a ``bytearray`` as it comes, instead of
being kept as objects until it is written. Kept as objects, the searches of a second would
hold tens of small objects each (the query, the objectIDs of its hits...) scattered among
the requests' own short-lived ones, so that everything the requests allocate meanwhile is
spread over more memory, and all of them would be freed together much later, from memory
long gone from the caches.

The bytes are kept in chunks (``Packed``) of at most ``chunk`` searches, each a
MessagePack array whose header (``0xdd`` and a 4-byte count) is written when the chunk is
sealed: a chunk decodes as one list (``unpack``). A write takes whole chunks and decodes
them one at a time as the store reads them, so that only a chunk's searches live as
objects at once, never a whole batch's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from datetime import date, timedelta

import msgspec

from searchport.domain.analytics.records import ObservedSearch, SearchRecord, to_record, utc_day

CHUNK = 256  # searches packed together: decoded together when written
_HEADER = b"\xdd\x00\x00\x00\x00"  # a MessagePack array32 header, its count set when sealed
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(list[ObservedSearch])


class Packed(msgspec.Struct, frozen=True, gc=False):
    """Sealed searches: their bytes, how many, and the first and last instant among them."""

    data: bytearray
    count: int
    earliest: float
    latest: float


class ObservedBatch(msgspec.Struct, frozen=True):
    """One write's searches as the buffer packed them (``Packed.data``, each chunk a
    MessagePack array of ``ObservedSearch``), with the salts of the days they may fall
    on: all a store needs to make their records (``records_of``), in this process or in
    another one it hands the bytes to."""

    chunks: list[bytes]
    salts: dict[date, bytes]


MAX_PSEUDONYMS = 100_000  # addresses whose pseudonym of the day is kept, made again past it


def records_of(batch: ObservedBatch, pseudonyms: dict[date, dict[str, str]]
               ) -> Iterator[SearchRecord]:
    """The records of ``batch``, made as they are read: a chunk's searches decoded at a
    time, each let go once the store has it. ``pseudonyms``: those already made, by day
    and address, kept by the caller from one batch to the next (the days the batch has
    no salt for forgotten)."""
    salts = batch.salts
    for day in [d for d in pseudonyms if d not in salts]:
        del pseudonyms[day]
    for chunk in batch.chunks:
        for seen in _decoder.decode(chunk):
            day = utc_day(seen.at)
            made = pseudonyms.get(day)
            if made is None or len(made) >= MAX_PSEUDONYMS:
                made = pseudonyms[day] = {}
            yield to_record(seen, salts[day], made)


def unpack(packed: Packed) -> list[ObservedSearch]:
    """The searches of a chunk, in the order they came."""
    return _decoder.decode(packed.data)


def days_of(chunks: list[Packed]) -> list[date]:
    """Every UTC day the searches of ``chunks`` may have been made on, in order."""
    if not chunks:
        return []
    first = utc_day(min(p.earliest for p in chunks))
    last = utc_day(max(p.latest for p in chunks))
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


class SearchBuffer:
    """Searches in arrival order, in sealed chunks of at most ``chunk`` then an open one."""

    def __init__(self, chunk: int = CHUNK) -> None:
        self._chunk = max(1, chunk)
        self._sealed: deque[Packed] = deque()
        self._count = 0
        self._start()

    def _start(self) -> None:
        self._open = bytearray(_HEADER)
        self._open_count = 0
        self._earliest = float("inf")
        self._latest = float("-inf")

    def __len__(self) -> int:
        return self._count

    def append(self, seen: ObservedSearch) -> None:
        """Add one search. A search that cannot be encoded (a text with a lone surrogate)
        raises ``ValueError`` and leaves the buffer as it was."""
        end = len(self._open)
        try:
            _encoder.encode_into(seen, self._open, -1)
        except (ValueError, TypeError, OverflowError) as exc:  # UnicodeEncodeError is one
            del self._open[end:]  # what the encoder wrote before it failed
            raise ValueError(f"a search that cannot be kept: {exc}") from None
        at = seen.at
        if at < self._earliest:
            self._earliest = at
        if at > self._latest:
            self._latest = at
        self._open_count += 1
        self._count += 1
        if self._open_count >= self._chunk:
            self.seal()

    def seal(self) -> None:
        """Close the open chunk (the searches so far are taken before any that follow)."""
        if not self._open_count:
            return
        self._open[1:5] = self._open_count.to_bytes(4, "big")
        self._sealed.append(Packed(self._open, self._open_count, self._earliest,
                                   self._latest))
        self._start()

    def take(self, size: int) -> list[Packed]:
        """The oldest searches, at most ``size``, out of the buffer, still packed: whole
        chunks (the open one sealed when the others are not enough), the last one split
        when it holds more than is left of ``size``."""
        taken: list[Packed] = []
        left = size
        while left > 0:
            if not self._sealed:
                self.seal()
                if not self._sealed:
                    break
            packed = self._sealed.popleft()
            if packed.count > left:  # split: the rest packed again, first in line
                found = unpack(packed)
                head, rest = _pack(found[:left]), _pack(found[left:])
                self._sealed.appendleft(rest)
                packed = head
            taken.append(packed)
            left -= packed.count
        self._count -= size - left
        return taken

    def clear(self) -> None:
        self._sealed.clear()
        self._count = 0
        self._start()


def _pack(searches: list[ObservedSearch]) -> Packed:
    data = bytearray(_HEADER)
    for seen in searches:
        _encoder.encode_into(seen, data, -1)
    data[1:5] = len(searches).to_bytes(4, "big")
    return Packed(data, len(searches), min(s.at for s in searches),
                  max(s.at for s in searches))
