"""The web face's fixture (``tests/fakes/web.py``): one filled SQLite storage per test module."""

from tests.fakes.web import site  # noqa: F401
