"""What the digits examples share: the data, the training loop and the plot.

scikit-learn's bundled 8x8 digits (1797 images, no download), split 80/20 with
every class in proportion; pixels scaled to [0, 1]. Needs the `examples` extra:
`pip install -e '.[examples]'` (scikit-learn, tqdm, matplotlib).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

import yamlgrad as yg
import yamlgrad.nn.functional as F


def load(images: bool) -> tuple[yg.Tensor, yg.Tensor, yg.Tensor, yg.Tensor]:
    """Train and test inputs and labels: (N, 64) rows, or (N, 1, 8, 8) images."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    if images:
        x = x.reshape(-1, 1, 8, 8)
    x_train, x_test, y_train, y_test = train_test_split(
        x, digits.target, test_size=0.2, stratify=digits.target, random_state=0
    )
    return (
        yg.tensor(x_train),
        yg.tensor(y_train.astype(np.int64)),
        yg.tensor(x_test),
        yg.tensor(y_test.astype(np.int64)),
    )


def parse_args(name: str, epochs: int, lr: float) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=f"Train the {name} on 8x8 digits.")
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=lr)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--plot", type=Path, default=Path(f"{name}.png"), help="where to save the plot"
    )
    return parser.parse_args()


def accuracy(
    model: Callable[[yg.Tensor], yg.Tensor], x: yg.Tensor, y: yg.Tensor
) -> float:
    with yg.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def train(
    model: yg.nn.Module, data: tuple, args: argparse.Namespace
) -> tuple[list[float], list[float]]:
    """Adam on mini-batches with a tqdm bar; the mean loss and the test accuracy
    per epoch."""
    from tqdm import tqdm

    x_train, y_train, x_test, y_test = data
    optimizer = yg.optim.Adam(model.parameters(), lr=args.lr)
    losses, accuracies = [], []
    n = x_train.shape[0]
    bar = tqdm(range(args.epochs), desc="epochs", unit="epoch")
    for _ in bar:
        model.train()
        order = yg.randperm(n)
        total = 0.0
        for start in range(0, n, args.batch_size):
            index = order[start : start + args.batch_size]
            loss = F.cross_entropy(model(x_train[index]), y_train[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * index.shape[0]
        model.eval()
        losses.append(total / n)
        accuracies.append(accuracy(model, x_test, y_test))
        bar.set_postfix(loss=f"{losses[-1]:.4f}", test_acc=f"{accuracies[-1]:.4f}")
    return losses, accuracies


def plot(losses: list[float], accuracies: list[float], path: Path, title: str) -> None:
    """The training loss and test accuracy per epoch, saved as an image."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    epochs = range(1, len(losses) + 1)
    left.plot(epochs, losses)
    left.set(xlabel="epoch", ylabel="training loss", title=title)
    right.plot(epochs, accuracies)
    right.set(xlabel="epoch", ylabel="test accuracy", ylim=(0, 1))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
