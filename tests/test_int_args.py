"""Int arguments given as one-element integer tensors (``x.select(0, torch.tensor(1))``), as
PyTorch's argument parser takes them through ``__index__``; and the argument forms and edge
cases of PyTorch's OpInfo samples that clgrad answered differently (a shape given as one int,
``spacing=None``, positional ``to`` flags, 0-d and 0 x 0 inputs, integer dtypes, NaN). Each
case runs with torch and with clgrad on every test device: the same values, shape and dtype, or
the same exception class.

A tensor that reached a view's offset unconverted made wrong views (``select`` read the wrong
row) and, on an OpenCL device, deadlocked: the launch's argument called ``__index__``, which
reads the device, from inside the flush that was queueing it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import clgrad

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


CASES = {
    "select": lambda t, x, i: x.select(1, i(2)),
    "select-float-index": lambda t, x, i: x.select(1, i(2.0)),
    "narrow": lambda t, x, i: x.narrow(0, i(1), 2),
    "narrow-length": lambda t, x, i: x.narrow(i(2), 1, i(3)),
    "narrow-float-start": lambda t, x, i: x.narrow(0, i(1.0), 2),
    "narrow-1d-start": lambda t, x, i: x.narrow(0, i([1]), 2),
    "diagonal": lambda t, x, i: x.diagonal(i(1), 1, 2),
    "diagonal-float": lambda t, x, i: x.diagonal(i(1.0), 1, 2),
    "diag": lambda t, x, i: t.diag(x[0], i(-1)),
    "diag_embed": lambda t, x, i: t.diag_embed(x[0, 0], i(1)),
    "roll": lambda t, x, i: x.roll(i(2), i(2)),
    "roll-list": lambda t, x, i: x.roll([i(1), 2], [0, i(1)]),
    "flip": lambda t, x, i: x.flip(i(1)),
    "movedim": lambda t, x, i: x.movedim(i(0), i(2)),
    "split": lambda t, x, i: x.split(i(2), 2),
    "split-sizes": lambda t, x, i: x.split([i(1), i(3)], 1),
    "chunk": lambda t, x, i: x.chunk(i(2), i(1)),
    "unfold": lambda t, x, i: x.unfold(i(2), i(2), i(1)),
    "kthvalue": lambda t, x, i: x.kthvalue(i(2), 1),
    "topk": lambda t, x, i: x.topk(i(2), 2),
    "linspace": lambda t, x, i: t.linspace(0, 1, i(4)),
    "logspace": lambda t, x, i: t.logspace(0, 1, i(3)),
    "cumsum-dim": lambda t, x, i: x.cumsum(i(1)),
    "sum-dim": lambda t, x, i: x.sum(i(2)),
    "transpose": lambda t, x, i: x.transpose(i(0), 2),
    "squeeze": lambda t, x, i: x[:1].squeeze(i(0)),
    "index-int": lambda t, x, i: x[i(1), i(2)],
}


def _run(lib, device, fn):
    x = lib.tensor(X) if device is None else lib.tensor(X, device=device)

    def index(v):
        return lib.tensor(v) if device is None else lib.tensor(v, device=device)

    try:
        return fn(lib, x, index), None
    except Exception as e:  # the class is compared
        return None, e


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _flat(o)]
    return [out]


@pytest.mark.parametrize("name", list(CASES))
def test_tensor_as_int_argument(name, device):
    expected, error = _run(torch, None, CASES[name])
    got, got_error = _run(clgrad, device, CASES[name])
    if error is not None:
        assert got_error is not None, f"torch raised {error!r}"
        assert isinstance(got_error, type(error)), (got_error, error)
        return
    assert got_error is None, got_error
    for e, g in zip(_flat(expected), _flat(got), strict=True):
        assert tuple(g.shape) == tuple(e.shape)
        assert str(g.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        np.testing.assert_array_equal(g.cpu().numpy(), e.numpy())


def test_select_by_tensor_index_is_a_view_with_gradient(device):
    x = clgrad.tensor(X, device=device, requires_grad=True)
    row = x.select(0, clgrad.tensor(1, device=device))
    assert row._offset == 20 and isinstance(row._offset, int)
    row.sum().backward()
    expected = np.zeros_like(X)
    expected[1] = 1
    np.testing.assert_array_equal(x.grad.cpu().numpy(), expected)


FORMS = {
    "broadcast_shapes-int": lambda t: t.broadcast_shapes(5, (2, 1)),
    "broadcast_shapes-none": lambda t: t.broadcast_shapes(),
    "gradient-spacing-none": lambda t: t.gradient(t.tensor([1.0, 4.0, 9.0]), spacing=None),
    "to-positional-flags": lambda t: t.ones(2).to("cpu", t.float64, False, True),
    "vander-0d": lambda t: t.linalg.vander(t.tensor(2.0), N=3),
    "vander-0d-no-N": lambda t: t.linalg.vander(t.tensor(2.0)),
    "quantile-0d-keepdim": lambda t: t.quantile(t.tensor(3.0), 0.5, dim=0, keepdim=True),
    "inv_ex-0x0": lambda t: t.linalg.inv_ex(t.zeros(0, 0)),
    "cholesky_ex-0x0": lambda t: t.linalg.cholesky_ex(t.zeros(2, 0, 0)),
    "ldl_factor-0x0": lambda t: t.linalg.ldl_factor(t.zeros(0, 0)),
    "norm-nuc": lambda t: t.norm(t.arange(24.0).reshape(2, 3, 4), p="nuc", dim=(0, 2)),
    "norm-nuc-keepdim": lambda t: t.norm(t.eye(3) * 2, p="nuc", keepdim=True),
    "norm-nuc-3d-no-dim": lambda t: t.norm(t.ones(2, 2, 2), p="nuc"),
    # int64 arange: the bounds and the step truncate before the size is counted
    "arange-int-end": lambda t: t.arange(0.0, -8.000001, -4.0, dtype=t.int64),
    "arange-int-step": lambda t: t.arange(0, 5, 1.5, dtype=t.int64),
    "arange-int-start": lambda t: t.arange(0.7, 3.2, 1.0, dtype=t.int64),
    "arange-int-zero-step": lambda t: t.arange(0, 2, 0.5, dtype=t.int64),
    "arange-sign": lambda t: t.arange(0, -2, 0.5, dtype=t.int64),
    # ...but a narrower integer type counts the size from the given bounds (ATen's arange)
    "arange-int32-end": lambda t: t.arange(0.0, -8.000001, -4.0, dtype=t.int32),
    "arange-int16-step": lambda t: t.arange(0, 5, 1.5, dtype=t.int16),
    "arange-uint8-start": lambda t: t.arange(0.5, 5.7, 1.5, dtype=t.uint8),
    "arange-int32-zero-step": lambda t: t.arange(0, 10, 0.3, dtype=t.int32),
    # the addmm family on integers: beta and alpha truncate (addr refuses floats)
    "addmv-int-float-scalars": lambda t: t.addmv(
        t.tensor([1, 2, 3]), t.ones(3, 2, dtype=t.int64), t.tensor([1, 1]), beta=1.7, alpha=2.9
    ),
    "addmm-int-negative-beta": lambda t: t.addmm(
        t.ones(2, 2, dtype=t.int64), t.ones(2, 2, dtype=t.int64), t.eye(2, dtype=t.int64), beta=-0.5
    ),
    "addr-bool": lambda t: t.addr(
        t.tensor([[True, False], [False, True]]),
        t.tensor([True, False]),
        t.tensor([True, True]),
        beta=3,
        alpha=2,
    ),
    "addr-bool-beta-0": lambda t: t.addr(
        t.tensor([[True, False], [False, True]]),
        t.tensor([False, True]),
        t.tensor([True, True]),
        beta=0,
    ),
    "addr-int-float-beta": lambda t: t.addr(
        t.zeros(2, 2, dtype=t.int64), t.tensor([1, 2]), t.tensor([1, 2]), beta=1.5
    ),
    "squeeze-no-dims": lambda t: t.zeros(1, 2, 1).squeeze(()),
    "sum_to_size-0d-bool": lambda t: t.tensor(True).sum_to_size(()),
    "log_ndtr-bool": lambda t: t.special.log_ndtr(t.tensor([True, False])),
    "log_ndtr-int": lambda t: t.special.log_ndtr(t.tensor([-3, 0, 2])),
    "diff-n0-ignores-prepend": lambda t: t.diff(t.ones(2, 3), n=0, dim=0, prepend=t.zeros(1, 3)),
    "digamma-signed-zero": lambda t: t.digamma(t.tensor([0.0, -0.0, -1.0, 0.5])),
    "threshold-nan": lambda t: t.nn.functional.threshold(
        t.tensor([float("nan"), 0.5, -1.0, 0.1]), 0.1, -9.0
    ),
    "multilabel_margin-repeated-class": lambda t: t.nn.functional.multilabel_margin_loss(
        t.tensor([[0.1, 0.2, 0.4, 0.8, 0.3]]), t.tensor([[3, 3, 0, -1, 1]])
    ),
    "multilabel_margin-0d": lambda t: t.nn.functional.multilabel_margin_loss(
        t.tensor(0.5), t.tensor(0)
    ),
    "multi_margin-0d": lambda t: t.nn.functional.multi_margin_loss(t.tensor(0.5), t.tensor(0)),
    "avg_pool1d-int64-truncates": lambda t: t.nn.functional.avg_pool1d(
        t.tensor([[[-7, 2, 5, 3, -1, 4]]]), 3, 1, 1, count_include_pad=False
    ),
    "avg_pool2d-int64-divisor": lambda t: t.nn.functional.avg_pool2d(
        t.tensor([[[[-7, 2, 5, 3]]]]), (1, 2), divisor_override=3
    ),
    "avg_pool2d-int32-refused": lambda t: t.nn.functional.avg_pool2d(
        t.ones(1, 1, 2, 2, dtype=t.int32), 2
    ),
    "rms_norm-float16-large": lambda t: t.nn.functional.rms_norm(
        t.full((2, 3), 300.0, dtype=t.float16), (3,)
    ),
}


@pytest.mark.parametrize("name", list(FORMS))
def test_argument_forms(name):
    try:
        expected, error = FORMS[name](torch), None
    except Exception as e:
        expected, error = None, e
    if error is not None:
        with pytest.raises(type(error)):
            FORMS[name](clgrad)
        return
    got = FORMS[name](clgrad)
    if isinstance(expected, torch.Size):
        assert tuple(got) == tuple(expected)
        return
    for e, g in zip(_flat(expected), _flat(got), strict=True):
        assert tuple(g.shape) == tuple(e.shape)
        assert str(g.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-5)


def test_norm_nuc_gradient():
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float64)
    expected = torch.tensor(a, requires_grad=True)
    torch.norm(expected, p="nuc").backward()
    got = clgrad.tensor(a, requires_grad=True)
    clgrad.norm(got, p="nuc").backward()
    np.testing.assert_allclose(got.grad.numpy(), expected.grad.numpy(), rtol=1e-7, atol=1e-9)
