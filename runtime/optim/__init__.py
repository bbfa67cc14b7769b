"""`yg.optim`: PyTorch's optimisers and learning-rate schedules.

>>> optimizer = yg.optim.Adam(model.parameters(), lr=1e-3)
>>> optimizer.zero_grad(); loss.backward(); optimizer.step()
"""

from __future__ import annotations

from yamlgrad.runtime.optim import lr_scheduler
from yamlgrad.runtime.optim.optimizer import Optimizer
from yamlgrad.runtime.optim.rules import SGD, Adagrad, Adam, AdamW, RMSprop

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
