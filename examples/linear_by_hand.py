"""A linear layer's gradients by hand in NumPy and by clgrad's autograd, side by side.

For L = sum((X W + b - Y)^2) / N:
    dL/dW = X^T (2 (X W + b - Y) / N),   dL/db = sum over rows of 2 (X W + b - Y) / N
"""

from __future__ import annotations

import numpy as np

import clgrad


def main(device=None):
    device = device or clgrad.default_device()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 3))
    W = rng.normal(size=(3, 2))
    b = rng.normal(size=2)
    Y = rng.normal(size=(4, 2))
    n = X.shape[0]

    # by hand, in NumPy
    residual = X @ W + b - Y
    dW_hand = X.T @ (2 * residual / n)
    db_hand = (2 * residual / n).sum(0)

    # by autograd (float64 where the device runs it)
    dt = clgrad.float64 if clgrad.device(device).supports_float64 else clgrad.float32
    t = lambda a, g=False: clgrad.tensor(a, dtype=dt, device=device, requires_grad=g)  # noqa: E731
    Xt, Wt, bt, Yt = t(X), t(W, True), t(b, True), t(Y)
    loss = ((Xt @ Wt + bt - Yt) ** 2).sum() / n
    loss.backward()

    print(f"on {device}: loss {loss.item():.6f}")
    print(f"{'':6}{'by hand (NumPy)':>36}    {'by autograd (clgrad)':>36}")
    for name, hand, auto in (("dL/dW", dW_hand, Wt.grad), ("dL/db", db_hand, bt.grad)):
        rows_h = np.atleast_2d(hand)
        rows_a = np.atleast_2d(auto.cpu().numpy())
        for i, (h, a) in enumerate(zip(rows_h, rows_a)):
            label = name if i == 0 else ""
            print(
                f"{label:6}{np.array2string(h, precision=6):>36}    "
                f"{np.array2string(a, precision=6):>36}"
            )
        tol = 1e-10 if dt == clgrad.float64 else 1e-5
        assert np.allclose(hand, auto.cpu().numpy(), rtol=tol, atol=tol), name
    print("equal: yes")


if __name__ == "__main__":
    main()
