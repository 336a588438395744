"""clgrad.nn: Module semantics, every layer and functional op against NumPy references,
gradcheck in float64 of every differentiable functional, and short training runs."""

import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from conftest import assert_close, supports

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F
import clgrad.optim as optim
from clgrad.autograd import gradcheck

RNG = np.random.default_rng(1234)


def t(a, device, dtype=clgrad.float32, requires_grad=False):
    return clgrad.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=requires_grad)


def randn(*shape):
    return RNG.normal(size=shape)


def need64(device):
    if not supports(device, clgrad.float64):
        pytest.skip("no float64 on this device")


def check_grad(fn, inputs, device):
    """gradcheck of sum(fn(*inputs) * fixed random weights), inputs as float64 leaves.

    Arrays become float64 leaves that require grad; tensors pass through as they are.
    """
    need64(device)
    xs = [
        clgrad.tensor(a, dtype=clgrad.float64, device=device, requires_grad=True)
        if isinstance(a, np.ndarray)
        else a
        for a in inputs
    ]
    weights = {}

    def scalar(*args):
        out = fn(*args)
        if "w" not in weights:
            weights["w"] = clgrad.tensor(
                RNG.normal(size=tuple(out.shape)), dtype=out.dtype, device=device
            )
        return (out * weights["w"]).sum()

    # (a GPU adds overlapping contributions in the order its work-items finish: a repeated
    # backward may differ in the last bits, as PyTorch's CUDA scatter-adds do)
    assert gradcheck(scalar, xs, nondet_tol=1e-12)


# ---- NumPy references ------------------------------------------------------------------------
def conv_ref(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    per = o // groups
    for oc in range(o):
        g = oc // per
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dil[0], j * dil[1]
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    r0 : r0 + stride[0] * (oh - 1) + 1 : stride[0],
                    c0 : c0 + stride[1] * (ow - 1) + 1 : stride[1],
                ]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
    return out if b is None else out + b.reshape(1, o, 1, 1)


def pool_ref(x, k, s, p, op, pad_value):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=pad_value)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = op(xp[:, :, i * s : i * s + k, j * s : j * s + k], axis=(2, 3))
    return out


def log_softmax_ref(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# ---- Module semantics ------------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.BatchNorm1d(4)])
        self.scale = nn.Parameter(clgrad.ones(1))
        self.register_buffer("steps", clgrad.zeros((), dtype=clgrad.int64))
        self.register_buffer("scratch", clgrad.zeros(2), persistent=False)
        self.plain = clgrad.zeros(2)  # a plain attribute: not registered

    def forward(self, x):
        x = self.act(self.fc1(x))
        for b in self.blocks:
            x = b(x)
        return x * self.scale


def test_parameter_is_a_tensor():
    p = nn.Parameter(clgrad.zeros(2, 3))
    assert isinstance(p, nn.Parameter) and isinstance(p, clgrad.Tensor)
    assert p.requires_grad and p.is_leaf
    assert not nn.Parameter(clgrad.zeros(2), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not isinstance(p * 2, nn.Parameter) and not isinstance(p.detach(), nn.Parameter)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(clgrad.zeros(2, dtype=clgrad.int64))


def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == [
        "scale",
        "fc1.weight",
        "fc1.bias",
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
        "blocks.1.bias",
    ]
    assert len(list(net.parameters())) == 7
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "blocks"]
    assert [n for n, _ in net.named_modules()] == [
        "",
        "fc1",
        "act",
        "blocks",
        "blocks.0",
        "blocks.1",
    ]
    assert [n for n, _ in net.named_buffers()] == [
        "steps",
        "scratch",
        "blocks.1.running_mean",
        "blocks.1.running_var",
        "blocks.1.num_batches_tracked",
    ]
    assert list(net.state_dict()) == [
        "scale",
        "steps",
        "fc1.weight",
        "fc1.bias",
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
        "blocks.1.bias",
        "blocks.1.running_mean",
        "blocks.1.running_var",
        "blocks.1.num_batches_tracked",
    ]
    assert isinstance(net.state_dict(), OrderedDict)
    assert not net.state_dict()["fc1.weight"].requires_grad
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight
    # shared modules and parameters are listed once
    shared = nn.Sequential(net.fc1, net.fc1)
    assert len(list(shared.parameters())) == 2
    with pytest.raises(TypeError, match="Parameter or None"):
        net.fc1.weight = clgrad.zeros(4, 3)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = net.nope
    del net.scale
    assert "scale" not in dict(net.named_parameters())
    with pytest.raises(KeyError, match="already exists"):
        net.register_buffer("fc1", clgrad.zeros(1))


def test_train_eval_zero_grad_apply_hooks():
    net = Net()
    assert net.training and net.blocks[1].training
    assert net.eval() is net
    assert not net.training and not net.blocks[1].training
    net.train()
    assert net.blocks[1].training
    net(clgrad.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "BatchNorm1d", "ModuleList", "Net"]
    calls = []
    h = net.fc1.register_forward_hook(lambda m, args, out: calls.append(out.shape))
    net(clgrad.randn(2, 3))
    h.remove()
    net(clgrad.randn(2, 3))
    assert calls == [clgrad.Size([2, 4])]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_repr_like_pytorch():
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32, 10, bias=False),
        nn.Dropout(0.25),
        nn.LayerNorm(10),
    )
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
        "  (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)\n"
        "  (2): ReLU()\n"
        "  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
        "  (4): Flatten(start_dim=1, end_dim=-1)\n"
        "  (5): Linear(in_features=32, out_features=10, bias=False)\n"
        "  (6): Dropout(p=0.25, inplace=False)\n"
        "  (7): LayerNorm((10,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        ")"
    )
    assert repr(nn.Sequential(nn.Sequential(nn.Tanh()))) == (
        "Sequential(\n  (0): Sequential(\n    (0): Tanh()\n  )\n)"
    )


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and seq(clgrad.randn(5, 2)).shape == (5, 1)
    named = nn.Sequential(OrderedDict([("inp", nn.Linear(2, 2)), ("out", nn.Tanh())]))
    assert list(named.state_dict()) == ["inp.weight", "inp.bias"]
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.insert(0, nn.ReLU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "Linear", "Linear", "Linear"]
    assert len(list(ml.parameters())) == 6
    md = nn.ModuleDict({"a": nn.Linear(1, 2)})
    assert "a" in md and list(md.state_dict()) == ["a.weight", "a.bias"]
    with pytest.raises(IndexError):
        seq[7]


def test_state_dict_round_trip_and_errors():
    a, b = Net(), Net()
    a(clgrad.randn(6, 3))  # moves a's running statistics
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=name)
    sd = a.state_dict()
    del sd["fc1.bias"]
    sd["extra"] = clgrad.zeros(1)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(sd)
    msg = str(e.value)
    assert "Error(s) in loading state_dict for Net" in msg
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra"' in msg
    result = b.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc1.bias"] and result.unexpected_keys == ["extra"]
    fresh = Net()
    w = fresh.fc1.weight
    fresh.load_state_dict(a.state_dict(), assign=True)
    # a new Parameter over the state dict's tensor, as PyTorch's
    assert fresh.fc1.weight is not w and fresh.fc1.weight.requires_grad
    assert isinstance(fresh.fc1.weight, nn.Parameter)
    assert fresh.fc1.weight._storage is a.fc1.weight._storage
    sd = a.state_dict()
    sd["fc1.weight"] = clgrad.zeros(2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight"):
        b.load_state_dict(sd)


def test_module_to_device_and_dtype(device):
    net = Net()
    net(clgrad.randn(4, 3)).sum().backward()
    w = net.fc1.weight
    before = w.detach().numpy().copy()
    assert net.to(device) is net
    assert net.fc1.weight is w  # moved in place
    assert w.device == clgrad.device(device) and w.grad.device == clgrad.device(device)
    assert net.blocks[1].running_mean.device == clgrad.device(device)
    assert isinstance(w, nn.Parameter) and w.requires_grad and w.is_leaf
    np.testing.assert_array_equal(w.detach().cpu().numpy(), before)
    out = net(clgrad.randn(4, 3, device=device))
    assert out.device == clgrad.device(device)
    if supports(device, clgrad.float64):
        net.to(clgrad.float64)
        assert w.dtype == clgrad.float64 and w.grad.dtype == clgrad.float64
        assert net.steps.dtype == clgrad.int64  # integer buffers keep their dtype
        assert net(clgrad.randn(4, 3, dtype=clgrad.float64, device=device)).dtype == clgrad.float64
    net.to("cpu")
    assert w.device == clgrad.device("cpu")


def test_module_to_memory_format():
    """``model.to(memory_format=torch.channels_last)``, a CNN script's speed idiom, runs (the
    layout stays row-major, as Tensor.to's); a memory format that is none is torch's
    TypeError."""
    for m in (torch, clgrad):
        conv = m.nn.Conv2d(3, 4, 3)
        w = conv.weight
        assert conv.to(memory_format=m.channels_last) is conv and conv.weight is w
        with pytest.raises(TypeError):
            conv.to(memory_format=1)


def test_load_state_dict_across_devices(device):
    src = nn.Linear(3, 2)
    dst = nn.Linear(3, 2).to(device)
    dst.load_state_dict(src.state_dict())
    assert dst.weight.device == clgrad.device(device)
    x = clgrad.randn(4, 3)
    assert_close(dst(x.to(device)), src(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_clip_grad(device):
    a = nn.Parameter(clgrad.zeros(2, device=device))
    b = nn.Parameter(clgrad.zeros(1, device=device))
    a.grad = t([3.0, 0.0], device)
    b.grad = t([4.0], device)
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    assert a.grad.tolist() == pytest.approx([0.6, 0.0]) and b.grad.tolist() == pytest.approx([0.8])
    assert nn.utils.clip_grad_norm_([a, b], 10.0, norm_type="inf").item() == pytest.approx(0.8)
    assert a.grad.tolist() == pytest.approx([0.6, 0.0])  # under the limit: unchanged
    nn.utils.clip_grad_value_([a, b], 0.7)
    assert b.grad.tolist() == pytest.approx([0.7])
    vec = nn.utils.parameters_to_vector([a, b])
    assert vec.shape == (3,)
    nn.utils.vector_to_parameters(t([1.0, 2.0, 3.0], device), [a, b])
    assert a.tolist() == [1.0, 2.0] and b.tolist() == [3.0]


def test_deepcopy_module(device):
    import copy

    net = Net().to(device)
    net(clgrad.randn(4, 3, device=device)).sum().backward()
    twin = copy.deepcopy(net)
    assert isinstance(twin.fc1.weight, nn.Parameter) and twin.fc1.weight is not net.fc1.weight
    assert twin.fc1.weight.device == clgrad.device(device)
    assert twin.fc1.weight.grad is None  # as PyTorch's Parameter.__deepcopy__
    with clgrad.no_grad():
        twin.fc1.weight.fill_(0.0)
    assert net.fc1.weight.abs().sum().item() > 0
    x = clgrad.randn(3, 3, device=device)
    net.eval()
    assert twin.eval()(x).shape == net(x).shape


# ---- initialization --------------------------------------------------------------------------
def test_default_inits(device):
    lin = nn.Linear(50, 40, device=device)
    bound = 1 / math.sqrt(50)
    w, b = lin.weight.detach().cpu().numpy(), lin.bias.detach().cpu().numpy()
    assert lin.weight.device == clgrad.device(device)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound  # uniform(-b, b) has std b/sqrt(3)
    conv = nn.Conv2d(4, 6, 3, device=device)
    cb = 1 / math.sqrt(4 * 9)
    assert np.abs(conv.weight.detach().cpu().numpy()).max() <= cb
    assert np.abs(conv.bias.detach().cpu().numpy()).max() <= cb
    emb = nn.Embedding(300, 20, padding_idx=2, device=device).weight.detach().cpu().numpy()
    assert abs(emb.std() - 1) < 0.05 and (emb[2] == 0).all()
    bn = nn.BatchNorm2d(3, device=device)
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    assert bn.running_var.tolist() == [1, 1, 1] and bn.num_batches_tracked.item() == 0


def test_init_functions(device):
    assert nn.init.calculate_gain("relu") == math.sqrt(2)
    assert nn.init.calculate_gain("tanh") == 5 / 3
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert nn.init.calculate_gain("conv2d") == 1
    with pytest.raises(ValueError):
        nn.init.calculate_gain("nope")
    p = nn.Parameter(clgrad.empty(200, 100, device=device))
    nn.init.xavier_uniform_(p)
    a = p.detach().cpu().numpy()
    assert np.abs(a).max() <= math.sqrt(6 / 300) and p.grad_fn is None and p.is_leaf
    nn.init.kaiming_normal_(p, mode="fan_out", nonlinearity="relu")
    assert abs(p.detach().cpu().numpy().std() - math.sqrt(2 / 200)) < 0.01
    nn.init.xavier_normal_(p, gain=2.0)
    assert abs(p.detach().cpu().numpy().std() - 2 * math.sqrt(2 / 300)) < 0.01
    nn.init.kaiming_uniform_(p, a=0, nonlinearity="relu")
    assert np.abs(p.detach().cpu().numpy()).max() <= math.sqrt(6 / 100)
    nn.init.normal_(p, 3.0, 0.5)
    assert abs(p.detach().cpu().numpy().mean() - 3) < 0.01
    nn.init.uniform_(p, -2, -1)
    a = p.detach().cpu().numpy()
    assert a.min() >= -2 and a.max() <= -1
    nn.init.constant_(p, 0.25)
    assert (p.detach().cpu().numpy() == 0.25).all()
    nn.init.zeros_(p)
    assert p.abs().sum().item() == 0
    nn.init.ones_(p)
    assert p.sum().item() == 20000 and p.device == clgrad.device(device) and p.requires_grad
    nn.init.trunc_normal_(p, std=1.0, a=-1.0, b=1.5)
    a = p.detach().cpu().numpy()
    assert a.min() >= -1 and a.max() <= 1.5 and a.std() > 0.4
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(clgrad.empty(3))
    clgrad.manual_seed(3)
    x = nn.init.normal_(clgrad.empty(5, device=device)).tolist()
    clgrad.manual_seed(3)
    assert nn.init.normal_(clgrad.empty(5, device=device)).tolist() == x


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (6, 2, 2)])
def test_orthogonal_init(device, shape):
    w = nn.init.orthogonal_(nn.Parameter(clgrad.empty(*shape, device=device)), gain=2.0)
    m = w.detach().cpu().numpy().reshape(shape[0], -1)
    small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(small, 4 * np.eye(len(small)), atol=1e-5)
    assert w.is_leaf and w.requires_grad and w.device == clgrad.device(device)
    with pytest.raises(ValueError):
        nn.init.orthogonal_(clgrad.empty(3))


def test_dirac_and_sparse_init(device):
    import torch

    got = nn.init.dirac_(clgrad.empty(4, 2, 3, 3, device=device), groups=2).tolist()
    assert got == torch.nn.init.dirac_(torch.empty(4, 2, 3, 3), groups=2).tolist()
    w = nn.init.sparse_(clgrad.empty(10, 4, device=device), sparsity=0.25)
    assert (w == 0).sum(0).tolist() == [3, 3, 3, 3]
    for bad in (
        lambda: nn.init.dirac_(clgrad.empty(3, 3)),
        lambda: nn.init.sparse_(clgrad.empty(3), 0.1),
    ):
        with pytest.raises(ValueError):
            bad()


# ---- linear, conv, pooling -------------------------------------------------------------------
def test_linear(device):
    x, w, b = randn(2, 3, 4), randn(5, 4), randn(5)
    out = F.linear(t(x, device), t(w, device), t(b, device))
    assert_close(out, x @ w.T + b, rtol=1e-5, atol=1e-5)
    lin = nn.Linear(4, 5, bias=False).to(device)
    assert lin.bias is None and "bias" in lin._parameters
    assert_close(
        lin(t(x[0, 0], device)), lin.weight.detach().cpu().numpy() @ x[0, 0], rtol=1e-5, atol=1e-5
    )
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(t(randn(2, 3), device), t(w, device))
    check_grad(F.linear, [randn(2, 3), randn(2, 3), randn(2)], device)


def test_bilinear_and_normalize(device):
    x1, x2, w, b = randn(2, 3), randn(2, 4), randn(5, 3, 4), randn(5)
    bl = nn.Bilinear(3, 4, 5).to(device)
    bl.load_state_dict({"weight": t(w, device), "bias": t(b, device)})
    assert_close(
        bl(t(x1, device), t(x2, device)),
        np.einsum("ni,kij,nj->nk", x1, w, x2) + b,
        rtol=1e-4,
        atol=1e-5,
    )
    v = randn(3, 4)
    assert_close(
        F.normalize(t(v, device), dim=1),
        v / np.linalg.norm(v, axis=1, keepdims=True),
        rtol=1e-5,
        atol=1e-6,
    )
    check_grad(lambda a: F.normalize(a, dim=0), [randn(3, 2)], device)


def test_bilinear_keeps_an_integer_type(device):
    # torch's bilinear of int32 operands is int32 (its inner sum was promoted to int64)
    a, b = clgrad.ones(2, 3, dtype=clgrad.int32, device=device), clgrad.arange(8, device=device)
    w = clgrad.ones(5, 3, 4, dtype=clgrad.int32, device=device)
    y = F.bilinear(a, b.reshape(2, 4).int(), w)
    assert y.dtype == clgrad.int32 and y.tolist() == [[18] * 5, [66] * 5]


CONV_CASES = [  # (N, C, H, W, O, k, stride, padding, dilation, groups, bias)
    (2, 3, 7, 6, 4, 3, 1, 1, 1, 1, True),
    (2, 4, 9, 8, 6, (3, 2), (2, 1), (1, 0), (2, 1), 2, False),
    (1, 2, 5, 5, 2, 2, 2, 0, 1, 1, True),
    (2, 4, 6, 6, 4, 3, 1, 2, 1, 4, True),  # depthwise
    (1, 3, 4, 4, 5, 1, 1, 0, 1, 1, True),  # 1x1
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv2d_forward(device, case):
    n, c, h, w, o, k, s, p, d, g, bias = CONV_CASES[case]
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    x, wt = randn(n, c, h, w), randn(o, c // g, *pair(k))
    b = randn(o) if bias else None
    ref = conv_ref(x, wt, b, pair(s), pair(p), pair(d), g)
    out = F.conv2d(t(x, device), t(wt, device), t(b, device) if bias else None, s, p, d, g)
    assert out.is_contiguous()
    assert_close(out, ref, rtol=1e-4, atol=1e-4)


def test_conv2d_module_padding_modes(device):
    x = t(randn(1, 2, 5, 6), device)
    conv = nn.Conv2d(2, 3, 3, padding="same").to(device)
    w, b = conv.weight.detach().cpu().numpy(), conv.bias.detach().cpu().numpy()
    assert_close(
        conv(x), conv_ref(x.cpu().numpy(), w, b, (1, 1), (1, 1), (1, 1), 1), rtol=1e-4, atol=1e-4
    )
    assert nn.Conv2d(2, 3, (2, 4), padding="same").to(device)(x).shape == (1, 3, 5, 6)
    assert conv(x[0]).shape == (3, 5, 6)  # unbatched
    refl = nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect").to(device)
    refl.load_state_dict(conv.state_dict())
    xr = np.pad(x.cpu().numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    assert_close(refl(x), conv_ref(xr, w, b, (1, 1), (0, 0), (1, 1), 1), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="expected input.*to have 2 channels, but got 3"):
        F.conv2d(t(randn(1, 3, 5, 5), device), conv.weight.detach())
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(t(randn(1, 2, 2, 2), device), conv.weight.detach())
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(2, 3, 3, stride=2, padding="same")


def test_conv1d(device):
    x, w, b = randn(2, 3, 9), randn(4, 3, 3), randn(4)
    out = F.conv1d(t(x, device), t(w, device), t(b, device), stride=2, padding=1)
    ref = conv_ref(x[:, :, None], w[:, :, None], b, (1, 2), (0, 1), (1, 1), 1)[:, :, 0]
    assert_close(out, ref, rtol=1e-4, atol=1e-4)
    assert nn.Conv1d(3, 4, 3, padding=1).to(device)(t(x, device)).shape == (2, 4, 9)


def test_unfold_fold(device):
    x = randn(2, 3, 5, 4)
    cols = F.unfold(t(x, device), (2, 3), padding=1, stride=(2, 1))
    ref = np.lib.stride_tricks.sliding_window_view(
        np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (2, 3), axis=(2, 3)
    )[:, :, ::2, :]
    n, c, oh, ow = ref.shape[:4]
    assert_close(cols, ref.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * 6, oh * ow))
    back = F.fold(cols, (5, 4), (2, 3), padding=1, stride=(2, 1))
    counts = F.fold(
        F.unfold(clgrad.ones(1, 1, 5, 4, device=device), (2, 3), padding=1, stride=(2, 1)),
        (5, 4),
        (2, 3),
        padding=1,
        stride=(2, 1),
    )
    assert_close(back, x * counts.cpu().numpy(), rtol=1e-5, atol=1e-5)


def test_conv2d_gradcheck(device):
    check_grad(
        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
        [randn(1, 2, 5, 5), randn(4, 1, 3, 3), randn(4)],
        device,
    )
    check_grad(
        lambda x, w: F.conv2d(x, w, None, stride=(1, 2), padding=(2, 1), dilation=2),
        [randn(1, 1, 4, 5), randn(2, 1, 2, 2)],
        device,
    )


def test_max_pool2d(device):
    x = randn(2, 3, 7, 6)
    assert_close(F.max_pool2d(t(x, device), 2), pool_ref(x, 2, 2, 0, np.max, -np.inf))
    assert_close(nn.MaxPool2d(3, 2, 1)(t(x, device)), pool_ref(x, 3, 2, 1, np.max, -np.inf))
    out = F.max_pool2d(t(x, device), 2, ceil_mode=True)
    assert out.shape == (2, 3, 4, 3)
    assert_close(out[:, :, 3, :], x[:, :, 6, :].reshape(2, 3, 3, 2).max(-1))
    v, idx = F.max_pool2d(t(x, device), 3, 2, 1, return_indices=True)
    assert idx.dtype == clgrad.int64
    assert_close(
        v,
        np.take_along_axis(x.reshape(2, 3, -1), idx.cpu().numpy().reshape(2, 3, -1), 2).reshape(
            v.shape
        ),
    )
    assert F.max_pool2d(t(x[0], device), 2).shape == (3, 3, 3)  # unbatched
    # the gradient goes to one element per window, also with ties
    z = clgrad.zeros(1, 1, 4, 4, device=device, requires_grad=True)
    F.max_pool2d(z, 2).sum().backward()
    assert z.grad.sum().item() == 4 and z.grad.cpu().numpy()[0, 0, ::2, ::2].sum() == 4
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(t(x, device), 2, padding=2)
    check_grad(lambda a: F.max_pool2d(a, 3, 2, 1, ceil_mode=True), [randn(1, 2, 5, 5)], device)
    check_grad(lambda a: F.max_pool2d(a, 2, 1, dilation=2), [randn(1, 1, 5, 4)], device)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_pool_tiling_windows_gradients(device, nd):
    """Windows that tile the input (stride = kernel: one pass writes each element's gradient,
    Backend.window_put) against PyTorch, and the gradient of that gradient by finite
    differences (float64)."""
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
    tpool = getattr(torch.nn.functional, pool.__name__)
    x = randn(2, 3, *(6,) * nd).astype(np.float32)
    kernel = (2, 3, 1)[:nd] if nd > 1 else 3
    a = clgrad.tensor(x, device=device, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    g = randn(*tpool(b, kernel).shape).astype(np.float32)
    pool(a, kernel).backward(clgrad.tensor(g, device=device))
    tpool(b, kernel).backward(torch.tensor(g))
    assert_close(a.grad, b.grad.numpy())
    if supports(device, clgrad.float64):
        x64 = clgrad.tensor(randn(1, 2, *(4,) * nd), device=device, dtype=clgrad.float64)
        assert clgrad.autograd.gradgradcheck(lambda v: pool(v, 2), (x64.requires_grad_(),))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8"])
@pytest.mark.parametrize(
    "nd, kernel, stride, padding, dilation, ceil",
    [
        (2, 2, 2, 0, 1, False),
        (2, 3, 2, 1, 1, True),
        (2, (2, 3), (1, 2), (1, 0), (2, 1), False),
        (1, 3, 2, 1, 1, False),
        (3, 2, (1, 2, 2), 1, 1, True),
        (2, 9, 3, 0, 1, False),  # 81 elements: walked in loops, not unrolled
    ],
)
def test_max_pool_against_torch(device, dtype, nd, kernel, stride, padding, dilation, ceil):
    """Values, indices (the first largest, or the last NaN: PyTorch's pick) and the gradient of
    max pooling, as PyTorch's, on a strided input."""
    dt = getattr(clgrad, dtype)
    if not supports(device, dt):
        pytest.skip(f"{device} has no {dtype}")
    rng = np.random.default_rng(nd)
    shape = {1: (2, 3, 21), 2: (2, 3, 20, 19), 3: (1, 2, 9, 10, 11)}[nd]
    # small integers: ties in most windows (from 1: see test_max_pool_ties_with_padding)
    x = rng.integers(1, 5, (shape[0], shape[1] * 2, *shape[2:])).astype(np.float64)[:, ::2]
    if dt.is_floating_point:
        x = x + rng.standard_normal(x.shape) / 8
        x.reshape(-1)[5] = np.nan
    x = x.astype(np.dtype(dt.np))
    args = (kernel, stride, padding, dilation, ceil)
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
    tpool = getattr(torch.nn.functional, f"max_pool{nd}d")
    xt = torch.from_numpy(np.array(x))
    if dt.is_floating_point and dtype != "float16":
        xt.requires_grad_()
    vt, it = tpool(xt, *args, return_indices=True)
    xc = clgrad.tensor(np.ascontiguousarray(x), device=device, requires_grad=xt.requires_grad)
    xs = xc.transpose(0, 1).contiguous().transpose(0, 1)  # strided: batch and channels swapped
    v, idx = pool(xs, *args, return_indices=True)
    assert v.dtype == dt and idx.dtype == clgrad.int64 and v.shape == tuple(vt.shape)
    np.testing.assert_array_equal(v.detach().cpu().numpy(), vt.detach().numpy())
    np.testing.assert_array_equal(idx.cpu().numpy(), it.numpy())
    if xt.requires_grad:
        g = rng.standard_normal(tuple(vt.shape)).astype(np.dtype(dt.np))
        vt.backward(torch.from_numpy(g))
        v.backward(clgrad.tensor(g, device=device))
        # where windows overlap an input's gradient is a sum, and a GPU adds in another order
        # than PyTorch's CPU loop: one rounding apart (seen on NVIDIA's driver)
        np.testing.assert_allclose(xc.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.xfail(strict=True, reason="padding holds the dtype's lowest value, so it ties")
def test_max_pool_ties_with_padding(device):
    """A window whose largest value is its dtype's lowest (0 in uint8) and that starts in the
    padding: PyTorch picks the first element inside the input, clgrad the padded position
    (max pooling pads with the lowest value, then reduces the windows)."""
    x = clgrad.zeros(1, 1, 4, 4, dtype=clgrad.uint8, device=device)
    _, idx = F.max_pool2d(x, 2, 2, 1, return_indices=True)
    assert idx.min().item() >= 0


def test_avg_pool2d(device):
    x = randn(2, 3, 7, 6)
    assert_close(
        F.avg_pool2d(t(x, device), 2), pool_ref(x, 2, 2, 0, np.mean, 0.0), rtol=1e-5, atol=1e-6
    )
    assert_close(
        nn.AvgPool2d(3, 2, 1)(t(x, device)),
        pool_ref(x, 3, 2, 1, np.mean, 0.0),
        rtol=1e-5,
        atol=1e-6,
    )
    # count_include_pad=False divides by the number of real elements
    ones = F.avg_pool2d(clgrad.ones(1, 1, 4, 4, device=device), 3, 2, 1, count_include_pad=False)
    assert_close(ones, np.ones((1, 1, 2, 2)), rtol=1e-6, atol=1e-6)
    sums = pool_ref(x, 3, 2, 1, np.sum, 0.0)
    cnt = pool_ref(np.ones_like(x), 3, 2, 1, np.sum, 0.0)
    assert_close(
        F.avg_pool2d(t(x, device), 3, 2, 1, count_include_pad=False),
        sums / cnt,
        rtol=1e-5,
        atol=1e-6,
    )
    assert_close(
        F.avg_pool2d(t(x, device), 2, divisor_override=3),
        pool_ref(x, 2, 2, 0, np.sum, 0.0) / 3,
        rtol=1e-5,
        atol=1e-6,
    )
    assert F.avg_pool2d(t(x, device), 2, ceil_mode=True).shape == (2, 3, 4, 3)
    check_grad(
        lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        [randn(1, 2, 5, 5)],
        device,
    )


def test_adaptive_avg_pool2d(device):
    x = randn(2, 3, 7, 6)
    assert_close(
        F.adaptive_avg_pool2d(t(x, device), 1), x.mean((2, 3), keepdims=True), rtol=1e-5, atol=1e-6
    )
    assert_close(
        nn.AdaptiveAvgPool2d((1, 3))(t(x, device)),
        x.reshape(2, 3, 7, 3, 2).mean((2, 4))[:, :, None],
        rtol=1e-5,
        atol=1e-6,
    )
    out = F.adaptive_avg_pool2d(t(x, device), (3, 4))
    ref = np.zeros((2, 3, 3, 4))
    for i in range(3):
        for j in range(4):
            r0, r1 = (i * 7) // 3, -(-((i + 1) * 7) // 3)
            c0, c1 = (j * 6) // 4, -(-((j + 1) * 6) // 4)
            ref[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean((2, 3))
    assert_close(out, ref, rtol=1e-5, atol=1e-5)
    assert F.adaptive_avg_pool2d(t(x, device), (None, 2)).shape == (2, 3, 7, 2)
    check_grad(lambda a: F.adaptive_avg_pool2d(a, (2, 3)), [randn(1, 1, 5, 4)], device)


# ---- normalization ---------------------------------------------------------------------------
def test_batch_norm_module(device):
    bn = nn.BatchNorm2d(3, momentum=0.2).to(device)
    x = randn(4, 3, 2, 5) * 3 + 1
    y = bn(t(x, device))
    mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
    ref = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    assert_close(y, ref, rtol=1e-4, atol=1e-4)
    n = 4 * 2 * 5
    assert_close(bn.running_mean, 0.2 * mean, rtol=1e-5, atol=1e-5)
    assert_close(bn.running_var, 0.8 + 0.2 * var * n / (n - 1), rtol=1e-5, atol=1e-5)
    assert bn.num_batches_tracked.item() == 1
    bn(t(x, device))
    assert bn.num_batches_tracked.item() == 2
    bn.eval()
    rm, rv = bn.running_mean.cpu().numpy(), bn.running_var.cpu().numpy()
    with clgrad.no_grad():
        bn.weight.fill_(2.0)
    out = bn(t(x, device))
    assert_close(
        out,
        2 * (x - rm.reshape(1, 3, 1, 1)) / np.sqrt(rv.reshape(1, 3, 1, 1) + 1e-5),
        rtol=1e-4,
        atol=1e-4,
    )
    assert bn.num_batches_tracked.item() == 2  # eval leaves the statistics alone
    # cumulative average with momentum=None
    cum = nn.BatchNorm1d(2, momentum=None, affine=False).to(device)
    a, b = randn(5, 2), randn(5, 2)
    cum(t(a, device))
    cum(t(b, device))
    assert cum.weight is None
    assert_close(cum.running_mean, (a.mean(0) + b.mean(0)) / 2, rtol=1e-5, atol=1e-5)
    # no running statistics: batch statistics in eval too
    free = nn.BatchNorm1d(2, track_running_stats=False).to(device).eval()
    assert free.running_mean is None
    z = randn(6, 2, 3)
    ref = (z - z.mean((0, 2), keepdims=True)) / np.sqrt(z.var((0, 2), keepdims=True) + 1e-5)
    assert_close(free(t(z, device)), ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="expected 4D input"):
        bn(t(randn(2, 3), device))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(2).to(device)(t(randn(1, 2), device))


def test_batch_norm_gradcheck(device):
    check_grad(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        [randn(4, 3, 2), randn(3), randn(3)],
        device,
    )
    need64(device)
    rm = clgrad.tensor(randn(3), dtype=clgrad.float64, device=device)
    rv = clgrad.tensor(np.abs(randn(3)) + 0.5, dtype=clgrad.float64, device=device)
    check_grad(
        lambda x, w: F.batch_norm(x, rm, rv, w, None, training=False),
        [randn(3, 3), randn(3)],
        device,
    )


def test_layer_norm(device):
    x, w, b = randn(2, 3, 4), randn(3, 4), randn(3, 4)
    out = F.layer_norm(t(x, device), (3, 4), t(w, device), t(b, device), eps=1e-3)
    m = x.mean((1, 2), keepdims=True)
    v = x.var((1, 2), keepdims=True)
    assert_close(out, (x - m) / np.sqrt(v + 1e-3) * w + b, rtol=1e-4, atol=1e-4)
    ln = nn.LayerNorm(4).to(device)
    assert_close(
        ln(t(x, device)),
        (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
        rtol=1e-4,
        atol=1e-4,
    )
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(t(x, device), (3,))
    check_grad(
        lambda a, w_, b_: F.layer_norm(a, (4,), w_, b_), [randn(3, 4), randn(4), randn(4)], device
    )


def test_group_norm(device):
    x = randn(2, 4, 3)
    out = nn.GroupNorm(2, 4).to(device)(t(x, device))
    g = x.reshape(2, 2, 6)
    ref = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    assert_close(out, ref.reshape(2, 4, 3), rtol=1e-4, atol=1e-4)


# ---- dropout, embedding, activations ---------------------------------------------------------
def test_dropout(device):
    x = clgrad.ones(200, 100, device=device)
    drop = nn.Dropout(0.3)
    y = drop(x).cpu().numpy()
    zero = (y == 0).mean()
    assert 0.27 < zero < 0.33
    assert np.allclose(y[y != 0], 1 / 0.7)
    drop.eval()
    assert drop(x) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 1.0).abs().sum().item() == 0
    assert F.dropout(x, 0.0) is x
    clgrad.manual_seed(7)
    a = F.dropout(x, 0.5).cpu().numpy()
    clgrad.manual_seed(7)
    np.testing.assert_array_equal(F.dropout(x, 0.5).cpu().numpy(), a)
    g = clgrad.ones(4, 50, device=device, requires_grad=True)
    out = F.dropout(g, 0.5)
    out.sum().backward()
    np.testing.assert_allclose(g.grad.cpu().numpy(), out.detach().cpu().numpy())
    ch = F.dropout2d(clgrad.ones(2, 50, 3, 3, device=device), 0.5).cpu().numpy()
    assert (ch.reshape(2, 50, 9).std(-1) == 0).all()  # whole channels
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_embedding(device):
    emb = nn.Embedding(5, 3, padding_idx=0).to(device)
    w = emb.weight.detach().cpu().numpy()
    idx = clgrad.tensor([[1, 2, 1], [0, 4, 4]], device=device)
    out = emb(idx)
    assert out.shape == (2, 3, 3)
    assert_close(out, w[idx.cpu().numpy()])
    out.sum().backward()
    assert_close(emb.weight.grad, np.array([[0] * 3, [2] * 3, [1] * 3, [0] * 3, [2] * 3]))
    with pytest.raises(IndexError, match="index out of range"):
        emb(clgrad.tensor([5], device=device))
    with pytest.raises(RuntimeError, match="indices"):
        emb(clgrad.tensor([1.0], device=device))
    pre = nn.Embedding.from_pretrained(clgrad.eye(3, device=device))
    assert not pre.weight.requires_grad
    assert pre(clgrad.tensor([2], device=device)).tolist() == [[0, 0, 1]]
    mn = nn.Embedding(4, 2, max_norm=1.0).to(device)
    rows = mn(clgrad.tensor([0, 1], device=device)).detach().cpu().numpy()
    assert (np.linalg.norm(rows, axis=1) <= 1 + 1e-5).all()
    need64(device)
    index = clgrad.tensor([[0, 2], [2, 3]], device=device)
    check_grad(lambda wt: F.embedding(index, wt), [randn(4, 3)], device)


ACTIVATIONS = {
    "ReLU": (nn.ReLU(), lambda x: np.maximum(x, 0)),
    "GELU": (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    "GELU_tanh": (
        nn.GELU("tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "SiLU": (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    "Tanh": (nn.Tanh(), np.tanh),
    "Sigmoid": (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    "LeakyReLU": (nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    "ELU": (nn.ELU(), lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "Softplus": (nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    "Softmax": (nn.Softmax(dim=1), lambda x: np.exp(log_softmax_ref(x, 1))),
    "LogSoftmax": (nn.LogSoftmax(dim=0), lambda x: log_softmax_ref(x, 0)),
    "Identity": (nn.Identity(), lambda x: x),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations(device, name):
    module, ref = ACTIVATIONS[name]
    x = randn(3, 5) * 3
    assert_close(module(t(x, device)), ref(x), rtol=1e-4, atol=1e-5)


def test_softmax_implicit_dim_warns(device):
    x = t(randn(2, 3), device)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    assert_close(y, np.exp(log_softmax_ref(x.cpu().numpy(), 1)), rtol=1e-5, atol=1e-6)
    with pytest.warns(UserWarning, match="log_softmax"):
        assert F.log_softmax(t(randn(2, 3, 4), device)).shape == (2, 3, 4)


def test_softmax_stability(device):
    big = t([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4]], device)
    sm = F.softmax(big, dim=1).cpu().numpy()
    assert np.isfinite(sm).all()
    np.testing.assert_allclose(sm, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]], atol=1e-6)
    ls = F.log_softmax(big, dim=1).cpu().numpy()
    assert np.isfinite(ls).all() and ls[0, 0] == 0 and ls[0, 1] == -1e4
    ce = F.cross_entropy(big, clgrad.tensor([1, 0], device=device))
    assert math.isclose(ce.item(), (1e4 + math.log(3)) / 2, rel_tol=1e-5)


# ---- losses ----------------------------------------------------------------------------------
def ce_ref(x, y, weight=None, ignore=-100, reduction="mean", smoothing=0.0):
    logp = log_softmax_ref(x, 1)
    c = x.shape[1]
    w = np.ones(c) if weight is None else weight
    valid = y != ignore
    ys = np.where(valid, y, 0)
    picked = np.take_along_axis(logp, ys[:, None], 1)[:, 0]
    wt = w[ys] * valid
    nll = -picked * wt
    smooth = -(logp * w).sum(1) * valid
    loss = (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(device, reduction):
    x = randn(6, 4) * 2
    y = np.array([0, 3, 1, 1, 2, 3])
    w = np.array([0.5, 2.0, 1.0, 1.5])
    xt, yt, wt = t(x, device), clgrad.tensor(y, device=device), t(w, device)
    assert_close(
        F.cross_entropy(xt, yt, reduction=reduction),
        ce_ref(x, y, reduction=reduction),
        rtol=1e-5,
        atol=1e-5,
    )
    assert_close(
        F.cross_entropy(xt, yt, wt, reduction=reduction),
        ce_ref(x, y, w, reduction=reduction),
        rtol=1e-5,
        atol=1e-5,
    )
    assert_close(
        nn.CrossEntropyLoss(wt, ignore_index=1, reduction=reduction, label_smoothing=0.2)(xt, yt),
        ce_ref(x, y, w, 1, reduction, 0.2),
        rtol=1e-5,
        atol=1e-5,
    )
    assert_close(
        F.cross_entropy(xt, yt, ignore_index=3, reduction=reduction, label_smoothing=0.1),
        ce_ref(x, y, None, 3, reduction, 0.1),
        rtol=1e-5,
        atol=1e-5,
    )


def test_cross_entropy_shapes_and_targets(device):
    x = randn(2, 3, 4, 5)  # (N, C, d1, d2)
    y = RNG.integers(0, 3, size=(2, 4, 5))
    flat_x = x.transpose(0, 2, 3, 1).reshape(-1, 3)
    assert_close(
        F.cross_entropy(t(x, device), clgrad.tensor(y, device=device), label_smoothing=0.1),
        ce_ref(flat_x, y.reshape(-1), smoothing=0.1),
        rtol=1e-5,
        atol=1e-5,
    )
    none = F.cross_entropy(t(x, device), clgrad.tensor(y, device=device), reduction="none")
    assert none.shape == (2, 4, 5)
    # unbatched
    v = randn(4)
    assert_close(
        F.cross_entropy(t(v, device), clgrad.tensor(2, device=device)),
        -log_softmax_ref(v, 0)[2],
        rtol=1e-5,
        atol=1e-5,
    )
    # probability targets
    p = np.exp(log_softmax_ref(randn(3, 4), 1))
    xs = randn(3, 4)
    assert_close(
        F.cross_entropy(t(xs, device), t(p, device)),
        -(log_softmax_ref(xs, 1) * p).sum(1).mean(),
        rtol=1e-5,
        atol=1e-5,
    )
    # wrong targets say what was expected and what came
    xt = t(randn(3, 4), device)
    with pytest.raises(RuntimeError, match="expected target of dtype int64.*got int32"):
        F.cross_entropy(xt, clgrad.tensor([0, 1, 2], dtype=clgrad.int32, device=device))
    with pytest.raises(RuntimeError, match="int64.*got float32.*\\[3, 4\\], got \\[3\\]"):
        F.cross_entropy(xt, t([0, 1, 2], device))
    with pytest.raises(
        ValueError, match="Expected input batch_size \\(3\\) to match target batch_size \\(2\\)"
    ):
        F.cross_entropy(xt, clgrad.tensor([0, 1], device=device))
    with pytest.raises(RuntimeError, match="expected target size \\[2, 4, 5\\], got \\[2, 4\\]"):
        F.cross_entropy(t(x, device), clgrad.tensor(y[:, :, 0], device=device))
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.cross_entropy(xt, clgrad.tensor([0, 4, 1], device=device))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(xt, clgrad.tensor([0, 1, 1], device=device), reduction="avg")


def test_target_check_reads_again_only_after_a_write(device, monkeypatch):
    """cross_entropy's target range check reads the device (a wait for queued work): a target
    that passed it is not read again until something writes its storage."""
    logits = clgrad.zeros(2, 3, device=device)
    target = clgrad.tensor([0, 2], device=device)
    F.cross_entropy(logits, target)
    reads = []
    item = clgrad.Tensor.item
    monkeypatch.setattr(clgrad.Tensor, "item", lambda t: reads.append(1) or item(t))
    F.cross_entropy(logits, target)
    assert not reads or device == "cpu"
    target[1] = 3
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        F.cross_entropy(logits, target)
    target[1:].fill_(1)  # through another view of the storage
    F.cross_entropy(logits, target)
    target.copy_(clgrad.tensor([5, 0]))  # from the host
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(logits, target)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):  # a failure is not kept
        F.cross_entropy(logits, target)
    target.fill_(1)
    F.cross_entropy(logits, target)
    with pytest.raises(IndexError, match="Target 1 is out of bounds"):  # fewer classes
        F.cross_entropy(logits[:, :1], target)


def test_cross_entropy_gradcheck(device):
    need64(device)
    y = clgrad.tensor([1, 0, 3], device=device)
    w = clgrad.tensor([1.0, 2.0, 0.5, 1.5], dtype=clgrad.float64, device=device)
    check_grad(
        lambda x: F.cross_entropy(x, y, w, ignore_index=0, label_smoothing=0.1),
        [randn(3, 4)],
        device,
    )
    y2 = clgrad.tensor([[0, 2], [1, 1]], device=device)
    check_grad(lambda x: F.cross_entropy(x, y2, reduction="none"), [randn(2, 3, 2)], device)


def test_nll_loss(device):
    logp = log_softmax_ref(randn(5, 3), 1)
    y = np.array([0, 2, 1, 2, -100])
    w = np.array([1.0, 0.5, 2.0])
    got = F.nll_loss(t(logp, device), clgrad.tensor(y, device=device), t(w, device))
    valid = y != -100
    ys = np.where(valid, y, 0)
    ref = -(logp[np.arange(5), ys] * w[ys] * valid).sum() / (w[ys] * valid).sum()
    assert_close(got, ref, rtol=1e-5, atol=1e-6)
    assert_close(
        nn.NLLLoss(reduction="sum")(t(logp, device), clgrad.tensor(y, device=device)),
        -(logp[np.arange(5), ys] * valid).sum(),
        rtol=1e-5,
        atol=1e-5,
    )
    check_grad(
        lambda a: F.nll_loss(a, clgrad.tensor([0, 2, 1], device=device)), [randn(3, 3)], device
    )


def _nll_pair(device, shape, classes, ignore=-100, weighted=False, dtype="float32"):
    """The same nll_loss inputs for clgrad on ``device`` and for torch: log-probabilities of
    ``shape`` (N, C, *d) or (C,) that require grad, class targets (some ``ignore``), weights."""
    x = RNG.normal(size=shape)
    y = RNG.integers(0, classes, size=(shape[0],) + shape[2:] if len(shape) > 1 else ())
    if len(shape) > 1 and y.size > 1:
        y.flat[:: max(2, y.size // 3)] = ignore if ignore >= 0 or ignore == -100 else y.flat[0]
    w = RNG.uniform(0.5, 2.0, size=classes) if weighted else None
    ours = (
        clgrad.tensor(x, dtype=getattr(clgrad, dtype), device=device, requires_grad=True),
        clgrad.tensor(y, device=device),
        None if w is None else clgrad.tensor(w, dtype=getattr(clgrad, dtype), device=device),
    )
    theirs = (
        torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True),
        torch.tensor(y),
        None if w is None else torch.tensor(w, dtype=getattr(torch, dtype)),
    )
    return ours, theirs


@pytest.mark.parametrize(
    "shape, weighted, ignore",
    [
        ((7, 5), False, -100),
        ((7, 5), True, 2),
        ((5,), True, -100),  # unbatched: a 0-d target
        ((2, 3, 4, 5), True, 1),  # (N, C, d1, d2)
        ((3, 4, 6), False, -100),  # (N, C, d1)
        ((0, 4), True, -100),  # no target
        ((20000, 3), True, 0),  # more targets than one work-group sums
    ],
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_one_kernel_against_torch(device, shape, weighted, ignore, reduction):
    """nll_loss (one kernel each way) against torch: value, dtype, shape, the node's name, the
    gradient, and the gradient's own gradient (``NllLossBackwardBackward0``)."""
    (x, y, w), (tx, ty, tw) = _nll_pair(
        device, shape, shape[-1] if len(shape) == 1 else shape[1], ignore, weighted
    )
    ours = F.nll_loss(x, y, w, ignore_index=ignore, reduction=reduction)
    ref = torch.nn.functional.nll_loss(tx, ty, tw, ignore_index=ignore, reduction=reduction)
    # (torch views a (N, C, d1) input as (N, C, d1, 1) and back: a ViewBackward0 around it)
    views = len(shape) == 3
    assert ours.grad_fn.name() == ref.grad_fn.name() or views and reduction == "none"
    assert ours.dtype == clgrad.float32 and tuple(ours.shape) == tuple(ref.shape)
    assert_close(ours, ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = RNG.normal(size=tuple(ref.shape))
    (gx,) = clgrad.autograd.grad(ours, x, t(g, device), create_graph=True)
    (tgx,) = torch.autograd.grad(ref, tx, torch.tensor(g, dtype=torch.float32), create_graph=True)
    assert_close(gx, tgx.detach().numpy(), rtol=1e-5, atol=1e-6)
    if not gx.numel():
        return
    assert gx.grad_fn.name() == tgx.grad_fn.name() or views
    gg = RNG.normal(size=shape)
    # the gradient is linear in the incoming gradient: its own gradient reaches that
    gt = t(g, device, requires_grad=True)
    (gx,) = clgrad.autograd.grad(ours, x, gt, create_graph=True)
    tgt = torch.tensor(g, dtype=torch.float32, requires_grad=True)
    (tgx,) = torch.autograd.grad(ref, tx, tgt, create_graph=True)
    (ggt,) = clgrad.autograd.grad(gx, gt, t(gg, device))
    (tggt,) = torch.autograd.grad(tgx, tgt, torch.tensor(gg, dtype=torch.float32))
    assert_close(ggt, tggt.numpy(), rtol=1e-5, atol=1e-5)


def test_nll_loss_gradgradcheck(device):
    need64(device)
    (x, y, w), _ = _nll_pair(device, (4, 3, 2), 3, 1, True, "float64")
    for reduction in ("mean", "sum", "none"):

        def fn(a, reduction=reduction):
            return F.nll_loss(a, y, w, ignore_index=1, reduction=reduction)

        assert clgrad.autograd.gradcheck(fn, [x])
        assert clgrad.autograd.gradgradcheck(fn, [x])


def test_nll_loss_edges_and_errors(device):
    """Every target ignored or none at all: NaN for the mean, 0 for the sum, as torch; float16
    in and out; an out-of-range target raises before any kernel reads with it, and a wrong
    weight raises torch's error, changing nothing."""
    x = clgrad.zeros(3, 4, device=device, requires_grad=True)
    ignored = clgrad.full((3,), -100, device=device)
    assert math.isnan(F.nll_loss(x, ignored).item())
    assert F.nll_loss(x, ignored, reduction="sum").item() == 0
    assert math.isnan(F.cross_entropy(clgrad.zeros(0, 4, device=device), ignored[:0]).item())
    if supports(device, clgrad.float16):
        (h, y, w), (th, ty, tw) = _nll_pair(device, (6, 5), 5, 3, True, "float16")
        got = F.cross_entropy(h, y, w, ignore_index=3)
        ref = torch.nn.functional.cross_entropy(th, ty, tw, ignore_index=3)
        assert got.dtype == clgrad.float16
        assert_close(got, ref.detach().float().numpy(), rtol=2e-3, atol=2e-3)
        got.backward()
        ref.backward()
        assert_close(h.grad, th.grad.float().numpy(), rtol=2e-3, atol=2e-3)
    y = clgrad.tensor([0, 1, 2], device=device)
    for other, name in ((clgrad.float64, "Double"), (clgrad.float16, "Half")):
        if supports(device, other):
            with pytest.raises(RuntimeError, match=f"expected scalar type Float but found {name}"):
                F.nll_loss(x, y, clgrad.ones(4, dtype=other, device=device))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.nll_loss(x, y, clgrad.ones(4, device=device, requires_grad=True))
    with clgrad.no_grad():
        F.nll_loss(x, y, clgrad.ones(4, device=device, requires_grad=True))
    with pytest.raises(NotImplementedError, match="nll_loss_out_frame.*'Long'"):
        F.nll_loss(clgrad.zeros(3, 4, dtype=clgrad.int64, device=device), y)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(x, clgrad.tensor([0, 7, -1], device=device))
    assert x.grad is None
    # an unbatched input takes a 0-d cpu target, as torch's
    v = clgrad.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
    F.nll_loss(v, clgrad.tensor(2)).backward()
    assert_close(v.grad, [0.0, 0.0, -1.0])


@pytest.mark.parametrize("kind", ["layer", "batch", "group"])
def test_norms_are_one_node(device, kind):
    """layer_norm, batch_norm (training) and group_norm record PyTorch's one node each;
    values, running statistics, gradients and second gradients as torch's."""
    shape = {"layer": (4, 3, 5), "batch": (6, 3, 2, 2), "group": (4, 6, 5)}[kind]
    x = RNG.normal(size=shape) * 3 + 1
    g = RNG.normal(size=shape)
    features = 5 if kind == "layer" else shape[1]  # the normalized shape, or the channels
    w, b = RNG.normal(size=features), RNG.normal(size=features)

    def run(lib, dev, to):
        xs = [to(a, True) for a in (x, w, b)]
        if kind == "layer":
            y = lib.nn.functional.layer_norm(xs[0], (5,), xs[1], xs[2], 1e-3)
            stats = ()
        elif kind == "group":
            y = lib.nn.functional.group_norm(xs[0], 3, xs[1], xs[2], 1e-3)
            stats = ()
        else:
            stats = (to(np.zeros(3), False), to(np.ones(3), False))
            y = lib.nn.functional.batch_norm(xs[0], *stats, xs[1], xs[2], True, 0.3, 1e-3)
        grads = lib.autograd.grad(y, xs, to(g, False), create_graph=True)
        second = lib.autograd.grad(sum((gr * gr).sum() for gr in grads), xs, allow_unused=True)
        return y, stats, grads, second

    ours = run(clgrad, device, lambda a, rg: t(a, device, requires_grad=rg))
    theirs = run(torch, "cpu", lambda a, rg: torch.tensor(a, dtype=torch.float32, requires_grad=rg))
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name()
    for mine, ref in zip([ours[0], *ours[1], *ours[2]], [theirs[0], *theirs[1], *theirs[2]]):
        assert_close(mine, ref.detach().numpy(), rtol=1e-4, atol=1e-4)
    for mine, ref in zip(ours[3], theirs[3]):
        assert (mine is None) == (ref is None)
        if ref is not None:
            assert_close(mine, ref.numpy(), rtol=1e-3, atol=1e-3)


NORM_CASES = [
    ("layer", (3, 700), "both"),  # a row longer than a work-group
    ("layer", (2, 3, 4, 5), "none"),  # two normalized dims, no weight
    ("layer", (5, 8), "weight"),
    ("batch", (16, 3, 5, 6), "both"),  # a channel over more elements than a work-group
    ("batch", (4, 2), "bias"),  # no spatial dims, a bias without a weight
    ("batch", (2, 5, 3, 3, 2), "weight"),
    ("batch", (3, 2, 4, 4), "both"),  # runs of whole vectors only (the item kernels)
]


@pytest.mark.parametrize("kind, shape, affine", NORM_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_norm_kernels_against_torch(device, kind, shape, affine, dtype):
    """layer_norm and batch_norm's kernels (forward and first gradients) against torch in
    every layout and affine combination; float16 in, float16 out."""
    _norm_against_torch(device, kind, shape, affine, dtype)


@pytest.mark.parametrize("item", [False, True])
@pytest.mark.parametrize("kind, shape, affine", NORM_CASES)
def test_norm_kernel_forms(cl_device, kind, shape, affine, item, monkeypatch):
    """Both forms of the norm kernels on any OpenCL device: a work-group per normalized
    group (GPUs) and a work-item per group walking its runs in vectors (CPU devices)."""
    from clgrad.backend.opencl import norm

    monkeypatch.setattr(norm, "ITEM", item)
    _norm_against_torch(cl_device, kind, shape, affine, "float32")


def _norm_against_torch(device, kind, shape, affine, dtype):
    """layer_norm or batch_norm on ``device`` against torch: output, running stats, grads."""
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"no {dtype}")
    feat = shape[-2:] if kind == "layer" and len(shape) == 4 else (shape[-1],)
    feat = feat if kind == "layer" else (shape[1],)
    x, g = RNG.normal(size=shape) * 2 + 0.5, RNG.normal(size=shape)
    w = RNG.normal(size=feat) if affine in ("both", "weight") else None
    b = RNG.normal(size=feat) if affine in ("both", "bias") else None

    def run(lib, to):
        xs = [None if v is None else to(v, True) for v in (x, w, b)]
        if kind == "layer":
            y = lib.nn.functional.layer_norm(xs[0], feat, xs[1], xs[2])
            stats = ()
        else:
            stats = (to(np.zeros(feat), False), to(np.ones(feat), False))
            y = lib.nn.functional.batch_norm(xs[0], *stats, xs[1], xs[2], True)
        y.backward(to(g, False))
        return [y, *stats] + [v.grad for v in xs if v is not None]

    ours = run(clgrad, lambda v, rg: t(v, device, getattr(clgrad, dtype), rg))
    theirs = run(torch, lambda v, rg: torch.tensor(v, dtype=torch.float32, requires_grad=rg))
    tol = 2e-2 if dtype == "float16" else 1e-4
    assert ours[0].dtype == getattr(clgrad, dtype)
    for mine, ref in zip(ours, theirs):
        np.testing.assert_allclose(
            mine.detach().cpu().numpy().astype(np.float64), ref.detach().numpy(), tol, tol
        )


@pytest.mark.parametrize(
    "shape, groups, affine",
    [
        ((3, 6, 70), 2, "both"),  # a group longer than a work-group
        ((2, 4), 4, "none"),  # no other dims, a channel per group
        ((0, 6, 3), 3, "both"),  # an empty batch
        ((2, 6, 3, 2), 1, "weight"),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_group_norm_against_torch(device, shape, groups, affine, dtype):
    """group_norm's kernel path (forward and first gradients) against torch: layouts, affine
    combinations, a transposed input; float16 in, float16 out."""
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"no {dtype}")
    x, g = RNG.normal(size=shape) * 2 + 0.5, RNG.normal(size=shape)
    w = RNG.normal(size=shape[1]) if affine in ("both", "weight") else None
    b = RNG.normal(size=shape[1]) if affine == "both" else None

    def run(lib, to):
        xs = [None if v is None else to(v, True) for v in (x, w, b)]
        y = lib.nn.functional.group_norm(xs[0], groups, xs[1], xs[2])
        y.backward(to(g, False))
        # a transposed input of the same values, without a gradient
        flipped = to(np.ascontiguousarray(np.swapaxes(x, 0, 1)), False).transpose(0, 1)
        again = lib.nn.functional.group_norm(flipped, groups, *xs[1:]).detach()
        return [y, again] + [v.grad for v in xs if v is not None]

    ours = run(clgrad, lambda v, rg: t(v, device, getattr(clgrad, dtype), rg))
    theirs = run(torch, lambda v, rg: torch.tensor(v, dtype=torch.float32, requires_grad=rg))
    tol = 2e-2 if dtype == "float16" else 1e-4
    assert ours[0].dtype == getattr(clgrad, dtype)
    assert ours[0].grad_fn.name() == "NativeGroupNormBackward0"
    for mine, ref in zip(ours, theirs):
        np.testing.assert_allclose(
            mine.detach().cpu().numpy().astype(np.float64), ref.detach().numpy(), tol, tol
        )


def test_group_norm_of_mixed_dtypes_and_integers(device):
    """float16 activations through float32 affine parameters (a mixed precision PyTorch takes):
    the gradients as torch's of the same values; an integer or bool input to a normalization
    raises torch's NotImplementedError, a weight or bias that is no vector of the channels
    torch's RuntimeError."""
    if not supports(device, clgrad.float16):
        pytest.skip("no float16")
    xn = (RNG.normal(size=(2, 4, 3)) * 2).astype(np.float16).astype(np.float64)
    gn, wn, bn = RNG.normal(size=(2, 4, 3)), RNG.normal(size=4), RNG.normal(size=4)
    grads = []
    for lib, to, xdt in (
        (clgrad, lambda v, dt, rg=True: t(v, device, dt, rg), clgrad.float16),
        (torch, lambda v, dt, rg=True: torch.tensor(v, dtype=dt, requires_grad=rg), None),
    ):
        x = to(xn, xdt or lib.float32)
        w, b = to(wn, lib.float32), to(bn, lib.float32)
        y = lib.nn.functional.group_norm(x, 2, w, b)
        (y.float() * to(gn, lib.float32, False)).sum().backward()
        grads.append([v.grad.float() for v in (x, w, b)])
    for mine, ref in zip(*grads):
        assert_close(mine, ref.numpy(), rtol=2e-2, atol=2e-2)
    ints = clgrad.arange(24, device=device).reshape(2, 4, 3)
    for call, kernel in (
        (lambda v: F.group_norm(v, 2), "GroupNormKernelImpl"),
        (lambda v: F.layer_norm(v, (3,)), "LayerNormKernelImpl"),
        (lambda v: F.batch_norm(v, None, None, training=True), "batch_norm"),
    ):
        for v, name in ((ints, "Long"), (ints > 3, "Bool")):
            message = f'"{kernel}" not implemented for .{name}'
            with pytest.raises(NotImplementedError, match=message):
                call(v)
    x = clgrad.randn(2, 4, 3, device=device)
    for w, b in ((clgrad.ones(4, 1, device=device), None), (None, clgrad.ones(3, device=device))):
        name = "weight" if w is not None else "bias"
        with pytest.raises(RuntimeError, match=f"Expected {name} to be a vector of size equal"):
            F.group_norm(x, 2, w, b)


def _norm_call(lib, kind, x, w, b):
    """A normalization of (2, 4, 3) ``x`` with parameters ``w``, ``b`` of 4 (3 for layer)."""
    F_ = lib.nn.functional
    if kind == "layer":
        return F_.layer_norm(x, (3,), w, b)
    if kind == "group":
        return F_.group_norm(x, 2, w, b)
    mean, var = w.detach() * 0 + 0.25, w.detach() * 0 + 2.0  # running statistics of w's dtype
    return F_.batch_norm(x, mean, var, w, b, training=kind == "batch")


@pytest.mark.parametrize("kind", ["layer", "group", "batch", "batch eval"])
@pytest.mark.parametrize(
    "x_dtype, param_dtype",
    [("float16", "float32"), ("float32", "float64"), ("float64", "float32")]
    + [("float32", "float16")],
)
def test_norms_of_mixed_dtypes_as_torch(device, kind, x_dtype, param_dtype):
    """PyTorch's mixed type: float16 activations through float32 parameters (and running
    statistics) normalize in float32 and return float16, the gradients each in its tensor's
    dtype; any other mix raises torch's RuntimeError."""
    if not all(supports(device, getattr(clgrad, d)) for d in (x_dtype, param_dtype)):
        pytest.skip(f"no {x_dtype} or {param_dtype}")
    n = 3 if kind == "layer" else 4
    xn = (RNG.normal(size=(2, 4, 3)) * 2).astype(np.float16)
    wn, bn, gn = RNG.normal(size=n), RNG.normal(size=n), RNG.normal(size=(2, 4, 3))
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor(xn, dtype=getattr(lib, x_dtype), device=dev, requires_grad=True)
        w, b = (
            lib.tensor(v, dtype=getattr(lib, param_dtype), device=dev, requires_grad=True)
            for v in (wn, bn)
        )
        try:
            y = _norm_call(lib, kind, x, w, b)
        except RuntimeError as e:
            results.append(str(e))
            continue
        (y.float() * lib.tensor(gn, dtype=lib.float32, device=dev)).sum().backward()
        results.append([y.detach(), x.grad, w.grad, b.grad])
    ref, mine = results
    if isinstance(ref, str):
        assert mine == ref
        return
    assert not isinstance(mine, str), mine
    for a, r in zip(mine, ref):
        assert str(a.dtype).split(".")[-1] == str(r.dtype).split(".")[-1]
        assert_close(a, r.double().numpy(), rtol=2e-3, atol=2e-2)


@pytest.mark.parametrize("kind", ["layer", "batch"])
def test_norm_of_a_transposed_input_second_gradients(device, kind):
    """The node keeps the input as given (not its contiguous copy): second gradients reach it,
    and an in-place write to it after the forward raises, as torch's."""
    xn, gn = RNG.normal(size=(4, 6)), RNG.normal(size=(6, 4))
    results = []
    for lib, to in (
        (clgrad, lambda v, rg=False: t(v, device, requires_grad=rg)),
        (torch, lambda v, rg=False: torch.tensor(v, dtype=torch.float32, requires_grad=rg)),
    ):
        x = to(xn, True)
        fn = lib.nn.functional
        y = (
            fn.layer_norm(x.t(), (4,))
            if kind == "layer"
            else fn.batch_norm(x.t(), None, None, training=True)
        )
        (gx,) = lib.autograd.grad(y, x, to(gn), create_graph=True)
        results.append(lib.autograd.grad((gx * gx).sum(), x)[0])
    scale = float(np.abs(results[1].numpy()).max())
    assert_close(results[0] / scale, results[1].numpy() / scale, rtol=1e-4, atol=1e-5)
    x = t(xn, device, requires_grad=True) * 1
    y = (
        F.layer_norm(x.t(), (4,))
        if kind == "layer"
        else F.batch_norm(x.t(), None, None, None, None, True)
    )
    x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_norm_and_loss_argument_errors(device):
    """torch's errors for a layer_norm weight or bias of another shape and for vectors on
    another device (no kernel reads past them); nll_loss over no classes; ignored terms are
    +0; a float64 Linear records AddmmBackward0 too."""
    x = clgrad.randn(2, 4, device=device)
    for w, b in ((clgrad.ones(1, device=device), None), (None, clgrad.ones(8, device=device))):
        name = "weight" if w is not None else "bias"
        with pytest.raises(
            RuntimeError, match=f"Expected {name} to be of same shape as normalized"
        ):
            F.layer_norm(x, (4,), w, b)
    if device != "cpu":
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            F.layer_norm(x, (4,), clgrad.ones(4))
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            F.batch_norm(x, None, None, clgrad.ones(4), None, True)
    none = clgrad.full((3,), -100, device=device)
    empty = clgrad.randn(3, 0, device=device)
    assert math.isnan(F.nll_loss(empty, none).item())
    assert F.nll_loss(empty, none, reduction="sum").item() == 0
    terms = F.nll_loss(
        clgrad.randn(2, 3, device=device), clgrad.tensor([-100, 1], device=device), reduction="none"
    )
    assert math.copysign(1.0, terms[0].item()) == 1.0
    if supports(device, clgrad.float64):
        lin = nn.Linear(3, 2).to(device).double()
        assert (
            lin(clgrad.ones(4, 3, dtype=clgrad.float64, device=device)).grad_fn.name()
            == "AddmmBackward0"
        )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_is_one_node(device, reduction):
    """mse_loss records torch's one node; broadcast gradients for both inputs and their own
    gradients as torch's; integer inputs raise torch's error."""
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4,))
    results = []
    for lib, to in (
        (clgrad, lambda v: t(v, device, requires_grad=True)),
        (torch, lambda v: torch.tensor(v, dtype=torch.float32, requires_grad=True)),
    ):
        x, y = to(a), to(b)
        with pytest.warns(UserWarning, match="different to the input size"):
            loss = lib.nn.functional.mse_loss(x, y, reduction=reduction)
        grads = lib.autograd.grad(loss.sum(), (x, y), create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), (x, y))
        results.append((loss, *grads, *second))
    assert results[0][0].grad_fn.name() == results[1][0].grad_fn.name() == "MseLossBackward0"
    for mine, ref in zip(*results):
        assert_close(mine, ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    ints = clgrad.tensor([1, 2], device=device)
    with pytest.raises(NotImplementedError, match="mse_cpu.*'Long'"):
        F.mse_loss(ints, ints)


def test_regression_losses(device):
    a, b = randn(4, 3), randn(4, 3)
    at, bt = t(a, device), t(b, device)
    assert_close(nn.MSELoss()(at, bt), ((a - b) ** 2).mean(), rtol=1e-5, atol=1e-6)
    assert_close(F.mse_loss(at, bt, reduction="sum"), ((a - b) ** 2).sum(), rtol=1e-5, atol=1e-5)
    assert_close(nn.L1Loss(reduction="none")(at, bt), np.abs(a - b), rtol=1e-5, atol=1e-6)
    d = np.abs(a - b)
    assert_close(
        nn.SmoothL1Loss()(at, bt),
        np.where(d < 1, 0.5 * d * d, d - 0.5).mean(),
        rtol=1e-5,
        atol=1e-6,
    )
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(at, t(b[:1], device))
    check_grad(
        lambda x, y: F.mse_loss(x, y) + F.l1_loss(x, y) + F.huber_loss(x, y, delta=0.5),
        [randn(2, 3), randn(2, 3)],
        device,
    )


def test_binary_cross_entropy(device):
    p = 1 / (1 + np.exp(-randn(6)))
    y = RNG.random(6)
    w = RNG.random(6)
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert_close(nn.BCELoss()(t(p, device), t(y, device)), ref.mean(), rtol=1e-5, atol=1e-6)
    assert_close(
        F.binary_cross_entropy(t(p, device), t(y, device), t(w, device), reduction="sum"),
        (ref * w).sum(),
        rtol=1e-5,
        atol=1e-5,
    )
    edge = F.binary_cross_entropy(t([0.0, 1.0], device), t([1.0, 0.0], device), reduction="none")
    assert edge.tolist() == [100.0, 100.0]  # logs clamped at -100
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(t(p, device), t(y[:3], device))
    check_grad(
        lambda x, tgt: F.binary_cross_entropy(x.sigmoid(), tgt), [randn(5), RNG.random(5)], device
    )


def test_bce_with_logits(device):
    x, y = randn(2, 4) * 3, RNG.random((2, 4))
    pw = np.array([1.0, 2.0, 0.5, 3.0])
    sig = 1 / (1 + np.exp(-x))
    ref = -(pw * y * np.log(sig) + (1 - y) * np.log(1 - sig))
    assert_close(
        nn.BCEWithLogitsLoss(pos_weight=t(pw, device))(t(x, device), t(y, device)),
        ref.mean(),
        rtol=1e-5,
        atol=1e-6,
    )
    assert_close(
        F.binary_cross_entropy_with_logits(t(x, device), t(y, device), reduction="none"),
        -(y * np.log(sig) + (1 - y) * np.log(1 - sig)),
        rtol=1e-5,
        atol=1e-5,
    )
    big = F.binary_cross_entropy_with_logits(
        t([1e4, -1e4, 1e4, -1e4], device), t([1.0, 0.0, 0.0, 1.0], device), reduction="none"
    )
    assert big.tolist() == [0.0, 0.0, 1e4, 1e4]
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(t(x, device), t(y[0], device))
    need64(device)
    tgt = clgrad.tensor(RNG.random(4), dtype=clgrad.float64, device=device)
    pwt = clgrad.tensor(pw, dtype=clgrad.float64, device=device)
    wt = clgrad.tensor(RNG.random(4), dtype=clgrad.float64, device=device)
    check_grad(
        lambda a: F.binary_cross_entropy_with_logits(a, tgt, wt, pos_weight=pwt),
        [randn(4)],
        device,
    )
    # no derivative for the weights, as PyTorch's
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.binary_cross_entropy_with_logits(tgt, tgt, wt.clone().requires_grad_())


# ---- pad, one_hot ----------------------------------------------------------------------------
def test_pad(device):
    x = randn(2, 3, 4)
    xt = t(x, device)
    assert_close(F.pad(xt, (1, 2)), np.pad(x, ((0, 0), (0, 0), (1, 2))))
    assert_close(
        F.pad(xt, (1, 0, 0, 2), value=-1.5),
        np.pad(x, ((0, 0), (0, 2), (1, 0)), constant_values=-1.5),
    )
    assert_close(F.pad(xt, (-1, 1)), np.pad(x, ((0, 0), (0, 0), (0, 1)))[:, :, 1:])
    for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        assert_close(
            F.pad(xt, (2, 1, 1, 2), mode=mode), np.pad(x, ((0, 0), (1, 2), (2, 1)), mode=np_mode)
        )
    with pytest.raises(RuntimeError, match="divisible by 2"):
        F.pad(xt, (1, 2, 3))
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(xt, (4, 0), mode="reflect")
    check_grad(lambda a: F.pad(a, (1, 2, 0, 1), value=0.5) * 2, [randn(2, 3)], device)
    check_grad(lambda a: F.pad(a, (2, 1), mode="reflect"), [randn(1, 2, 4)], device)
    check_grad(lambda a: F.pad(a, (-1, 1)), [randn(2, 3)], device)


def test_one_hot(device):
    y = clgrad.tensor([[0, 2], [1, 2]], device=device)
    oh = F.one_hot(y)
    assert oh.dtype == clgrad.int64 and oh.shape == (2, 2, 3)
    assert oh.tolist() == [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [0, 0, 1]]]
    assert F.one_hot(y, 5).shape == (2, 2, 5)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(y, 2)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(y.to(clgrad.int32))


# ---- training --------------------------------------------------------------------------------
def test_mlp_sgd_lowers_loss(device):
    clgrad.manual_seed(0)
    x = clgrad.randn(64, 4, device=device)
    y = ((x[:, 0] * x[:, 1]) > 0).long()
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2)).to(device)
    opt = optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0]


def test_cnn_adam_lowers_loss(device):
    clgrad.manual_seed(0)
    x = clgrad.randn(32, 1, 8, 8, device=device)
    y = (x[:, 0, :4].mean((1, 2)) > x[:, 0, 4:].mean((1, 2))).long()
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.1),
        nn.Linear(32, 2),
    ).to(device)
    opt = optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(15):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    model.eval()
    with clgrad.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    assert acc > 0.8


def test_no_warnings_in_a_step(device):
    model = nn.Sequential(nn.Linear(3, 2)).to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.cross_entropy(
            model(clgrad.randn(4, 3, device=device)), clgrad.tensor([0, 1, 1, 0], device=device)
        ).backward()


def test_linear_and_cross_entropy_with_nothing_to_sum(device):
    """F.linear of a (4, 2, 0) input (no input features: the bias alone, broadcast) and
    cross_entropy over zero classes with label smoothing (NaN or empty, as torch) run; they
    raised a reshape RuntimeError and a ZeroDivisionError."""
    got = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        F = m.nn.functional
        x = m.zeros(4, 2, 0, device=dev, requires_grad=True)
        b = m.ones(3, device=dev, requires_grad=True)
        y = F.linear(x, m.zeros(3, 0, device=dev), b)
        y.sum().backward()
        losses = [
            F.cross_entropy(m.zeros(0, 0, device=dev), t, reduction=r, label_smoothing=0.25)
            for t in (m.zeros(0, dtype=m.int64, device=dev), m.zeros(0, 0, device=dev))
            for r in ("mean", "none")
        ]
        got.append(
            (tuple(y.shape), y.sum().item(), b.grad.tolist(), [str(v.tolist()) for v in losses])
        )
    assert got[1] == got[0]


def test_pool_and_scatter_add_refuse_as_torch():
    """Pooling an input with an empty non-batch dim, and scatter_add with a source of another
    dtype, raise torch's RuntimeError (both ran); an empty batch still pools."""
    for m in (torch, clgrad):
        F = m.nn.functional
        with pytest.raises(RuntimeError):
            F.avg_pool2d(m.zeros(2, 0, 2, 2), 1)
        with pytest.raises(RuntimeError):
            F.max_pool2d(m.zeros(3, 2, 0), 1)
        with pytest.raises(RuntimeError):
            F.avg_pool1d(m.zeros(2, 0, 2), 1)
        with pytest.raises(RuntimeError):
            m.zeros(3).scatter_add(0, m.tensor([0]), m.ones(1, dtype=m.float64))
        with pytest.raises(TypeError):  # a number source (it was an AttributeError)
            m.zeros(3).scatter_add(0, m.tensor([0]), 1.0)
        assert tuple(F.max_pool2d(m.zeros(0, 3, 2, 2), 1).shape) == (0, 3, 2, 2)


def test_inf_norm_over_nothing_refuses_as_torch():
    """The inf and -inf norms over an empty dim (or of an empty tensor) raise torch's
    RuntimeError (it was amax's IndexError); over a non-empty dim of an empty tensor they give
    an empty result."""
    for m in (torch, clgrad):
        inf = float("inf")
        with pytest.raises(RuntimeError, match="does not have an identity"):
            m.linalg.vector_norm(m.zeros(0, 3), ord=inf, dim=0)
        with pytest.raises(RuntimeError, match="does not have an identity"):
            m.zeros(0, 3).norm(p=-inf)
        assert tuple(m.linalg.vector_norm(m.zeros(0, 3), ord=inf, dim=1).shape) == (0,)
        assert m.linalg.vector_norm(m.tensor([1.0, -3.0]), ord=inf).item() == 3.0


def test_softmax_checks_its_dim_before_its_dtype():
    """softmax of an int tensor over a dim it lacks is torch's IndexError (the dtype's
    NotImplementedError came first); over a dim it has, the NotImplementedError."""
    for m in (torch, clgrad):
        with pytest.raises(IndexError):
            m.tensor([1, 2]).softmax(5)
        with pytest.raises(IndexError):
            m.nn.functional.log_softmax(m.tensor([1, 2]), 3)
        with pytest.raises(NotImplementedError):
            m.tensor([1, 2]).softmax(0)
