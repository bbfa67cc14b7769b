"""`yg.utils`: `yg.utils.data` (datasets, samplers, DataLoader) and `yg.utils.hooks`."""

from __future__ import annotations

from yamlgrad.runtime.utils import data, hooks

__all__ = ["data", "hooks"]
