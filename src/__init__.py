"""searchport: a read-only search gateway with one stable JSON API over many engines."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("searchport")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"
