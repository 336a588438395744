"""Views and autograd, compared with PyTorch: views stay inside their storage, in-place writes
into views rebase their base's history (CopySlices), the in-place rules on views, grad mode
restored on every exit, .grad assignment checks, and gradient details (pow, gelu, sum)."""

import numpy as np
import pytest
import torch
from conftest import CL_DEVICES, assert_close

import clgrad
from clgrad import autograd


def _err(fn):
    """The exception ``fn()`` raises (None when it raises nothing)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the class is compared with PyTorch's
        return e
    return None


# ---- 1. views stay inside their storage --------------------------------------------------------
@pytest.mark.parametrize(
    "n, size, stride, offset",
    [
        (3, (4_000_000,), (1,), None),  # segfaulted
        (3, (4,), (1,), None),
        (3, (2,), (1,), 2),
        (12, (3, 3), (4, 2), 0),
        (6, (2, 2), (0, 3), 4),
    ],
)
def test_as_strided_out_of_bounds(device, n, size, stride, offset):
    with pytest.raises(RuntimeError) as want:
        torch.zeros(n).as_strided(size, stride, offset)
    with pytest.raises(RuntimeError) as got:
        clgrad.zeros(n, device=device).as_strided(size, stride, offset)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "size, stride, offset",
    [((2,), (-1,), 2), ((2,), (1,), -1), ((2, 2), (1,), 0), ((-1,), (1,), 0)],
)
def test_as_strided_bad_arguments(device, size, stride, offset):
    with pytest.raises(RuntimeError) as want:
        torch.zeros(3).as_strided(size, stride, offset)
    with pytest.raises(RuntimeError) as got:
        clgrad.zeros(3, device=device).as_strided(size, stride, offset)
    assert str(got.value) == str(want.value)


def test_as_strided_view_of_a_slice_counts_the_whole_storage(device):
    # x[1:] starts at offset 1 of a 3-element storage: 3 elements from there do not fit
    with pytest.raises(RuntimeError) as want:
        torch.zeros(3)[1:].as_strided((3,), (1,))
    with pytest.raises(RuntimeError) as got:
        clgrad.zeros(3, device=device)[1:].as_strided((3,), (1,))
    assert str(got.value) == str(want.value)
    # the last element of the storage is fine, and an empty view anywhere
    x = clgrad.arange(6.0, device=device)
    assert_close(x[1:].as_strided((2,), (2,), 3), torch.arange(6.0).as_strided((2,), (2,), 3))
    assert x.as_strided((0,), (1,), 50).shape == (0,)
    assert x.as_strided((2, 0), (1, 1), 50).shape == (2, 0)


def test_views_in_bounds_still_work(device):
    t = torch.arange(24.0).reshape(2, 3, 4)
    x = clgrad.arange(24.0, device=device).reshape(2, 3, 4)
    assert_close(x.as_strided((3, 2), (1, 3), 2), t.as_strided((3, 2), (1, 3), 2))
    assert_close(x.flip([0, 2]), t.flip([0, 2]))  # negative strides, internally
    assert_close(x[1, :, ::2].T, t[1, :, ::2].T)
    assert_close(x.view(-1)[5:], t.view(-1)[5:])


# ---- 2. CopySlices: in-place writes into a view of a non-leaf ----------------------------------
def _write(lib, name, a, w):
    """Writes into a view of ``a`` in place (``w`` a tensor requiring grad, shape (2,))."""
    if name == "slice_mul":
        a[1:3].mul_(10)
    elif name == "slice_mul_tensor":
        a[1:3].mul_(w)
    elif name == "select":
        a.select(0, 2).mul_(w[0])
    elif name == "narrow":
        a.narrow(0, 1, 2).add_(w * w)
    elif name == "view":
        a.view(2, 2)[1].mul_(w)
    elif name == "reshape":
        a.reshape(2, 2).mul_(3)
    elif name == "T":
        a.view(2, 2).T[0].mul_(w)
    elif name == "transpose":
        a.view(2, 2).transpose(0, 1).mul_(2)
    elif name == "chained":
        a[1:][:2][1:].mul_(7)
    elif name == "copy_":
        a[1:3].copy_(w)
    elif name == "copy_broadcast":
        a[1:3].copy_(w[1])
    elif name == "fill_":
        a[1:3].fill_(5.0)
    elif name == "fill_tensor":
        a[::2].fill_(w[0] * 3)
    elif name == "zero_":
        a[2:].zero_()
    elif name == "setitem":
        a[1:3][0] = w[1]
    elif name == "setitem_view":
        a.view(2, 2).T[1] = w
    elif name == "masked_fill_":
        v = a[1:]
        m = [True, False, True]
        v.masked_fill_(torch.tensor(m) if lib is torch else clgrad.tensor(m, device=a.device), 0.5)
    elif name == "after_inf":  # copy_ over an inf: the old value must not leak into the result
        a[0:1].div_(0.0)
        a[0:2].copy_(w)
    else:
        raise AssertionError(name)


WRITES = [
    "slice_mul",
    "slice_mul_tensor",
    "select",
    "narrow",
    "view",
    "reshape",
    "T",
    "transpose",
    "chained",
    "copy_",
    "copy_broadcast",
    "fill_",
    "fill_tensor",
    "zero_",
    "setitem",
    "setitem_view",
    "masked_fill_",
    "after_inf",
]


@pytest.mark.parametrize("name", WRITES)
@pytest.mark.parametrize("read", ["base", "view"])
def test_inplace_on_view_of_non_leaf(device, name, read):
    weights = [1.0, 2.0, 3.0, 5.0]
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor([1.0, 2.0, -1.0, 4.0], device=dev, requires_grad=True)
        w = lib.tensor([0.5, -2.0], device=dev, requires_grad=True)
        a = x * 1.5
        v = a[1:]
        _write(lib, name, a, w)
        wt = lib.tensor(weights[: 4 if read == "base" else 3], device=dev)
        out = (a if read == "base" else v) * wt
        out.sum().backward()
        results.append((a.detach(), x.grad, w.grad, a._base is None, type(a.grad_fn).__name__))
    (ta, tx, tw, tbase, tname), (ca, cx, cw, cbase, cname) = results
    assert_close(ca, ta.numpy())
    assert_close(cx, tx.numpy())
    assert (cw is None) == (tw is None)
    if tw is not None:
        assert_close(cw, tw.numpy())
    assert cbase and tbase
    assert cname == tname == "CopySlices"


def test_issue_example(device):
    x = clgrad.tensor([1.0, 1.0, 1.0, 1.0], device=device, requires_grad=True)
    a = x * 1
    v = a[1:3]
    v.mul_(10)
    assert v._base is a and a._base is None
    assert type(a.grad_fn).__name__ == "CopySlices"
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    a.sum().backward()
    assert x.grad.tolist() == [1.0, 10.0, 10.0, 1.0]


def test_view_bases_match_torch(device):
    t = torch.ones(2, 3, requires_grad=True) * 1
    c = clgrad.ones(2, 3, device=device, requires_grad=True) * 1
    for f in [
        lambda a: a[0],
        lambda a: a[:, 1:],
        lambda a: a.T,
        lambda a: a.view(6),
        lambda a: a.reshape(3, 2),
        lambda a: a.narrow(1, 0, 2),
        lambda a: a.select(1, 1),
        lambda a: a.split(1)[1],
        lambda a: a.unbind(1)[2],
        lambda a: a.chunk(2)[0],
        lambda a: a[0][1:],
        lambda a: a.unsqueeze(0),
        lambda a: a.t().reshape(6),  # a copy: not a view
        lambda a: a.detach(),  # not a view in PyTorch either
        lambda a: a * 2,
    ]:
        tv, cv = f(t), f(c)
        assert (cv._base is None) == (tv._base is None)
        assert cv._base is None or cv._base is c
        assert cv._is_view() == tv._is_view()


def test_sibling_view_sees_the_write(device):
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        a = x * 1
        v1, v2 = a[0:2], a[1:3]
        v2.mul_(10)
        assert type(v1.grad_fn).__name__ == "AsStridedBackward0"
        (v1 * lib.tensor([1.0, 2.0]).to(dev)).sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1] == [1.0, 20.0, 0.0]


def test_view_of_base_without_grad_gets_grad(device):
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        a = lib.zeros(4, device=dev)
        v1 = a[:2]
        w = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        a[1:3].copy_(w)
        assert a.requires_grad and v1.requires_grad
        (v1 * 3).sum().backward()
        results.append(w.grad.tolist())
    assert results[0] == results[1] == [3.0, 0.0]


def test_base_modified_in_place_then_view_used(device):
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        a = x * 1
        v = a[1:]
        a.mul_(3)
        v.sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1] == [0.0, 3.0, 3.0]


def test_double_backward_through_copyslices(device):
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        a = x * x
        a[1:].mul_(x[1:])
        (g,) = (torch.autograd if lib is torch else autograd).grad(a.sum(), x, create_graph=True)
        (gg,) = (torch.autograd if lib is torch else autograd).grad(g.sum(), x)
        results.append((g.tolist(), gg.tolist()))
    assert results[0] == results[1]


def test_write_into_expanded_view_raises(device):
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        x = lib.ones(1, device=dev, requires_grad=True)
        a = x * 1
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            a.expand(3).mul_(2)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            a.expand(3)[:] = 5.0
        e = lib.ones(1, device=dev).expand(3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            e.add_(1)
        assert a.tolist() == [1.0]


# ---- 3. in-place rules on views: of a leaf, of multi-output ops, made without grad -------------
LEAF_VIEWS = {
    "slice": lambda p: p[:2],
    "select": lambda p: p[1],
    "T": lambda p: p.view(2, 2).T,
    "view": lambda p: p.view(2, 2),
    "split": lambda p: p.split(2)[0],
    "split_sizes": lambda p: p.split([1, 3])[1],
    "unbind": lambda p: p.unbind()[1],
    "chunk": lambda p: p.chunk(2)[1],
    "chained_split": lambda p: p.split(2)[0][1:],
}


@pytest.mark.parametrize("name", list(LEAF_VIEWS))
def test_inplace_on_view_of_leaf(device, name):
    make = LEAF_VIEWS[name]
    tp = torch.ones(4, requires_grad=True)
    cp = clgrad.ones(4, device=device, requires_grad=True)
    want = _err(lambda: make(tp).add_(1))
    got = _err(lambda: make(cp).add_(1))
    assert type(want) is RuntimeError and type(got) is RuntimeError
    assert str(got) == str(want)
    assert cp.tolist() == [1.0] * 4  # nothing written
    # inside no_grad it is allowed (optimizers do it)
    with torch.no_grad():
        make(tp).add_(1)
    with clgrad.no_grad():
        make(cp).add_(1)
    assert cp.tolist() == tp.tolist()
    assert cp.is_leaf and cp.requires_grad


@pytest.mark.parametrize("name", ["split", "split_sizes", "unbind", "chunk", "chained_split"])
def test_inplace_on_output_of_multi_view_op(device, name):
    make = LEAF_VIEWS[name]
    for other in (False, True):
        errors = []
        for lib, dev in ((torch, "cpu"), (clgrad, device)):
            x = lib.ones(4, device=dev, requires_grad=True)
            a = x * 1 if not other else lib.ones(4, device=dev)
            v = make(a)
            arg = lib.ones(v.shape, device=dev, requires_grad=True) if other else 2.0
            errors.append(_err(lambda v=v, arg=arg: v.mul_(arg)))
        want, got = errors
        assert type(want) is RuntimeError and type(got) is RuntimeError
        assert str(got) == str(want)
    # a single piece too; none of this without grad
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        a = lib.ones(4, device=dev, requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="Output 0 of Split is a view"):
            a.split(4)[0].mul_(2)
        lib.ones(4, device=dev).split(2)[0].mul_(2)
        with (torch if lib is torch else clgrad).no_grad():
            make(a).mul_(2)


def test_inplace_on_view_made_without_grad(device):
    for make_base in (lambda lib, d: lib.ones(4, device=d, requires_grad=True), None):
        errors = []
        for lib, dev in ((torch, "cpu"), (clgrad, device)):
            grad_lib = torch if lib is torch else clgrad
            if make_base is not None:
                base = make_base(lib, dev) * 1
                arg = 2.0
            else:
                base = lib.ones(4, device=dev)
                arg = lib.ones(2, device=dev, requires_grad=True)
            with grad_lib.no_grad():
                v = base[:2]
            errors.append(_err(lambda v=v, arg=arg: v.mul_(arg)))
        want, got = errors
        assert type(want) is RuntimeError and type(got) is RuntimeError
        assert str(got) == str(want)


def test_leaf_inplace_still_raises(device):
    p = clgrad.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        p.add_(1)


# ---- 4. grad mode comes back on every exit -----------------------------------------------------
class _Double(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class _Interrupted(autograd.Function):
    fail_in = "forward"

    @staticmethod
    def forward(ctx, x):
        if _Interrupted.fail_in == "forward":
            raise KeyboardInterrupt
        return x * 1

    @staticmethod
    def backward(ctx, g):
        raise KeyboardInterrupt


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_custom_function_keeps_grad_mode_off(device, mode):
    x = clgrad.ones(2, device=device, requires_grad=True)
    block = {
        "no_grad": clgrad.no_grad,
        "inference_mode": clgrad.inference_mode,
        "set_grad_enabled": lambda: clgrad.set_grad_enabled(False),
    }[mode]
    with block():
        y = _Double.apply(x)
        assert not clgrad.is_grad_enabled()
        z = x * 3
    assert clgrad.is_grad_enabled()
    assert not y.requires_grad and not z.requires_grad


@pytest.mark.parametrize("grad_on", [True, False])
def test_keyboard_interrupt_in_forward_restores_grad_mode(device, grad_on):
    x = clgrad.ones(2, device=device, requires_grad=True)
    _Interrupted.fail_in = "forward"
    with clgrad.set_grad_enabled(grad_on):
        with pytest.raises(KeyboardInterrupt):
            _Interrupted.apply(x)
        assert clgrad.is_grad_enabled() is grad_on
    assert clgrad.is_grad_enabled()


def _interrupt(g):
    raise KeyboardInterrupt


@pytest.mark.parametrize("grad_on", [True, False])
@pytest.mark.parametrize("create_graph", [False, True])
def test_keyboard_interrupt_in_backward_restores_grad_mode(device, grad_on, create_graph):
    x = clgrad.ones(2, device=device, requires_grad=True)
    _Interrupted.fail_in = "backward"
    y = _Interrupted.apply(x).sum()
    z = (x * 2).sum()
    x.register_hook(_interrupt)
    for loss in (y, z):
        with clgrad.set_grad_enabled(grad_on):
            with pytest.raises(KeyboardInterrupt):
                loss.backward(create_graph=create_graph)
            assert clgrad.is_grad_enabled() is grad_on
        assert clgrad.is_grad_enabled()


def test_keyboard_interrupt_in_grad_mode_decorator(device):
    @clgrad.no_grad()
    def f():
        assert not clgrad.is_grad_enabled()
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        f()
    assert clgrad.is_grad_enabled()

    @clgrad.enable_grad()
    def g():
        raise KeyboardInterrupt

    with clgrad.no_grad():
        with pytest.raises(KeyboardInterrupt):
            g()
        assert not clgrad.is_grad_enabled()
    assert clgrad.is_grad_enabled()


# ---- 5. .grad assignment is checked --------------------------------------------------------------
def test_grad_assignment_dtype(device):
    tp = torch.ones(2, requires_grad=True)
    want = _err(lambda: setattr(tp, "grad", torch.ones(2, dtype=torch.float16)))
    p = clgrad.ones(2, device=device, requires_grad=True)
    got = _err(lambda: setattr(p, "grad", clgrad.ones(2, dtype=clgrad.float16, device=device)))
    assert type(want) is RuntimeError and type(got) is RuntimeError
    assert "assign" in str(got) and "dtype" in str(got)
    assert p.grad is None
    p.grad = clgrad.ones(2, device=device)  # the right one is accepted


def test_grad_assignment_shape(device):
    tp = torch.ones(2, requires_grad=True)
    want = _err(lambda: setattr(tp, "grad", torch.ones(3)))
    p = clgrad.ones(2, device=device, requires_grad=True)
    got = _err(lambda: setattr(p, "grad", clgrad.ones(3, device=device)))
    assert type(want) is RuntimeError and type(got) is RuntimeError
    assert p.grad is None
    with pytest.raises(TypeError):
        p.grad = [1.0, 1.0]


@pytest.mark.skipif(not CL_DEVICES, reason="needs an OpenCL device besides cpu")
def test_grad_assignment_device():
    want = _err(
        lambda: setattr(torch.ones(2, requires_grad=True), "grad", torch.ones(2, device="meta"))
    )
    p = clgrad.ones(2, requires_grad=True)
    got = _err(lambda: setattr(p, "grad", clgrad.ones(2, device=CL_DEVICES[0])))
    assert type(want) is RuntimeError and type(got) is RuntimeError
    assert "device" in str(got)
    q = clgrad.ones(2, device=CL_DEVICES[0], requires_grad=True)
    with pytest.raises(RuntimeError, match="device"):
        q.grad = clgrad.ones(2)
    # the optimizer never sees a half-valid set of gradients
    opt = clgrad.optim.SGD([p, q], lr=0.1)
    p.grad = clgrad.ones(2)
    opt.step()
    assert p.tolist() == [0.9, 0.9] or np.allclose(p.tolist(), 0.9)


# ---- 6. gradient details ---------------------------------------------------------------------
def test_sum_dtype_gradient_in_input_dtype(device):
    if device != "cpu" and not clgrad.device(device).supports(clgrad.float64):
        pytest.skip("no float64 on this device")
    x = clgrad.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.sum(dtype=clgrad.float64)
    assert y.dtype == clgrad.float64
    y.backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    tx.sum(dtype=torch.float64).backward()
    assert x.grad.dtype == clgrad.float32 and tx.grad.dtype == torch.float32
    assert_close(x.grad, tx.grad.numpy())


@pytest.mark.parametrize("base", [0, 0.0, 2.0, -2.0])
def test_pow_number_base_gradient(device, base):
    values = [-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]
    x = clgrad.tensor(values, device=device, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    y, ty = base**x, base**tx
    y.sum().backward()
    ty.sum().backward()
    assert_close(y, ty.detach().numpy())
    assert_close(x.grad, tx.grad.numpy())


def test_pow_tensor_base_zero_gradient(device):
    values = [-1.0, 0.0, 0.5, 2.0]
    e = clgrad.tensor(values, device=device, requires_grad=True)
    b = clgrad.zeros(4, device=device, requires_grad=True)
    te = torch.tensor(values, requires_grad=True)
    tb = torch.zeros(4, requires_grad=True)
    (b**e).sum().backward()
    (tb**te).sum().backward()
    assert_close(e.grad, te.grad.numpy())
    assert_close(b.grad, tb.grad.numpy())


def test_gelu_tanh_gradient_large_inputs(device):
    xs = np.concatenate([np.linspace(-50, 50, 2001), [-1e4, 1e4]]).astype(np.float32)
    x = clgrad.tensor(xs, device=device, requires_grad=True)
    tx = torch.tensor(xs, requires_grad=True)
    y = clgrad.nn.functional.gelu(x, approximate="tanh")
    ty = torch.nn.functional.gelu(tx, approximate="tanh")
    y.sum().backward()
    ty.sum().backward()
    assert_close(y, ty.detach().numpy())
    assert_close(x.grad, tx.grad.numpy())
    # the second derivative too
    x2 = clgrad.tensor(xs[::50], device=device, requires_grad=True)
    tx2 = torch.tensor(xs[::50], requires_grad=True)
    (g,) = autograd.grad(
        clgrad.nn.functional.gelu(x2, approximate="tanh").sum(), x2, create_graph=True
    )
    (tg,) = torch.autograd.grad(
        torch.nn.functional.gelu(tx2, approximate="tanh").sum(), tx2, create_graph=True
    )
    g.sum().backward()
    tg.sum().backward()
    assert_close(x2.grad, tx2.grad.numpy(), atol=1e-4)


def test_overlapping_as_strided_gradient_from_a_strided_gradient(device):
    """The gradient of an overlapping as_strided view adds the incoming gradient into one
    location per element; an incoming gradient that is not contiguous is copied first, and
    that copy must be made (it died before the scatter that reads it was queued, and was left
    out as a dead store: the gradient was garbage)."""
    results = []
    for lib, dev in ((clgrad, device), (torch, "cpu")):
        x = lib.arange(6.0, device=dev).requires_grad_()
        g = lib.arange(9.0, device=dev).reshape(3, 3).t()
        x.as_strided((3, 3), (1, 1)).backward(g)
        results.append(x.grad.tolist())
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["conv2d", "conv1d", "group_norm"])
def test_ops_return_tensors_of_their_own(device, name):
    """An op whose forward views a temporary of its own (conv2d's reshaped product, viewed
    under forward's no_grad) returns a tensor of its own, as PyTorch's native ops: no _base,
    and an in-place write into a slice of it records and differentiates (it raised "A view
    was created in no_grad mode")."""
    grads = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        F = m.nn.functional
        x = m.tensor(np.linspace(-1, 1, 2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5))
        w = m.tensor(np.linspace(-1, 1, 4 * 3 * 9, dtype=np.float32).reshape(4, 3, 3, 3))
        x, w = x.to(dev).requires_grad_(), w.to(dev).requires_grad_()
        if name == "conv2d":
            y = F.conv2d(x, w)
        elif name == "conv1d":
            y = F.conv1d(x[:, :, 0], w[:, :, 0])
        else:
            y = F.group_norm(x, 3, weight=w[0, :, 0, 0])
        assert y._base is None
        y[-1:].mul_(3)
        (y * y).sum().backward()
        grads.append((x.grad.cpu().numpy(), w.grad.cpu().numpy()))
        with m.no_grad():
            z = F.conv2d(x, w)
        assert z._base is None
        z.add_(1)  # outside no_grad too
    for ours, theirs in zip(grads[1], grads[0]):
        assert_close(ours, theirs, rtol=1e-3, atol=1e-3)


SAVES = {
    # (op, what the write goes into: its input or its output); torch's outcome decides
    "x ** 2, output written": (lambda m, y: y**2, "out"),
    "pow(x, 3), output written": (lambda m, y: m.pow(y, 3), "out"),
    "square, output written": (lambda m, y: m.square(y), "out"),
    "exp, output written": (lambda m, y: y.exp(), "out"),
    "pow(x, tensor), output written": (
        lambda m, y: m.pow(y, m.full((3,), 2.0, device=y.device, requires_grad=True)),
        "out",
    ),
    "sum, input written": (lambda m, y: y.sum(), "in"),
    "mean, input written": (lambda m, y: y.mean(), "in"),
    "sum(0), input written": (lambda m, y: y.reshape(1, 3).sum(0), "in"),
    "mean keepdim, input written": (lambda m, y: y.reshape(1, 3).mean(-1, keepdim=True), "in"),
    "x * x, input written": (lambda m, y: y * y, "in"),
}


@pytest.mark.parametrize("name", SAVES)
def test_writes_after_an_op_check_only_what_it_saved(device, name):
    """An op saves what its gradient reads, as PyTorch's: pow by a number saves its input (not
    its result), sum and mean nothing but the shape, so writing into those afterwards is fine
    (clgrad raised "modified by an inplace operation"); where torch saved it, the write still
    raises at backward."""
    op, target = SAVES[name]
    outcomes = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        x = m.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        y = x * 1
        z = op(m, y)
        (z if target == "out" else y).mul_(2)
        try:
            z.sum().backward()
            outcomes.append(x.grad.cpu().numpy())
        except RuntimeError:
            outcomes.append("RuntimeError")
    if isinstance(outcomes[0], str):
        assert outcomes[1] == outcomes[0]
    else:
        assert_close(outcomes[1], outcomes[0])


@pytest.mark.parametrize("write", ["zero_", "fill_", "copy_"])
def test_overwriting_a_non_leaf_keeps_the_graph(device, write):
    """Overwriting a whole non-leaf (zero_, fill_, copy_) gives the history before it a zero
    gradient, as PyTorch's: a leaf under it gets a zero .grad (it got None, which optimizers
    treat differently), and a saved output overwritten raises at backward."""
    got = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        x = m.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        y = x * 2
        if write == "copy_":
            y.copy_(m.ones(3, device=dev))
        else:
            getattr(y, write)(*(() if write == "zero_" else (5.0,)))
        (y * 3).sum().backward()
        z = (x * 1).exp()
        getattr(z, write)(*(() if write == "zero_" else (5.0,) if write == "fill_" else (z,)))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        got.append(x.grad.tolist())
    assert got[1] == got[0]
