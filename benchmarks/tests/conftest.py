"""The benchmarks' tests start from the fresh world the product's tests do.

The fixtures are declared once, in tests/conftest.py, and used here by name: a tmp MAMA_HOME
and Claude Code config folder (autouse), the common umask, a fresh store and its project.
"""

from tests.conftest import _umask, mama_home, project, store

__all__ = ["_umask", "mama_home", "project", "store"]
