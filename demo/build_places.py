"""Build the second demo dataset, places to search by meaning (src/demo/places.jsonl.gz).

Made offline from the demo's own cities (src/demo/cities.jsonl.gz: GeoNames, CC BY 4.0),
with no other source: every country's capital, its four most populous cities and the 400
most populous cities of the world. Each place gets a short English description written
from the city's fields alone: its rank among its country's cities, whether it is the
capital, how far and in which direction it lies from the capital, its size, its latitude
(the equator, the tropics, the Arctic...), the hemisphere, the country's main languages
and its currency. The sentences vary (a few templates, chosen by the GeoNames id) so that
the descriptions do not all read alike. Nothing in them comes from outside the rows; the
language and currency names are the usual English names of their ISO codes.

Output: gzip-compressed JSON Lines, sorted by population (descending) then id, with mtime 0
in the gzip header: byte-identical on every run.

    python demo/build_places.py              # writes src/demo/places.jsonl.gz
    python demo/build_places.py --out PATH
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "demo" / "cities.jsonl.gz"
OUT = ROOT / "src" / "demo" / "places.jsonl.gz"
WORLD_TOP = 400
COUNTRY_TOP = 4
Row = dict[str, Any]

LANGUAGES = {
    "ar": "Arabic", "am": "Amharic", "az": "Azerbaijani", "be": "Belarusian", "bg": "Bulgarian",
    "bn": "Bengali", "bs": "Bosnian", "ca": "Catalan", "cs": "Czech", "da": "Danish",
    "de": "German", "el": "Greek", "en": "English", "es": "Spanish", "et": "Estonian",
    "fa": "Persian", "fi": "Finnish", "fr": "French", "ga": "Irish", "gu": "Gujarati",
    "ha": "Hausa", "he": "Hebrew", "hi": "Hindi", "hr": "Croatian", "ht": "Haitian Creole",
    "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "is": "Icelandic",
    "it": "Italian", "ja": "Japanese", "ka": "Georgian", "kk": "Kazakh", "km": "Khmer",
    "ko": "Korean", "ky": "Kyrgyz", "lo": "Lao", "lt": "Lithuanian", "lv": "Latvian",
    "mg": "Malagasy", "mk": "Macedonian", "mn": "Mongolian", "ms": "Malay", "mt": "Maltese",
    "my": "Burmese", "ne": "Nepali", "nl": "Dutch", "no": "Norwegian", "ny": "Chichewa",
    "pa": "Punjabi", "pl": "Polish", "ps": "Pashto", "pt": "Portuguese", "qu": "Quechua",
    "ro": "Romanian", "ru": "Russian", "rw": "Kinyarwanda", "si": "Sinhala", "sk": "Slovak",
    "sl": "Slovenian", "so": "Somali", "sq": "Albanian", "sr": "Serbian", "sv": "Swedish",
    "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "tg": "Tajik", "th": "Thai",
    "tk": "Turkmen", "tl": "Tagalog", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu",
    "uz": "Uzbek", "vi": "Vietnamese", "yo": "Yoruba", "zh": "Chinese", "cmn": "Mandarin",
    "zu": "Zulu", "af": "Afrikaans", "ig": "Igbo", "dv": "Dhivehi", "dz": "Dzongkha",
}
CURRENCIES = {
    "AED": "the UAE dirham", "ARS": "the Argentine peso", "AUD": "the Australian dollar",
    "BDT": "the taka", "BRL": "the real", "CAD": "the Canadian dollar",
    "CHF": "the Swiss franc", "CLP": "the Chilean peso", "CNY": "the yuan",
    "COP": "the Colombian peso", "CZK": "the koruna", "DKK": "the Danish krone",
    "DZD": "the Algerian dinar", "EGP": "the Egyptian pound", "ETB": "the birr",
    "EUR": "the euro", "GBP": "the pound sterling", "GHS": "the cedi",
    "HKD": "the Hong Kong dollar", "HUF": "the forint", "IDR": "the rupiah",
    "ILS": "the shekel", "INR": "the Indian rupee", "IQD": "the Iraqi dinar",
    "IRR": "the rial", "ISK": "the Icelandic krona", "JPY": "the yen",
    "KES": "the Kenyan shilling", "KRW": "the won", "KWD": "the Kuwaiti dinar",
    "MAD": "the dirham", "MXN": "the Mexican peso", "MYR": "the ringgit", "NGN": "the naira",
    "NOK": "the Norwegian krone", "NZD": "the New Zealand dollar", "PEN": "the sol",
    "PHP": "the Philippine peso", "PKR": "the Pakistani rupee", "PLN": "the zloty",
    "RUB": "the rouble", "SAR": "the riyal", "SEK": "the Swedish krona",
    "SGD": "the Singapore dollar", "THB": "the baht", "TRY": "the lira",
    "TWD": "the New Taiwan dollar", "TZS": "the Tanzanian shilling", "UAH": "the hryvnia",
    "USD": "the US dollar", "VES": "the bolivar", "VND": "the dong",
    "XAF": "the Central African CFA franc", "XOF": "the West African CFA franc",
    "ZAR": "the rand", "UZS": "the som", "KZT": "the tenge", "BOB": "the boliviano",
}
ORDINALS = ["", "", "second", "third", "fourth", "fifth"]
DIRECTIONS = ["north", "north-east", "east", "south-east", "south", "south-west", "west",
              "north-west"]


def load(path: Path) -> list[Row]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def km_and_direction(a: Row, b: Row) -> tuple[int, str]:
    """The distance from ``b`` to ``a`` (great circle) and the direction ``a`` lies in."""
    lat1, lon1 = math.radians(b["location"]["lat"]), math.radians(b["location"]["lon"])
    lat2, lon2 = math.radians(a["location"]["lat"]), math.radians(a["location"]["lon"])
    h = (math.sin((lat2 - lat1) / 2) ** 2
         + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
    km = 2 * 6371 * math.asin(math.sqrt(h))
    y = math.sin(lon2 - lon1) * math.cos(lat2)
    x = math.cos(lat1) * math.sin(lat2) - math.sin(lat1) * math.cos(lat2) * math.cos(lon2 - lon1)
    bearing = (math.degrees(math.atan2(y, x)) + 360) % 360
    return int(round(km, -1 if km < 1000 else -2)), DIRECTIONS[int((bearing + 22.5) // 45) % 8]


def people(population: int) -> str:
    if population >= 1_000_000:
        return f"about {population / 1_000_000:.1f} million people"
    if population >= 10_000:
        return f"about {round(population, -3):,} people"
    return f"{population:,} people" if population else "a small population"


def size(population: int) -> str:
    if population >= 10_000_000:
        return "a vast megacity"
    if population >= 3_000_000:
        return "a huge metropolis"
    if population >= 1_000_000:
        return "a big city"
    if population >= 300_000:
        return "a mid-sized city"
    if population >= 50_000:
        return "a small city"
    return "a town"


def latitude(lat: float) -> str:
    band = abs(lat)
    side = "north" if lat >= 0 else "south"
    if band < 8:
        where = "close to the equator"
    elif band < 23.44:
        where = "in the tropics"
    elif band < 35:
        where = "in the subtropics"
    elif band < 55:
        where = "in the temperate mid-latitudes"
    elif band < 66.56:
        where = f"far to the {side}, where winter days are short"
    else:
        where = "beyond the Arctic Circle" if lat > 0 else "beyond the Antarctic Circle"
    return where + (", in the southern hemisphere" if lat < 0 else "")


def tongue(row: Row) -> str | None:
    names = [LANGUAGES[code] for code in row.get("languages") or [] if code in LANGUAGES]
    names = list(dict.fromkeys(names))[:2]
    return " and ".join(names) if names else None


def describe(row: Row, rank: int, capital: Row | None) -> str:
    name, country, pop = row["name"], row["country"], int(row.get("population") or 0)
    pick = int(row["id"]) % 3
    if row["capital"]:
        largest = " and its largest city" if rank == 1 else ""
        first = [f"{name} is the capital of {country}{largest}, {size(pop)} of {people(pop)}.",
                 f"The capital of {country}{largest}, {name} is {size(pop)} of {people(pop)}.",
                 f"{name}, home to {people(pop)}, is the capital of {country}{largest}."][pick]
    else:
        which = ("the largest city of" if rank == 1 else
                 f"the {ORDINALS[rank]}-largest city of" if rank < len(ORDINALS) else
                 "one of the larger cities of")
        first = [f"{name} is {which} {country}, {size(pop)} of {people(pop)}.",
                 f"{size(pop).capitalize()} of {people(pop)}, {name} is {which} {country}.",
                 f"With {people(pop)}, {name} is {which} {country}."][pick]
    sentences = [first]
    if capital is not None and not row["capital"]:
        km, towards = km_and_direction(row, capital)
        if km >= 20:
            sentences.append(f"It lies some {km:,} km {towards} of {capital['name']}, "
                             f"the capital.")
        else:
            sentences.append(f"It lies next to {capital['name']}, the capital.")
    lat = row["location"]["lat"]
    sentences.append([f"The city sits {latitude(lat)}, in {row['continent']}.",
                      f"It is in {row['continent']}, {latitude(lat)}.",
                      f"Found in {row['continent']}, it lies {latitude(lat)}."][pick])
    spoken, money = tongue(row), CURRENCIES.get(row.get("currency") or "")
    if spoken and money:
        several = " and " in spoken
        sentences.append([f"People speak {spoken} and pay with {money}.",
                          f"{spoken} {'are' if several else 'is'} heard in its streets; "
                          f"the money is {money}.",
                          f"The {'languages are' if several else 'language is'} {spoken}, "
                          f"the currency {money}."][pick])
    elif spoken:
        sentences.append(f"People there speak {spoken}.")
    elif money:
        sentences.append(f"The currency is {money}.")
    return " ".join(sentences)


def build(rows: list[Row]) -> list[Row]:
    by_country: dict[str, list[Row]] = defaultdict(list)
    for row in rows:  # most populous first
        by_country[row["countryCode"]].append(row)
    capitals = {code: next((r for r in found if r["capital"]), None)
                for code, found in by_country.items()}
    rank = {r["id"]: i + 1 for found in by_country.values() for i, r in enumerate(found)}
    chosen = {r["id"] for r in rows[:WORLD_TOP]}
    for found in by_country.values():
        chosen |= {r["id"] for r in found[:COUNTRY_TOP] if r["population"] > 0}
        chosen |= {r["id"] for r in found if r["capital"]}
    places = []
    for row in rows:
        if row["id"] not in chosen:
            continue
        places.append({
            "id": row["id"], "name": row["name"], "country": row["country"],
            "region": row["continent"], "population": row["population"],
            "capital": row["capital"],
            "description": describe(row, rank[row["id"]], capitals[row["countryCode"]]),
            "location": row["location"],
        })
    return places


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = sorted(load(SOURCE), key=lambda r: (-int(r.get("population") or 0), int(r["id"])))
    places = build(rows)
    text = "".join(json.dumps(p, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for p in places)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as handle:
        handle.write(text.encode("utf-8"))
    args.out.write_bytes(buffer.getvalue())
    print(f"{len(places)} places written to {args.out}")


if __name__ == "__main__":
    main()
