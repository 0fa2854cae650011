"""Every engine adapter fails loudly on a filter kind it does not know, alone or inside a
group: never a clause that matches everything (or nothing) in its place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from searchport.adapters.elastic.fields import FieldCatalog
from searchport.adapters.elastic.filters import filter_clause
from searchport.adapters.meilisearch.filters import expression
from searchport.adapters.tantivy.filters import FilterTranslator
from searchport.adapters.typesense.filters import clause
from searchport.adapters.typesense.schema import FieldInfo, Schema
from searchport.domain.query import AnyOf, Negated, TermFilter


class Unknown(msgspec.Struct, frozen=True, kw_only=True, tag="unknown"):
    field: str = "genre"


GENRE = TermFilter(field="genre", values=("a",))
TRANSLATORS: dict[str, Callable[[Any], object]] = {
    "elastic": lambda f: filter_clause(f, FieldCatalog()),
    "meilisearch": expression,
    "typesense": lambda f: clause(f, Schema(fields={"genre": FieldInfo("genre", "string")})),
    # the kind is looked at before the index layout is
    "tantivy": lambda f: FilterTranslator(None, None).translate(f),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("engine", sorted(TRANSLATORS))
@pytest.mark.parametrize("f", [Unknown(), AnyOf(filters=(Unknown(), GENRE)),  # type: ignore[arg-type]
                               Negated(filter=Unknown())],  # type: ignore[arg-type]
                         ids=["alone", "in AnyOf", "in Negated"])
def test_an_unknown_filter_kind_is_an_error(engine: str, f: Any) -> None:
    with pytest.raises(TypeError, match="unknown filter"):
        TRANSLATORS[engine](f)
