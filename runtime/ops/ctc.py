"""Connectionist temporal classification: _ctc_loss (the forward variables in log
space) beside _ctc_loss_backward (the backward variables and the gradient).

A target of length L is read as its extended form l' of length 2L + 1: blanks
around and between the labels. alpha[t, s] is the log-probability of every
alignment of the first t + 1 frames that ends at l'[s]; it comes from alpha[t - 1]
at s, s - 1, and s - 2 when l'[s] is a label that differs from l'[s - 2] (a skip
over a blank). beta runs the same recursion from the last frame backwards. Both
hold the emission at frame t, so alpha + beta counts it twice, which the gradient
takes back out:

    d(-log p)/d lp[t, c] = exp(lp[t, c])
                           - exp(logsumexp_{l'[s] = c}(alpha + beta)[t, s] + nll - lp[t, c])

with the gradient taken with respect to the log-probabilities after a
log_softmax, as PyTorch's (its first term is the softmax's), and zero past a
sample's input length. The backward has no derivative, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels

KERNELS = ("ctc_loss_kernel", "ctc_loss_backward_kernel")
BACKWARD_HELPERS = ("ctc_loss_backward",)


def _targets_of(targets: Any, target_lengths: tuple[int, ...]) -> list[np.ndarray]:
    """Each sample's labels: a row of the padded 2-D form, or a run of the 1-D one."""
    targets = np.asarray(targets)
    if targets.ndim == 1:
        starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(int)
        return [targets[s : s + n] for s, n in zip(starts, target_lengths)]
    return [targets[b, :n] for b, n in enumerate(target_lengths)]


def _check(
    log_probs: Any,
    targets: Any,
    input_lengths: tuple[int, ...],
    target_lengths: tuple[int, ...],
    blank: int,
) -> None:
    if log_probs.ndim != 3:
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional "
            "tensor for argument #1 'log_probs' (while checking arguments for "
            "ctc_loss_allocate_outputs)"
        )
    max_input_length, batch_size, num_labels = log_probs.shape
    if not 0 <= blank < num_labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch_size:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch_size:
        raise RuntimeError("target_lengths must be of size batch_size")
    targets = np.asarray(targets)
    if targets.ndim == 1 and targets.shape[0] != sum(target_lengths):
        raise RuntimeError(
            f"Expected tensor to have size {sum(target_lengths)} at dimension 0, "
            f"but got size {targets.shape[0]} for argument #2 'targets' (while "
            "checking arguments for ctc_loss_allocate_outputs)"
        )
    for b in range(batch_size):
        if input_lengths[b] > max_input_length or input_lengths[b] < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {max_input_length}, "
                f"but got value {input_lengths[b]} (while checking arguments for "
                "ctc_loss_allocate_outputs)"
            )
        if targets.ndim == 2 and target_lengths[b] > targets.shape[1]:
            raise RuntimeError(
                f"Expected tensor to have size at least {target_lengths[b]} at "
                f"dimension 1, but got size {targets.shape[1]} for argument #2 "
                "'targets' (while checking arguments for ctc_loss_allocate_outputs)"
            )


def _extended(labels: np.ndarray, blank: int) -> tuple[np.ndarray, np.ndarray]:
    """l' (blanks around and between the labels) and where a skip over a blank is
    allowed (a label that differs from the one two places back)."""
    ext = np.full(2 * len(labels) + 1, blank, dtype=np.int64)
    ext[1::2] = labels
    skip = np.zeros(len(ext), dtype=bool)
    skip[3::2] = labels[1:] != labels[:-1]
    return ext, skip


def _shift(row: np.ndarray, by: int) -> np.ndarray:
    """row moved `by` places towards higher s (towards lower s for by < 0), -inf in
    (the alignments that start or end before the row's first or after its last)."""
    out = np.full_like(row, -np.inf)
    if abs(by) >= len(row):
        return out
    if by > 0:
        out[by:] = row[:-by]
    else:
        out[:by] = row[-by:]
    return out


def _recursion(
    lp: np.ndarray, ext: np.ndarray, skip: np.ndarray, reverse: bool
) -> np.ndarray:
    """alpha (or beta, with reverse) over lp's frames, shape (frames, len(ext))."""
    frames, width = lp.shape[0], len(ext)
    out = np.full((frames, width), -np.inf, dtype=lp.dtype)
    if frames == 0:
        return out
    emit = lp[:, ext]
    step = -1 if reverse else 1
    first = frames - 1 if reverse else 0
    ends = [width - 1, width - 2] if reverse else [0, 1]
    for s in ends[: min(2, width)]:
        out[first, s] = emit[first, s]
    # beta[t, s] may skip from s + 2 when l'[s + 2] may be skipped to.
    skip_from = _shift(skip.astype(lp.dtype), -2) > 0 if reverse else skip
    for t in range(first + step, first + step * frames, step):
        prev = out[t - step]
        one = _shift(prev, step)
        two = np.where(skip_from, _shift(prev, 2 * step), -np.inf)
        out[t] = np.logaddexp(np.logaddexp(prev, one), two) + emit[t]
    return out


def ctc_loss_kernel(
    log_probs: Any,
    targets: Any,
    input_lengths: tuple[int, ...],
    target_lengths: tuple[int, ...],
    blank: int,
    zero_infinity: bool,
) -> tuple[Any, Any]:
    """(neg_log_likelihood per sample, log_alpha of shape (N, T, 2 max(L) + 1))."""
    _check(log_probs, targets, input_lengths, target_lengths, blank)
    frames, batch, _ = log_probs.shape
    width = 2 * max(target_lengths, default=0) + 1
    log_alpha = np.full((batch, frames, width), -np.inf, dtype=log_probs.dtype)
    nll = np.empty(batch, dtype=log_probs.dtype)
    for b, labels in enumerate(_targets_of(targets, target_lengths)):
        ext, skip = _extended(np.asarray(labels, dtype=np.int64), blank)
        alpha = _recursion(log_probs[: input_lengths[b], b], ext, skip, reverse=False)
        log_alpha[b, : input_lengths[b], : len(ext)] = alpha
        if input_lengths[b] == 0:
            nll[b] = 0.0 if len(ext) == 1 else np.inf
            continue
        nll[b] = -np.logaddexp.reduce(
            alpha[-1, -2:] if len(ext) > 1 else alpha[-1, -1:]
        )
    return nll, log_alpha


def ctc_loss_backward_kernel(
    grad: Any,
    log_probs: Any,
    targets: Any,
    input_lengths: tuple[int, ...],
    target_lengths: tuple[int, ...],
    neg_log_likelihood: Any,
    log_alpha: Any,
    blank: int,
    zero_infinity: bool,
) -> Any:
    """The gradient with respect to log_probs (see the module's docstring)."""
    out = np.zeros_like(log_probs)
    grad = np.broadcast_to(
        np.asarray(grad, dtype=log_probs.dtype), neg_log_likelihood.shape
    )
    for b, labels in enumerate(_targets_of(targets, target_lengths)):
        frames, nll = input_lengths[b], neg_log_likelihood[b]
        lp = log_probs[:frames, b]
        if zero_infinity and nll == np.inf:
            continue
        ext, skip = _extended(np.asarray(labels, dtype=np.int64), blank)
        beta = _recursion(lp, ext, skip, reverse=True)
        both = log_alpha[b, :frames, : len(ext)] + beta
        per_class = np.full(lp.shape, -np.inf, dtype=lp.dtype)
        np.logaddexp.at(per_class, (slice(None), ext), both)
        out[:frames, b] = (np.exp(lp) - np.exp(per_class + nll - lp)) * grad[b]
    return out


def ctc_loss_backward(
    grad: Any,
    log_probs: Any,
    targets: Any,
    input_lengths: tuple[int, ...],
    target_lengths: tuple[int, ...],
    neg_log_likelihood: Any,
    log_alpha: Any,
    blank: int,
    zero_infinity: bool,
) -> Any:
    """_ctc_loss's backward as the recorded _ctc_loss_backward op (which has no
    derivative, as PyTorch's)."""
    xp = array_namespace(grad, log_probs, neg_log_likelihood, log_alpha)
    return xp._ctc_loss_backward(
        grad,
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        neg_log_likelihood,
        log_alpha,
        blank,
        zero_infinity,
    )


register_numpy_kernels(_ctc_loss_backward=ctc_loss_backward_kernel)
