"""The hostile server's fixtures, for the tests of this folder that speak to it (tests/hostile_service.py)."""
from hostile_service import hostile, style  # noqa: F401 (fixtures)
