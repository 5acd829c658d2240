"""Shared pytest configuration."""

from hypothesis import settings

settings.register_profile("ci", deadline=None, print_blob=True)
settings.load_profile("ci")

# -- storage fixtures (tests/fakes/store.py), registered for every test ---------------------------
from tests.fakes.store import rated_storage, storage, url_and_schema  # noqa: E402, F401
# -- end of storage fixtures ----------------------------------------------------------------------
