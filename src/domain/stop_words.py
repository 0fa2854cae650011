"""Stop words: the most common function words of a few languages, which Algolia's
``removeStopWords`` leaves out of a query. searchport makes them optional words instead (a
hit need not match them; one that does ranks no lower), so that a query made only of stop
words still finds something."""

from __future__ import annotations

from collections.abc import Iterable


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOP_WORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "a an and are as at be but by for from has have he her his i if in into is it its "
        "of on or our she so than that the their them then there these they this to was we "
        "were what when where which who will with you your"),
    "fr": _words(
        "au aux avec ce ces dans de des du elle en et eux il je la le les leur lui ma mais "
        "me mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta "
        "te tes toi ton tu un une vos votre vous"),
    "de": _words(
        "aber als am an auch auf aus bei das dass dem den der des die du ein eine einem "
        "einen einer es für hat ich im in ist mit nicht oder sie sind so und von war wie "
        "wir zu zum zur"),
    "es": _words(
        "a al como con de del el ella en es esta este la las lo los mas mi no o para pero "
        "por que se sin su sus un una uno y ya"),
}


def stop_words_of(languages: Iterable[str]) -> frozenset[str]:
    """The stop words of every language named that has a list (others add none)."""
    found: set[str] = set()
    for language in languages:
        found |= STOP_WORDS.get(language.lower(), frozenset())
    return frozenset(found)
