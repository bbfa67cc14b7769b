"""`yg.nn`: PyTorch's `torch.nn` spelling over yamlgrad's ops.

`yg.nn.functional` holds the functional forms (each a generated op from
derivatives.yaml, or a composite of them that records what PyTorch records);
`Parameter`, `Module`, the containers, layers, activations and losses build on
them; `yg.nn.init` fills parameters as PyTorch's initialisers do.
"""

from __future__ import annotations

from yamlgrad.runtime.nn import functional, init, utils
from yamlgrad.runtime.nn import attention  # after functional, which exports it
from yamlgrad.runtime.nn.attention import MultiheadAttention
from yamlgrad.runtime.nn.activation import *  # noqa: F403
from yamlgrad.runtime.nn.activation import __all__ as _activations
from yamlgrad.runtime.nn.distance import *  # noqa: F403
from yamlgrad.runtime.nn.distance import __all__ as _distances
from yamlgrad.runtime.nn.dropout import *  # noqa: F403
from yamlgrad.runtime.nn.dropout import __all__ as _dropouts
from yamlgrad.runtime.nn.layers import *  # noqa: F403
from yamlgrad.runtime.nn.layers import __all__ as _layers
from yamlgrad.runtime.nn.loss import *  # noqa: F403
from yamlgrad.runtime.nn.loss import __all__ as _losses
from yamlgrad.runtime.nn.module import Module, ModuleDict, ModuleList, Sequential
from yamlgrad.runtime.nn.normalization import *  # noqa: F403
from yamlgrad.runtime.nn.normalization import __all__ as _normalizations
from yamlgrad.runtime.nn.parameter import Parameter
from yamlgrad.runtime.nn.pooling import *  # noqa: F403
from yamlgrad.runtime.nn.pooling import __all__ as _pooling
from yamlgrad.runtime.nn.resampling import *  # noqa: F403
from yamlgrad.runtime.nn.resampling import __all__ as _resampling
from yamlgrad.runtime.nn.sparse import *  # noqa: F403
from yamlgrad.runtime.nn.sparse import __all__ as _sparse
from yamlgrad.runtime.nn.transformer import *  # noqa: F403
from yamlgrad.runtime.nn.transformer import __all__ as _transformer
from yamlgrad.runtime.nn.rnn import *  # noqa: F403
from yamlgrad.runtime.nn.rnn import __all__ as _rnn

__all__ = [
    "attention",
    "functional",
    "init",
    "utils",
    "Parameter",
    "Module",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "MultiheadAttention",
    *_layers,
    *_activations,
    *_losses,
    *_pooling,
    *_resampling,
    *_normalizations,
    *_dropouts,
    *_sparse,
    *_distances,
    *_transformer,
    *_rnn,
]
