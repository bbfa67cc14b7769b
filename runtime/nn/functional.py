"""`yg.nn.functional`: `torch.nn.functional`'s names for yamlgrad's ops.

Every function here is a generated wrapper (generated/VariableType.py) or a small
composite of them, so each records the node PyTorch records: `pad(x, (1, 1))` is
constant padding and records ConstantPadNdBackward0, as in PyTorch.
"""

from __future__ import annotations

from yamlgrad.generated import VariableType

__all__ = [
    "pad",
]

pad = VariableType.pad


# -- convolution and pooling ---------------------------------------------------------


# -- linear, normalisation, embedding, dropout ---------------------------------------


# -- activations and softmax ---------------------------------------------------------


# -- distances and losses ------------------------------------------------------------
