"""A multilayer perceptron on scikit-learn's 8x8 digits, with yg.nn and yg.optim.

    pip install -e '.[examples]'
    python examples/digits_mlp.py            # --epochs, --lr, --plot digits_mlp.png

64 pixels -> 128 -> ReLU -> 10 classes, Adam, cross-entropy; prints the test
accuracy (about 97%) and saves a loss/accuracy plot.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yamlgrad as yg
import yamlgrad.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from digits_common import load, parse_args, plot, train  # noqa: E402


class MLP(yg.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = yg.nn.Linear(64, 128)
        self.out = yg.nn.Linear(128, 10)

    def forward(self, x: yg.Tensor) -> yg.Tensor:
        return self.out(F.relu(self.hidden(x)))


def main() -> None:
    args = parse_args("digits_mlp", epochs=20, lr=3e-3)
    yg.manual_seed(args.seed)
    model = MLP()
    losses, accuracies = train(model, load(images=False), args)
    plot(losses, accuracies, args.plot, "MLP on 8x8 digits")
    print(f"test accuracy: {accuracies[-1]:.4f}")
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
