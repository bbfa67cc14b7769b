"""Every distributions test starts with argument validation on, on both sides.

The default is `__debug__`, but importing torch.compile's machinery (the compile
tests do) turns torch's off for the whole process; the comparisons of errors
need it on, in yamlgrad and in torch alike.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import yamlgrad as yg


@pytest.fixture(autouse=True)
def _validation_on() -> Iterator[None]:
    torch = pytest.importorskip("torch")
    saved = (
        yg.distributions.Distribution._validate_args,
        torch.distributions.Distribution._validate_args,
    )
    yg.distributions.Distribution.set_default_validate_args(True)
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    yg.distributions.Distribution.set_default_validate_args(saved[0])
    torch.distributions.Distribution.set_default_validate_args(saved[1])
