"""Thin HTTP controllers: parse, call a use case, return its struct."""
