"""What is Elasticsearch's own: ``ApiKey`` or basic authentication, the
``X-Elastic-Product`` header every Elasticsearch since 7.14 sends, and the top-level
``knn`` search to search by meaning (with ``query_vector_builder`` when Elasticsearch
embeds the query's text itself)."""

from __future__ import annotations

import base64

from searchport.adapters.elastic.engine import Flavor
from searchport.adapters.elastic.hybrid import elasticsearch_knn, elasticsearch_text_knn
from searchport.adapters.network.address import EngineAddress
from searchport.adapters.network.exchange import Answer
from searchport.domain.config import IndexConfig


def basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


def user_credentials(config: IndexConfig, address: EngineAddress) -> dict[str, str]:
    """Basic authentication from ``username``/``password``, else from the host URL."""
    if config.username:
        return basic(config.username, config.password or "")
    if address.username:
        return basic(address.username, address.password or "")
    return {}


def auth_headers(config: IndexConfig, address: EngineAddress) -> dict[str, str]:
    if config.api_key:
        return {"Authorization": f"ApiKey {config.api_key}"}
    return user_credentials(config, address)


def product_warning(response: Answer) -> str | None:
    if response.headers.get("x-elastic-product") == "Elasticsearch":
        return None
    return ("the server does not identify itself as Elasticsearch 7.14 or later (no "
            "X-Elastic-Product header); if it is OpenSearch, set engine: opensearch")


FLAVOR = Flavor(name="elasticsearch", auth_headers=auth_headers,
                product_warning=product_warning, vector_search=elasticsearch_knn,
                text_search=elasticsearch_text_knn)
