"""yg.nn.functional's layers against torch.nn.functional: the functional surface
(argument forms, padding="same", groups, bias=None, return_indices, ceil_mode,
unbatched inputs), error messages, and what the YAML-driven tests cannot check:
dropout's random mask, batch_norm's running statistics, embedding's padding_idx.

Each case is one call written once for both libraries (`F` is either module) on
float64 leaves that share their values bit for bit.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn.functional as YF
from yamlgrad.runtime.ops import convolutions
from support import (
    as_outputs,
    aten_namespace,
    call_outcome,
    counting_input,
    second_order,
)

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RTOL = 1e-10
ATOL = 1e-12


class Case:
    """A call of F.<something> on float leaves of the given shapes."""

    def __init__(
        self,
        id: str,
        shapes: list[tuple[int, ...]],
        call: Callable[..., Any],
        ints: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.shapes = shapes
        self.call = call
        self.ints = ints or {}


def _long(lib: Any, values: Any) -> Any:
    return lib.tensor(np.asarray(values, dtype=np.int64))


# fmt: off
CASES = [
    Case("conv1d_same", [(2, 3, 7), (4, 3, 3), (4,)], lambda F, x, w, b: F.conv1d(x, w, b, padding="same")),
    Case("conv1d_same_even_kernel", [(1, 2, 6), (3, 2, 4)], lambda F, x, w: F.conv1d(x, w, padding="same", dilation=1)),
    Case("conv1d_valid_stride", [(2, 2, 9), (3, 2, 3)], lambda F, x, w: F.conv1d(x, w, stride=2, padding="valid")),
    Case("conv1d_unbatched", [(2, 6), (3, 2, 2), (3,)], lambda F, x, w, b: F.conv1d(x, w, b, 1, 1)),
    Case("conv2d_default", [(2, 3, 5, 5), (4, 3, 3, 3), (4,)], lambda F, x, w, b: F.conv2d(x, w, b)),
    Case("conv2d_no_bias_stride_tuple", [(1, 2, 6, 5), (3, 2, 2, 3)], lambda F, x, w: F.conv2d(x, w, None, (2, 1), (1, 0))),
    Case("conv2d_groups_dilation", [(1, 4, 6, 6), (6, 2, 3, 2), (6,)], lambda F, x, w, b: F.conv2d(x, w, b, padding=2, dilation=(2, 1), groups=2)),
    Case("conv2d_same_even_kernel", [(1, 2, 5, 4), (2, 2, 2, 4)], lambda F, x, w: F.conv2d(x, w, padding="same")),
    Case("conv2d_same_dilated", [(1, 2, 5, 5), (2, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", dilation=2)),
    Case("conv2d_depthwise", [(2, 3, 4, 4), (3, 1, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding=1, groups=3)),
    Case("conv2d_unbatched", [(3, 5, 5), (2, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w)),
    Case("conv2d_kernel_wider_than_output", [(2, 4, 6, 7), (4, 2, 5, 6), (4,)], lambda F, x, w, b: F.conv2d(x, w, b, groups=2)),
    Case("conv2d_output_wider_than_kernel", [(2, 2, 9, 11), (3, 2, 2, 2), (3,)], lambda F, x, w, b: F.conv2d(x, w, b, stride=(1, 2))),
    Case("conv_transpose2d", [(2, 3, 3, 3), (3, 2, 3, 3), (2,)], lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)),
    Case("conv_transpose2d_groups", [(1, 4, 3, 2), (4, 3, 2, 2)], lambda F, x, w: F.conv_transpose2d(x, w, groups=2, dilation=(1, 2))),
    Case("conv_transpose2d_unbatched", [(2, 3, 3), (2, 2, 2, 2)], lambda F, x, w: F.conv_transpose2d(x, w, stride=(1, 2))),
    Case("max_pool2d_int", [(2, 3, 6, 6)], lambda F, x: F.max_pool2d(x, 2)),
    Case("max_pool2d_full", [(1, 2, 7, 6)], lambda F, x: F.max_pool2d(x, (3, 2), (2, 1), (1, 1), (1, 2), True)),
    Case("max_pool2d_ceil", [(1, 1, 5, 5)], lambda F, x: F.max_pool2d(x, 2, ceil_mode=True)),
    Case("max_pool2d_unbatched", [(2, 4, 4)], lambda F, x: F.max_pool2d(x, 3, 1, 1)),
    Case("max_pool2d_overlapping", [(2, 3, 7, 7)], lambda F, x: F.max_pool2d(x, 3, 2)),
    Case("max_pool2d_disjoint_dilated", [(2, 2, 8, 8)], lambda F, x: F.max_pool2d(x, 2, 4, dilation=2)),
    Case("max_pool2d_indices", [(2, 2, 5, 4)], lambda F, x: F.max_pool2d(x, 2, return_indices=True, ceil_mode=True)),
    Case("max_pool1d", [(2, 3, 9)], lambda F, x: F.max_pool1d(x, 3, 2, 1)),
    Case("max_pool1d_indices", [(3, 8)], lambda F, x: F.max_pool1d(x, 2, return_indices=True)),
    Case("avg_pool2d_int", [(2, 3, 6, 6)], lambda F, x: F.avg_pool2d(x, 2)),
    Case("avg_pool2d_pad", [(1, 2, 5, 5)], lambda F, x: F.avg_pool2d(x, 3, 2, 1)),
    Case("avg_pool2d_exclude_pad_ceil", [(1, 2, 5, 6)], lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    Case("avg_pool2d_divisor", [(2, 5, 4)], lambda F, x: F.avg_pool2d(x, (2, 3), 1, (1, 1), divisor_override=5)),
    Case("lp_pool2d", [(2, 3, 6, 5)], lambda F, x: F.lp_pool2d(x, 2, 2)),
    Case("lp_pool2d_stride_ceil", [(1, 2, 7, 6)], lambda F, x: F.lp_pool2d(x, 2, (3, 2), (2, 1), ceil_mode=True)),
    Case("lp_pool2d_inf", [(1, 2, 4, 4)], lambda F, x: F.lp_pool2d(x, float("inf"), 2)),
    Case("lp_pool1d", [(2, 3, 9)], lambda F, x: F.lp_pool1d(x, 2, 3, 2)),
    Case("lp_pool1d_minus_inf", [(2, 3, 8)], lambda F, x: F.lp_pool1d(x, -float("inf"), 2)),
    Case("avg_pool1d", [(2, 3, 7)], lambda F, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    Case("adaptive_avg_pool2d", [(2, 3, 7, 5)], lambda F, x: F.adaptive_avg_pool2d(x, (3, 2))),
    Case("adaptive_avg_pool2d_none", [(1, 2, 6, 5)], lambda F, x: F.adaptive_avg_pool2d(x, (None, 4))),
    Case("adaptive_avg_pool2d_one", [(2, 3, 4, 4)], lambda F, x: F.adaptive_avg_pool2d(x, 1)),
    Case("linear_2d", [(3, 4), (5, 4), (5,)], lambda F, x, w, b: F.linear(x, w, b)),
    Case("linear_4d_no_bias", [(2, 2, 3, 4), (5, 4)], lambda F, x, w: F.linear(x, w)),
    Case("linear_4d", [(2, 2, 3, 4), (5, 4), (5,)], lambda F, x, w, b: F.linear(x, w, b)),
    Case("bilinear", [(3, 2), (3, 4), (5, 2, 4), (5,)], lambda F, a, b, w, c: F.bilinear(a, b, w, c)),
    Case("layer_norm", [(2, 3, 4), (4,), (4,)], lambda F, x, w, b: F.layer_norm(x, [4], w, b)),
    Case("layer_norm_2d_shape", [(2, 3, 4)], lambda F, x: F.layer_norm(x, (3, 4), eps=0.1)),
    Case("group_norm", [(2, 6, 3, 2), (6,), (6,)], lambda F, x, w, b: F.group_norm(x, 3, w, b)),
    Case("group_norm_no_affine", [(3, 4, 5)], lambda F, x: F.group_norm(x, 2)),
    Case("batch_norm_training_no_stats", [(4, 3, 2)], lambda F, x: F.batch_norm(x, None, None, training=True)),
    Case("embedding", [(5, 3)], lambda F, w, idx: F.embedding(idx, w), {"idx": [[0, 2, 4], [2, 2, 1]]}),
    Case("embedding_padding_idx", [(5, 3)], lambda F, w, idx: F.embedding(idx, w, padding_idx=2), {"idx": [[0, 2, 4], [2, 2, 1]]}),
    Case("embedding_negative_padding_idx", [(5, 3)], lambda F, w, idx: F.embedding(idx, w, padding_idx=-1), {"idx": [4, 0, 4, 3]}),
    Case("embedding_scale_grad_by_freq", [(4, 2)], lambda F, w, idx: F.embedding(idx, w, scale_grad_by_freq=True), {"idx": [1, 1, 3, 1, 0]}),
    Case("embedding_padding_and_freq", [(4, 2)], lambda F, w, idx: F.embedding(idx, w, 1, scale_grad_by_freq=True), {"idx": [1, 2, 3, 2]}),
    Case("pad_reflect_1d", [(2, 3, 5)], lambda F, x: F.pad(x, (2, 1), mode="reflect")),
    Case("pad_reflect_2d_unbatched", [(2, 4, 5)], lambda F, x: F.pad(x, (1, 2, 3, 0), mode="reflect")),
    Case("pad_reflect_3d", [(1, 2, 3, 3, 4)], lambda F, x: F.pad(x, (1, 2, 2, 0, 1, 1), mode="reflect")),
    Case("pad_replicate_2d", [(1, 2, 3, 4)], lambda F, x: F.pad(x, (3, 1, 0, 2), mode="replicate")),
    Case("pad_replicate_negative", [(2, 6)], lambda F, x: F.pad(x, (-2, 3), mode="replicate")),
    Case("interpolate_nearest_scale", [(1, 2, 3, 4)], lambda F, x: F.interpolate(x, scale_factor=2)),
    Case("interpolate_nearest_fraction", [(1, 2, 5, 7)], lambda F, x: F.interpolate(x, scale_factor=(0.7, 1.6))),
    Case("interpolate_nearest_1d_size", [(2, 3, 4)], lambda F, x: F.interpolate(x, size=9)),
    Case("interpolate_nearest_3d", [(1, 1, 2, 3, 2)], lambda F, x: F.interpolate(x, size=(3, 5, 4))),
    Case("interpolate_linear", [(2, 2, 5)], lambda F, x: F.interpolate(x, scale_factor=1.5, mode="linear")),
    Case("interpolate_linear_corners", [(2, 2, 5)], lambda F, x: F.interpolate(x, size=8, mode="linear", align_corners=True)),
    Case("interpolate_bilinear", [(1, 2, 3, 4)], lambda F, x: F.interpolate(x, size=(5, 7), mode="bilinear")),
    Case("interpolate_bilinear_down_scale", [(1, 2, 6, 7)], lambda F, x: F.interpolate(x, scale_factor=0.6, mode="bilinear", align_corners=False)),
    Case("interpolate_bilinear_recompute", [(1, 1, 4, 5)], lambda F, x: F.interpolate(x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    Case("interpolate_bicubic", [(1, 2, 4, 4)], lambda F, x: F.interpolate(x, scale_factor=2.5, mode="bicubic")),
    Case("interpolate_bicubic_corners", [(1, 1, 5, 3)], lambda F, x: F.interpolate(x, size=(3, 8), mode="bicubic", align_corners=True)),
    Case("interpolate_trilinear", [(1, 2, 2, 3, 3)], lambda F, x: F.interpolate(x, scale_factor=(2, 1.5, 1), mode="trilinear")),
    Case("pixel_shuffle", [(2, 8, 2, 3)], lambda F, x: F.pixel_shuffle(x, 2)),
    Case("pixel_unshuffle", [(1, 2, 6, 3)], lambda F, x: F.pixel_unshuffle(x, 3)),
    Case("channel_shuffle", [(2, 6, 2)], lambda F, x: F.channel_shuffle(x, 3)),
    Case("unfold", [(2, 3, 5, 4)], lambda F, x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))),
    Case("unfold_unbatched", [(2, 4, 4)], lambda F, x: F.unfold(x, 2, stride=2)),
    Case("fold_overlapping", [(2, 12, 15)], lambda F, x: F.fold(x, (4, 5), (2, 3), padding=(1, 0), stride=1)),
]
# fmt: on


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_functional_matches_torch(case: Case) -> None:
    """Values, dtypes, grad_fn names and gradients (random cotangent) as torch's."""
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-2, 2, shape) for shape in case.shapes]
    ours = [yg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    our_ints = [_long(yg, v) for v in case.ints.values()]
    their_ints = [_long(torch, v) for v in case.ints.values()]
    out = as_outputs(case.call(YF, *ours, *our_ints))
    ref = as_outputs(case.call(TF, *theirs, *their_ints))
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert tuple(o.shape) == tuple(r.shape)
        assert str(o.dtype).rpartition(".")[2] == str(r.dtype).rpartition(".")[2]
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), RTOL, ATOL)
    assert type(out[0].grad_fn).__name__ == type(ref[0].grad_fn).__name__
    cotangent = rng.standard_normal(tuple(ref[0].shape))
    out[0].backward(yg.tensor(cotangent))
    ref[0].backward(torch.tensor(cotangent))
    for x, t in zip(ours, theirs):
        assert x.grad is not None and t.grad is not None
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), RTOL, ATOL)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_double_backward_matches_torch(case: Case) -> None:
    """The gradient taken with create_graph=True, differentiated again."""
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-2, 2, shape) for shape in case.shapes]
    ours = [yg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    our_ints = [_long(yg, v) for v in case.ints.values()]
    their_ints = [_long(torch, v) for v in case.ints.values()]
    out = as_outputs(case.call(YF, *ours, *our_ints))[0]
    ref = as_outputs(case.call(TF, *theirs, *their_ints))[0]
    cotangent = rng.standard_normal(tuple(ref.shape))
    first = yg.autograd.grad(
        out, ours, yg.tensor(cotangent), create_graph=True, allow_unused=True
    )
    first_ref = torch.autograd.grad(
        ref, theirs, torch.tensor(cotangent), create_graph=True, allow_unused=True
    )
    directions = [rng.standard_normal(a.shape) for a in arrays]
    second = second_order(yg, first, ours, directions)
    second_ref = second_order(torch, first_ref, theirs, directions)
    # A linear op's gradient may not depend on its input at all (None here) where
    # torch still records a zero second derivative: both are compared as arrays.
    none = (None,) * len(arrays)
    for g, r, a in zip(second or none, second_ref or none, arrays):
        got = np.zeros_like(a) if g is None else g.numpy()
        want = np.zeros_like(a) if r is None else r.detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


# -- errors ----------------------------------------------------------------------------


def _nn(F: Any) -> Any:
    """The nn package beside a functional module (yg.nn for YF, torch.nn for TF)."""
    return yg.nn if F is YF else torch.nn


def _raised(call: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        call()
    return info.value


# fmt: off
ERRORS = [
    ("conv2d_input_rank", [(5, 5), (4, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w)),
    ("conv1d_input_rank", [(2, 3, 5, 5), (4, 3, 3)], lambda F, x, w: F.conv1d(x, w)),
    ("conv2d_channels", [(2, 3, 5, 5), (4, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w)),
    ("conv2d_groups_channels", [(2, 3, 5, 5), (4, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w, groups=2)),
    ("conv2d_groups_weight", [(2, 4, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, groups=2)),
    ("conv2d_kernel_too_big", [(2, 3, 2, 2), (4, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w)),
    ("conv2d_same_strided", [(2, 3, 5, 5), (4, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", stride=2)),
    ("conv2d_bad_padding_string", [(2, 3, 5, 5), (4, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="full")),
    ("conv2d_zero_stride", [(2, 3, 5, 5), (4, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w, stride=0)),
    ("conv2d_negative_padding", [(2, 3, 5, 5), (4, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding=-1)),
    ("conv2d_bias_size", [(2, 3, 5, 5), (4, 3, 3, 3), (3,)], lambda F, x, w, b: F.conv2d(x, w, b)),
    ("conv_transpose2d_output_padding", [(2, 3, 4, 4), (3, 2, 3, 3)], lambda F, x, w: F.conv_transpose2d(x, w, output_padding=1)),
    ("conv_transpose2d_groups_weight", [(1, 3, 4, 4), (3, 2, 3, 3)], lambda F, x, w: F.conv_transpose2d(x, w, groups=2)),
    ("conv_transpose2d_channels", [(2, 3, 4, 4), (4, 2, 3, 3)], lambda F, x, w: F.conv_transpose2d(x, w)),
    ("max_pool2d_pad", [(2, 3, 5, 5)], lambda F, x: F.max_pool2d(x, 2, 1, 2)),
    ("max_pool2d_too_small", [(2, 3, 5, 5)], lambda F, x: F.max_pool2d(x, 7)),
    ("avg_pool2d_pad", [(2, 3, 5, 5)], lambda F, x: F.avg_pool2d(x, 2, padding=2)),
    ("layer_norm_shape", [(2, 3, 5)], lambda F, x: F.layer_norm(x, (4,))),
    ("layer_norm_int_shape", [(2, 4)], lambda F, x: F.layer_norm(x, 4)),
    ("group_norm_groups", [(2, 3, 5)], lambda F, x: F.group_norm(x, 2)),
    ("batch_norm_one_value", [(1, 3, 1, 1)], lambda F, x: F.batch_norm(x, None, None, training=True)),
    ("linear_shapes", [(6, 5), (3, 3)], lambda F, x, w: F.linear(x, w)),
    ("bilinear_weight", [(3, 2), (3, 4), (5, 1, 4)], lambda F, a, b, w: F.bilinear(a, b, w)),
    ("bilinear_batch", [(3, 2), (2, 4), (5, 2, 4)], lambda F, a, b, w: F.bilinear(a, b, w)),
    ("dropout_p_above_one", [(3,)], lambda F, x: F.dropout(x, 1.5)),
    ("dropout_p_negative", [(3,)], lambda F, x: F.dropout(x, -0.1)),
    ("pad_reflect_too_wide", [(1, 2, 5)], lambda F, x: F.pad(x, (5, 1), mode="reflect")),
    ("pad_reflect_value", [(1, 2, 5)], lambda F, x: F.pad(x, (1, 1), mode="reflect", value=1.0)),
    ("pad_unknown_mode", [(1, 2, 5)], lambda F, x: F.pad(x, (1, 1), mode="mirror")),
    ("pad_replicate_too_small", [(1, 2, 2)], lambda F, x: F.pad(x, (-1, -1), mode="replicate")),
    ("interpolate_both_sizes", [(1, 2, 5)], lambda F, x: F.interpolate(x, size=3, scale_factor=2)),
    ("interpolate_corners_nearest", [(1, 2, 5)], lambda F, x: F.interpolate(x, size=3, align_corners=True)),
    ("interpolate_bilinear_3d", [(1, 2, 5)], lambda F, x: F.interpolate(x, size=3, mode="bilinear")),
    ("pixel_shuffle_channels", [(1, 5, 2, 2)], lambda F, x: F.pixel_shuffle(x, 2)),
    ("pixel_unshuffle_width", [(1, 1, 4, 5)], lambda F, x: F.pixel_unshuffle(x, 2)),
    ("channel_shuffle_groups", [(1, 5, 2)], lambda F, x: F.channel_shuffle(x, 2)),
    ("unfold_kernel_too_big", [(1, 2, 3, 3)], lambda F, x: F.unfold(x, 4)),
    ("unfold_zero_kernel", [(1, 2, 3, 3)], lambda F, x: F.unfold(x, (0, 1))),
    ("fold_channels", [(1, 7, 4)], lambda F, x: F.fold(x, 3, 2)),
    ("fold_blocks", [(1, 8, 5)], lambda F, x: F.fold(x, 3, 2)),
    # size arguments of the wrong length: each op's own text
    ("conv2d_weight_3d_stride", [(1, 2, 6, 6), (3, 2, 2, 2, 2)], lambda F, x, w: F.conv2d(x, w)),
    ("conv2d_weight_3d_padding", [(2, 6, 6), (3, 2, 2, 2, 2)], lambda F, x, w: F.conv2d(x, w, stride=(1, 1, 1))),
    ("conv2d_weight_3d_dilation", [(1, 2, 6, 6), (3, 2, 2, 2, 2)], lambda F, x, w: F.conv2d(x, w, None, (1, 1, 1), (0, 0, 0), (1, 1))),
    ("conv2d_weight_1d", [(1, 2, 6, 6), (3, 2)], lambda F, x, w: F.conv2d(x, w, stride=(1, 1, 1))),
    ("Conv2d_kernel_3d", [(1, 2, 5, 5)], lambda F, x: _nn(F).Conv2d(2, 3, (2, 2, 2))(x.float())),
    ("conv2d_stride_length", [(1, 2, 6, 6), (3, 2, 2, 2)], lambda F, x, w: F.conv2d(x, w, stride=(1, 1, 1))),
    ("conv2d_padding_length", [(1, 2, 6, 6), (3, 2, 2, 2)], lambda F, x, w: F.conv2d(x, w, padding=[1, 1, 1])),
    ("conv2d_dilation_empty", [(1, 2, 6, 6), (3, 2, 2, 2)], lambda F, x, w: F.conv2d(x, w, dilation=())),
    ("conv1d_stride_length", [(1, 2, 6), (3, 2, 2)], lambda F, x, w: F.conv1d(x, w, stride=(1, 1))),
    ("conv_transpose2d_output_padding_length", [(1, 2, 6, 6), (2, 3, 2, 2)], lambda F, x, w: F.conv_transpose2d(x, w, output_padding=(0, 0, 0))),
    ("unfold_kernel_length", [(1, 2, 6, 6)], lambda F, x: F.unfold(x, (2, 2, 2))),
    ("unfold_stride_length", [(1, 2, 6, 6)], lambda F, x: F.unfold(x, 2, stride=(1, 1, 1))),
    ("fold_output_size_length", [(1, 8, 4)], lambda F, x: F.fold(x, (3, 3, 3), 2)),
    ("max_pool2d_kernel_length", [(1, 2, 6, 6)], lambda F, x: F.max_pool2d(x, (2, 2, 2))),
    ("max_pool2d_kernel_empty", [(1, 2, 6, 6)], lambda F, x: F.max_pool2d(x, ())),
    ("max_pool2d_stride_length", [(1, 2, 6, 6)], lambda F, x: F.max_pool2d(x, 2, (1, 1, 1))),
    ("max_pool2d_padding_length", [(1, 2, 6, 6)], lambda F, x: F.max_pool2d(x, 2, 2, (0, 0, 0))),
    ("max_pool2d_dilation_length", [(1, 2, 6, 6)], lambda F, x: F.max_pool2d(x, 2, 2, 0, (1, 1, 1))),
    ("max_pool2d_indices_kernel_length", [(1, 2, 6, 6)], lambda F, x: F.max_pool2d(x, (2, 2, 2), return_indices=True)),
    ("avg_pool2d_kernel_length", [(1, 2, 6, 6)], lambda F, x: F.avg_pool2d(x, (2, 2, 2))),
    ("avg_pool2d_stride_length", [(1, 2, 6, 6)], lambda F, x: F.avg_pool2d(x, 2, (1, 1, 1))),
    ("avg_pool2d_padding_length", [(1, 2, 6, 6)], lambda F, x: F.avg_pool2d(x, 2, 2, (0, 0, 0))),
    ("max_pool3d_kernel_length", [(1, 2, 4, 4, 4)], lambda F, x: F.max_pool3d(x, (2, 2))),
    ("max_pool3d_stride_length", [(1, 2, 4, 4, 4)], lambda F, x: F.max_pool3d(x, 2, (1, 1))),
    ("max_pool3d_dilation_length", [(1, 2, 4, 4, 4)], lambda F, x: F.max_pool3d(x, 2, 2, 0, (1, 1))),
    ("avg_pool3d_kernel_length", [(1, 2, 4, 4, 4)], lambda F, x: F.avg_pool3d(x, (2, 2))),
    ("avg_pool3d_stride_length", [(1, 2, 4, 4, 4)], lambda F, x: F.avg_pool3d(x, 2, (1, 1))),
    ("avg_pool3d_padding_length", [(1, 2, 4, 4, 4)], lambda F, x: F.avg_pool3d(x, 2, 2, (0, 0))),
    ("max_pool1d_kernel_length", [(1, 2, 6)], lambda F, x: F.max_pool1d(x, (2, 2))),
    ("max_pool1d_stride_length", [(1, 2, 6)], lambda F, x: F.max_pool1d(x, 2, (1, 1))),
    ("max_pool1d_padding_length", [(1, 2, 6)], lambda F, x: F.max_pool1d(x, 2, 2, (0, 0))),
    ("max_pool1d_dilation_length", [(1, 2, 6)], lambda F, x: F.max_pool1d(x, 2, 2, 0, (1, 1))),
    ("avg_pool1d_kernel_length", [(1, 2, 6)], lambda F, x: F.avg_pool1d(x, (2, 2))),
    ("avg_pool1d_stride_length", [(1, 2, 6)], lambda F, x: F.avg_pool1d(x, 2, (1, 1))),
    ("avg_pool1d_padding_length", [(1, 2, 6)], lambda F, x: F.avg_pool1d(x, 2, 2, (0, 0))),
    ("fractional_max_pool2d_output_size_length", [(1, 2, 6, 6)], lambda F, x: F.fractional_max_pool2d(x, 2, output_size=(3, 3, 3))),
    ("fractional_max_pool2d_kernel_length", [(1, 2, 6, 6)], lambda F, x: F.fractional_max_pool2d(x, (2, 2, 2), output_size=3)),
    ("fractional_max_pool3d_kernel_length", [(1, 2, 4, 4, 4)], lambda F, x: F.fractional_max_pool3d(x, (2, 2), output_size=2)),
    ("fractional_max_pool3d_output_size_length", [(1, 2, 4, 4, 4)], lambda F, x: F.fractional_max_pool3d(x, 2, output_size=(2, 2))),
    ("MaxPool2d_kernel_length", [(1, 2, 6, 6)], lambda F, x: _nn(F).MaxPool2d((2, 2, 2))(x)),
    ("MaxPool3d_kernel_length", [(1, 2, 4, 4, 4)], lambda F, x: _nn(F).MaxPool3d((2, 2))(x)),
    ("AvgPool2d_stride_length", [(1, 2, 6, 6)], lambda F, x: _nn(F).AvgPool2d(2, (1, 1, 1))(x)),
    # padding="same": at::convolution_same's own checks and texts, in its order
    ("conv2d_same_strided_one_dim", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", stride=(1, 2))),
    ("conv2d_same_stride_length", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", stride=(2, 1, 1))),
    ("conv2d_same_stride_empty", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", stride=())),
    ("conv2d_same_dilation_length", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", dilation=(1, 2, 3))),
    ("conv1d_same_dilation_length", [(1, 2, 5), (3, 2, 3)], lambda F, x, w: F.conv1d(x, w, padding="same", dilation=(1, 2))),
    ("conv2d_same_weight_3d", [(1, 2, 5, 5), (3, 2, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", stride=2)),
    ("conv2d_same_weight_5d", [(1, 2, 5, 5), (3, 2, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same")),
    ("conv1d_same_weight_4d", [(1, 2, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv1d(x, w, padding="same")),
    ("conv2d_same_unbatched_weight_3d", [(2, 5, 5), (3, 2, 3)], lambda F, x, w: F.conv2d(x, w, padding="same")),
    ("conv2d_same_weight_2d", [(1, 2, 5, 5), (3, 2)], lambda F, x, w: F.conv2d(x, w, padding="same", groups=0)),
    ("conv2d_same_groups_zero", [(1, 4, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", groups=0, stride=2)),
    ("conv2d_same_dilation_zero", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", dilation=(0, 1))),
    ("conv2d_same_dilation_negative", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same", dilation=-1)),
    ("conv2d_same_dilation_negative_even", [(1, 2, 5, 5), (3, 2, 2, 2)], lambda F, x, w: F.conv2d(x, w, padding="same", dilation=(-1, 1))),
    ("conv2d_same_channels", [(1, 2, 5, 5), (3, 4, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="same")),
    ("conv2d_same_zero_size", [(1, 2, 0, 2), (3, 2, 1, 1)], lambda F, x, w: F.conv2d(x, w, padding="same", dilation=0)),
    ("Conv2d_same_strided", [(1, 2, 5, 5)], lambda F, x: _nn(F).Conv2d(2, 3, 3, stride=(1, 2), padding="same")),
    ("Conv2d_same_dilation_length", [(1, 2, 5, 5)], lambda F, x: _nn(F).Conv2d(2, 3, 3, padding="same", dilation=(1, 2, 3))(x.float())),
    ("Conv2d_same_kernel_3d", [(1, 2, 5, 5)], lambda F, x: _nn(F).Conv2d(2, 3, (3, 3, 3), padding="same")(x.float())),
    ("Conv1d_same_input_4d", [(1, 1, 2, 5)], lambda F, x: _nn(F).Conv1d(2, 3, 3, padding="same")(x.float())),
    ("Conv2d_padding_string", [(1, 2, 5, 5)], lambda F, x: _nn(F).Conv2d(2, 3, 3, padding="SAME")),
    # padding="valid" and numbers: at::_convolution's checks, then its CPU kernels'
    ("conv2d_valid_groups_zero", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="valid", groups=0, stride=(1, 1, 1))),
    ("conv2d_valid_dilation_zero", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding="valid", dilation=0)),
    ("conv2d_dilation_zero", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, padding=1, dilation=(0, 1))),
    ("conv1d_dilation_zero", [(1, 2, 5), (3, 2, 3)], lambda F, x, w: F.conv1d(x, w, dilation=0)),
    ("conv2d_dilation_zero_channels", [(1, 2, 5, 5), (3, 4, 3, 3)], lambda F, x, w: F.conv2d(x, w, dilation=0)),
    ("conv2d_negative_padding_weight_5d", [(1, 2, 5, 5), (3, 2, 3, 3, 3)], lambda F, x, w: F.conv2d(x, w, None, (1, 1, 1), -1)),
    ("conv2d_bad_padding_string_weight_2d", [(1, 2, 5, 5), (3, 2)], lambda F, x, w: F.conv2d(x, w, padding="full")),
    ("conv_transpose2d_dilation_zero", [(1, 2, 5, 5), (2, 3, 3, 3)], lambda F, x, w: F.conv_transpose2d(x, w, dilation=(0, 1))),
    ("conv_transpose2d_padding_string", [(1, 2, 5, 5), (2, 3, 3, 3)], lambda F, x, w: F.conv_transpose2d(x, w, None, 1, "same")),
    ("conv_transpose2d_padding_float", [(1, 2, 5, 5), (2, 3, 3, 3)], lambda F, x, w: F.conv_transpose2d(x, w, None, 1, 1.5)),
    ("ConvTranspose2d_same", [(1, 2, 5, 5)], lambda F, x: _nn(F).ConvTranspose2d(2, 3, 3, padding="same")(x.float())),
    ("ConvTranspose2d_valid", [(1, 2, 5, 5)], lambda F, x: _nn(F).ConvTranspose2d(2, 3, 3, padding="valid")(x.float())),
    ("ConvTranspose2d_padding_mode", [(1, 2, 5, 5)], lambda F, x: _nn(F).ConvTranspose2d(2, 3, 3, padding_mode="reflect")),
]
# fmt: on


@pytest.mark.parametrize(
    "shapes, call", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_errors_match_torch(shapes: list[tuple[int, ...]], call: Callable) -> None:
    arrays = [np.ones(shape) for shape in shapes]
    ours = _raised(lambda: call(YF, *map(yg.tensor, arrays)))
    theirs = _raised(lambda: call(TF, *map(torch.tensor, arrays)))
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs).splitlines()[0]


def test_embedding_index_out_of_range_as_torch() -> None:
    weight = np.ones((3, 2))
    for bad in ([3], [-1]):
        ours = _raised(lambda: YF.embedding(_long(yg, bad), yg.tensor(weight)))
        theirs = _raised(lambda: TF.embedding(_long(torch, bad), torch.tensor(weight)))
        assert type(ours) is type(theirs) and str(ours) == str(theirs)


def test_embedding_padding_idx_out_of_range_as_torch() -> None:
    for bad in (3, -4):
        ours = _raised(lambda: YF.embedding(_long(yg, [0]), yg.ones(3, 2), bad))
        theirs = _raised(lambda: TF.embedding(_long(torch, [0]), torch.ones(3, 2), bad))
        assert type(ours) is type(theirs) and str(ours) == str(theirs)


def test_embedding_max_norm_renormalises_weight_in_place_as_torch() -> None:
    rng = np.random.default_rng(3)
    weight = rng.uniform(-2, 2, (5, 3))
    ours, theirs = yg.tensor(weight.copy()), torch.tensor(weight.copy())
    idx = [[0, 4], [4, 2]]
    out = YF.embedding(_long(yg, idx), ours, max_norm=1.0, norm_type=2.0)
    ref = TF.embedding(_long(torch, idx), theirs, max_norm=1.0, norm_type=2.0)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert not np.allclose(ours.numpy(), weight)  # rows 0, 2 and 4 were rescaled


# -- batch_norm's running statistics ---------------------------------------------------


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_statistics_as_torch(momentum: float) -> None:
    """Three training steps update running_mean/var in place exactly as torch
    (unbiased variance, momentum); eval mode then normalises with them."""
    rng = np.random.default_rng(1)
    channels = 3
    ours_mean, ours_var = yg.zeros(channels, dtype=yg.float64), yg.ones(
        channels, dtype=yg.float64
    )
    ref_mean, ref_var = torch.zeros(channels, dtype=torch.float64), torch.ones(
        channels, dtype=torch.float64
    )
    weight = rng.uniform(0.5, 1.5, channels)
    bias = rng.uniform(-1, 1, channels)
    for _ in range(3):
        x = rng.normal(2.0, 3.0, (4, channels, 2, 3))
        w, tw = yg.tensor(weight, requires_grad=True), torch.tensor(
            weight, requires_grad=True
        )
        out = YF.batch_norm(
            yg.tensor(x), ours_mean, ours_var, w, yg.tensor(bias), True, momentum
        )
        ref = TF.batch_norm(
            torch.tensor(x), ref_mean, ref_var, tw, torch.tensor(bias), True, momentum
        )
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), 1e-10)
        np.testing.assert_allclose(ours_mean.numpy(), ref_mean.numpy(), 1e-12)
        np.testing.assert_allclose(ours_var.numpy(), ref_var.numpy(), 1e-12)
    assert not np.allclose(ours_var.numpy(), 1.0)
    x = rng.normal(0.0, 1.0, (2, channels, 4))
    xs, ts = yg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = YF.batch_norm(xs, ours_mean, ours_var, training=False)
    ref = TF.batch_norm(ts, ref_mean, ref_var, training=False)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), 1e-10)
    assert (
        out.grad_fn.name() == type(ref.grad_fn).__name__ == "NativeBatchNormBackward0"
    )
    cotangent = rng.standard_normal(x.shape)
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(xs.grad.numpy(), ts.grad.numpy(), 1e-10)


def test_batch_norm_eval_leaves_running_statistics_alone() -> None:
    mean, var = yg.tensor([0.5, -1.0]), yg.tensor([2.0, 0.5])
    YF.batch_norm(yg.randn(3, 2), mean, var, training=False)
    assert mean.tolist() == [0.5, -1.0] and var.tolist() == [2.0, 0.5]


# -- dropout -----------------------------------------------------------------------------


def test_dropout_statistics_and_scaling() -> None:
    """About p of the elements are zeroed (within 5 standard deviations of the
    binomial count); the rest are scaled by 1 / (1 - p), as torch's."""
    yg.manual_seed(0)
    n, p = 200_000, 0.3
    x = yg.ones(n, dtype=yg.float64)
    out = YF.dropout(x, p).numpy()
    zeros = np.count_nonzero(out == 0)
    assert abs(zeros - n * p) < 5 * np.sqrt(n * p * (1 - p))
    np.testing.assert_allclose(out[out != 0], 1 / (1 - p), rtol=1e-15)
    ref = TF.dropout(torch.ones(n, dtype=torch.float64), p).numpy()
    assert set(np.unique(out)) == set(np.unique(ref))


def test_dropout_gradient_uses_the_same_mask() -> None:
    yg.manual_seed(1)
    x = yg.tensor(np.random.default_rng(2).uniform(1, 2, (50, 40)), requires_grad=True)
    out = YF.dropout(x, 0.4)
    assert out.grad_fn.name() == "MulBackward0"
    assert type(
        TF.dropout(torch.ones(2, requires_grad=True), 0.4).grad_fn
    ).__name__ == ("MulBackward0")
    cotangent = np.random.default_rng(3).standard_normal((50, 40))
    out.backward(yg.tensor(cotangent))
    mask = out.detach().numpy() / x.detach().numpy()  # 0 or 1 / (1 - p)
    assert set(np.round(np.unique(mask), 12)) == {0.0, round(1 / 0.6, 12)}
    np.testing.assert_allclose(x.grad.numpy(), cotangent * mask, rtol=1e-12)


def test_dropout_is_seeded_by_the_default_generator() -> None:
    yg.manual_seed(7)
    first = YF.dropout(yg.ones(1000), 0.5).numpy()
    yg.manual_seed(7)
    second = YF.dropout(yg.ones(1000), 0.5).numpy()
    third = YF.dropout(yg.ones(1000), 0.5).numpy()
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(second, third)


@pytest.mark.parametrize("p, training", [(0.0, True), (0.5, False), (1.0, False)])
def test_dropout_identity_returns_the_input_itself(p: float, training: bool) -> None:
    x, t = yg.randn(3, 4, requires_grad=True), torch.randn(3, 4, requires_grad=True)
    assert YF.dropout(x, p, training) is x
    assert TF.dropout(t, p, training) is t


def test_dropout_p_one_zeroes_everything_and_records_mul() -> None:
    x = yg.randn(3, 4, requires_grad=True)
    out = YF.dropout(x, 1.0)
    ref = TF.dropout(torch.randn(3, 4, requires_grad=True), 1.0)
    assert out.grad_fn.name() == type(ref.grad_fn).__name__
    assert np.all(out.detach().numpy() == 0)
    out.sum().backward()
    assert np.all(x.grad.numpy() == 0)


def test_dropout_inplace_writes_into_the_input() -> None:
    yg.manual_seed(4)
    x = yg.ones(6, 5, requires_grad=True)
    y = x * 1.0
    out = YF.dropout(y, 0.5, inplace=True)
    ref = TF.dropout(torch.ones(6, 5, requires_grad=True) * 1.0, 0.5, inplace=True)
    assert out is y and out.grad_fn.name() == type(ref.grad_fn).__name__
    out.backward(yg.ones(6, 5))
    np.testing.assert_allclose(x.grad.numpy(), out.detach().numpy())


def test_max_pool2d_ties_and_nans_pick_torchs_entry() -> None:
    """Ties keep the first entry of a window; a NaN wins, and of several NaNs the
    last (PyTorch's CPU rule `val > max || isnan(val)`): values and indices match
    torch over random windows, strides, paddings, dilations and ceil modes."""
    rng = np.random.default_rng(7)
    compared = 0
    for trial in range(200):
        shape = (1, 2, int(rng.integers(3, 9)), int(rng.integers(3, 9)))
        x = rng.integers(0, 3, shape).astype(np.float64)  # small ints: many ties
        if trial % 2:
            x[rng.random(shape) < 0.2] = np.nan
        k, s, d = (int(v) for v in rng.integers(1, 4, 3))
        p = int(rng.integers(0, k // 2 + 1))
        ceil = bool(trial % 3 == 0)
        try:
            want = torch.nn.functional.max_pool2d(
                torch.tensor(x), k, s, p, d, ceil_mode=ceil, return_indices=True
            )
        except RuntimeError:
            continue  # an output too small for torch; the error is tested elsewhere
        got = yg.nn.functional.max_pool2d(
            yg.tensor(x), k, s, p, d, ceil_mode=ceil, return_indices=True
        )
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
        compared += 1
    assert compared > 100


# Pooling parameters torch refuses: (kernel_size, stride, padding, dilation).
# Found by fuzz/test_fuzz_ops.py (a zero kernel size was a bare ZeroDivisionError).
BAD_POOLS = [
    ((0, 2), (), 0, 1),
    ((0, 2), (1, 1), 0, 1),
    ((2, 2), (0, 1), 0, 1),
    ((2, 2), (-1, 1), 0, 1),
    ((-1, 2), (1, 1), 0, 1),
    ((2, 2), (1, 1), (0, 0), (0, 1)),
    ((2, 2), (1, 1), (-1, 0), 1),
    ((2, 2), (1, 1), (2, 0), 1),
]


@pytest.mark.parametrize(
    "pool, kernel, stride, padding, dilation",
    [("max", *p) for p in BAD_POOLS] + [("avg", *p) for p in BAD_POOLS if p[3] == 1],
)
def test_bad_pooling_parameters_raise_torchs_error(
    pool: str, kernel: Any, stride: Any, padding: Any, dilation: Any
) -> None:
    def run(lib: Any, ops: Any) -> Any:
        x = lib.ones(1, 1, 4, 4)
        if pool == "max":
            return ops.max_pool2d_with_indices.default(
                x, kernel, stride, padding, dilation
            )
        return ops.avg_pool2d.default(x, kernel, stride, padding)

    with pytest.raises(RuntimeError) as want:
        run(torch, torch.ops.aten)
    with pytest.raises(RuntimeError) as got:
        run(yg, yg.ops)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "shape",
    [(1, 0, 4, 4), (0, 1, 4, 4), (0, 4, 4), (1, 4, 0), (2, 1, 4, 0)]
    + [(), (4,), (4, 4), (1, 1, 1, 1, 4)],
)
@pytest.mark.parametrize("pool", ["max", "avg", "adaptive"])
def test_pooling_an_empty_input_as_torch(pool: str, shape: tuple[int, ...]) -> None:
    """Only the batch dim may be empty (PyTorch's pool2d_shape_check); a rank
    other than 3 or 4 is refused in each op's own words."""

    def run(lib: Any, ops: Any) -> Any:
        x = lib.ones(shape)
        if pool == "max":
            return ops.max_pool2d_with_indices.default(x, (2, 2))[0]
        if pool == "adaptive":
            return ops._adaptive_avg_pool2d.default(x, (2, 3))
        return ops.avg_pool2d.default(x, (2, 2))

    try:
        want = run(torch, torch.ops.aten)
    except (RuntimeError, IndexError) as error:
        with pytest.raises(type(error)) as got:
            run(yg, yg.ops)
        assert str(got.value) == str(error)
        return
    assert tuple(run(yg, yg.ops).shape) == tuple(want.shape)


# -- found by the op fuzzer (fuzz/test_fuzz_ops.py) ------------------------------------

# Each call, run in yamlgrad and in torch: the same shapes, values and grad_fn
# names, or the same error text.
FUZZ_LAYER_CALLS: dict[str, Callable[[Any], Any]] = {
    # layer norm: weight and bias shaped as normalized_shape, which is not empty
    "layer_norm weight shape": lambda lib: lib.nn.functional.layer_norm(
        counting_input(lib, 2, 4), (4,), weight=counting_input(lib, 3)
    ),
    "layer_norm bias shape": lambda lib: lib.nn.functional.layer_norm(
        counting_input(lib, 2, 4), (4,), bias=counting_input(lib, 1, 4)
    ),
    "layer_norm empty normalized_shape": lambda lib: lib.nn.functional.layer_norm(
        counting_input(lib, 2, 4), ()
    ),
    # linear with a bias on a non-contiguous input: matmul, then add_
    "linear of a transposed input": lambda lib: lib.nn.functional.linear(
        counting_input(lib, 4, 3, 2).transpose(0, 2),
        counting_input(lib, 5, 4),
        counting_input(lib, 5),
    ),
    "linear of a 2-d bias": lambda lib: lib.nn.functional.linear(
        counting_input(lib, 2, 3, 4, 4),
        counting_input(lib, 5, 4),
        counting_input(lib, 4, 5),
    ),
    "linear of a 3-d input, 2-d bias": lambda lib: lib.nn.functional.linear(
        counting_input(lib, 2, 3, 4),
        counting_input(lib, 5, 4),
        counting_input(lib, 3, 5),
    ),
    "linear of a strided bias": lambda lib: lib.nn.functional.linear(
        counting_input(lib, 2, 3, 4),
        counting_input(lib, 5, 4),
        counting_input(lib, 10)[::2],
    ),
    "embedding of an empty weight": lambda lib: lib.nn.functional.embedding(
        lib.tensor([0, 1]), counting_input(lib, 0, 3)
    ),
    "group_norm, wrong numel": lambda lib: (
        lib.ops.aten.native_group_norm(
            counting_input(lib, 8), None, None, 2, 4, 3, 2, 1e-5
        )
        if lib is not yg
        else yg.ops.native_group_norm.default(
            counting_input(lib, 8), None, None, 2, 4, 3, 2, 1e-5
        )
    ),
    "group_norm, groups not dividing": lambda lib: lib.nn.functional.group_norm(
        counting_input(lib, 2, 4, 3), 3
    ),
    "group_norm, short weight": lambda lib: lib.nn.functional.group_norm(
        counting_input(lib, 2, 4, 3), 2, counting_input(lib, 3)
    ),
    "bilinear of empty batches": lambda lib: lib.nn.functional.bilinear(
        counting_input(lib, 0, 3),
        counting_input(lib, 0, 4),
        counting_input(lib, 2, 3, 4),
    ),
}


@pytest.mark.parametrize("name", sorted(FUZZ_LAYER_CALLS))
def test_layer_call_answers_as_torch(name: str) -> None:
    assert call_outcome(FUZZ_LAYER_CALLS[name], yg) == call_outcome(
        FUZZ_LAYER_CALLS[name], torch
    )


@pytest.mark.parametrize("needs_grad", ["input", "weight", "bias"])
def test_convolution_backward_refuses_output_padding_on_a_plain_convolution(
    needs_grad: str,
) -> None:
    """The forward ignores it; PyTorch's convolution_backward refuses it."""
    messages = []
    for lib in (yg, torch):
        args = {
            "input": lib.tensor(np.ones((1, 2, 5, 5))),
            "weight": lib.tensor(np.ones((3, 2, 2, 2))),
            "bias": lib.tensor(np.ones(3)),
        }
        args[needs_grad].requires_grad_()
        out = aten_namespace(lib).convolution.default(
            *args.values(), [1, 1], [0, 0], [1, 1], False, [1, 0], 1
        )
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        messages.append(str(error.value).split("\nException raised from")[0])
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.Conv2d(2, 3, (2,)),
        lambda nn: nn.Conv2d(2, 3, 2, stride=(2,), padding=[1], dilation=1),
        lambda nn: nn.Conv1d(2, 3, 3, padding=(1,)),
        lambda nn: nn.ConvTranspose2d(2, 3, [2, 3], output_padding=(0,)),
        lambda nn: nn.AvgPool1d(2, padding=[1]),
        lambda nn: nn.MaxUnpool2d((2,), stride=[1]),
    ],
    ids=[
        "conv2d",
        "conv2d-strided",
        "conv1d",
        "conv-transpose2d",
        "avg-pool1d",
        "unpool",
    ],
)
def test_modules_keep_their_size_arguments_as_torch(make: Callable) -> None:
    """A module stores each size as torch.nn.modules.utils._ntuple does: a
    sequence as given (one element stays one), an int as n copies."""
    ours, theirs = make(yg.nn), make(torch.nn)
    for name in ("kernel_size", "stride", "padding", "dilation", "output_padding"):
        assert getattr(ours, name, None) == getattr(theirs, name, None), name


def test_same_padding_that_needs_a_padded_copy_warns_once_as_torch() -> None:
    convolutions._warn_same_padding_copy.cache_clear()  # once per process
    x = yg.ones(1, 2, 5, 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            YF.conv2d(x, yg.ones(3, 2, 3, 3), padding="same")  # symmetric: no copy
            YF.conv2d(x, yg.ones(3, 2, 2, 2), padding="same")
    assert [str(w.message) for w in caught] == [
        "Using padding='same' with even kernel lengths and odd dilation may require "
        "a zero-padded copy of the input be created"
    ]
    assert caught[0].filename == __file__
