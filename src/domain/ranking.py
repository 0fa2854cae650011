"""A handle's custom ranking as sort keys: what orders equally relevant hits.

Each engine adapter applies it after its own relevance when a search has no explicit
``sort`` (an explicit sort replaces relevance and the custom ranking alike): Typesense as
``sort_by: _text_match:desc,<field>:<order>``, Elasticsearch and OpenSearch as a sort on
``_score`` then the fields, Meilisearch as its ``sort`` parameter, the embedded engine
inside its index (docs/relevance.md).
"""

from __future__ import annotations

from searchport.domain.config import IndexConfig
from searchport.domain.fields import FieldMap
from searchport.domain.query import SortClause


def custom_ranking(config: IndexConfig) -> tuple[SortClause, ...]:
    """``customRanking`` in real field names, in priority order."""
    fields = FieldMap(config.fields)
    return tuple(SortClause(field=fields.real(key.field), order=key.order)
                 for key in config.custom_ranking)
