"""PyTorch's exact error texts, in one place (torch/csrc/autograd and torch/autograd)."""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

# An in-place write into a view of an array that cannot be written (Dask's).
ERR_IMMUTABLE_VIEW_INPLACE = (
    "a view of a {0} tensor cannot be modified in place: {0} arrays are immutable, "
    "so the write would not reach its base. Use an out-of-place op instead."
)

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
ERR_IMPLICIT_GRAD_COMPLEX = (
    "grad can be implicitly created only for real scalar outputs but got {dtype}"
)
# validate_outputs: a complex gradient for a real input (or a non-float one for a
# complex input); a formula takes the real part with handle_r_to_c.
ERR_GRAD_COMPLEXITY = (
    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
    "grad_is_complex) to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)
ERR_MISMATCH_SHAPE = (
    "Mismatch in shape: grad_output[{index}] has a shape of {grad_shape} and "
    "output[{index}] has a shape of {out_shape}."
)
ERR_MISMATCH_COMPLEX = (
    "For complex Tensors, both grad_output and output are required to have the "
    "same dtype. Mismatch in dtype: grad_output[{index}] has a dtype of "
    "{grad_dtype} and output[{index}] has a dtype of {out_dtype}."
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
ERR_DETACH_VIEW_INPLACE = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
    "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
    "called on these gradients. To fix this error, please refer to the "
    "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
)
WARN_ONLY_INPUTS = (
    "only_inputs argument is deprecated and is ignored now (defaults to True). To "
    "accumulate gradient for other parts of the graph, please use "
    "torch.autograd.backward."
)
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
ERR_BOOL_EMPTY = "Boolean value of Tensor with no values is ambiguous"
ERR_RESIZE_REQUIRES_GRAD = "cannot resize variables that require grad"
ERR_NO_ACCELERATOR = "Cannot access accelerator device when none is available."
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


ERR_MEAN_DTYPE = (
    "mean(): could not infer output dtype. Input dtype must be either a floating "
    "point or complex dtype. Got: {}"
)
ERR_POST_ACCUMULATE_HOOK_RESULT = (
    "Tensor post accumulate grad hooks should return None."
)


def modified_by_inplace(
    type_name: str,
    sizes: tuple,
    output_nr: int,
    op: str | None,
    current: int,
    saved: int,
    anomaly: bool = False,
) -> str:
    """saved_variable.cpp's message; `op` is the forward op's name (`Exp`), or None.
    Its hint depends on `anomaly` mode, which, when on, has printed the forward
    traceback of the failing node."""
    which = f", which is output {output_nr} of {op}," if op is not None else ""
    if anomaly:
        hint = (
            "Hint: the backtrace further above shows the operation that failed to "
            "compute its gradient. The variable in question was changed in there or "
            "anywhere later. Good luck!"
        )
    else:
        hint = (
            "Hint: enable anomaly detection to find the operation that failed to "
            "compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name} {list(sizes)}]{which} is at version {current}; "
        f"expected version {saved} instead. {hint}"
    )


def argument_type(
    op: str, name: str, position: int, expected: str, value: object
) -> str:
    """PyTorch's argument error; `op` may name an overload (`max.dim`), which
    the message leaves out as PyTorch's does."""
    return (
        f"{op.partition('.')[0]}(): argument '{name}' (position {position}) must be {expected}, "
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
# copy.deepcopy and pickle (Tensor.__deepcopy__, Tensor.__reduce_ex__)
ERR_DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
    "protocol at the moment.  If you were attempting to deepcopy a module, this may "
    "be because of a torch.nn.utils.weight_norm usage, see "
    "https://github.com/pytorch/pytorch/pull/103001"
)
WARN_HOOK_NOT_SERIALIZED = (
    "backward hook {hook!r} on tensor will not be serialized.  If this is expected, "
    "you can decorate the function with @yamlgrad.utils.hooks.unserializable_hook "
    "to suppress this warning"
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
    _SILENCED_PACKAGES.add(package)
    pattern = re.escape(package) + r"(\.|$)"
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=pattern)


# The packages silence_numpy_warnings was called for (yamlgrad, op packs), so the
# filters can be installed again where a `warnings.catch_warnings()` that was
# active at import dropped them (runtime/pytest_plugin.py: pytest's per-test one).
_SILENCED_PACKAGES: set[str] = set()


def resilence_numpy_warnings() -> None:
    """silence_numpy_warnings again for every package it was called for, in front
    of the current filters."""
    for package in sorted(_SILENCED_PACKAGES):
        silence_numpy_warnings(package)


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


def derivative_not_implemented(name: str) -> str:
    """The error of PyTorch's not_implemented("name") formula, at backward time."""
    return f"the derivative for '{name}' is not implemented."


def no_forward_formula(op: str) -> str:
    return (
        f"Trying to use forward AD with {op} that does not support it because it has "
        "not been implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so "
        "that we can prioritize its implementation or submit a PR adding the "
        "implementation to derivatives.yaml"
    )


# -- vmap and the function transforms (torch.func, torch.autograd.functional) ------

ERR_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
ERR_VMAP_ITEM = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
    "over calling .item() on a Tensor, please try to rewrite what you're doing with "
    "other operations. If error is occurring somewhere inside PyTorch internals, "
    "please file a bug report."
)
ERR_VMAP_CONTROL_FLOW = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
    "control flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues ."
)
ERR_VMAP_FALLBACK = (
    "There is a performance drop because we have not yet implemented the batching "
    "rule for {op}. Please file us an issue on GitHub so that we can prioritize its "
    "implementation."
)
ERR_VMAP_SIZES = (
    "vmap: Expected all tensors to have the same size in the mapped dimension, got "
    "sizes {sizes} for the mapped dimension"
)
ERR_VMAP_NO_INPUTS = (
    "vmap({fn})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
    "are trying to vmap over a function with no inputs. The latter is unsupported."
)
ERR_VMAP_IN_DIMS_TYPE = (
    "vmap({fn}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or "
    "a (potentially nested) tuple matching the structure of inputs, got: {kind}."
)
ERR_VMAP_IN_DIMS_STRUCTURE = (
    "vmap({fn}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
    "the structure of `inputs`. in_dims has structure {dims_spec} but inputs has "
    "structure {inputs_spec}."
)
ERR_VMAP_IN_DIM_RANGE = (
    "vmap({fn}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some "
    "input, but that input is a Tensor of dimensionality {ndim} so expected in_dim "
    "to satisfy -{ndim} <= in_dim < {ndim}."
)
ERR_VMAP_IN_DIM_NON_TENSOR = (
    "vmap({fn}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input "
    "but the input is of type {kind}. We cannot vmap over non-Tensor arguments, "
    "please use None as the respective in_dim"
)
ERR_VMAP_OUT_DIMS_STRUCTURE = (
    "vmap({fn}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
    "with the structure of `outputs`. out_dims has structure {dims_spec} but "
    "outputs has structure {outputs_spec}."
)
ERR_VMAP_OUTPUT_TYPE = (
    "vmap({fn}, ...): `{fn}` must only return Tensors, got type {kind}. Did you "
    "mean to set out_dims= to None for output?"
)
ERR_VMAP_RANDOMNESS = (
    "Only allowed values for randomness are 'error', 'different', or 'same'. "
    "Got {randomness}"
)
ERR_VMAP_RANDOM = (
    "vmap: called random operation while in randomness error mode. Please either "
    "use the 'same' or 'different' randomness flags on vmap or perform the "
    "randomness operation out of vmap"
)
ERR_VMAP_INPLACE = (
    "output with shape {shape} doesn't match the broadcast shape {broadcast}"
)
ERR_VMAP_DIFFERENT_RANDOMNESS = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. "
    "This will appear like same randomness. If this is necessary for your usage, "
    "please file an issue with functorch."
)
ERR_VMAP_SAME_RANDOMNESS_BATCHED = (
    "Vmap does not currently support same randomness with a batched tensor input. "
    "Please file an issue with functorch"
)
ERR_CHUNK_SIZE = "{api}: `chunk_size` should be greater than 0."
ERR_ARGNUMS_TYPE = "argnums must be int or Tuple[int, ...], got: {kind}"
ERR_ARGNUMS_EMPTY = "argnums must be non-empty"
ERR_ARGNUMS_UNIQUE = "argnums elements must be unique, got {argnums}"
ERR_ARGNUM_RANGE = "Got argnum={argnum}, but only {count} positional inputs"
ERR_TRANSFORM_FLOAT = "only Tensors of floating point dtype can require gradients"
ERR_TRANSFORM_INPUT = "Thing passed to transform API must be Tensor, got {kind}"
ERR_GRAD_SCALAR = (
    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
    "tensor with {ndim} dims. Maybe you wanted to use the vjp or jacrev APIs "
    "instead?"
)
ERR_GRAD_TENSOR = (
    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {kind}"
)
ERR_HAS_AUX_TUPLE = (
    "{call}: output of function f should be a tuple: (output, aux) if "
    "has_aux is True"
)
ERR_AUX_TENSORS = "Expected tensors, got unsupported type {kind}"
ERR_VJP_OUTPUTS = (
    "vjp(f, *primals): expected f(*primals) to return only tensors, got "
    "unsupported type {kind}"
)
ERR_REPARAMETRIZE = "Error(s) in reparametrizing for {module}:\n\t{details}"

# torch.autograd.functional
ERR_FUNCTIONAL_TYPE_AT = (
    "The {arg} given to {fn} must be either a Tensor or a tuple of Tensors but the "
    "value at index {index} has type {kind}."
)
ERR_FUNCTIONAL_TYPE = (
    "The {arg} given to {fn} must be either a Tensor or a tuple of Tensors but the "
    "given {arg} has type {kind}."
)
ERR_V_LENGTH = "v is a tuple of invalid length: should be {expected} but got {got}."
ERR_V_SINGLE = "The given v should contain a single Tensor."
ERR_V_SIZE = "{prefix}v has invalid size: should be {expected} but got {got}."
ERR_V_NONE_OUTPUT = (
    "The vector v can only be None if the user-provided function returns a single "
    "Tensor with a single element."
)
ERR_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a "
    "single Tensor with a single element."
)
ERR_STRICT_OUTPUT = (
    "Output {i} of the user-provided function does not require gradients. The "
    "outputs must be computed in a differentiable manner from the input when "
    "running in strict mode."
)
ERR_STRICT_GRAD_INPUTS = (
    "The gradient with respect to input {i} is independent of the inputs of the "
    "user-provided function. This is not allowed in strict mode."
)
ERR_STRICT_JACOBIAN = (
    "While computing the hessian, found that the jacobian of the user-provided "
    "function with respect to input {i} is independent of the input. This is not "
    "allowed in strict mode. You should ensure that your function is twice "
    "differentiable and that the jacobian depends on the inputs (this would be "
    "violated by a linear function for example)."
)
ERR_STRICT_HESSIAN = (
    "The hessian of the user-provided function with respect to input {i} is "
    "independent of the input. This is not allowed in strict mode. You should "
    "ensure that your function is thrice differentiable and that the hessian "
    "depends on the inputs."
)
ERR_STRICT_INDEPENDENT = (
    "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode."
)
ERR_STRICT_INDEPENDENT_TRICK = (
    "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode "
    "gradients. This is not allowed in strict mode."
)
ERR_STRICT_JACOBIAN_INDEPENDENT = (
    "The jacobian of the user-provided function is independent of input {i}. This "
    "is not allowed in strict mode."
)
ERR_STRICT_HESSIAN_INDEPENDENT = (
    "The hessian of the user-provided function is independent of entry {i} in the "
    "grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD."
)
ERR_STRICT_CREATE_GRAPH = (
    "The {what} of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode when create_graph=True."
)
ERR_STRICT_JACOBIAN_OUTPUT = (
    "Output {i} of the user-provided function is independent of input {j}. This is "
    "not allowed in strict mode."
)
ERR_SINGLE_TENSOR = "The function given to {fn} should return a single Tensor"
ERR_SINGLE_ELEMENT = (
    "The Tensor returned by the function given to {fn} should contain a single "
    "element"
)
ERR_STRATEGY = (
    'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
    'function has more outputs than inputs, "forward-mode" tends to be more '
    'performant. Otherwise, prefer to use "reverse-mode".'
)
ERR_HESSIAN_STRATEGY = (
    'Expected strategy to be either "forward-mode" or "reverse-mode".'
)
ERR_FORWARD_CREATE_GRAPH = (
    "torch.autograd.functional.jacobian: `create_graph=True` and "
    '`strategy="forward-mode"` are not supported together (yet). Please either set '
    '`create_graph=False` or `strategy="reverse-mode"`.'
)
ERR_FORWARD_STRICT = (
    "torch.autograd.functional.jacobian: `strict=True` and "
    '`strategy="forward-mode"` are not supported together (yet). Please either set '
    '`strict=False` or `strategy="reverse-mode"`.'
)
ERR_FORWARD_VECTORIZE = (
    "Computing Jacobian using forward-AD or forward-over-reverse Hessian "
    "isonly implemented for `vectorize=True`."
)
ERR_VECTORIZE_STRICT = (
    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
    "not supported together. Please either set `strict=False` or `vectorize=False`."
)
ERR_JVP_TUPLE = (
    "jvp(f, primals, tangents): Expected {what} to be a tuple. E.g. it should be "
    "valid to call f(*primals)."
)
ERR_JVP_STRUCTURE = (
    "jvp(f, primals, tangents): Expected primals and tangents to have the same "
    "python structure. For example, if primals is a tuple of 3 tensors, tangents "
    "also must be. Got primals with structure {primals} and tangents with "
    "structure {tangents}"
)
ERR_JVP_PRIMAL_TYPE = (
    "jvp(f, primals, tangents): Expected primals to only contain Tensors, got {kind}"
)
ERR_JVP_EMPTY = (
    "jvp(f, primals, tangents): Expected {what} to contain at least one Tensor."
)
ERR_JVP_OUTPUTS = (
    "jvp(f, primals, tangents): expected f(*primals) to return only tensors, got "
    "unsupported type {kind}"
)
ERR_TANGENT_SIZE = (
    "Trying to set a forward gradient that has a different size than that of the "
    "original Tensor, this is not supported. Tensor is of size {primal} while the "
    "given forward gradient is of size {tangent}."
)

# autograd.grad(..., is_grads_batched=True) with a 0-d grad_output (its batch
# dimension is read by indexing it, as PyTorch's vmap does).
ERR_INDEX_ZERO_DIM = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
)


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (PyTorch's class is `torch._C._LinAlgError`, a
    RuntimeError): a linear algebra function whose input is singular."""


# The linear-algebra functions PyTorch removed: what calling them raises.
ERR_REMOVED_SOLVE = (
    "This function was deprecated since version 1.9 and is now removed. "
    "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
    "`torch.linalg.solve` has its arguments reversed and does not return "
    "the LU factorization.\n"
    "\n"
    "To get the LU factorization see `torch.lu`, which can be used with "
    "`torch.lu_solve` or `torch.lu_unpack`.\n"
    "X = torch.solve(B, A).solution should be replaced with:\n"
    "X = torch.linalg.solve(A, B)"
)
ERR_REMOVED_LSTSQ = (
    "This function was deprecated since version 1.9 and is now removed. "
    "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
    "`torch.linalg.lstsq` has reversed arguments and does not return the QR"
    " decomposition in the returned tuple (although it returns other "
    "information about the problem).\n"
    "\n"
    "To get the QR decomposition consider using `torch.linalg.qr`.\n"
    "\n"
    "The returned solution in `torch.lstsq` stored the residuals of the "
    "solution in the last m - n columns of the returned value whenever m > "
    "n. In torch.linalg.lstsq, the residuals are in the field 'residuals' "
    "of the returned named tuple.\n"
    "\n"
    "The unpacking of the solution, as in\n"
    "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
    "should be replaced with:\n"
    "X = torch.linalg.lstsq(A, B).solution"
)
ERR_REMOVED_SYMEIG = (
    "This function was deprecated since version 1.9 and is now removed. The"
    " default behavior has changed from using the upper triangular portion "
    "of the matrix by default to using the lower triangular portion.\n"
    "\n"
    "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
    "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n"
    "\n"
    "and\n"
    "\n"
    "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
    "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
)
ERR_REMOVED_EIG = (
    "This function was deprecated since version 1.9 and is now removed. "
    "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or "
    "`cdouble` rather than real tensors mimicking complex tensors.\n"
    "\n"
    "L, _ = torch.eig(A) should be replaced with:\n"
    "L_complex = torch.linalg.eigvals(A)\n"
    "\n"
    "and\n"
    "\n"
    "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
    "L_complex, V_complex = torch.linalg.eig(A)"
)
ERR_REMOVED_MATRIX_RANK = (
    "This function was deprecated since version 1.9 and is now removed.\n"
    "Please use the `torch.linalg.matrix_rank` function instead. The "
    "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
    "'hermitian'."
)
ERR_READ_ONLY_BUFFER = (
    "The given buffer is not writable, and PyTorch does not support non-writable "
    "tensors. This means you can write to the underlying (supposedly non-writable) "
    "buffer using the tensor. You may want to copy the buffer to protect its data "
    "or make it writable before converting it to a tensor. This type of warning "
    "will be suppressed for the rest of this program."
)
