"""Interfaces the domain needs; adapters satisfy them structurally."""
