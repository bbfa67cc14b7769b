"""PyTorch's exact error texts, in one place (torch/csrc/autograd and torch/autograd)."""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
ERR_NO_GRAD_FN = (
    "element {index} of tensors does not require grad and does not have a grad_fn"
)
ERR_GRADIENT_COUNT = "got {tensors} tensors and {gradients} gradients"
ERR_IMPLICIT_GRAD = "grad can be implicitly created only for scalar outputs"
ERR_MISMATCH_SHAPE = (
    "Mismatch in shape: grad_output[{index}] has a shape of {grad_shape} and "
    "output[{index}] has a shape of {out_shape}."
)
ERR_INPUT_NO_GRAD = "One of the differentiated Tensors does not require grad"
ERR_UNUSED_INPUT = (
    "The differentiated Tensor at index {index} appears to not have been used in the "
    "graph. Set allow_unused=True if this is the desired behavior."
)
ERR_MATERIALIZE_UNUSED = (
    "Expected allow_unused to be True or not passed when materialize_grads=True, "
    "but got: allow_unused=False."
)
ERR_EMPTY_BACKWARD_INPUTS = "`inputs` argument to `backward()` cannot be empty."
ERR_EMPTY_GRAD_INPUTS = "`inputs` argument to `grad()` cannot be empty."
ERR_REQUIRES_GRAD_DTYPE = (
    "Only Tensors of floating point and complex dtype can require gradients"
)
ERR_REQUIRES_GRAD_NON_LEAF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)
ERR_NUMPY_REQUIRES_GRAD = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
ERR_GRAD_TYPE = (
    "assigned grad expected to be a Tensor or None but got grad of type {type_name}"
)
ERR_GRAD_SIZE = (
    "attempting to assign a gradient of size '{grad_size}' to a tensor of size "
    "'{size}'. Please ensure that the gradient and the tensor are the same size"
)
ERR_GRAD_DTYPE = (
    "attempting to assign a gradient with dtype '{grad_dtype}' to a tensor with "
    "grad_dtype '{dtype}'. The gradient must match the tensor's grad_dtype (defaults "
    "to the tensor's dtype). You can set the tensor's grad_dtype attribute with a "
    "specific dtype, or None to allow any dtype. Set grad_dtype with caution. "
    "Diverging the dtypes of a tensor and its gradient may break downstream systems "
    "that assume they match."
)
ERR_ITEM_NUMEL = "a Tensor with {numel} elements cannot be converted to Scalar"
ERR_BOOL_AMBIGUOUS = "Boolean value of Tensor with more than one value is ambiguous"
WARN_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
    ".grad attribute won't be populated during autograd.backward(). If you indeed want "
    "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
    "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
    "access the leaf Tensor instead."
)


def invalid_number_of_gradients(name: str, expected: int, got: int) -> str:
    return (
        f"Function {name} returned an invalid number of gradients - expected "
        f"{expected}, but got {got}"
    )


def invalid_gradient_shape(name: str, index: int, got: tuple, expected: tuple) -> str:
    return (
        f"Function {name} returned an invalid gradient at index {index} - got "
        f"{list(got)} but expected shape compatible with {list(expected)}"
    )


def modified_by_inplace(
    type_name: str,
    sizes: tuple,
    output_nr: int,
    op: str | None,
    current: int,
    saved: int,
) -> str:
    """saved_variable.cpp's message; `op` is the forward op's name (`Exp`), or None."""
    which = f", which is output {output_nr} of {op}," if op is not None else ""
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name} {list(sizes)}]{which} is at version {current}; "
        f"expected version {saved} instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def argument_type(
    op: str, name: str, position: int, expected: str, value: object
) -> str:
    return (
        f"{op}(): argument '{name}' (position {position}) must be {expected}, "
        f"not {type(value).__name__}"
    )


# How PyTorch's messages name a dtype: caffe2's TypeMeta, and c10's ScalarType.
_TYPE_META_NAMES = {
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "uint8": "unsigned char",
    "bool": "bool",
}
_SCALAR_TYPE_NAMES = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "uint8": "Byte",
    "bool": "Bool",
}


def scalar_type_name(dtype: Any) -> str:
    """PyTorch's ScalarType name of a numpy dtype: Float, Double, Long, ..."""
    name = np.dtype(dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name)


def type_meta_name(dtype: Any) -> str:
    """PyTorch's C++ type name of a numpy dtype, as its TypeMeta prints it:
    float, double, long int, ..."""
    name = np.dtype(dtype).name
    return _TYPE_META_NAMES.get(name, name)


def assigned_grad_dtype(grad_dtype: str, dtype: str) -> str:
    """`x.grad = g` with g of another dtype; both are numpy dtype names."""
    return ERR_GRAD_DTYPE.format(
        grad_dtype=_TYPE_META_NAMES.get(grad_dtype, grad_dtype),
        dtype=_SCALAR_TYPE_NAMES.get(dtype, dtype),
    )


ERR_HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
ERR_RETAIN_GRAD_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
ERR_POST_ACCUMULATE_NON_LEAF = (
    "post accumulate grad hooks cannot be registered on non-leaf tensors"
)
ERR_LEAF_INPLACE = (
    "a leaf Variable that requires grad is being used in an in-place operation."
)
ERR_VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place "
    "operation."
)
ERR_INPLACE_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to "
    "a single memory location. Please clone() the tensor before performing the "
    "operation."
)
ERR_NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
    "You can clarify your code by moving both the view and the inplace either both "
    "inside the no_grad block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)


def multi_output_view_inplace(output_nr: int, op: str) -> str:
    """PyTorch's error for an in-place op on one output of split/chunk/unbind."""
    return (
        f"Output {output_nr} of {op} is a view and is being modified inplace. This "
        "view is the output of a function that returns multiple views. Such functions "
        "do not allow the output views to be modified inplace. You should replace the "
        "inplace operation by an out-of-place one."
    )


# inference_mode (PyTorch's texts).
ERR_INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
    "make a clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
ERR_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors "
    "created in inference mode in computation tracked by autograd. To work around "
    "this, you can make a clone to get a normal tensor and use it in autograd, or "
    "use `torch.no_grad()` instead of `torch.inference_mode()`."
)
ERR_INFERENCE_REQUIRES_GRAD = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not "
    "allowed."
)
ERR_INFERENCE_VERSION = "Inference tensors do not track version counter."
ERR_INFERENCE_VIEW_INPLACE = (
    "A view was created in inference mode and is being modified inplace in normal "
    "mode. Given that this use case is ambiguous and error-prone, it is forbidden. "
    "You can clarify your code by moving both the view and the inplace either both "
    "inside the inference_mode block (if you don't want the inplace to be tracked) "
    "or both outside (if you want the inplace to be tracked)."
)


# The package's own code (not its tests or examples), which a warning about an
# op's call skips to name the line that called the op.
_OWN_CODE = tuple(
    str(Path(__file__).resolve().parents[1] / folder) + os.sep
    for folder in ("runtime", "generated")
)


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """warnings.warn attributed to the first frame outside the package's own
    code: the user's line that called the op, as PyTorch's TORCH_WARN shows it."""
    frame, level = sys._getframe(1), 2  # 2: the frame that called this
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_CODE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def silence_numpy_warnings(package: str) -> None:
    """Hide numpy's RuntimeWarnings raised from the code of `package` (its
    kernels, wrappers and formulas): log(0), 0/0, sqrt(-1) and overflow give the
    same inf and nan as in PyTorch, which computes them without a word. Only
    warnings attributed to that package's modules are filtered, so a user's own
    numpy code still warns; a user's `warnings.simplefilter(...)` comes first and
    wins. It costs nothing per op, unlike a numpy errstate around each kernel."""
    pattern = re.escape(package) + r"(\.|$)"
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=pattern)

# Forward-mode AD (torch.autograd.forward_ad and the forward-grad paths of the ops).
ERR_NO_DUAL_LEVEL = (
    "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
    "enter_dual_level() first."
)
ERR_NESTED_DUAL_LEVEL = "Nested forward mode AD is not supported at the moment"
ERR_EXIT_NOT_LAST_LEVEL = (
    "Trying to exit a forward AD level that was not the last one that was created. "
    "This is not supported."
)
ERR_DUAL_LEVEL_NEGATIVE = "Dual level must be a positive number."
ERR_MAKE_DUAL_INVALID_LEVEL = "Invalid level given to _make_dual"
ERR_UNPACK_DUAL_INVALID_LEVEL = "Invalid level given to _fw_primal"
ERR_ALREADY_DUAL = (
    "Making a dual Tensor based on a Tensor that already has a forward gradient at "
    "the same level {level} is not supported."
)


def forward_grad_size(size: tuple[int, ...], grad_size: tuple[int, ...]) -> str:
    return (
        "Trying to set a forward gradient that has a different size than that of the "
        f"original Tensor, this is not supported. Tensor is of size {list(size)} while "
        f"the given forward gradient is of size {list(grad_size)}."
    )


def not_floating(what: str, dtype_name: str) -> str:
    return f"Expected {what} to be floating point or complex, but got: {dtype_name}"


def no_forward_formula(op: str) -> str:
    return (
        f"Trying to use forward AD with {op} that does not support it because it has "
        "not been implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so "
        "that we can prioritize its implementation or submit a PR adding the "
        "implementation to derivatives.yaml"
    )
