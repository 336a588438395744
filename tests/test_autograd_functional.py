"""clgrad.autograd.functional (jacobian, hessian, vjp, jvp, vhp, hvp) against
torch.autograd.functional on every device: values, result structure, create_graph, strict
mode and errors."""

import numpy as np
import pytest
import torch

import clgrad

RNG = np.random.default_rng(8)
A = RNG.standard_normal((2, 3)).astype(np.float32)
B = RNG.standard_normal((3, 2)).astype(np.float32)
X = RNG.standard_normal(3).astype(np.float32)


def elementwise(lib):
    return lambda x: x**2 * lib.sin(x)


def two_in_two_out(lib):
    return lambda a, b: (a @ b, (a * a).sum(1))


def scalar(lib):
    return lambda x: (x**3).sum() + x[0] * x[1] * x[2]


def scalar_of_two(lib):
    return lambda a, b: ((a @ b) ** 2).sum()


def _np(res):
    if isinstance(res, (tuple, list)):
        return tuple(_np(r) for r in res)
    return res.detach().cpu().numpy()


def _structure(res):
    if isinstance(res, (tuple, list)):
        return tuple(_structure(r) for r in res)
    return tuple(res.shape)


def _both(device, call):
    """``call(lib, tensor)`` for torch and clgrad; their results, as NumPy."""
    want = call(torch, lambda a: torch.tensor(a))
    got = call(clgrad, lambda a: clgrad.tensor(a, device=device))
    assert _structure(got) == _structure(want)
    return _np(got), _np(want)


def _close(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


CASES = {
    "jacobian-elementwise": lambda lib, t: lib.autograd.functional.jacobian(elementwise(lib), t(X)),
    "jacobian-tuples": lambda lib, t: lib.autograd.functional.jacobian(
        two_in_two_out(lib), (t(A), t(B))
    ),
    "jacobian-tuple-in": lambda lib, t: lib.autograd.functional.jacobian(
        lambda a, b: a.sum(0) * b[:, 0], (t(A), t(B))
    ),
    "jacobian-unused": lambda lib, t: lib.autograd.functional.jacobian(
        lambda a, b: a * 2, (t(A), t(B))
    ),
    "hessian": lambda lib, t: lib.autograd.functional.hessian(scalar(lib), t(X)),
    "hessian-two": lambda lib, t: lib.autograd.functional.hessian(scalar_of_two(lib), (t(A), t(B))),
    "vjp": lambda lib, t: lib.autograd.functional.vjp(
        two_in_two_out(lib), (t(A), t(B)), (t(np.ones((2, 2), np.float32)), t(X[:2]))
    ),
    "vjp-scalar": lambda lib, t: lib.autograd.functional.vjp(scalar(lib), t(X)),
    "jvp": lambda lib, t: lib.autograd.functional.jvp(
        two_in_two_out(lib), (t(A), t(B)), (t(A * 0.5), t(B + 1))
    ),
    "jvp-elementwise": lambda lib, t: lib.autograd.functional.jvp(elementwise(lib), t(X), t(X + 1)),
    "vhp": lambda lib, t: lib.autograd.functional.vhp(scalar(lib), t(X), t(X * 2)),
    "hvp": lambda lib, t: lib.autograd.functional.hvp(scalar(lib), t(X), t(X * 2)),
    "hvp-two": lambda lib, t: lib.autograd.functional.hvp(
        scalar_of_two(lib), (t(A), t(B)), (t(A), t(B))
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(device, name):
    got, want = _both(device, CASES[name])
    _close(got, want)


def test_create_graph_differentiates_through(device):
    """With create_graph, a Hessian-vector product is itself differentiable (third
    derivatives reach the input's .grad), as in torch."""
    grads = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor(X, device=dev, requires_grad=True)
        _, hv = lib.autograd.functional.hvp(scalar(lib), x, x.detach() * 0 + 1, create_graph=True)
        assert hv.requires_grad
        hv.sum().backward()
        grads.append(x.grad.cpu().numpy())
        jac = lib.autograd.functional.jacobian(elementwise(lib), x)
        assert not jac.requires_grad  # without create_graph: detached
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)


def test_strict_and_errors_match_torch(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor(X, device=dev)
        F = lib.autograd.functional

        def constant(a, lib=lib, dev=dev):
            return lib.ones(2, device=dev) + 0 * a.detach().sum()

        with pytest.raises(RuntimeError):  # output independent of the input
            F.jacobian(constant, x, strict=True)
        with pytest.raises(RuntimeError):  # v must be given for a vector output
            F.vjp(elementwise(lib), x)
        with pytest.raises(RuntimeError):  # v of the wrong shape
            F.vjp(elementwise(lib), x, lib.ones(2, device=dev))
        with pytest.raises(RuntimeError):  # hessian of a vector function
            F.hessian(elementwise(lib), x)
        with pytest.raises(TypeError):
            F.jacobian(elementwise(lib), [X])
        with pytest.raises(AssertionError):
            F.jacobian(elementwise(lib), x, strategy="sideways")
        out = F.jacobian(constant, x)
        assert out.shape == (2, 3) and not bool(out.any())  # zeros where not strict


def test_saved_tensors_hooks_match_torch(device):
    """Tensors saved for backward go through the hooks (here to NumPy and back, and by
    save_on_cpu), gradients unchanged; disable_saved_tensors_hooks refuses new hooks;
    increment_version invalidates what was saved."""
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2)).astype(np.float32)
    grads = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        xt = lib.tensor(x, device=dev, requires_grad=True)
        wt = lib.tensor(w, device=dev, requires_grad=True)
        seen = []

        def pack(t, seen=seen):
            seen.append(tuple(t.shape))
            return (t.device, t.detach().cpu().numpy())

        def unpack(packed, lib=lib):
            device, array = packed
            return lib.tensor(array, device=device)

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = lib.tanh(xt @ wt).sum()
        y.backward()
        with lib.autograd.graph.save_on_cpu():
            z = (lib.sigmoid(xt) * xt).sum()
        z.backward()
        grads.append([xt.grad.cpu().numpy(), wt.grad.cpu().numpy(), len(seen) > 0])
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                    pass
        v = lib.tensor(x, device=dev, requires_grad=True)
        out = (v * v).sum()
        lib.autograd.graph.increment_version(v)
        with pytest.raises(RuntimeError):
            out.backward()
    for g, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)


def test_register_multi_grad_hook_matches_torch(device):
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        a = lib.ones(2, device=dev, requires_grad=True)
        b = lib.ones(2, device=dev, requires_grad=True)
        seen = []

        def record(grads, seen=seen):
            seen.append([None if g is None else g.cpu().tolist() for g in grads])

        handle = lib.autograd.graph.register_multi_grad_hook((a, b), record)
        (a * 2 + b * 3).sum().backward()
        (a * 5).sum().backward()
        handle.remove()
        (a * 2).sum().backward()
        first = []
        lib.autograd.graph.register_multi_grad_hook(
            (a, b), lambda g, first=first: first.append(g.cpu().tolist()), mode="any"
        )
        (a * 2 + b * 3).sum().backward()
        results.append((seen, first))
    assert results[1] == results[0]
