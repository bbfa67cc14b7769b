"""A variational autoencoder on scikit-learn's 8x8 digits, with yg.distributions.

    pip install -e '.[examples]'
    python examples/vae_digits.py            # --epochs, --lr, --plot vae_digits.png

The encoder maps a digit to q(z | x) = Normal(mu, sigma) over a 2-d latent z,
the decoder maps z to Bernoulli(logits) over the 64 pixels (read as
probabilities of ink). The loss is the negative evidence lower bound,

    -E_q[log p(x | z)] + KL(q(z | x) || N(0, I)),

with one `rsample()` of z per digit (the reparameterised draw carries the
gradient to mu and sigma) and the KL term in closed form (`kl_divergence` of
two Independent Normals). Prints the loss per epoch and the test bound, and
saves decoded draws from the prior beside reconstructions of test digits.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import yamlgrad as yg
import yamlgrad.nn.functional as F
from yamlgrad.distributions import Bernoulli, Independent, Normal, kl_divergence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from digits_common import load, parse_args  # noqa: E402

LATENT = 2


class VAE(yg.nn.Module):
    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.encode_hidden = yg.nn.Linear(64, hidden)
        self.encode_out = yg.nn.Linear(hidden, 2 * LATENT)
        self.decode_hidden = yg.nn.Linear(LATENT, hidden)
        self.decode_out = yg.nn.Linear(hidden, 64)

    def posterior(self, x: yg.Tensor) -> Independent:
        """q(z | x): a diagonal Normal per digit."""
        h = F.relu(self.encode_hidden(x))
        mu, log_sigma = self.encode_out(h).chunk(2, dim=-1)
        return Independent(Normal(mu, log_sigma.exp()), 1)

    def likelihood(self, z: yg.Tensor) -> Independent:
        """p(x | z): one Bernoulli per pixel."""
        logits = self.decode_out(F.relu(self.decode_hidden(z)))
        # The pixels are grey levels in [0, 1]: a Bernoulli's log-likelihood of
        # a fraction is the cross-entropy, so the {0, 1} support is not checked.
        return Independent(Bernoulli(logits=logits, validate_args=False), 1)

    def negative_elbo(self, x: yg.Tensor) -> yg.Tensor:
        q = self.posterior(x)
        prior = Independent(Normal(yg.zeros_like(q.mean), yg.ones_like(q.mean)), 1)
        z = q.rsample()
        reconstruction = self.likelihood(z).log_prob(x)
        return (kl_divergence(q, prior) - reconstruction).mean()


def train(model: VAE, x_train: yg.Tensor, x_test: yg.Tensor, args) -> list[float]:
    from tqdm import tqdm

    optimizer = yg.optim.Adam(model.parameters(), lr=args.lr)
    n = x_train.shape[0]
    losses = []
    bar = tqdm(range(args.epochs), desc="epochs", unit="epoch")
    for _ in bar:
        order = yg.randperm(n)
        total = 0.0
        for start in range(0, n, args.batch_size):
            index = order[start : start + args.batch_size]
            loss = model.negative_elbo(x_train[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * index.shape[0]
        losses.append(total / n)
        with yg.no_grad():
            test = model.negative_elbo(x_test).item()
        bar.set_postfix(loss=f"{losses[-1]:.2f}", test=f"{test:.2f}")
        print(f"epoch {len(losses)}: negative ELBO {losses[-1]:.3f} (test {test:.3f})")
    return losses


def save_samples(model: VAE, x_test: yg.Tensor, path: Path) -> None:
    """Top rows: decoded draws z ~ N(0, I). Bottom rows: test digits and their
    reconstructions from the posterior mean."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with yg.no_grad():
        prior = Normal(yg.zeros(LATENT), yg.ones(LATENT))
        drawn = model.likelihood(prior.sample((16,))).mean.numpy()
        originals = x_test[:8]
        rebuilt = model.likelihood(model.posterior(originals).mean).mean.numpy()
    rows = [drawn[:8], drawn[8:], originals.numpy(), rebuilt]
    titles = ["prior draws", "prior draws", "test digits", "reconstructions"]
    fig, axes = plt.subplots(len(rows), 8, figsize=(8, 4.6))
    for row, (images, title) in enumerate(zip(rows, titles)):
        for col in range(8):
            ax = axes[row, col]
            ax.imshow(np.asarray(images[col]).reshape(8, 8), cmap="gray_r")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[row, 0].set_ylabel(title, fontsize=7)
    fig.suptitle("VAE on 8x8 digits (2-d latent)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    args = parse_args("vae_digits", epochs=30, lr=3e-3)
    yg.manual_seed(args.seed)
    x_train, _, x_test, _ = load(images=False)
    model = VAE()
    losses = train(model, x_train, x_test, args)
    with yg.no_grad():
        test = model.negative_elbo(x_test).item()
    save_samples(model, x_test, args.plot)
    print(f"first epoch loss: {losses[0]:.4f}")
    print(f"last epoch loss: {losses[-1]:.4f}")
    print(f"test negative ELBO: {test:.4f}")
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
