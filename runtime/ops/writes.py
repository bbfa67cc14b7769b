"""Writes into arrays that cannot be written: the arrays of other backends than
numpy (array_api_strict's, Dask's) are immutable, so where a numpy kernel
writes into zeros or into a copy, the portable path builds the result from
standard calls (concatenation, `where` over a mask of broadcast comparisons).
One helper per kind of write, for every family.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime import backend


def along(dim: int, index: Any) -> tuple[Any, ...]:
    """The key of `index` along `dim` (the trailing Ellipsis: the standard
    indexes every dim, or says it does not)."""
    return (slice(None),) * dim + (index, Ellipsis)


def placed(piece: Any, sizes: tuple[int, ...], dim: int, start: int, step: int) -> Any:
    """Zeros of `sizes` holding `piece` at start, start + step, ... along `dim`,
    built by concatenation: the arrays of other backends cannot be written."""
    xp = backend.namespace_of(piece)
    count, shape = piece.shape[dim], tuple(piece.shape)
    if step > 1 and count:
        gap = xp.zeros(
            shape[: dim + 1] + (step - 1,) + shape[dim + 1 :], dtype=piece.dtype
        )
        spread = xp.concat([xp.expand_dims(piece, axis=dim + 1), gap], axis=dim + 1)
        spread = xp.reshape(spread, shape[:dim] + (count * step,) + shape[dim + 1 :])
        piece = spread[along(dim, slice(0, (count - 1) * step + 1))]
    after = sizes[dim] - start - piece.shape[dim]
    parts = [
        xp.zeros(sizes[:dim] + (n,) + sizes[dim + 1 :], dtype=piece.dtype)
        for n in (start, after)
    ]
    return xp.concat([parts[0], piece, parts[1]], axis=dim)


def padded(x: Any, widths: list[tuple[int, int]], value: Any) -> Any:
    """np.pad with a constant, by concatenation (another backend's array)."""
    xp = backend.namespace_of(x)
    for axis, (before, after) in enumerate(widths):
        if before or after:
            shape = tuple(x.shape)
            sides = [
                xp.full(shape[:axis] + (n,) + shape[axis + 1 :], value, dtype=x.dtype)
                for n in (before, after)
            ]
            x = xp.concat([sides[0], x, sides[1]], axis=axis)
    return x
