"""API keys: named, scoped keys from the config and the secured keys minted from them."""
