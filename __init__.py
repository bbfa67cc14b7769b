"""yamlgrad: PyTorch's autograd architecture over numpy, generated from derivatives.yaml.

>>> import yamlgrad as yg
>>> a = yg.tensor(2.0, requires_grad=True)
>>> b = yg.tensor(6.0, requires_grad=True)
>>> Q = 3 * a**3 - b**2
>>> Q.backward()
>>> a.grad, b.grad
(tensor(36.), tensor(-12.))

The public API lives in yamlgrad/runtime/facade.py; this file only re-exports it.
"""

from __future__ import annotations

from yamlgrad.runtime import autograd
from yamlgrad.runtime.errors import silence_numpy_warnings as _silence
from yamlgrad.runtime.public_modules import _published_modules
from yamlgrad.runtime.public_modules import publish as _publish
from yamlgrad.runtime.public_modules import publish_layout as _publish_layout
from yamlgrad.runtime.torch_alias import install_as_torch

# numpy's log(0), 0/0 and overflow inside yamlgrad give inf and nan without a
# warning, as PyTorch's do (see silence_numpy_warnings).
_silence("yamlgrad")
from yamlgrad.runtime.dtypes import bool_ as bool  # noqa: A001 - PyTorch's names
from yamlgrad.runtime.dtypes import float32 as float  # noqa: A001
from yamlgrad.runtime.dtypes import int32 as int  # noqa: A001

_publish(__name__ + ".autograd", autograd)
__version__ = "0.1.0"

try:
    from yamlgrad.runtime.facade import *  # noqa: F403
    from yamlgrad.runtime.facade import __all__ as _facade_all
except Exception as _error:  # noqa: BLE001
    # generated/ is missing or does not import. The generator (yamlgrad.tools)
    # needs none of it, so `yamlgrad-gen` must still run and repair it; anything
    # else fails on first use, naming the cause.
    _import_error = _error

    def __getattr__(name: str) -> object:
        raise ImportError(
            f"yamlgrad cannot load its generated code ({_import_error!r}); "
            "run `yamlgrad-gen` to regenerate generated/"
        ) from _import_error

else:
    __all__ = [*_facade_all, "bool", "float", "int", "install_as_torch"]
    # `import yamlgrad.nn.functional as F` works as `import torch.nn.functional`:
    # every public module (an attribute of yamlgrad, or of one of its public
    # modules, that lives in runtime/) is registered under its public name, its
    # later submodules and PyTorch's file layout served by finders.
    _published_modules(__name__)
    _publish_layout(__name__)

    def __dir__() -> list[str]:
        return sorted(__all__)
