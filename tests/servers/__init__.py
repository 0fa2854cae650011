"""Real engine servers the tests start themselves, from packages the registries serve."""
