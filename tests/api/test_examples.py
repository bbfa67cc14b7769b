"""The example scripts run, and print what they claim (torch is the oracle)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

from support import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def torch_order(loss: torch.Tensor, names: dict[int, str]) -> list[str]:
    """The order torch's engine runs the graph's nodes in, by node pre-hooks."""
    order: list[str] = []
    stack, seen = [loss.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        name = type(node).__name__
        if name == "AccumulateGrad":
            name = f"AccumulateGrad({names[id(node.variable)]})"
        node.register_prehook(lambda grads, n=name: order.append(n))
        stack += [n for n, _ in node.next_functions]
    loss.backward()
    return order


def test_seed_walkthrough_prints_the_engine_order_of_torch() -> None:
    out = run("seed_walkthrough.py")
    orders = [
        line.split("engine order: ")[1].split(" -> ")
        for line in out.splitlines()
        if "engine order: " in line
    ]
    assert len(orders) == 2

    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    assert orders[0] == torch_order(Q.sum(), {id(a): "a", id(b): "b"})
    assert orders[0][:3] == ["SumBackward0", "SubBackward0", "PowBackward0"]
    assert "a.grad = tensor([36., 81.])" in out
    assert "b.grad = tensor([-12.,  -8.])" in out

    x, y = torch.randn(4, 3), torch.randn(4, 1)
    W1 = torch.randn(3, 5, requires_grad=True)
    b1 = torch.zeros(5, requires_grad=True)
    W2 = torch.randn(5, 1, requires_grad=True)
    b2 = torch.zeros(1, requires_grad=True)
    names = {id(W1): "W1", id(b1): "b1", id(W2): "W2", id(b2): "b2"}
    loss = (((x @ W1 + b1).relu() @ W2 + b2 - y) ** 2).mean()
    assert orders[1] == torch_order(loss, names)
    # Each node's next_functions and saved values are printed.
    assert "next_functions: ((MulBackward0, 0), (PowBackward0, 0))" in out
    assert "_saved_exponent: 3" in out
    assert "next_functions: ((ReluBackward0, 0), (AccumulateGrad(W2), 0))" in out


def test_digits_mlp_reaches_95_percent(tmp_path: Path) -> None:
    """The MLP example as shipped (seeded): at least 95% test accuracy, plot saved."""
    plot = tmp_path / "mlp.png"
    out = run("digits_mlp.py", "--plot", str(plot))
    accuracy = float(out.split("test accuracy: ")[1].split()[0])
    assert accuracy >= 0.95
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_digits_cnn_reaches_97_percent(tmp_path: Path) -> None:
    """The CNN example as shipped (seeded): at least 97% test accuracy, plot saved."""
    plot = tmp_path / "cnn.png"
    out = run("digits_cnn.py", "--plot", str(plot))
    accuracy = float(out.split("test accuracy: ")[1].split()[0])
    assert accuracy >= 0.97
    assert plot.read_bytes().startswith(b"\x89PNG")


def _losses(out: str) -> list[float]:
    return [
        float(line.split("loss ")[1].split()[0])
        for line in out.splitlines()
        if line.startswith("step ")
    ]


def test_char_transformer_learns_and_samples() -> None:
    """A few steps of the character-level transformer (eager, then compiled):
    the loss falls below the uniform guess, and a sample of the asked length
    is printed."""
    for extra in ((), ("--compile",)):
        out = run(
            "char_transformer.py",
            *("--d-model", "32", "--context", "24", "--batch", "8"),
            "--steps",
            "20",
            "--log-every",
            "10",
            "--sample",
            "25",
            *extra,
        )
        uniform = float(out.split("uniform loss ")[1].split()[0])
        losses = _losses(out)
        assert len(losses) == 3 and losses[-1] < losses[0] and losses[-1] < uniform
        sample = out.split("sample: ")[1].rstrip("\n")
        assert sample.startswith("The ") and len(sample) == 4 + 25


def test_char_lstm_learns_the_shipped_text() -> None:
    """The character LSTM (seeded), 100 steps: the loss falls from chance
    (ln 38 = 3.64 nats) to well under half of it; the sample continues the prompt."""
    out = run(
        "char_lstm.py", "--steps", "100", "--report-every", "50", "--sample", "40"
    )
    assert "step   50  loss" in out and "steps/s" in out
    assert float(out.split("final loss: ")[1].split()[0]) < 1.6
    sample = out.split("sample:\n")[1]
    # The prompt, 40 characters written after it, and print's newline.
    assert sample.startswith("The wind was ") and len(sample) == 13 + 40 + 1


def test_char_lstm_runs_compiled() -> None:
    out = run("char_lstm.py", "--steps", "4", "--report-every", "2", "--compile")
    assert "step    4  loss" in out


def test_vae_digits_lowers_its_loss_and_draws_digits(tmp_path: Path) -> None:
    """A few epochs of the VAE example: the negative ELBO falls, samples saved."""
    plot = tmp_path / "vae.png"
    out = run("vae_digits.py", "--epochs", "3", "--plot", str(plot))
    first = float(out.split("first epoch loss: ")[1].split()[0])
    last = float(out.split("last epoch loss: ")[1].split()[0])
    test = float(out.split("test negative ELBO: ")[1].split()[0])
    assert last < first and test < first
    assert plot.read_bytes().startswith(b"\x89PNG")
