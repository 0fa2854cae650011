"""Contract tests of the Meilisearch adapter over scripted engine traffic."""
