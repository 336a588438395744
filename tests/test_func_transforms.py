"""clgrad.func's transforms (grad, grad_and_value, vjp, jacrev, jacfwd, hessian, vmap,
stack_module_state with functional_call) against torch.func on every device: values,
structures, composition, and errors."""

import numpy as np
import pytest
import torch
import torch.func

import clgrad
import clgrad.func

RNG = np.random.default_rng(9)
X = RNG.standard_normal(3).astype(np.float32)
XS = RNG.standard_normal((4, 3)).astype(np.float32)
W = RNG.standard_normal((2, 3)).astype(np.float32)


def _np(res):
    if isinstance(res, (tuple, list)):
        return tuple(_np(r) for r in res)
    if isinstance(res, dict):
        return {k: _np(v) for k, v in res.items()}
    return res.detach().cpu().numpy()


def _close(got, want):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            _close(got[k], want[k])
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    else:
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def cubic(lib):
    return lambda x: (x**3).sum() + x[0] * x[1]


def model_loss(lib):
    def loss(w, x):
        return lib.tanh(x @ w.T).square().sum()

    return loss


CASES = {
    "grad": lambda f, lib, t: f.grad(cubic(lib))(t(X)),
    "grad-argnums": lambda f, lib, t: f.grad(model_loss(lib), argnums=(0, 1))(t(W), t(X)),
    "grad-aux": lambda f, lib, t: f.grad(lambda x: (cubic(lib)(x), x.sum()), has_aux=True)(t(X)),
    "grad-dict": lambda f, lib, t: f.grad(lambda p: (p["a"] * p["b"]).sum())(
        {"a": t(X), "b": t(X * 2)}
    ),
    "grad_and_value": lambda f, lib, t: f.grad_and_value(cubic(lib))(t(X)),
    "grad-of-grad": lambda f, lib, t: f.grad(lambda x: f.grad(lambda y: (y**3).sum())(x).sum())(
        t(X)
    ),
    "vjp": lambda f, lib, t: f.vjp(lambda x: lib.sin(x) * x, t(X))[1](t(X + 1)),
    "jacrev": lambda f, lib, t: f.jacrev(lambda x: lib.sin(x) * x[0])(t(X)),
    "jacrev-argnums": lambda f, lib, t: f.jacrev(lambda w, x: x @ w.T, argnums=(0, 1))(t(W), t(X)),
    "jacfwd": lambda f, lib, t: f.jacfwd(lambda x: (lib.exp(x), x.sum()))(t(X)),
    "hessian": lambda f, lib, t: f.hessian(cubic(lib))(t(X)),
    "vmap": lambda f, lib, t: f.vmap(lambda x: x * x.sum())(t(XS)),
    "vmap-in_dims": lambda f, lib, t: f.vmap(lambda x, w: w @ x, in_dims=(1, None))(
        t(XS.T.copy()), t(W)
    ),
    "vmap-out_dims": lambda f, lib, t: f.vmap(lambda x: (x * 2, x.sum()), out_dims=(1, 0))(t(XS)),
    "vmap-dict": lambda f, lib, t: f.vmap(lambda d: d["a"] - d["b"])({"a": t(XS), "b": t(XS * 3)}),
    "vmap-nested": lambda f, lib, t: f.vmap(f.vmap(lambda a: a * 2))(t(XS)),
    "vmap-empty": lambda f, lib, t: f.vmap(lambda x: x.sum())(t(XS[:0])),
    "per-sample-grads": lambda f, lib, t: f.vmap(f.grad(model_loss(lib)), in_dims=(None, 0))(
        t(W), t(XS)
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_func(device, name):
    want = _np(CASES[name](torch.func, torch, lambda a: torch.tensor(a)))
    got = _np(CASES[name](clgrad.func, clgrad, lambda a: clgrad.tensor(a, device=device)))
    _close(got, want)


def test_results_are_detached_unless_composed(device):
    x = clgrad.tensor(X, device=device)
    assert not clgrad.func.grad(cubic(clgrad))(x).requires_grad
    # an input that requires grad keeps the graph to it, as torch.func's
    x.requires_grad_(True)
    g = clgrad.func.grad(cubic(clgrad))(x)
    g.sum().backward()
    xt = torch.tensor(X, requires_grad=True)
    torch.func.grad(cubic(torch))(xt).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def _ensemble(lib, models, dev):
    params, buffers = lib.func.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].requires_grad

    def run(p, b, x):
        return lib.func.functional_call(models[0], (p, b), (x,))

    return _np(
        lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(XS, device=dev))
    )


def test_ensemble_with_stack_module_state(device):
    """Four models as one: stack_module_state, functional_call under vmap."""
    torch.manual_seed(0)
    tmodels = [torch.nn.Linear(3, 2) for _ in range(4)]
    models = [clgrad.nn.Linear(3, 2).to(device) for _ in range(4)]
    for m, tm in zip(models, tmodels):  # torch's weights, so the outputs compare
        m.load_state_dict({k: clgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    _close(_ensemble(clgrad, models, device), _ensemble(torch, tmodels, "cpu"))


def test_errors_match_torch(device):
    for f, lib, dev in ((torch.func, torch, "cpu"), (clgrad.func, clgrad, device)):
        x = lib.tensor(X, device=dev)
        with pytest.raises(RuntimeError, match="scalar Tensor"):
            f.grad(lambda a: a * 2)(x)
        with pytest.raises(RuntimeError, match="argnum"):
            f.grad(lambda a: a.sum(), argnums=2)(x)
        with pytest.raises(ValueError, match="same size in the mapped dimension"):
            f.vmap(lambda a, b: a + b)(lib.ones(2, 3, device=dev), lib.ones(3, 3, device=dev))

        def noisy(a, lib=lib, dev=dev):
            return a + lib.rand(3, device=dev)

        with pytest.raises(RuntimeError, match="randomness"):
            f.vmap(noisy)(lib.ones(2, 3, device=dev))
        out = f.vmap(noisy, randomness="same")(lib.ones(2, 3, device=dev))
        assert bool((out[0] == out[1]).all())
        out = f.vmap(noisy, randomness="different")(lib.ones(2, 3, device=dev))
        assert not bool((out[0] == out[1]).all())


JVP_CASES = {
    "product sin": (lambda lib: lambda x, y: (x * y).sin(), 2),
    "softmax": (lambda lib: lambda x, y: lib.softmax(x * y, dim=0), 2),
    "matmul tanh": (lambda lib: lambda x, y: (x[:, None] * y[None, :]).tanh() @ y, 2),
    "tuple and dict out": (lambda lib: lambda x, y: (x.exp(), {"s": (x * y).sum()}), 2),
    "unused input": (lambda lib: lambda x, y: x**3, 2),
}


@pytest.mark.parametrize("name", list(JVP_CASES))
def test_jvp_and_linearize_as_torch(device, name):
    make, n = JVP_CASES[name]
    rng = np.random.default_rng(0)
    primals = [rng.standard_normal(3).astype(np.float32) for _ in range(n)]
    tangents = [rng.standard_normal(3).astype(np.float32) for _ in range(n)]

    def run(lib, dev, fn_mod):
        p = tuple(lib.tensor(a, device=dev) for a in primals)
        t = tuple(lib.tensor(a, device=dev) for a in tangents)
        out, jv = fn_mod.jvp(make(lib), p, t)
        lin_out, jvp_fn = fn_mod.linearize(make(lib), *p)
        return _np((out, jv, lin_out, jvp_fn(*t), jvp_fn(*p)))

    _close(run(clgrad, device, clgrad.func), run(torch, "cpu", torch.func))


def test_jvp_has_aux_and_forward_over_reverse_as_torch(device):
    x = np.array([0.5, -1.0, 2.0], np.float32)
    v = np.array([1.0, 2.0, 3.0], np.float32)

    def run(lib, dev, fn_mod):
        xs, vs = lib.tensor(x, device=dev), lib.tensor(v, device=dev)
        out, jv, aux = fn_mod.jvp(lambda a: (a.sin(), a.cos()), (xs,), (vs,), has_aux=True)
        # a Hessian-vector product, forward over reverse
        _, hvp = fn_mod.jvp(fn_mod.grad(lambda a: (a**3).sum()), (xs,), (vs,))
        return _np((out, jv, aux, hvp))

    _close(run(clgrad, device, clgrad.func), run(torch, "cpu", torch.func))


def test_jvp_errors_as_torch():
    def errors(lib, fn_mod):
        x = lib.ones(2)
        f = lambda a, b: a * b  # noqa: E731
        seen = []
        for call in (
            lambda: fn_mod.jvp(f, [x, x], (x, x)),
            lambda: fn_mod.jvp(f, (x, x), [x, x]),
            lambda: fn_mod.jvp(f, (x, x), (x,)),
            lambda: fn_mod.jvp(f, (x, x), (x, lib.ones(3))),
            lambda: fn_mod.jvp(f, (x, 1.0), (x, 1.0)),
            lambda: fn_mod.jvp(f, (), ()),
            lambda: fn_mod.jvp(lambda a: 3.0, (x,), (x,)),
        ):
            with pytest.raises(RuntimeError) as e:
                call()
            seen.append(str(e.value).split(" Got ")[0].replace("torch.", ""))
        return seen

    assert errors(clgrad, clgrad.func) == errors(torch, torch.func)


def test_vmap_outputs_must_be_tensors_unless_out_dims_is_none():
    import torch

    for lib in (torch, clgrad):
        x = lib.tensor([1.0, 2.0])
        for f in (lambda v: 1.0, lambda v: (v, 2)):
            with pytest.raises(ValueError, match="must only return Tensors"):
                lib.func.vmap(f)(x)
        out, label = lib.func.vmap(lambda v: (v * 2, "a"), out_dims=(0, None))(x)
        assert out.tolist() == [2.0, 4.0] and label == "a"
        a, b = lib.func.vmap(lambda v: (v * 2, v.sum()), out_dims=(1, 0))(lib.ones(2, 3))
        assert tuple(a.shape) == (3, 2) and b.tolist() == [3.0, 3.0]


def test_vmap_in_dims_as_a_pytree_of_the_inputs():
    # torch's in_dims may follow an argument's structure: a dict or list of per-leaf dims
    import torch

    results = []
    for lib in (torch, clgrad):
        f = lib.vmap(lambda d, w: d["a"] * 2 + d["b"] @ w[0], in_dims=({"a": 0, "b": None}, [1]))
        d = {"a": lib.arange(6.0).reshape(3, 2), "b": lib.ones(2)}
        results.append(f(d, [lib.arange(6.0).reshape(2, 3)]).tolist())
        for bad_dims, args in (
            (({"x": 0},), ({"a": lib.ones(3)},)),
            (((0, 1, 2),), ((lib.ones(3), lib.ones(3)),)),
        ):
            with pytest.raises(ValueError, match="in_dims is not compatible"):
                lib.vmap(lambda t: t, in_dims=bad_dims)(*args)
    assert results[0] == results[1]
