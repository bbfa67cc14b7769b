"""`functional_call`: run a yg.nn Module with other tensors as its parameters.

As torch.func.functional_call (torch.nn.utils.stateless): the given tensors stand in
for the parameters and buffers of those names for the length of one call and the
module's own come back afterwards, even when the call raises. This is what lets
grad and vmap differentiate and batch a model over its parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import ERR_REPARAMETRIZE
from yamlgrad.runtime.nn.module import Module


def _owner(module: Module, name: str) -> tuple[Module | None, str]:
    *path, leaf = name.split(".")
    for part in path:
        module = module._modules.get(part)
        if module is None:
            return None, leaf
    return module, leaf


def _merged(dicts: Any) -> dict[str, Tensor]:
    if isinstance(dicts, dict):
        return dict(dicts)
    merged: dict[str, Tensor] = {}
    for d in dicts:
        for key in d:
            if key in merged:
                raise ValueError(
                    f"{key} appeared in multiple dictionaries; behavior of "
                    "functional call is ambiguous"
                )
        merged.update(d)
    return merged


def _with_tied(module: Module, given: dict[str, Tensor], tie_weights: bool) -> dict:
    """`given`, plus the names sharing a tensor with a given one (tied weights)."""
    if not tie_weights:
        return given
    names_of: dict[int, list[str]] = {}
    for table in ("_parameters", "_buffers"):
        for prefix, sub in module.named_modules(remove_duplicate=False):
            for name, t in getattr(sub, table).items():
                if t is not None:
                    full = f"{prefix}.{name}" if prefix else name
                    names_of.setdefault(id(t), []).append(full)
    out = dict(given)
    for names in names_of.values():
        values = [given[n] for n in names if n in given]
        for n in names:
            if n not in out and values:
                out[n] = values[0]
    return out


def _check_strict(module: Module, given: dict[str, Tensor]) -> None:
    expected = [n for n, _ in module.named_parameters()]
    expected += [n for n, _ in module.named_buffers()]
    details = []
    unexpected = [k for k in given if k not in expected]
    missing = [k for k in expected if k not in given]
    if unexpected:
        details.append(
            "Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + "."
        )
    if missing:
        details.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
    if details:
        raise RuntimeError(
            ERR_REPARAMETRIZE.format(
                module=type(module).__name__, details="\n\t".join(details)
            )
        )


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """`torch.func.functional_call`: `module(*args, **kwargs)` with the tensors in
    `parameter_and_buffer_dicts` in place of the parameters and buffers so named.

    >>> model = yg.nn.Linear(3, 1)
    >>> params = {k: v.detach() for k, v in model.named_parameters()}
    >>> yg.func.functional_call(model, params, (yg.ones(3),)).shape
    yamlgrad.Size([1])
    """
    given = _merged(parameter_and_buffer_dicts)
    if strict:
        _check_strict(module, given)
    given = _with_tied(module, given, tie_weights)
    saved = []
    try:
        for name, value in given.items():
            owner, leaf = _owner(module, name)
            if owner is None:
                continue
            table = owner._parameters if leaf in owner._parameters else owner._buffers
            if leaf not in table:
                continue
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for table, leaf, original in reversed(saved):
            table[leaf] = original


def stack_module_state(
    models: Sequence[Module],
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of same-class models, each stacked along a new
    first dim (new leaves, with no history to the models'), for `vmap` over
    `functional_call`: an ensemble run as one model."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval "
            "mode."
        )
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError(
            "stack_module_state: Expected all models to be of the same class."
        )
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def _stacked_leaf(tensors: list[Tensor], name: str) -> Tensor:
    requires = [t.requires_grad for t in tensors]
    if any(requires) and not all(requires):
        raise RuntimeError(
            f"Expected {name} from each model to have the same .requires_grad"
        )
    result = ops.stack(tensors)
    return result.detach().requires_grad_() if all(requires) else result
