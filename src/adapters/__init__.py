"""Adapters: engines, caches and the config loader, each translating at its edge."""
