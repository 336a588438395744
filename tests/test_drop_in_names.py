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
    # the remaining top-level names
    ("isin", lambda t, x, y: t.isin(x, y[:2]), [I64, I64], False),
    ("isin-invert", lambda t, x: t.isin(x, 2, invert=True), [I64], False),
    ("inner", lambda t, x, y: t.inner(x, y), [F32, F32], True),
    ("inner-scalar", lambda t, x, y: t.inner(x, y.sum()), [F32, F32], True),
    ("dist", lambda t, x, y: (t.dist(x, y), t.dist(x, y[0], 3)), [F32, F32], True),
    ("cdist", lambda t, x, y: t.cdist(x, y), [F32, Input((5, 4), "float32")], True),
    ("cdist-p1", lambda t, x, y: t.cdist(x, y, p=1), [F32, Input((2, 4), "float32")], True),
    ("cdist-p3", lambda t, x, y: t.cdist(x, y, p=3.0), [F32, Input((2, 4), "float32")], True),
    ("cdist-inf", lambda t, x, y: t.cdist(x, y, p=float("inf")), [F32, F32], False),
    (
        "cdist-batch",
        lambda t, x, y: t.cdist(x.reshape(3, 2, 2), y.reshape(3, 2, 2)),
        [F32, F32],
        True,
    ),
    ("cdist-self", lambda t, x: t.cdist(x, x), [F32], True),
    ("tril_indices", lambda t: (t.tril_indices(3, 4, 1), t.triu_indices(4, 3, -1)), [], False),
    ("unflatten", lambda t, x: t.unflatten(x, 1, (2, -1)), [F32], True),
    ("select", lambda t, x: t.select(x, 1, -1), [F32], True),
    ("narrow_copy", lambda t, x: t.narrow_copy(x, 1, 1, 2), [F32], True),
    ("scalar_tensor", lambda t: (t.scalar_tensor(3), t.scalar_tensor(2, dtype=t.int64)), [], False),
    ("trapezoid", lambda t, y: (t.trapezoid(y), t.trapezoid(y, dx=0.5, dim=0)), [F32], True),
    ("trapezoid-x", lambda t, y, x: t.trapezoid(y, x[0]), [F32, F32], True),
    ("trapz", lambda t, y, x: t.trapz(y, x, dim=0), [F32, F32], True),
    ("cumulative_trapezoid", lambda t, y, x: t.cumulative_trapezoid(y, x[0]), [F32, F32], True),
    ("trapezoid-int", lambda t, y: t.trapezoid(y), [I64], False),
    # torch's own vander backward fails (it writes a saved tensor in place): values only
    ("vander", lambda t, x: (t.vander(x), t.vander(x, 3, increasing=True)), [VEC], False),
    ("vander-int", lambda t, x: t.vander(x), [IVEC], False),
    ("linalg.vander", lambda t, x: t.linalg.vander(x, N=3), [F32], True),
    ("quantile", lambda t, x: t.quantile(x, 0.3), [F32], True),
    (
        "quantile-modes",
        lambda t, x: [
            t.quantile(x, x.new_tensor([0.1, 0.5, 1.0]), dim=1, keepdim=k, interpolation=i)
            for i in ("linear", "lower", "higher", "midpoint", "nearest")
            for k in (False, True)
        ],
        [F32],
        True,
    ),
    ("nanquantile", lambda t, x: t.nanquantile(t.log(x), 0.4, dim=0), [F32], True),
    ("quantile-nan", lambda t, x: t.quantile(t.log(x), 0.4, dim=1), [F32], False),
    ("quantile-int", lambda t, x: t.quantile(x, 0.5), [I64], False),
    ("quantile-q", lambda t, x: t.quantile(x, 1.5), [F32], False),
    ("mode", lambda t, x: t.mode(x), [Input((3, 6), "int64", 0, 2)], False),
    ("mode-float", lambda t, x: t.mode((x * 2).round(), 0, keepdim=True), [F32], True),
    ("renorm", lambda t, x: t.renorm(x, 2, 0, 2.0), [F32], True),
    ("renorm-p1", lambda x: x.renorm(1, 1, 3.0), [F32], True),
    ("select_scatter", lambda t, x, y: t.select_scatter(x, y[0], 0, 1), [F32, F32], True),
    ("slice_scatter", lambda t, x, y: t.slice_scatter(x, y[:, :2], 1, 1, 4, 2), [F32, F32], True),
    ("diagonal_scatter", lambda t, x, y: t.diagonal_scatter(x, y[0, :3], 1), [F32, F32], True),
    ("diagonal_scatter-bad", lambda t, x, y: t.diagonal_scatter(x, y[0]), [F32, F32], False),
    ("chain_matmul", lambda t, x, y: t.chain_matmul(x, y.T, x), [F32, F32], True),
    ("inplace-fns", lambda t, x: (t.relu_(x * 1), t.sigmoid_(x * 1), t.exp_(x * 1)), [F32], True),
    ("inplace-abs", lambda t, x: t.abs_(x.clone()), [I64], False),
    (
        "inplace-addmv_",
        lambda t, x, y, v: t.addmv_(x[:, 0] * 1, y, v[:4], beta=0.5, alpha=2),
        [F32, F32, VEC],
        True,
    ),
    ("inplace-as_strided_", lambda t, x: t.as_strided_(x.clone(), (2, 3), (1, 4), 1), [F32], False),
    ("inplace-resize_as_", lambda t, x, y: t.resize_as_(x.clone(), y[:2, :3]), [I64, F32], False),
    ("gt_", lambda x, y: (x.clone().gt_(y), x.clone().le_(0), x.clone().ne_(y)), [F32, F32], False),
    ("eq_-int", lambda x, y: (x.clone().eq_(y), x.clone().ge_(1)), [I64, I64], False),
    ("unsqueeze_", lambda x: (x * 1).unsqueeze_(1), [F32], True),
    ("squeeze_", lambda x: (x[:1] * 1).squeeze_(), [F32], True),
    ("t_", lambda x: (x * 1).t_(), [F32], True),
    ("transpose_", lambda x: (x * 1).transpose_(0, 1), [F32], True),
    ("swapaxes_", lambda x: x.clone().swapaxes_(0, 1), [I64], False),
    ("cumsum_", lambda x: (x * 1).cumsum_(1), [F32], True),
    ("cumprod_", lambda x: (x * 1).cumprod_(0), [F32], True),
    ("fill_diagonal_", lambda x: (x * 1).fill_diagonal_(2.0), [F32], True),
    (
        "fill_diagonal_-wrap",
        lambda x: x.reshape(6, 2).clone().fill_diagonal_(5, wrap=True),
        [I64],
        False,
    ),
    ("sum_to_size", lambda x: (x.sum_to_size(1, 4), x.sum_to_size((3, 1))), [F32], True),
    ("sum_to_size-bad", lambda x: x.sum_to_size(2, 4), [F32], False),
    ("mT", lambda x: (x.reshape(3, 2, 2).mT, x.mH, x.H, x.T), [F32], True),
    ("H-3d", lambda x: x.reshape(3, 2, 2).H, [F32], False),
    ("mT-1d", lambda x: x[0].mT, [F32], False),
    ("resize_", lambda x: x.clone().resize_(2, 6), [I64], False),
    ("resize_as_", lambda x, y: x.clone().resize_as_(y[:2]), [I64, I64], False),
    ("frexp", lambda t, x: t.frexp(x), [F32], False),
    ("sgn", lambda x: x.sgn(), [F32], False),
    ("sgn-function", lambda t, x: (t.sgn(x), t.sgn(x > 0)), [I64], False),
    ("sgn_", lambda x: (x * 1).sgn_(), [F32], False),
    ("angle", lambda t, x: t.angle(x), [F32], True),
    ("angle-int", lambda t, x: (t.angle(x), x.angle(), t.angle(x > 0)), [I64], False),
    (
        "angle-special",
        lambda t, x: t.angle(t.cat([x, x / 0, -x / 0, x * 0, -(x * 0), (x * 0) / 0])),
        [VEC],
        False,
    ),
    ("as_strided", lambda t, x: t.as_strided(x, (2, 3), (1, 2), 1), [F32], True),
    (
        "complex-api",
        lambda t, x: (t.conj(x), t.conj_physical(x), t.resolve_conj(x), t.resolve_neg(x)),
        [F32],
        True,
    ),
    ("to_dense", lambda x: (x.to_dense(), x.to_dense(dtype=x.dtype)), [F32], True),
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


def test_real_tensors_complex_flags_and_dim_order():
    for t in (torch, clgrad):
        x = t.ones(2, 3, 4)
        assert t.conj(x) is x and t.resolve_conj(x) is x and t.resolve_neg(x) is x
        assert not t.is_conj(x) and not t.is_neg(x) and x.to_dense() is x
    for make in (
        lambda t: t.ones(2, 3),
        lambda t: t.ones(2, 3).t(),
        lambda t: t.ones(2, 3, 4).permute(2, 0, 1),
        lambda t: t.ones(2, 3, 4)[:, ::2].transpose(0, 2),
    ):
        assert make(clgrad).dim_order() == make(torch).dim_order()


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


def test_size_arithmetic():
    s = clgrad.Size([2, 3])
    for got, want in [(s + (4,), torch.Size([2, 3, 4])), ((1,) + s, torch.Size([1, 2, 3])),
                      (s[1:], torch.Size([3])), (s * 2, torch.Size([2, 3, 2, 3]))]:  # fmt: skip
        assert isinstance(got, clgrad.Size) and tuple(got) == tuple(want)
    assert s.numel() == 6 and s[0] == 2 and isinstance(s[0], int)
    with pytest.raises(TypeError):
        s + [1]


def test_memory_format_and_flags():
    x = clgrad.zeros(2, 3, 4, 5)
    for f in (clgrad.zeros_like, clgrad.ones_like, clgrad.empty_like, clgrad.rand_like,
              clgrad.randn_like):  # fmt: skip
        assert f(x, memory_format=clgrad.preserve_format).shape == x.shape
    assert clgrad.full_like(x, 2, memory_format=clgrad.contiguous_format).shape == x.shape
    assert x.clone(memory_format=clgrad.channels_last).is_contiguous()
    assert x.contiguous(memory_format=clgrad.contiguous_format) is x
    assert x.to("cpu", memory_format=clgrad.preserve_format) is x
    y = clgrad.empty_strided((2, 3), (1, 2))
    assert y.stride() == (1, 2) and y.shape == (2, 3)
    assert clgrad.is_same_size(x, clgrad.ones(2, 3, 4, 5)) and not x.is_same_size(y)
    assert not clgrad.is_inference_mode_enabled() and not x.is_inference()
    with clgrad.inference_mode():
        assert clgrad.is_inference_mode_enabled()
    assert not clgrad.is_inference_mode_enabled()
    leaf = clgrad.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.unsqueeze_(0)
    with pytest.raises(RuntimeError):
        leaf.resize_(3)


@pytest.mark.parametrize(
    "options",
    [{}, {"precision": 2}, {"threshold": 5, "edgeitems": 1}, {"linewidth": 40},
     {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"}, {"profile": "full"}],
)  # fmt: skip
def test_printoptions_repr(options):
    """repr as torch's under each print option (and a column with -inf / nan is as wide as its
    finite values, as torch pads it)."""
    nan, inf = float("nan"), float("inf")
    cases = [
        lambda t: t.tensor([0.0, -inf]), lambda t: t.tensor([1.5, -inf, nan]),
        lambda t: t.tensor([[1e-5, -inf]]), lambda t: t.tensor([0.5, 1000.5]),
        lambda t: t.arange(2000.0), lambda t: t.arange(3000).reshape(30, 100),
        lambda t: t.arange(24.0).reshape(2, 3, 4) / 7, lambda t: t.tensor([1e10, 1.0]),
        lambda t: t.tensor([True, False]), lambda t: t.tensor(3.5),
        lambda t: t.arange(30.0).reshape(3, 10) * 1.123, lambda t: t.tensor([-0.0, 0.0]),
    ]  # fmt: skip
    torch.set_printoptions(**options)
    clgrad.set_printoptions(**options)
    try:
        for f in cases:
            assert repr(f(clgrad)) == repr(f(torch)).replace("torch.", "clgrad.")
    finally:
        torch.set_printoptions(profile="default")
        clgrad.set_printoptions(profile="default")
