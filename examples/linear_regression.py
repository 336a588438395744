"""Linear regression trained with the manual update inside ``no_grad()``.

w <- w - lr * dL/dw, as in PyTorch's autograd tutorial; no optimizer object.
"""

from __future__ import annotations

import clgrad


def main(device=None, steps=200, lr=0.1):
    device = device or clgrad.default_device()
    clgrad.manual_seed(0)
    true_w = clgrad.tensor([[2.0], [-3.0], [0.5]], device=device)
    x = clgrad.randn(200, 3, device=device)
    y = x @ true_w + 1.0 + 0.01 * clgrad.randn(200, 1, device=device)

    w = clgrad.zeros(3, 1, device=device, requires_grad=True)
    b = clgrad.zeros(1, device=device, requires_grad=True)
    for step in range(steps):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        with clgrad.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
            w.grad.zero_()
            b.grad.zero_()
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:3d}  loss {loss.item():.6f}")
    print(f"w = {w.detach().reshape(-1).tolist()}  b = {b.item():.4f}  (true: [2, -3, 0.5], 1)")
    return w.detach(), b.detach(), loss.item()


if __name__ == "__main__":
    main()
