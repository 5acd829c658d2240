"""The web face's fixtures: one filled SQLite storage per test module (``tests/fakes/web.py``),
and one with courses (``tests/fakes/course_site.py``)."""

from tests.fakes.course_site import course_site  # noqa: F401
from tests.fakes.web import site  # noqa: F401
