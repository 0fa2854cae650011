"""One use case per module; each is a class with ``async __call__(request) -> result``."""
