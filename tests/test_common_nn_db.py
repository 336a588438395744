"""nn modules and losses against torch on the cases torch's own module and criterion tables
(torch.testing._internal.common_nn: module_tests, get_new_module_tests(), criterion_tests) found
differing: each is built with the same arguments in both libraries, torch's state dict loaded
into clgrad's, and the forward result, the gradients, the repr or the exception class compared.
The cases are written out here (torch's testing internals need expecttest)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import supports

import clgrad

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64"]


def need(device, dtype_name):
    if not supports(device, getattr(clgrad, dtype_name)):
        pytest.skip(f"no {dtype_name} on this device")


def assert_matches(got, want, what="result"):
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape}, torch {want.shape}"
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], what
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=what
    )


# ---- multi_margin_loss: the unreduced loss is shaped by the target ---------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "input_shape, target_shape",
    [
        ((10,), (1,)),  # MultiMarginLoss_1d_no_reduce: torch gives shape (1,), clgrad gave ()
        ((1, 10), ()),  # a batch of one with a 0-d target: shape (), clgrad gave (1,)
    ],
    ids=str,
)
def test_multi_margin_loss_unreduced_shape_follows_the_target(
    device, dtype, input_shape, target_shape
):
    need(device, dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(input_shape).astype(dtype)
    y = rng.integers(0, 10, target_shape)
    g = rng.standard_normal(target_shape).astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.multi_margin_loss(tx, torch.tensor(y), reduction="none")
    want.backward(torch.tensor(g))
    cx = clgrad.tensor(x, device=device, requires_grad=True)
    got = clgrad.nn.functional.multi_margin_loss(
        cx, clgrad.tensor(y, device=device), reduction="none"
    )
    assert_matches(got, want)
    got.backward(clgrad.tensor(g, device=device))
    assert_matches(cx.grad, tx.grad, "input gradient")


# ---- Unflatten keeps the size it was given ---------------------------------------------------
def test_unflatten_keeps_the_size_as_given():
    # Unflatten_no_batch_dim: torch's repr shows the torch.Size it was built with
    for size in ([2, 2], (2, 2)):
        assert repr(clgrad.nn.Unflatten(-2, size)) == repr(torch.nn.Unflatten(-2, size))
    got = clgrad.nn.Unflatten(-2, clgrad.Size([2, 2]))
    want = torch.nn.Unflatten(-2, torch.Size([2, 2]))
    assert type(got.unflattened_size) is clgrad.Size
    assert repr(got) == repr(want).replace("torch.", "clgrad.")


def test_unflatten_by_a_list(device):
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    got, want = clgrad.nn.Unflatten(-2, [2, 2]), torch.nn.Unflatten(-2, [2, 2])
    assert got.unflattened_size == [2, 2]  # kept a list (clgrad made it a tuple)
    assert_matches(got(clgrad.tensor(x, device=device)), want(torch.tensor(x)))


@pytest.mark.parametrize("size", [6, (2.0, 3), "23"], ids=repr)
def test_unflatten_refuses_what_is_not_ints(size):
    with pytest.raises(TypeError) as want:
        torch.nn.Unflatten(1, size)
    with pytest.raises(TypeError) as got:
        clgrad.nn.Unflatten(1, size)
    assert str(got.value) == str(want.value)


# ---- EmbeddingBag: scale_grad_by_freq --------------------------------------------------------
def torch_bags(idx, off, weight, mode, padding_idx):
    """torch's embedding_bag built from F.embedding (whose scale_grad_by_freq divides each
    lookup's gradient by its index's count in the input): torch's CPU embedding_bag kernel
    divides by the count of the wrong index (counts[indices_data[i]], i the i-th distinct
    index, not its position), which only its CUDA kernel and F.embedding get right."""
    rows = torch.nn.functional.embedding(torch.tensor(idx).reshape(-1), weight, None, None, 2.0,
                                         True)  # fmt: skip
    flat = idx.reshape(-1)
    starts = np.arange(0, flat.size, idx.shape[1]) if off is None else off
    ends = list(starts[1:]) + [flat.size]
    out = []
    for s, e in zip(starts, ends):
        keep = [j for j in range(s, e) if flat[j] != padding_idx]
        bag = rows[keep].sum(0) if keep else torch.zeros(weight.shape[1])
        out.append(bag / len(keep) if mode == "mean" and keep else bag)
    return torch.stack(out)


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 1])
@pytest.mark.parametrize("layout", ["2d", "offsets"])
def test_embedding_bag_scales_gradient_by_frequency(device, mode, padding_idx, layout):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    if layout == "2d":
        idx, off = np.array([[1, 2, 2, 3], [3, 1, 1, 1]]), None
    else:
        idx, off = np.array([1, 2, 2, 3, 3, 1, 1, 1, 0]), np.array([0, 3, 3, 5])
    kwargs = dict(mode=mode, padding_idx=padding_idx, scale_grad_by_freq=True)
    tm = torch.nn.EmbeddingBag(5, 3, _weight=torch.tensor(w), **kwargs)
    cm = clgrad.nn.EmbeddingBag(5, 3, _weight=clgrad.tensor(w, device=device), **kwargs)
    assert repr(cm) == repr(tm)
    want = torch_bags(idx.reshape(1, -1) if off is not None else idx, off, tm.weight, mode,
                      padding_idx)  # fmt: skip
    got = cm(
        clgrad.tensor(idx, device=device),
        None if off is None else clgrad.tensor(off, device=device),
    )
    assert_matches(got, want)
    g = rng.standard_normal(tuple(want.shape)).astype(np.float32)
    want.backward(torch.tensor(g))
    got.backward(clgrad.tensor(g, device=device))
    assert_matches(cm.weight.grad, tm.weight.grad, "weight gradient")


def test_embedding_bag_scale_grad_by_freq_as_torchs_kernel_where_it_counts_right(device):
    # each index twice: the count torch's CPU kernel reads is right here, its module compared
    w = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    idx = np.array([[1, 1, 2], [2, 0, 0]])
    tm = torch.nn.EmbeddingBag(4, 2, mode="sum", scale_grad_by_freq=True, _weight=torch.tensor(w))
    cm = clgrad.nn.EmbeddingBag(
        4, 2, mode="sum", scale_grad_by_freq=True, _weight=clgrad.tensor(w, device=device)
    )
    want, got = tm(torch.tensor(idx)), cm(clgrad.tensor(idx, device=device))
    assert_matches(got, want)
    want.sum().backward()
    got.sum().backward()
    assert_matches(cm.weight.grad, tm.weight.grad, "weight gradient")


def test_embedding_bag_max_mode_refuses_scale_grad_by_freq():
    idx = np.array([[1, 2]])
    with pytest.raises(ValueError) as want:
        torch.nn.EmbeddingBag(5, 3, mode="max", scale_grad_by_freq=True)(torch.tensor(idx))
    with pytest.raises(ValueError) as got:
        clgrad.nn.EmbeddingBag(5, 3, mode="max", scale_grad_by_freq=True)(clgrad.tensor(idx))
    assert str(got.value) == str(want.value)


def test_embedding_bag_repr_shows_its_options():
    kwargs = dict(max_norm=1.0, norm_type=1.5, mode="max", padding_idx=0)
    assert repr(clgrad.nn.EmbeddingBag(5, 3, **kwargs)) == repr(
        torch.nn.EmbeddingBag(5, 3, **kwargs)
    )


# ---- interpolate on float16 / bfloat16: computed in float32, rounded once ---------------------
INTERP_CASES = [
    # the interpolate_* entries of the table, run on a reduced-precision input
    ("nearest", (1, 2, 4, 4, 4), dict(size=12)),  # interpolate_nearest_3d
    ("nearest", (1, 2, 4, 4, 4), dict(scale_factor=4.0)),  # interpolate_nearest_scale_3d
    ("trilinear", (1, 2, 4, 4, 4), dict(size=12)),  # interpolate_trilinear_3d
    ("bilinear", (1, 2, 4, 4), dict(size=12)),  # interpolate_bilinear_2d
    ("bicubic", (1, 2, 4, 4), dict(scale_factor=4.0)),  # interpolate_bicubic_scale_2d
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", INTERP_CASES, ids=lambda c: f"{c[0]}-{len(c[1]) - 2}d")
def test_interpolate_reduced_precision_gradient_as_torch(device, dtype, case):
    # ATen's upsampling kernels accumulate a half input's gradient in float32 and round once;
    # clgrad rounded each dim's index_add in the input's dtype (bfloat16 trilinear: 0.09 off
    # torch at a scale of 20, twice torch's error against float64)
    need(device, dtype)
    mode, shape, kwargs = case
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(shape), dtype=getattr(torch, dtype), requires_grad=True)
    want = torch.nn.functional.interpolate(x, mode=mode, **kwargs)
    g = torch.tensor(rng.standard_normal(tuple(want.shape)), dtype=want.dtype)
    want.backward(g)
    cx = clgrad.tensor(x.detach().float().numpy(), device=device).to(getattr(clgrad, dtype))
    cx.requires_grad_(True)
    got = clgrad.nn.functional.interpolate(cx, mode=mode, **kwargs)
    assert got.dtype is getattr(clgrad, dtype)
    got.backward(clgrad.tensor(g.float().numpy(), device=device).to(got.dtype))
    # within one rounding of torch's (the value's own ulp is 2**-8 of it in bfloat16)
    np.testing.assert_allclose(
        got.detach().float().cpu().numpy(), want.detach().float().numpy(), rtol=8e-3, atol=1e-2
    )
    np.testing.assert_allclose(
        cx.grad.float().cpu().numpy(), x.grad.float().numpy(), rtol=1e-3, atol=1e-3
    )
