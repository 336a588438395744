"""Mixed precision: ``autocast`` against PyTorch's (its CPU lists on the host device, its CUDA
lists on the OpenCL devices) and ``GradScaler`` against ``torch.amp.GradScaler``."""

import threading
import warnings

import numpy as np
import pytest
import torch

import clgrad

F = clgrad.nn.functional


def _pair(shape, seed, requires_grad=False, device="cpu"):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return (
        clgrad.tensor(a, device=device, requires_grad=requires_grad),
        torch.tensor(a, requires_grad=requires_grad),
    )


# op -> (inputs' shapes): each runs on float32 inputs inside the region, or on the output of
# a linear layer (float16 there)
_OPS = {
    "linear": lambda t, x, w, b: t.nn.functional.linear(x, w, b),
    "matmul": lambda t, x, w, b: x @ w.t(),
    "addmm": lambda t, x, w, b: t.addmm(b, x, w.t()),
    "bmm": lambda t, x, w, b: t.bmm(x[None], w.t()[None]),
    "softmax_of_linear": lambda t, x, w, b: t.nn.functional.linear(x, w, b).softmax(1),
    "exp_of_linear": lambda t, x, w, b: t.nn.functional.linear(x, w, b).exp(),
    "sum_of_linear": lambda t, x, w, b: t.nn.functional.linear(x, w, b).sum(),
    "relu_of_linear": lambda t, x, w, b: t.nn.functional.linear(x, w, b).relu(),
    "pow_of_linear": lambda t, x, w, b: t.nn.functional.linear(x, w, b) ** 2,
    "mse_of_linear": lambda t, x, w, b: t.nn.functional.mse_loss(
        t.nn.functional.linear(x, w, b), x[:, :1].expand(4, 5)
    ),
    "cross_entropy_of_linear": lambda t, x, w, b: t.nn.functional.cross_entropy(
        t.nn.functional.linear(x, w, b), t.tensor([0, 1, 2, 3], device=x.device)
    ),
    "layer_norm_of_linear": lambda t, x, w, b: t.nn.functional.layer_norm(
        t.nn.functional.linear(x, w, b), (5,)
    ),
    "linear_plus_float32": lambda t, x, w, b: t.nn.functional.linear(x, w, b) + b,
    "float32_elementwise": lambda t, x, w, b: x * 2 + 1,
    "float64_stays": lambda t, x, w, b: x.double() @ w.double().t(),
}


@pytest.mark.parametrize("name", list(_OPS))
def test_cpu_autocast_matches_torch(name):
    """The host device follows PyTorch's CPU lists: dtypes, values and float32 gradients."""
    op = _OPS[name]
    (x, xt), (w, wt), (b, bt) = _pair((4, 3), 0), _pair((5, 3), 1, True), _pair((5,), 2, True)
    with torch.autocast("cpu", dtype=torch.float16):
        want = op(torch, xt, wt, bt)
    with clgrad.autocast("cpu", dtype=clgrad.float16):
        got = op(clgrad, x, w, b)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(
        got.detach().double().numpy(), want.detach().double().numpy(), rtol=2e-3, atol=2e-3
    )
    if want.requires_grad:
        want.float().sum().backward()
        got.float().sum().backward()
        for c, t in ((w, wt), (b, bt)):
            assert (c.grad is None) == (t.grad is None)
            if t.grad is not None:
                assert c.grad.dtype == clgrad.float32
                np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=5e-3, atol=5e-3)


# PyTorch's CUDA lists (aten/src/ATen/autocast_mode.cpp): what each op's result is there
_CUDA_DTYPES = {
    "linear": "float16",
    "matmul": "float16",
    "addmm": "float16",
    "bmm": "float16",
    "softmax_of_linear": "float32",
    "exp_of_linear": "float32",
    "sum_of_linear": "float32",
    "relu_of_linear": "float16",
    "pow_of_linear": "float32",
    "mse_of_linear": "float32",
    "cross_entropy_of_linear": "float32",
    "layer_norm_of_linear": "float32",
    "linear_plus_float32": "float32",
    "float32_elementwise": "float32",
    "float64_stays": "float64",
}


@pytest.mark.parametrize("name", list(_OPS))
def test_opencl_autocast_follows_torchs_cuda_lists(cl_device, name):
    """On an OpenCL device (autocast's "cuda"): the CUDA lists' dtypes, and the values PyTorch
    computes from the same casts (float16 products, float32 after them)."""
    device = cl_device
    if not clgrad.device(device).supports(clgrad.float16):
        pytest.skip(f"{device} has no float16")
    if name == "float64_stays" and not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")
    op = _OPS[name]
    x, xt = _pair((4, 3), 0, device=device)
    (w, wt), (b, bt) = _pair((5, 3), 1, True, device), _pair((5,), 2, True, device)
    with clgrad.autocast("cuda"):
        got = op(clgrad, x, w, b)
    assert str(got.dtype) == f"clgrad.{_CUDA_DTYPES[name]}"
    # torch's reference: its CPU autocast computes the products in float16 as CUDA's does; the
    # ops after them in float32 where CUDA's lists say so
    with torch.autocast("cpu", dtype=torch.float16):
        want = op(torch, xt, wt, bt)
    np.testing.assert_allclose(
        got.detach().cpu().double().numpy(), want.detach().double().numpy(), rtol=5e-3, atol=5e-3
    )
    if got.requires_grad:
        got.float().sum().backward()
        assert w.grad.dtype == clgrad.float32


def test_region_state_nesting_decorator_and_threads():
    assert not clgrad.is_autocast_enabled("cpu") and not clgrad.is_autocast_enabled()
    a = clgrad.ones(2, 2)
    with clgrad.autocast("cpu", dtype=clgrad.float16):
        assert clgrad.is_autocast_enabled("cpu") and clgrad.is_autocast_cpu_enabled()
        assert clgrad.get_autocast_dtype("cpu") == clgrad.float16
        with clgrad.autocast("cpu", enabled=False):
            assert (a @ a).dtype == clgrad.float32
        assert (a @ a).dtype == clgrad.float16
        seen = []
        t = threading.Thread(target=lambda: seen.append((a @ a).dtype))  # its own state
        t.start()
        t.join()
        assert seen == [clgrad.float32]
    assert not clgrad.is_autocast_enabled("cpu") and (a @ a).dtype == clgrad.float32

    @clgrad.autocast("cpu", dtype=clgrad.float16)
    def product(x):
        return x @ x

    assert product(a).dtype == clgrad.float16 and (a @ a).dtype == clgrad.float32
    assert clgrad.get_autocast_dtype("cuda") == clgrad.float16


def test_errors_and_disabled_regions_as_torchs():
    with pytest.raises(ValueError, match="device_type"):
        clgrad.autocast(clgrad.device("cpu"))
    with pytest.raises(RuntimeError):
        clgrad.autocast("xpu2")
    a = clgrad.ones(2, 2)
    # a dtype autocast does not compute in: a warning, and the region is off
    with pytest.warns(UserWarning, match="not supported. Disabling autocast"):
        with clgrad.autocast("cpu", dtype=clgrad.float64):
            assert (a @ a).dtype == clgrad.float32 and not clgrad.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="not supported"), torch.autocast("cpu", torch.float64):
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with clgrad.autocast("cpu", enabled=False):  # disabled on purpose: no warning
            pass


def test_unsafe_binary_cross_entropy_raises_on_opencl(cl_device):
    p = clgrad.full((3,), 0.5, device=cl_device)
    with clgrad.autocast("cuda"), pytest.raises(RuntimeError, match="unsafe to autocast"):
        F.binary_cross_entropy(p, p)


def test_cuda_amp_names_are_deprecated_aliases():
    with pytest.warns(FutureWarning, match="torch.amp.autocast"):
        region = clgrad.cuda.amp.autocast(enabled=False)
    assert isinstance(region, clgrad.amp.autocast) and region.device == "cuda"
    with pytest.warns(FutureWarning, match="torch.amp.GradScaler"):
        scaler = clgrad.cuda.amp.GradScaler(enabled=False)
    assert isinstance(scaler, clgrad.amp.GradScaler) and not scaler.is_enabled()


def _scaler_run(t, device, steps, poison, **scaler_args):
    """A few SGD steps through a GradScaler; the step in ``poison`` gets an inf in a
    gradient (skipped, the scale backs off). Returns the weights, scales and state dict."""
    t.manual_seed(0)
    w = t.nn.Parameter(t.tensor([[0.5, -1.0], [2.0, 0.25]], device=device))
    opt = t.optim.SGD([w], lr=0.1, momentum=0.9)
    scaler = t.amp.GradScaler(device, **scaler_args)
    x = t.tensor([[1.0, 2.0], [3.0, -1.0]], device=device)
    scales = []
    for i in range(steps):
        opt.zero_grad()
        loss = (x @ w).square().mean()
        if i in poison:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return w.detach().cpu().numpy(), scales, scaler.state_dict()


def test_grad_scaler_matches_torch(device):
    args = dict(init_scale=256.0, growth_interval=2)
    got = _scaler_run(clgrad, device, 6, {2}, **args)
    want = _scaler_run(torch, "cpu", 6, {2}, **args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[1] == want[1]
    assert got[2] == want[2]


def test_grad_scaler_protocol_errors_and_state():
    w = clgrad.nn.Parameter(clgrad.ones(2))
    opt = clgrad.optim.SGD([w], lr=0.1)
    scaler = clgrad.amp.GradScaler("cpu", init_scale=8.0)
    assert scaler.scale(clgrad.ones(2)).tolist() == [8.0, 8.0]
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    assert w.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    other = clgrad.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == 8.0 and other.state_dict() == scaler.state_dict()
    off = clgrad.amp.GradScaler("cpu", enabled=False)
    assert off.scale(w) is w and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(AssertionError):  # (PyTorch's assert)
        clgrad.amp.GradScaler("cpu", growth_factor=0.5)
    with pytest.raises(AssertionError):
        clgrad.amp.GradScaler("cpu", backoff_factor=1.0)
    # the scale stops growing where float32 would overflow (PyTorch keeps it in a float32)
    top = clgrad.amp.GradScaler("cpu", init_scale=2.0**127, growth_interval=1)
    w = clgrad.nn.Parameter(clgrad.ones(1))
    opt = clgrad.optim.SGD([w], lr=0.0)
    for _ in range(2):
        top.scale(w.sum()).backward()
        top.step(opt)
        top.update()
        w.grad = None
    assert top.get_scale() == 2.0**127


def _custom_function(lib, device_type, cast_inputs):
    seen = {}

    class Scale(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type=device_type, cast_inputs=cast_inputs)
        def forward(ctx, x, w):
            seen["forward"] = (x.dtype, (x @ w).dtype)
            ctx.save_for_backward(x, w)
            return x @ w

        @staticmethod
        @lib.amp.custom_bwd(device_type=device_type)
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            seen["backward"] = (g @ w.T).dtype
            return g @ w.T, x.T @ g

    return Scale, seen


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_bwd_match_torch(device, cast_inputs):
    """custom_fwd records the autocast state (and with cast_inputs casts the inputs and turns
    autocast off inside forward); custom_bwd runs backward under forward's state."""
    found = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        device_type = "cpu" if dev == "cpu" else "cuda"
        cast = None if cast_inputs is None else getattr(lib, cast_inputs)
        fn, seen = _custom_function(lib, device_type, cast)
        x = lib.ones(2, 3, device=dev, requires_grad=True)
        w = lib.ones(3, 2, device=dev, requires_grad=True)
        with lib.autocast(device_type, dtype=lib.float16):
            out = fn.apply(x, w)
        out.float().sum().backward()
        names = [str(d).split(".")[-1] for d in (*seen["forward"], seen["backward"], out.dtype)]
        found.append(names)
        assert x.grad.dtype == x.dtype
    assert found[1] == found[0]
    with pytest.raises(ValueError):
        clgrad.amp.custom_fwd(device_type=None)


def test_top_level_grad_scaler():
    """``torch.GradScaler`` is ``torch.amp.GradScaler`` (PyTorch 2.3+)."""
    assert clgrad.GradScaler is clgrad.amp.GradScaler
    assert torch.GradScaler is torch.amp.GradScaler
