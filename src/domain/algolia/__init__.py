"""The Algolia search protocol, in domain terms: parsers of its filter languages."""
