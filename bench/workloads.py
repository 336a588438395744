"""Model-sized workloads for bench/run.py: conv2d, an MLP and a CNN training step.

Each has a clgrad version (timed on the device) and the same computation written by hand in
NumPy (the reference on the host's cores), and in PyTorch when it is installed.
"""

from __future__ import annotations

import numpy as np

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F


def sizes(quick):
    # batch, channels in/out, image side
    return (
        dict(batch=16, cin=4, cout=8, side=16)
        if quick
        else dict(batch=64, cin=16, cout=32, side=32)
    )


# ---- clgrad ------------------------------------------------------------------------------------
def conv_steps(device, quick):
    s = sizes(quick)
    clgrad.manual_seed(0)
    x = clgrad.randn(s["batch"], s["cin"], s["side"], s["side"], device=device)
    w = clgrad.randn(s["cout"], s["cin"], 3, 3, device=device, requires_grad=True)
    xg = x.detach().requires_grad_()

    def forward():
        return F.conv2d(x, w, padding=1)

    def forward_backward():
        F.conv2d(xg, w, padding=1).sum().backward()
        w.grad = xg.grad = None

    return {"conv2d 3x3 forward": forward, "conv2d 3x3 forward+backward": forward_backward}


def mlp_model():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def mlp2_model(lib=clgrad):
    """Issue 11's MLP: 784-256-256-10 (trained at batch 256)."""
    nn_ = lib.nn
    return nn_.Sequential(
        nn_.Linear(784, 256), nn_.ReLU(), nn_.Linear(256, 256), nn_.ReLU(), nn_.Linear(256, 10)
    )


MLP2 = "MLP step (784-256-256-10, batch 256)"
CNN = "CNN training step (28x28, 2 conv)"


def cnn_model(quick):
    c = 8 if quick else 16
    return nn.Sequential(
        nn.Conv2d(1, c, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(c, 2 * c, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(2 * c * 7 * 7, 10),
    )


def training_steps(device, quick):
    clgrad.manual_seed(0)
    batch = 32 if quick else 128
    steps = {}
    for name, model, shape in (
        ("MLP training step (784-256-10)", mlp_model(), (batch, 784)),
        (CNN, cnn_model(quick), (batch, 1, 28, 28)),
        (MLP2, mlp2_model(), (256, 784)),
    ):
        model = model.to(device)
        opt = clgrad.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = clgrad.randn(*shape, device=device)
        y = clgrad.randint(0, 10, (shape[0],), device=device)

        def step(model=model, opt=opt, x=x, y=y):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

        steps[name] = step
    return steps


# ---- NumPy references ----------------------------------------------------------------------
def _im2col(x, k=3, pad=1):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    s = xp.strides
    cols = np.lib.stride_tricks.as_strided(
        xp, (n, c, k, k, h, w), (s[0], s[1], s[2], s[3], s[2], s[3])
    )
    return cols.reshape(n, c * k * k, h * w)


def _col2im(cols, shape, k=3, pad=1):
    n, c, h, w = shape
    out = np.zeros((n, c, h + 2 * pad, w + 2 * pad), cols.dtype)
    cols = cols.reshape(n, c, k, k, h, w)
    for i in range(k):
        for j in range(k):
            out[:, :, i : i + h, j : j + w] += cols[:, :, i, j]
    return out[:, :, pad : pad + h, pad : pad + w]


def np_conv(x, w):
    n, _, h, wd = x.shape
    cols = _im2col(x)
    return (w.reshape(w.shape[0], -1) @ cols).reshape(n, w.shape[0], h, wd), cols


def np_conv_backward(g, x, w, cols):
    n = x.shape[0]
    gf = g.reshape(n, w.shape[0], -1)
    gw = np.einsum("nol,nkl->ok", gf, cols).reshape(w.shape)
    gx = _col2im(w.reshape(w.shape[0], -1).T @ gf, x.shape)
    return gx, gw


def _softmax_xent_grad(logits, y):
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    p[np.arange(len(y)), y] -= 1
    return p / len(y)


def numpy_steps(quick):
    """The same workloads by hand in NumPy, as closures to time."""
    rng = np.random.default_rng(0)
    f = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    s = sizes(quick)
    x = f(s["batch"], s["cin"], s["side"], s["side"])
    w = f(s["cout"], s["cin"], 3, 3)

    def conv_fb():
        out, cols = np_conv(x, w)
        np_conv_backward(np.ones_like(out), x, w, cols)

    batch = 32 if quick else 128
    W1, W2 = f(784, 256) * 0.05, f(256, 10) * 0.05
    xm, y = f(batch, 784), rng.integers(0, 10, batch)

    def mlp():
        h = xm @ W1
        a = np.maximum(h, 0)
        g = _softmax_xent_grad(a @ W2, y)
        gW2 = a.T @ g
        gh = (g @ W2.T) * (h > 0)
        gW1 = xm.T @ gh
        np.subtract(W1, 0.01 * gW1, out=W1)
        np.subtract(W2, 0.01 * gW2, out=W2)

    c = 8 if quick else 16
    K1, K2 = f(c, 1, 3, 3) * 0.3, f(2 * c, c, 3, 3) * 0.1
    Wf = f(2 * c * 49, 10) * 0.05
    xc = f(batch, 1, 28, 28)

    def pool(a):
        n, ch, hh, ww = a.shape
        r = a.reshape(n, ch, hh // 2, 2, ww // 2, 2)
        m = r.max((3, 5))
        return m, (r == m[:, :, :, None, :, None])

    def unpool(g, mask):
        return (mask * g[:, :, :, None, :, None]).reshape(
            mask.shape[0], mask.shape[1], mask.shape[2] * 2, mask.shape[4] * 2
        )

    def cnn():
        h1, c1 = np_conv(xc, K1)
        a1 = np.maximum(h1, 0)
        p1, m1 = pool(a1)
        h2, c2 = np_conv(p1, K2)
        a2 = np.maximum(h2, 0)
        p2, m2 = pool(a2)
        flat = p2.reshape(batch, -1)
        g = _softmax_xent_grad(flat @ Wf, y)
        gWf = flat.T @ g
        gp2 = (g @ Wf.T).reshape(p2.shape)
        gh2 = unpool(gp2, m2) * (h2 > 0)
        gp1, gK2 = np_conv_backward(gh2, p1, K2, c2)
        gh1 = unpool(gp1, m1) * (h1 > 0)
        _, gK1 = np_conv_backward(gh1, xc, K1, c1)
        for p, gp in ((K1, gK1), (K2, gK2), (Wf, gWf)):
            p -= 0.01 * gp

    return {
        "conv2d 3x3 forward": lambda: np_conv(x, w),
        "conv2d 3x3 forward+backward": conv_fb,
        "MLP training step (784-256-10)": mlp,
        CNN: cnn,
    }


def torch_steps(quick):
    """The same workloads in PyTorch on the CPU (when installed)."""
    import torch
    import torch.nn.functional as TF

    torch.manual_seed(0)
    s = sizes(quick)
    x = torch.randn(s["batch"], s["cin"], s["side"], s["side"])
    w = torch.randn(s["cout"], s["cin"], 3, 3, requires_grad=True)
    xg = x.clone().requires_grad_()
    batch = 32 if quick else 128
    c = 8 if quick else 16
    mlp = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(1, c, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(c, 2 * c, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(2 * c * 49, 10),
    )
    y = torch.randint(0, 10, (batch,))

    def step(model, inp):
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        target = y if len(inp) == len(y) else torch.randint(0, 10, (len(inp),))

        def run():
            opt.zero_grad()
            TF.cross_entropy(model(inp), target).backward()
            opt.step()

        return run

    def conv_fb():
        TF.conv2d(xg, w, padding=1).sum().backward()
        w.grad = xg.grad = None

    return {
        "conv2d 3x3 forward": lambda: TF.conv2d(x, w.detach(), padding=1),
        "conv2d 3x3 forward+backward": conv_fb,
        "MLP training step (784-256-10)": step(mlp, torch.randn(batch, 784)),
        CNN: step(cnn, torch.randn(batch, 1, 28, 28)),
        MLP2: step(mlp2_model(torch), torch.randn(256, 784)),
    }


def digits_models(lib):
    """The two models of examples/train_digits.py built with ``lib``'s nn (clgrad or torch:
    the same layers under the same names), so each runs as it is in both."""
    nn = lib.nn
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    cnn = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.1),
        nn.Linear(128, 10),
    )
    return {"digits MLP step (64-128-10)": mlp, "digits CNN step (8x8, 2 conv)": cnn}


def digits_steps(lib, device, batch=64):
    """One training step of each digits model (examples/train_digits.py's Adam, batch 64 of
    8x8 images) in ``lib`` on ``device``."""
    lib.manual_seed(0)
    steps = {}
    for name, model in digits_models(lib).items():
        model = model.to(device)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x = lib.rand(batch, 1, 8, 8, device=device)
        y = lib.randint(0, 10, (batch,), device=device)

        def step(model=model, opt=opt, x=x, y=y):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

        steps[name] = step
    return steps
