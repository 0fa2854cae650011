"""Reading a source file row by row: JSON Lines (optionally gzip), a JSON array, or CSV.

A row that cannot be read becomes a ``SourceRow`` without ``row`` rather than an
exception, so one bad line costs one document, never the build.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import msgspec

_decode = msgspec.json.Decoder()


class SourceRow(msgspec.Struct, kw_only=True):
    row: dict[str, Any] | None  # None when the line is not a JSON object
    raw: bytes | None = None  # the line's own bytes, stored as is when it is JSON
    from_text_cells: bool = False  # CSV: every value arrived as a string


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    return cast(IO[bytes], gzip.open(path, "rb")) if gzipped else path.open("rb")


def _is_csv(path: Path) -> bool:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return bool(suffixes) and suffixes[-1] == ".csv"


def _is_json_array(path: Path) -> bool:
    with _open(path) as handle:
        return handle.read(1 << 16).lstrip()[:1] == b"["


def count_rows(path: Path) -> int | None:
    """The number of rows, when it is cheap to know up front (an uncompressed file)."""
    with _open(path) as handle:
        if isinstance(handle, gzip.GzipFile) or _is_json_array(path):
            return None
        lines = sum(1 for line in handle if line.strip())
    return lines - 1 if _is_csv(path) else lines


def read_rows(path: Path) -> Iterator[SourceRow]:
    if _is_csv(path):
        yield from _read_csv(path)
    elif _is_json_array(path):
        with _open(path) as handle:
            data = handle.read()
        yield from _read_json_array(data)
    else:
        with _open(path) as handle:
            yield from _read_json_lines(handle)


def _read_json_lines(handle: IO[bytes]) -> Iterator[SourceRow]:
    for line in handle:
        line = line.strip().removeprefix(b"\xef\xbb\xbf")
        if not line:
            continue
        try:
            value = _decode.decode(line)
        except msgspec.DecodeError:
            yield SourceRow(row=None)
            continue
        if isinstance(value, dict):
            yield SourceRow(row=value, raw=line)
        else:
            yield SourceRow(row=None)


def _read_json_array(data: bytes) -> Iterator[SourceRow]:
    try:
        values = _decode.decode(data)
    except msgspec.DecodeError as exc:
        raise ValueError(f"the source is not valid JSON: {exc}") from exc
    if not isinstance(values, list):
        raise ValueError("a JSON source must be an array of objects or JSON Lines")
    for value in values:
        yield SourceRow(row=value if isinstance(value, dict) else None)


def _read_csv(path: Path) -> Iterator[SourceRow]:
    with _open(path) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        for cells in csv.DictReader(text):
            row: dict[str, Any] = {}
            for key, cell in cells.items():
                if key is None or cell is None or cell == "":
                    continue  # extra cells without a header, or an empty cell: no value
                row[key] = _cell_value(cell)
            yield SourceRow(row=row, from_text_cells=True)


def _cell_value(cell: str) -> Any:
    # A cell written as a JSON array ("[\"en\", \"fr\"]") is a list of values.
    if cell.startswith("[") and cell.endswith("]"):
        try:
            value = _decode.decode(cell)
        except msgspec.DecodeError:
            return cell
        if isinstance(value, list):
            return value
    return cell
