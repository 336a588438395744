"""The lazy modules (LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*,
LazyLinear), ``nn.Buffer`` and ``nn.UninitializedBuffer``, each against torch."""

import copy
import pickle

import numpy as np
import pytest
import torch

import clgrad

# (class name, constructor arguments, input shape)
LAZY = [
    ("LazyLinear", (3,), (4, 5)),
    ("LazyConv1d", (4, 3), (2, 5, 8)),
    ("LazyConv1d", (4, 3), (5, 8)),  # unbatched
    ("LazyConv2d", (6, 3), (2, 4, 5, 5)),
    ("LazyConv2d", (4, 3, 2, 1, 1, 2), (1, 4, 6, 6)),  # stride, padding, dilation, groups
    ("LazyConv3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyConvTranspose1d", (2, 3, 2), (1, 4, 5)),
    ("LazyConvTranspose2d", (3, 2, 2, 0, 1), (2, 4, 3, 3)),  # output_padding
    ("LazyConvTranspose3d", (2, 2), (1, 4, 2, 2, 2)),
    ("LazyBatchNorm1d", (), (4, 3)),
    ("LazyBatchNorm1d", (), (4, 3, 5)),
    ("LazyBatchNorm2d", (), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)),
]


def _copy_into_torch(cl_module, t_module):
    with torch.no_grad():
        for t, c in zip(t_module.state_dict().values(), cl_module.state_dict().values()):
            t.copy_(torch.from_numpy(np.array(c.cpu().numpy())))


@pytest.mark.parametrize("name, args, shape", LAZY, ids=lambda v: str(v))
def test_lazy_module_matches_torch(device, name, args, shape):
    tm = getattr(torch.nn, name)(*args)
    cm = getattr(clgrad.nn, name)(*args, device=device)
    assert repr(cm) == repr(tm)
    assert cm.has_uninitialized_params() and tm.has_uninitialized_params()
    placeholders = dict(cm.named_parameters())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tm(torch.tensor(x))
    cm(clgrad.tensor(x, device=device))
    # it became the eager layer, its placeholders materialized in place
    assert type(cm).__name__ == type(tm).__name__ and repr(cm) == repr(tm)
    assert not hasattr(cm, "has_uninitialized_params")  # no longer lazy, as in torch
    for n, p in cm.named_parameters():
        assert p is placeholders[n] and type(p) is clgrad.nn.Parameter
        assert p.device == clgrad.device(device)
    assert [(n, tuple(t.shape)) for n, t in cm.state_dict().items()] == [
        (n, tuple(t.shape)) for n, t in tm.state_dict().items()
    ]
    # the same values from here: the same forward and gradients
    _copy_into_torch(cm, tm)
    xt = torch.tensor(x, requires_grad=True)
    xc = clgrad.tensor(x, device=device, requires_grad=True)
    tout, cout = tm(xt), cm(xc)
    np.testing.assert_allclose(cout.detach().cpu().numpy(), tout.detach().numpy(), 1e-4, 1e-5)
    tout.square().sum().backward()
    cout.square().sum().backward()
    np.testing.assert_allclose(xc.grad.cpu().numpy(), xt.grad.numpy(), 1e-4, 1e-4)
    for (n, tp), (_, cp) in zip(tm.named_parameters(), cm.named_parameters()):
        np.testing.assert_allclose(cp.grad.cpu().numpy(), tp.grad.numpy(), 1e-4, 1e-4, err_msg=n)
    for n, b in cm.named_buffers():
        np.testing.assert_allclose(b.cpu().numpy(), tm.get_buffer(n).numpy(), 1e-5, 1e-5)


def test_lazy_init_is_the_layers_default(device):
    """A materialized conv is initialized as Conv2d is (kaiming uniform: |w| <= 1/sqrt(fan_in)),
    a norm with weight 1, bias 0 and reset statistics."""
    conv = clgrad.nn.LazyConv2d(8, 3, device=device)
    conv(clgrad.ones(1, 4, 5, 5, device=device))
    bound = 1 / np.sqrt(4 * 9)
    assert 0 < float(conv.weight.abs().max()) <= bound
    assert 0 < float(conv.bias.abs().max()) <= bound
    bn = clgrad.nn.LazyBatchNorm2d(device=device).eval()
    bn(clgrad.ones(2, 3, 2, 2, device=device))
    assert bn.weight.tolist() == [1.0] * 3 and bn.bias.tolist() == [0.0] * 3
    assert bn.running_mean.tolist() == [0.0] * 3 and bn.running_var.tolist() == [1.0] * 3
    assert int(bn.num_batches_tracked) == 0  # eval mode: not counted


def test_lazy_options_match_torch(device):
    for kwargs in ({"affine": False}, {"track_running_stats": False}, {"bias": False}):
        for name in ("LazyBatchNorm2d", "LazyInstanceNorm2d"):
            tm, cm = getattr(torch.nn, name)(**kwargs), getattr(clgrad.nn, name)(**kwargs)
            assert repr(cm) == repr(tm)
            x = np.random.default_rng(1).standard_normal((2, 3, 4, 4)).astype(np.float32)
            cm = cm.to(device)
            np.testing.assert_allclose(
                cm(clgrad.tensor(x, device=device)).detach().cpu().numpy(),
                tm(torch.tensor(x)).detach().numpy(),
                1e-4,
                1e-5,
            )
            assert sorted(cm.state_dict()) == sorted(tm.state_dict())
    conv = clgrad.nn.LazyConv2d(2, 3, bias=False)
    assert conv.bias is None and repr(conv) == repr(torch.nn.LazyConv2d(2, 3, bias=False))


def test_lazy_moves_before_materializing(device):
    """``.to(device)`` / ``.double()`` before the first forward carry over to the materialized
    parameters and buffers, which stay placeholders until then."""
    # float64 where the device has it (rusticl's llvmpipe has not), else float16
    dtype = clgrad.float64 if clgrad.device(device).supports(clgrad.float64) else clgrad.float16
    m = clgrad.nn.Sequential(clgrad.nn.LazyConv2d(2, 3), clgrad.nn.LazyBatchNorm2d())
    m = m.to(device).to(dtype)
    bn = m[1]
    assert isinstance(bn.running_mean, clgrad.nn.UninitializedBuffer)
    assert isinstance(m[0].weight, clgrad.nn.UninitializedParameter)
    m(clgrad.ones(1, 3, 5, 5, device=device, dtype=dtype))
    for t in (m[0].weight, m[0].bias, bn.weight, bn.running_mean, bn.running_var):
        assert t.device == clgrad.device(device) and t.dtype == dtype
    assert type(bn.running_mean) is clgrad.Tensor


def test_lazy_state_dict_round_trip(device):
    """A checkpoint of the materialized model loads into a fresh lazy one (giving its
    placeholders their shapes); an uninitialized model's state dict holds the placeholders."""

    def model():
        nn = clgrad.nn
        return nn.Sequential(
            nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.Flatten(), nn.LazyLinear(3)
        ).to(device)

    trained = model()
    x = clgrad.rand(2, 3, 6, 6, device=device)
    trained(x)
    fresh = model()
    assert all(
        isinstance(v, (clgrad.nn.UninitializedParameter, clgrad.nn.UninitializedBuffer))
        for k, v in fresh.state_dict().items()
        if not k.endswith("num_batches_tracked")
    )
    fresh.load_state_dict(trained.state_dict())
    trained.eval(), fresh.eval()
    np.testing.assert_allclose(fresh(x).detach().cpu().numpy(), trained(x).detach().cpu().numpy())
    assert repr(fresh) == repr(trained)  # in_channels, num_features, in_features set too


def test_lazy_copies_and_pickles():
    for m in (clgrad.nn.LazyConv1d(2, 2), clgrad.nn.LazyBatchNorm1d()):
        for twin in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
            assert twin.has_uninitialized_params()
            twin(clgrad.ones(2, 3, 4))
            assert type(twin.weight) is clgrad.nn.Parameter and twin.weight.shape[0] in (2, 3)
        assert m.has_uninitialized_params()  # the original is untouched


def test_lazy_bad_input_raises_as_torch():
    for mod in (torch, clgrad):
        with pytest.raises(RuntimeError):  # a 2-D input to a 2-D convolution
            mod.nn.LazyConv2d(2, 3)(mod.ones(3, 4))
        with pytest.raises(ValueError):  # 3 channels in 2 groups
            mod.nn.LazyConv2d(2, 1, groups=2)(mod.ones(1, 3, 2, 2))


def test_buffer_matches_torch():
    for mod in (torch, clgrad):
        m = mod.nn.Module()
        t = mod.ones(2)
        m.kept = mod.nn.Buffer(t)
        m.scratch = mod.nn.Buffer(mod.zeros(1), persistent=False)
        assert list(m.state_dict()) == ["kept"]
        assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
        assert m.kept.data_ptr() == t.data_ptr()  # shares the data
        assert not m.kept.requires_grad and isinstance(m.kept, mod.Tensor)
        m.kept = mod.zeros(3)  # a plain tensor into a buffer's name stays a buffer
        assert m.get_buffer("kept").shape == (3,)
        m.plain = 1
        with pytest.raises(KeyError):  # a buffer over an attribute of that name
            m.plain = mod.nn.Buffer(mod.ones(1))
        assert mod.nn.Buffer(mod.ones(2, requires_grad=True)).requires_grad
        m.later = mod.nn.UninitializedBuffer(persistent=False)
        assert "later" not in m.state_dict()
        assert repr(m.later) == "<UninitializedBuffer>"
