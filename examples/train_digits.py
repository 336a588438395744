"""Train an MLP and a small CNN on the handwritten digits that ship with scikit-learn.

    python examples/train_digits.py                  # on the device CLGRAD_DEVICE selects
    CLGRAD_DEVICE=pocl python examples/train_digits.py
    python examples/train_digits.py --quick          # a few seconds (the test suite runs this)

Nothing is downloaded: the 1,797 8x8 images come with scikit-learn. Prints loss and accuracy
per epoch under a tqdm progress bar and saves the loss curves as a PNG.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F
from clgrad.utils.data import DataLoader, TensorDataset


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),  # 16 x 8 x 8
        nn.MaxPool2d(2),  # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),  # 32 x 4 x 4
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),  # 128
        nn.Dropout(0.1),
        nn.Linear(128, 10),
    )


def load(device, limit=None):
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # N x 1 x 8 x 8, in [0, 1]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))[:limit]
    x, y = x[order], y[order]
    split = int(0.8 * len(y))
    t = lambda a: clgrad.tensor(a, device=device)  # noqa: E731
    return TensorDataset(t(x[:split]), t(y[:split])), TensorDataset(t(x[split:]), t(y[split:]))


def accuracy(model, data):
    model.eval()
    correct = 0
    with clgrad.no_grad():
        for x, y in DataLoader(data, batch_size=512):
            correct += (model(x).argmax(1) == y).sum().item()
    model.train()
    return correct / len(data)


def train(name, model, train_set, test_set, epochs, lr):
    opt = clgrad.optim.Adam(model.parameters(), lr=lr)
    sched = clgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    loader = DataLoader(train_set, batch_size=64, shuffle=True, generator=clgrad.manual_seed(0))
    losses = []
    for epoch in range(1, epochs + 1):
        total = clgrad.zeros((), device=train_set.tensors[0].device)
        bar = tqdm(loader, desc=f"{name} epoch {epoch}/{epochs}", leave=False)
        for x, y in bar:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach()  # stays on the device: no host round-trip per step
        sched.step()
        mean_loss = total.item() / len(loader)
        losses.append(mean_loss)
        acc = accuracy(model, test_set)
        tqdm.write(f"{name} epoch {epoch:2d}: loss {mean_loss:.4f}  test accuracy {acc:.3f}")
    return losses, accuracy(model, test_set)


def plot(curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), losses, marker="o", label=name)
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss (cross-entropy)")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("clgrad on scikit-learn digits")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="default: what CLGRAD_DEVICE selects")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="few samples and epochs")
    p.add_argument("--plot", default="digits_loss.png")
    args = p.parse_args(argv)
    device = clgrad.device(args.device) if args.device else clgrad.default_device()
    epochs = 2 if args.quick else args.epochs
    clgrad.manual_seed(0)
    train_set, test_set = load(device, limit=300 if args.quick else None)
    print(
        f"device {device} ({device.vendor} {device.name}): {len(train_set)} training and "
        f"{len(test_set)} test images"
    )
    curves, results = {}, {}
    for name, make, lr in (("MLP", mlp, 1e-2), ("CNN", cnn, 1e-2)):
        start = time.perf_counter()
        model = make().to(device)
        curves[name], results[name] = train(name, model, train_set, test_set, epochs, lr)
        print(f"{name}: test accuracy {results[name]:.3f} in {time.perf_counter() - start:.1f} s")
    plot(curves, args.plot)
    print(f"loss curves: {Path(args.plot).resolve()}")
    return results


if __name__ == "__main__":
    main()
