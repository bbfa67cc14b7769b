"""`yg.utils`: `yg.utils.data` (datasets, samplers, DataLoader)."""

from __future__ import annotations

from yamlgrad.runtime.utils import data

__all__ = ["data"]
