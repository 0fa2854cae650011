"""Package discovery for the ``searchport`` = ``src`` mapping (pyproject.toml holds the rest).

Every folder under ``src`` with an ``__init__.py`` ships as ``searchport.<folder>``, so a
new subpackage can never be left out of the wheel (tests/unit/test_packaging.py checks
the built wheel against the source tree).
"""

from setuptools import find_packages, setup

setup(packages=["searchport", *(f"searchport.{name}" for name in find_packages("src"))])
