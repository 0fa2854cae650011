"""Contract tests of the Elasticsearch/OpenSearch adapter over scripted engine traffic."""
