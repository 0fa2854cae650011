"""``SearchBuffer``: the searches waiting for the recorder's next write, packed into bytes.

Each search is encoded (MessagePack) at the end of a large ``bytearray`` as it comes,
instead of being kept as objects until it is written. Kept as objects, the searches of a
second would hold tens of small objects each (the query, the objectIDs of its hits...)
scattered among the requests' own short-lived ones, so that everything the requests
allocate meanwhile is spread over more memory, and all of them would be freed together
much later, from memory long gone from the caches. A batch is decoded back in one go
when it is written, and its objects live only while it is.

The bytes are kept in chunks of at most ``batch`` searches, each a MessagePack array
whose header (``0xdd`` and a 4-byte count) is written when the chunk is sealed: a chunk
decodes as one list.
"""

from __future__ import annotations

from collections import deque

import msgspec

from searchport.domain.analytics.records import ObservedSearch

_HEADER = b"\xdd\x00\x00\x00\x00"  # a MessagePack array32 header, its count set when sealed
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(list[ObservedSearch])


class SearchBuffer:
    """Searches in arrival order, in sealed chunks of at most ``batch`` then an open one."""

    def __init__(self, batch: int) -> None:
        self._batch = max(1, batch)
        self._sealed: deque[tuple[bytearray, int]] = deque()
        self._open = bytearray(_HEADER)
        self._open_count = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, seen: ObservedSearch) -> bool:
        """Add one search; True when it completed a chunk of ``batch`` searches. A search
        that cannot be encoded (a text with a lone surrogate) raises ``ValueError`` and
        leaves the buffer as it was."""
        end = len(self._open)
        try:
            _encoder.encode_into(seen, self._open, -1)
        except (ValueError, TypeError, OverflowError) as exc:  # UnicodeEncodeError is one
            del self._open[end:]  # what the encoder wrote before it failed
            raise ValueError(f"a search that cannot be kept: {exc}") from None
        self._open_count += 1
        self._count += 1
        if self._open_count < self._batch:
            return False
        self.seal()
        return True

    def seal(self) -> None:
        """Close the open chunk (the searches so far are taken before any that follow)."""
        if not self._open_count:
            return
        self._open[1:5] = self._open_count.to_bytes(4, "big")
        self._sealed.append((self._open, self._open_count))
        self._open = bytearray(_HEADER)
        self._open_count = 0

    def take(self, size: int) -> list[ObservedSearch]:
        """The oldest searches, at most ``size`` (a whole chunk unless it holds more),
        out of the buffer."""
        if not self._sealed:
            self.seal()
        if not self._sealed or size <= 0:
            return []
        chunk, count = self._sealed.popleft()
        found = _decoder.decode(chunk)
        if count > size:  # the rest packed again, first in line
            rest = bytearray(_HEADER)
            for seen in found[size:]:
                _encoder.encode_into(seen, rest, -1)
            rest[1:5] = (count - size).to_bytes(4, "big")
            self._sealed.appendleft((rest, count - size))
            found = found[:size]
        self._count -= len(found)
        return found

    def clear(self) -> None:
        self._sealed.clear()
        self._open = bytearray(_HEADER)
        self._open_count = 0
        self._count = 0
