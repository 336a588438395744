"""PyTorch names a program reaches for that clgrad added for ``import clgrad as torch``:
each against torch (values, dtype, shape, gradient where torch has one, error class) on every
test device, in float32 and one int dtype; and the nn.functional activations' in-place forms."""

from __future__ import annotations

import pytest
import torch
from torch_helper import Input, compare

import clgrad

F32 = Input((3, 4), "float32")
I64 = Input((3, 4), "int64", -3, 3)
VEC = Input((5,), "float32")
IVEC = Input((6,), "int64", 0, 4)

# (id, fn, inputs, grad): fn takes the module first
CASES = [
    ("swapaxes", lambda t, x: t.swapaxes(x, 0, 1), [F32], True),
    ("swapdims", lambda t, x: t.swapdims(x, 0, 1), [I64], False),
    ("moveaxis", lambda t, x: t.moveaxis(x.reshape(3, 2, 2), 0, -1), [F32], True),
    ("moveaxis-method", lambda x: x.moveaxis(0, 1), [F32], True),
    ("atleast_1d", lambda t, x: t.atleast_1d(x.sum()), [F32], True),
    ("atleast_2d", lambda t, x: t.atleast_2d(x), [VEC], True),
    ("atleast_3d-vec", lambda t, x: t.atleast_3d(x), [VEC], True),
    ("atleast_3d-mat", lambda t, x: t.atleast_3d(x), [I64], False),
    ("atleast_2d-many", lambda t, x, y: t.atleast_2d(x, y), [VEC, F32], True),
    ("hstack", lambda t, x, y: t.hstack([x, y]), [F32, F32], True),
    ("hstack-vec", lambda t, x, y: t.hstack((x, y)), [VEC, VEC], True),
    ("vstack", lambda t, x, y: t.vstack([x[0], y]), [F32, F32], True),
    ("row_stack", lambda t, x, y: t.row_stack([x, y]), [VEC, VEC], True),
    ("dstack", lambda t, x, y: t.dstack([x, y]), [F32, F32], True),
    ("column_stack", lambda t, x, y: t.column_stack([x[:, 0], y]), [F32, F32], True),
    ("tensor_split-n", lambda t, x: t.tensor_split(x, 3, dim=1), [F32], True),
    ("tensor_split-idx", lambda t, x: t.tensor_split(x, [1, 3], dim=1), [I64], False),
    ("tensor_split-method", lambda x: x.tensor_split(2), [F32], True),
    ("hsplit", lambda t, x: t.hsplit(x, 2), [F32], True),
    ("vsplit", lambda t, x: t.vsplit(x, [1]), [F32], True),
    ("dsplit", lambda t, x: t.dsplit(x.reshape(3, 2, 2), 2), [F32], True),
    ("hsplit-indivisible", lambda t, x: t.hsplit(x, 3), [F32], False),
    ("vsplit-1d", lambda t, x: t.vsplit(x, 1), [VEC], False),
    ("ravel", lambda t, x: t.ravel(x.T), [F32], True),
    ("tile", lambda t, x: t.tile(x, (2,)), [F32], True),
    ("tile-method", lambda x: x.tile((2, 1, 1)), [I64], False),
    ("broadcast_tensors", lambda t, x, y: t.broadcast_tensors(x, y[:, :1]), [VEC, F32], False),
    ("block_diag", lambda t, x, y: t.block_diag(x, y[:2], x[:2].sum()), [VEC, F32], True),
    ("cartesian_prod", lambda t, x, y: t.cartesian_prod(x[:3], y[:2]), [VEC, VEC], True),
    ("combinations", lambda t, x: t.combinations(x), [VEC], True),
    ("combinations-r3", lambda t, x: t.combinations(x, 3, with_replacement=True), [IVEC], False),
    ("combinations-2d", lambda t, x: t.combinations(x), [F32], False),
    ("diff", lambda t, x: t.diff(x), [F32], True),
    ("diff-n2-dim0", lambda t, x: t.diff(x, n=2, dim=0), [I64], False),
    ("diff-prepend", lambda t, x, y: t.diff(x, dim=1, prepend=y[:, :1]), [F32, F32], True),
    ("diff-bool", lambda t, x: t.diff(x > 0), [F32], False),
    ("argwhere", lambda t, x: t.argwhere(x), [I64], False),
    ("rsub", lambda t, x, y: t.rsub(x, y, alpha=2), [F32, F32], True),
    ("rsub-scalar", lambda t, x: t.rsub(x, 3), [I64], False),
    (
        "addcmul",
        lambda t, x, y, z: t.addcmul(x, y, z, value=0.5),
        [F32, F32, VEC.__class__((4,), "float32")],
        True,
    ),
    (
        "addcdiv",
        lambda t, x, y, z: t.addcdiv(x, y, z, value=2),
        [F32, F32, Input((4,), "float32", nonzero=True)],
        True,
    ),
    ("addcdiv-int", lambda t, x, y: t.addcdiv(x, y, y), [I64, I64], False),
    ("addcmul_", lambda x, y, z: x.clone().addcmul_(y, z), [F32, F32, F32], True),
    ("nan_to_num", lambda t, x: t.nan_to_num(t.log(x)), [F32], True),
    (
        "nan_to_num-args",
        lambda t, x: t.nan_to_num(x / 0, nan=1.0, posinf=2.0, neginf=-2.0),
        [F32],
        False,
    ),
    ("nan_to_num-int", lambda t, x: t.nan_to_num(x), [I64], False),
    ("nanmean", lambda t, x: t.nanmean(t.log(x), dim=1), [F32], True),
    ("nanmean-int", lambda t, x: t.nanmean(x), [I64], False),
    ("cov", lambda t, x: t.cov(x), [F32], True),
    ("cov-int", lambda t, x: t.cov(x, correction=0), [I64], False),
    (
        "cov-weights",
        lambda t, x, w: t.cov(x, fweights=(w * 0 + 2).long(), aweights=w.abs()),
        [F32, Input((4,), "float32", 0.5, 2)],
        True,
    ),
    ("corrcoef", lambda t, x: t.corrcoef(x), [F32], True),
    ("searchsorted", lambda t, x, v: t.searchsorted(x.sort().values, v), [VEC, F32], False),
    (
        "searchsorted-right-int",
        lambda t, x, v: t.searchsorted(x.sort().values, v, right=True),
        [IVEC, I64],
        False,
    ),
    (
        "searchsorted-nd",
        lambda t, x, v: t.searchsorted(x.sort().values, v, out_int32=True),
        [F32, F32],
        False,
    ),
    ("searchsorted-side", lambda t, x: t.searchsorted(x, x, side="middle"), [VEC], False),
    ("bucketize", lambda t, x, v: t.bucketize(v, x.sort().values), [VEC, F32], False),
    (
        "bucketize-right",
        lambda t, x, v: t.bucketize(v, x.sort().values, right=True),
        [IVEC, I64],
        False,
    ),
    ("histc", lambda t, x: t.histc(x, bins=5, min=-2, max=2), [F32], False),
    ("histc-auto", lambda t, x: t.histc(x, bins=4), [F32], False),
    ("histc-int", lambda t, x: t.histc(x), [I64], False),
    ("bincount", lambda t, x: t.bincount(x, minlength=7), [IVEC], False),
    ("bincount-weights", lambda t, x, w: t.bincount(x, w), [IVEC, Input((6,), "float32")], False),
    ("bincount-negative", lambda t, x: t.bincount(x), [Input((4,), "int64", -2, -1)], False),
    ("unique", lambda t, x: t.unique(x, return_inverse=True, return_counts=True), [I64], False),
    ("unique-dim", lambda t, x: t.unique(x[:, :1] > 0, dim=0), [F32], False),
    ("unique-method", lambda x: x.unique(), [IVEC], False),
    (
        "unique_consecutive",
        lambda t, x: t.unique_consecutive(x, return_inverse=True, return_counts=True),
        [IVEC],
        False,
    ),
    ("clamp_min_", lambda x: x.clone().clamp_min_(0.5), [F32], True),
    ("clip_", lambda x: x.clone().clip_(-1, 1), [F32], True),
    ("square_", lambda x: x.clone().square_(), [F32], True),
    ("type_as", lambda x, y: x.type_as(y), [F32, I64], False),
    (
        "greater",
        lambda t, x, y: (t.greater(x, y), t.less_equal(x, y), t.not_equal(x, y)),
        [F32, F32],
        False,
    ),
    ("linalg.vector_norm", lambda t, x: t.linalg.vector_norm(x, ord=3, dim=1), [F32], True),
    ("linalg.vector_norm-int", lambda t, x: t.linalg.vector_norm(x), [I64], False),
    (
        "linalg.matrix_norm",
        lambda t, x: (t.linalg.matrix_norm(x), t.linalg.matrix_norm(x, 1)),
        [F32],
        True,
    ),
    (
        "linalg.matrix_norm-inf",
        lambda t, x: t.linalg.matrix_norm(x, float("-inf"), keepdim=True),
        [F32],
        True,
    ),
    (
        "linalg.norm",
        lambda t, x: (
            t.linalg.norm(x),
            t.linalg.norm(x, dim=0),
            t.linalg.norm(x, ord=float("inf")),
        ),
        [F32],
        True,
    ),
    ("linalg.multi_dot", lambda t, x, y: t.linalg.multi_dot([x, y.T, x]), [F32, F32], True),
    ("linalg.vecdot", lambda t, x, y: t.linalg.vecdot(x, y), [F32, F32], True),
    (
        "special",
        lambda t, x: (
            t.special.expit(x),
            t.special.entr(x),
            t.special.ndtr(x),
            t.special.log_ndtr(x),
            t.special.softmax(x, 1),
        ),
        [F32],
        True,
    ),
    ("special-entr-int", lambda t, x: t.special.entr(x), [I64], False),
]


@pytest.mark.parametrize("fn, inputs, grad", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_against_torch(fn, inputs, grad):
    compare(fn, *inputs, grad=grad, layouts=["contiguous"])


@pytest.mark.parametrize(
    "name, args",
    [("relu6", ()), ("hardtanh", (-0.5, 0.5)), ("leaky_relu", (0.2,)), ("elu", (0.7,)),
     ("selu", ()), ("celu", (1.5,)), ("hardsigmoid", ()), ("hardswish", ()), ("mish", ()),
     ("silu", ()), ("threshold", (0.1, 2.0)), ("rrelu", (0.1, 0.3))],
)  # fmt: skip
def test_functional_inplace(name, args):
    """``F.<name>(x, ..., inplace=True)`` on a non-leaf: written into it, gradient right."""
    compare(
        lambda t, x: getattr(t.nn.functional, name)(x * 1, *args, inplace=True),
        F32,
        layouts=["contiguous"],
    )


@pytest.mark.parametrize("name", ["hardtanh_", "leaky_relu_", "elu_", "selu_", "celu_"])
def test_functional_underscore(name):
    compare(lambda t, x: getattr(t.nn.functional, name)(x * 1), F32, layouts=["contiguous"])


def test_dtype_info_and_flags():
    for t in (torch, clgrad):
        assert t.finfo(t.float32).eps == torch.finfo(torch.float32).eps
    for name in ("float16", "float32", "float64"):
        a, b = torch.finfo(getattr(torch, name)), clgrad.finfo(getattr(clgrad, name))
        assert (a.bits, a.eps, a.max, a.min, a.tiny) == (b.bits, b.eps, b.max, b.min, b.tiny)
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        a, b = torch.iinfo(getattr(torch, name)), clgrad.iinfo(getattr(clgrad, name))
        assert (a.bits, a.max, a.min) == (b.bits, b.max, b.min)
    with pytest.raises(TypeError):
        clgrad.finfo(clgrad.int32)
    with pytest.raises(TypeError):
        clgrad.iinfo(clgrad.float32)
    names = ("bool", "uint8", "int64", "float16", "float32")
    for a in names:
        for b in names:
            want = torch.can_cast(getattr(torch, a), getattr(torch, b))
            assert clgrad.can_cast(getattr(clgrad, a), getattr(clgrad, b)) == want, (a, b)
    x = clgrad.zeros(2, 3)
    assert clgrad.numel(x) == 6 and clgrad.is_floating_point(x)
    assert (x.nbytes, x.itemsize, x.ndimension(), x.is_cpu, x.get_device()) == (24, 4, 2, True, -1)
    assert x.is_contiguous(memory_format=clgrad.contiguous_format)
    y = clgrad.zeros(1, 4, 5, 3).permute(0, 3, 1, 2)
    assert y.is_contiguous(memory_format=clgrad.channels_last) and not y.is_contiguous()
    assert x[1].data_ptr() == x[1:].data_ptr() != x.data_ptr()
    z = clgrad.tensor([1.0, 2.0]).apply_(lambda v: v * 10)
    assert z.tolist() == [10.0, 20.0]
    clgrad.use_deterministic_algorithms(True)
    assert clgrad.are_deterministic_algorithms_enabled()
    clgrad.use_deterministic_algorithms(False)
    clgrad.set_num_threads(clgrad.get_num_threads())
    clgrad.set_default_tensor_type(clgrad.DoubleTensor)
    try:
        assert clgrad.get_default_dtype() is clgrad.float64
    finally:
        clgrad.set_default_tensor_type("torch.FloatTensor")
    assert clgrad.get_default_dtype() is clgrad.float32
