"""`yamlgrad.func`: torch.func's function transforms over yamlgrad's autograd.

>>> from yamlgrad.func import grad, vmap
>>> per_sample = vmap(grad(lambda w, x: (w * x).sum()), in_dims=(None, 0))
>>> per_sample(yg.ones(3), yg.randn(8, 3)).shape
yamlgrad.Size([8, 3])

vmap (vmap.py) batches through rules generated from derivatives.yaml and written
for the rest (batching_rules.py), on BatchedTensors (batched_tensor.py); grad,
vjp, jacrev and hessian (eager_transforms.py) run the engine on the physical
tensors underneath, so the transforms compose. functional_call swaps a module's
parameters for given tensors. jvp, jacfwd and hessian (jvp_transforms.py) run
forward-mode AD on dual tensors (yamlgrad.autograd.forward_ad).
"""

from __future__ import annotations

from yamlgrad.runtime.func.eager_transforms import (
    grad,
    grad_and_value,
    jacrev,
    vjp,
)
from yamlgrad.runtime.func.functional_call import functional_call, stack_module_state
from yamlgrad.runtime.func.jvp_transforms import hessian, jacfwd, jvp
from yamlgrad.runtime.func.vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "vmap",
    "functional_call",
    "stack_module_state",
]
