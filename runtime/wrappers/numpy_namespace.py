"""numpy's public names (its `__all__`), as the generated wrappers read them: `np`
in VariableType.py is this module, so `np.add(...)` runs as written.

numpy's own module has a `__getattr__` (for its deprecated names), which keeps
CPython from specializing a read such as `np.add` on it: every call of a wrapper
would look its kernel's name up the slow way. This module holds the same objects
and no `__getattr__`. The generator accepts only these names in a kernel.
"""

from numpy import *  # noqa: F403
