"""The use cases the routes call, as the container's providers (``Container.use_cases``).

Each route asks its provider on every request (``uc.search()``), so an override in the
container holds at once; the providers are synchronous singletons, resolved inline. Routes
take no Litestar dependency: resolving one costs a kwargs model and a dependency batch on
every request. The key's ``Access`` is read from the ASGI scope (``auth.access_of``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from searchport.domain.usecases.algolia_search import AlgoliaSearch
    from searchport.domain.usecases.analytics import SendEvents
    from searchport.domain.usecases.autocomplete import Autocomplete
    from searchport.domain.usecases.clear_cache import ClearCache
    from searchport.domain.usecases.describe_fields import DescribeFields
    from searchport.domain.usecases.facet_search import FacetSearch
    from searchport.domain.usecases.get_document import GetDocument
    from searchport.domain.usecases.get_mapping import GetMapping
    from searchport.domain.usecases.get_rule import GetRule
    from searchport.domain.usecases.health import Health
    from searchport.domain.usecases.list_indexes import ListIndexes
    from searchport.domain.usecases.raw_query import RawQuery
    from searchport.domain.usecases.search import Search
    from searchport.domain.usecases.search_rules import SearchRules
    from searchport.domain.usecases.similar import SimilarDocuments
    from searchport.entrypoints.http.observability import Metrics


@dataclass(frozen=True, slots=True)
class UseCases:
    search: Callable[[], Search]
    facet_search: Callable[[], FacetSearch]
    autocomplete: Callable[[], Autocomplete]
    get_document: Callable[[], GetDocument]
    get_mapping: Callable[[], GetMapping]
    raw_query: Callable[[], RawQuery]
    health: Callable[[], Health]
    list_indexes: Callable[[], ListIndexes]
    describe_fields: Callable[[], DescribeFields]
    clear_cache: Callable[[], ClearCache]
    algolia_search: Callable[[], AlgoliaSearch]
    search_rules: Callable[[], SearchRules]
    get_rule: Callable[[], GetRule]
    metrics: Callable[[], Metrics]
    send_events: Callable[[], SendEvents]
    analytics_reports: Callable[[], dict[str, Any]]  # route -> its Analytics API use case
    similar_documents: Callable[[], SimilarDocuments]

