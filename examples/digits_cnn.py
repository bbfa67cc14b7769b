"""A small convolutional network on scikit-learn's 8x8 digits, with yg.nn and yg.optim.

    pip install -e '.[examples]'
    python examples/digits_cnn.py            # --epochs, --lr, --plot digits_cnn.png

conv 3x3 (16) -> ReLU -> max pool 2 -> conv 3x3 (32) -> ReLU -> max pool 2 ->
linear to 10 classes, Adam, cross-entropy; prints the test accuracy (about 98%) and
saves a loss/accuracy plot.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yamlgrad as yg
import yamlgrad.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from digits_common import load, parse_args, plot, train  # noqa: E402


class CNN(yg.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = yg.nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = yg.nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.fc = yg.nn.Linear(32 * 2 * 2, 10)

    def forward(self, x: yg.Tensor) -> yg.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # (N, 16, 4, 4)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # (N, 32, 2, 2)
        return self.fc(x.flatten(1))


def main() -> None:
    args = parse_args("digits_cnn", epochs=10, lr=1e-2)
    yg.manual_seed(args.seed)
    model = CNN()
    losses, accuracies = train(model, load(images=True), args)
    plot(losses, accuracies, args.plot, "CNN on 8x8 digits")
    print(f"test accuracy: {accuracies[-1]:.4f}")
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
