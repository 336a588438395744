"""Creation functions, dtypes, transfers and the Tensor's metadata on every device."""

import numpy as np
import pytest
import torch
from conftest import assert_close, supports

import clgrad


def test_tensor_inference(device):
    assert clgrad.tensor([1.0, 2.0], device=device).dtype == clgrad.float32
    assert clgrad.tensor([1, 2], device=device).dtype == clgrad.int64
    assert clgrad.tensor([True], device=device).dtype == clgrad.bool
    assert clgrad.tensor(np.zeros(2, np.int32), device=device).dtype == clgrad.int32
    assert clgrad.tensor(3.5, device=device).shape == ()
    assert (
        clgrad.tensor([[1, 2], [3, 4]], dtype=clgrad.float16, device=device).dtype == clgrad.float16
    )
    assert clgrad.tensor([], device=device).shape == (0,)
    with pytest.raises(ValueError, match="expected sequence of length"):
        clgrad.tensor([[1, 2], [3]])


def test_filled(device):
    assert_close(clgrad.zeros(2, 3, device=device), np.zeros((2, 3), np.float32))
    assert_close(clgrad.ones((2,), dtype=clgrad.int32, device=device), np.ones(2, np.int32))
    assert_close(clgrad.full((2, 2), 7, device=device), np.full((2, 2), 7))
    assert clgrad.full((2,), 7, device=device).dtype == clgrad.int64
    assert clgrad.full((2,), 7.0, device=device).dtype == clgrad.float32
    assert clgrad.empty(3, 0, device=device).shape == (3, 0)
    assert_close(clgrad.eye(3, 4, device=device), np.eye(3, 4, dtype=np.float32))
    x = clgrad.ones(2, 3, dtype=clgrad.int8, device=device)
    for like, ref in (
        (clgrad.zeros_like, 0),
        (clgrad.ones_like, 1),
        (lambda t: clgrad.full_like(t, 4), 4),
    ):
        y = like(x)
        assert y.dtype == clgrad.int8 and y.device == x.device and y.tolist() == [[ref] * 3] * 2
    assert clgrad.empty_like(x).shape == (2, 3)


def test_ranges(device):
    assert_close(clgrad.arange(5, device=device), np.arange(5))
    assert_close(clgrad.arange(1, 10, 3, device=device), np.arange(1, 10, 3))
    assert_close(clgrad.arange(0, 1, 0.25, device=device), np.arange(0, 1, 0.25, dtype=np.float32))
    assert clgrad.arange(0, 1, 0.25, device=device).dtype == clgrad.float32
    assert_close(clgrad.arange(10, 0, -3, device=device), np.arange(10, 0, -3))
    assert_close(clgrad.linspace(-1, 1, 5, device=device), np.linspace(-1, 1, 5, dtype=np.float32))
    assert clgrad.linspace(0, 1, 1, device=device).tolist() == [0.0]
    big = clgrad.arange(2**40, 2**40 + 3, device=device)
    assert big.tolist() == [2**40, 2**40 + 1, 2**40 + 2]


def test_random_reproducible_and_same_everywhere(device):
    clgrad.manual_seed(123)
    a = clgrad.rand(1000, device=device)
    b = clgrad.randn(1000, device=device)
    clgrad.manual_seed(123)
    assert_close(clgrad.rand(1000, device=device), a.cpu().numpy())
    assert_close(clgrad.randn(1000, device=device), b.cpu().numpy())
    clgrad.manual_seed(123)
    assert_close(clgrad.rand(1000), a.cpu().numpy(), rtol=1e-6, atol=1e-7)  # the same stream on cpu
    u = a.cpu().numpy()
    assert 0 < u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.05
    n = b.cpu().numpy()
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    r = clgrad.randint(3, 7, (2000,), device=device)
    assert r.dtype == clgrad.int64 and set(r.tolist()) == {3, 4, 5, 6}
    p = clgrad.randperm(10, device=device)
    assert sorted(p.tolist()) == list(range(10))
    assert clgrad.rand(2, 3, dtype=clgrad.float16, device=device).dtype == clgrad.float16
    with pytest.raises(RuntimeError):
        clgrad.rand(2, dtype=clgrad.int64, device=device)


def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = clgrad.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t.add_(1)
    assert a[1, 2] == 6
    assert np.shares_memory(t.numpy(), a)
    v = clgrad.from_numpy(a[:, ::2])
    assert v.stride() == (3, 2) and v.tolist() == [[43, 3], [4, 6]]
    with pytest.raises(ValueError, match="negative"):
        clgrad.from_numpy(a[:, ::-1])
    assert clgrad.as_tensor(a).numpy() is not None and np.shares_memory(
        clgrad.as_tensor(a).numpy(), a
    )


def test_transfers(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = clgrad.tensor(a)
    y = x.to(device)
    assert y.device == clgrad.device(device)
    assert_close(y.T.to("cpu"), a.T)
    assert_close(y.cpu(), a)
    assert_close(y.to(device, clgrad.int32), a.astype(np.int32))
    assert y.to(dtype=clgrad.float16).dtype == clgrad.float16
    assert x.to(y).device == y.device
    for d in clgrad.devices():
        assert_close(y.to(d), a)
    assert y.cpu().numpy().tolist() == a.tolist()
    assert np.asarray(y).shape == (3, 4)
    assert y.tolist() == a.tolist()
    assert y[1, 2].item() == 6.0 and isinstance(y[1, 2].item(), float)
    assert [r.tolist() for r in y] == a.tolist()
    assert len(y) == 3


def test_metadata(device):
    x = clgrad.zeros(2, 3, 4, device=device)
    assert x.shape == (2, 3, 4) and x.size() == clgrad.Size([2, 3, 4]) and x.size(-1) == 4
    assert x.dim() == 3 and x.ndim == 3 and x.numel() == 24
    assert x.stride() == (12, 4, 1) and x.stride(0) == 12 and x.is_contiguous()
    assert x.dtype == clgrad.float32 and x.element_size() == 4
    assert repr(x.shape) == "clgrad.Size([2, 3, 4])"


def test_repr(device):
    x = clgrad.tensor([1.0, 2.5], device=device)
    suffix = "" if device == "cpu" else f", device='{device}'"
    assert repr(x) == f"tensor([1.0000, 2.5000]{suffix})"
    assert repr(clgrad.tensor([1, 2], device=device)) == f"tensor([1, 2]{suffix})"
    assert repr(clgrad.tensor([1.0, 2.0], device=device)) == f"tensor([1., 2.]{suffix})"
    h = clgrad.tensor([1.0], dtype=clgrad.float16, device=device)
    assert repr(h) == f"tensor([1.]{suffix}, dtype=clgrad.float16)"
    r = clgrad.ones(1, device=device, requires_grad=True)
    assert repr(r).endswith("requires_grad=True)")
    assert repr(r * 2).endswith("grad_fn=<MulBackward0>)")
    assert repr(clgrad.tensor(True, device=device)) == f"tensor(True{suffix})"


def test_item_errors(device):
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        clgrad.ones(2, device=device).item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(clgrad.ones(2, device=device))


def test_unsupported_dtype_names_device_and_dtype():
    for d in clgrad.devices():
        if not d.supports_float64:
            with pytest.raises(RuntimeError, match=f"{d}.*float64"):
                clgrad.zeros(2, dtype=clgrad.float64, device=d)


def test_half_storage_everywhere(device):
    a = np.array([0.1, 1000.0, -2.5], np.float16)
    x = clgrad.tensor(a, device=device)
    assert_close(x * 2, (a.astype(np.float32) * 2).astype(np.float16))
    assert supports(device, clgrad.float16)


def test_synchronize(device):
    x = clgrad.ones(1000, device=device) * 3
    clgrad.synchronize(device)
    clgrad.synchronize()
    assert x.sum().item() == 3000


def test_untyped_storage_names_the_memory_as_torch(device):
    """``untyped_storage()``: the same ``data_ptr()`` for every view of one tensor's memory, a
    new one for a copy, its size in bytes; as torch's on the same operations."""
    import torch

    for lib, dev in ((clgrad, device), (torch, "cpu")):
        x = lib.arange(12.0, device=dev).reshape(3, 4)
        views = (x[1:], x.t(), x.view(-1)[5:], x.unsqueeze(0))
        assert all(v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for v in views)
        assert x.clone().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        assert x.untyped_storage().nbytes() == 48 and len(x[1:].untyped_storage()) == 48
        assert x[2:].untyped_storage().element_size() == 1


def _factories(m):
    x = m.ones(2, 3)
    return {
        "empty": lambda **k: m.empty(2, **k),
        "zeros": lambda **k: m.zeros(2, **k),
        "ones": lambda **k: m.ones((2,), **k),
        "full": lambda **k: m.full((2,), 1.0, **k),
        "arange": lambda **k: m.arange(3, **k),
        "linspace": lambda **k: m.linspace(0, 1, 3, **k),
        "logspace": lambda **k: m.logspace(0, 1, 3, **k),
        "eye": lambda **k: m.eye(2, **k),
        "rand": lambda **k: m.rand(2, **k),
        "randn": lambda **k: m.randn(2, **k),
        "randint": lambda **k: m.randint(0, 3, (2,), **k),
        "randperm": lambda **k: m.randperm(3, **k),
        "normal": lambda **k: m.normal(0.0, 1.0, (2,), **k),
        "empty_strided": lambda **k: m.empty_strided((2,), (1,), **k),
        "scalar_tensor": lambda **k: m.scalar_tensor(1.0, **k),
        "tril_indices": lambda **k: m.tril_indices(3, 3, **k),
        "hann_window": lambda **k: m.hann_window(4, **k),
        "tensor": lambda **k: m.tensor([1.0], **k),
        "empty_like": lambda **k: m.empty_like(x, **k),
        "zeros_like": lambda **k: m.zeros_like(x, **k),
        "full_like": lambda **k: m.full_like(x, 1, **k),
        "randint_like": lambda **k: m.randint_like(x, 3, **k),
        "new_zeros": lambda **k: x.new_zeros((2,), **k),
        "new_full": lambda **k: x.new_full((2,), 1, **k),
    }


@pytest.mark.parametrize("name", sorted(_factories(torch)))
def test_factories_take_torchs_tensor_options(name):
    """layout=, pin_memory= and (empty, *_like) memory_format= as each torch factory takes them
    (data loaders pass pin_memory=): accepted, or torch's TypeError where the torch factory
    has no such option or the value is of the wrong type."""
    for key, value in (
        ("layout", "strided"),
        ("pin_memory", False),
        ("memory_format", "contiguous_format"),
        ("layout", 1),
        ("pin_memory", 1),
        ("memory_format", 1),
    ):
        ours, theirs = ({key: getattr(m, value) if isinstance(value, str) else value}
                        for m in (clgrad, torch))  # fmt: skip
        try:
            _factories(torch)[name](**theirs)
        except TypeError:
            with pytest.raises(TypeError):
                _factories(clgrad)[name](**ours)
        else:
            _factories(clgrad)[name](**ours)


@pytest.mark.parametrize("method", ["float", "double", "half", "long", "int", "bool", "cpu"])
def test_casts_take_memory_format(method):
    """``x.float(memory_format=...)`` and the other casts take torch's keyword; a value that
    is no memory format is its TypeError."""
    for m in (torch, clgrad):
        x = m.ones(2, 3, 4, 5)
        assert getattr(x, method)(memory_format=m.preserve_format).shape == x.shape
        with pytest.raises(TypeError):
            getattr(x, method)(memory_format=1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "uint8"])
@pytest.mark.parametrize(
    "start, end, steps",
    [(-1, 1, 13), (-np.pi, np.pi, 2000), (0, 0.1, 11), (5, -5, 4), (2.7, 250.2, 9), (3, 3, 1)]
    + [(-255, 3, 4), (-300, 3, 4)],
)
def test_linspace_as_torch(device, dtype, start, end, steps):
    """ATen's formula: counted up from start for the first half, down from end for the rest,
    in the dtype's arithmetic, so the ends are exact and no value passes them (start + i *
    step overshot end by an ulp in float64: sqrt(1 - x^2) of linspace(-1, 1) was NaN); an
    integer dtype casts the ends first (-5 wraps to 251 in uint8)."""
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    try:
        expected = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
    except RuntimeError:  # an end past an integer dtype's range
        with pytest.raises(RuntimeError, match="without overflow"):
            clgrad.linspace(start, end, steps, dtype=getattr(clgrad, dtype), device=device)
        return
    got = clgrad.linspace(start, end, steps, dtype=getattr(clgrad, dtype), device=device)
    tol = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-15}.get(dtype, 0)
    assert_close(got, expected, getattr(clgrad, dtype), rtol=tol, atol=tol * max(1, abs(end)))
    values = got.cpu().numpy()
    if dtype.startswith("float") and steps > 1:
        assert values[0] == np.asarray(start, dtype) and values[-1] == np.asarray(end, dtype)
        assert values.min() >= min(values[0], values[-1])
        assert values.max() <= max(values[0], values[-1])


def test_linspace_bool_refused(device):
    with pytest.raises(NotImplementedError):
        torch.linspace(0, 1, 3, dtype=torch.bool)
    with pytest.raises(NotImplementedError):
        clgrad.linspace(0, 1, 3, dtype=clgrad.bool, device=device)
