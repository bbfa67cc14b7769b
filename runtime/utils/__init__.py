"""`yg.utils`: `yg.utils.data` (datasets, samplers, DataLoader),
`yg.utils.checkpoint` (activation checkpointing) and `yg.utils.hooks`."""

from __future__ import annotations

from yamlgrad.runtime.utils import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
