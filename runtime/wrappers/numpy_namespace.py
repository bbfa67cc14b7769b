"""numpy's public names (its `__all__`), as the generated wrappers read them: `np`
in VariableType.py is this module, so `np.add(...)` runs as written.

numpy's own module has a `__getattr__` (for its deprecated names, and for the
submodules it imports only when first read), which keeps CPython from
specializing a read such as `np.add` on it: every call of a wrapper would look
its kernel's name up the slow way. This module holds the same objects and no
`__getattr__`. The generator accepts only these names in a kernel.

The submodules numpy imports on first read (`random`, `fft`, `ma`, `testing`,
`f2py`, ...) are left out: no kernel may name them (tools/expressions.py allows
`np.linalg.<name>` alone of numpy's submodules), and importing them all would
double the time `import yamlgrad` takes.
"""

import numpy as _numpy

globals().update(
    {name: getattr(_numpy, name) for name in _numpy.__all__ if name in vars(_numpy)}
)
