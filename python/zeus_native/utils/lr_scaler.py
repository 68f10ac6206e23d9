"""Learning-rate scaling rules for a changed batch size (the original's zeus.utils.lr_scaler)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class SquareRootScaler:
    """lr x sqrt(new_bs / bs): for adaptive optimizers (Adam, Adadelta, AdamW)."""

    bs: int
    lr: float

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for `new_bs`."""
        return self.lr * math.sqrt(new_bs / self.bs)


@dataclass
class LinearScaler:
    """lr x new_bs / bs: for SGD."""

    bs: int
    lr: float

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for `new_bs`."""
        return self.lr * new_bs / self.bs
