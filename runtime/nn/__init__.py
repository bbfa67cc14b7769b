"""`yg.nn`: PyTorch's `torch.nn` spelling over yamlgrad's ops.

`yg.nn.functional` holds the functional forms (each a generated op from
derivatives.yaml, or a composite of them that records what PyTorch records).
"""

from __future__ import annotations

from yamlgrad.runtime.nn import functional

__all__ = ["functional"]
