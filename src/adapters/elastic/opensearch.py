"""What is OpenSearch's own: basic authentication only (the config loader refuses
``apiKey``), a server that must not identify itself as Elasticsearch, and the k-NN
plugin's ``knn`` query to search by meaning (the neural-search plugin's ``neural`` query
when OpenSearch embeds the query's text itself)."""

from __future__ import annotations

from searchport.adapters.elastic.elasticsearch import user_credentials
from searchport.adapters.elastic.engine import Flavor
from searchport.adapters.elastic.hybrid import opensearch_knn, opensearch_neural
from searchport.adapters.network.exchange import Answer


def product_warning(response: Answer) -> str | None:
    if "x-elastic-product" not in response.headers:
        return None
    return "the server identifies itself as Elasticsearch; set engine: elasticsearch"


FLAVOR = Flavor(name="opensearch", auth_headers=user_credentials,
                product_warning=product_warning, vector_search=opensearch_knn,
                text_search=opensearch_neural)
