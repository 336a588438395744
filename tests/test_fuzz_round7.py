"""Families a seventh differential round found (module surgery, checkpoints written the PyTorch
way, indexed writes, NumPy scalars, distributions, interpolation edges); each checked against
torch on every device."""

import copy

import numpy as np
import pytest
import torch
from test_fuzz_families import both

import clgrad


# ---- modules -------------------------------------------------------------------------------
def test_assigning_over_a_child_or_parameter_keeps_its_place(device):
    """``setattr(parent, name, new)`` (swapping an activation, tying a weight) keeps the
    order of ``children()``, ``parameters()``, ``state_dict()`` and a Sequential's forward."""

    def case(lib, dev):
        nn = lib.nn
        lib.manual_seed(0)
        s = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(dev)
        with lib.no_grad():
            for i, p in enumerate(s.parameters()):
                p.copy_(lib.linspace(-1, 1, p.numel(), device=dev).view(p.shape) * (i + 1))
        for name, child in list(s.named_children()):
            if isinstance(child, nn.ReLU):
                setattr(s, name, nn.GELU())
        lin = nn.Linear(3, 3)
        lin.weight = nn.Parameter(lib.eye(3))
        lin.weight = lin.weight
        x = lib.linspace(-2, 2, 6, device=dev).view(2, 3)
        return [
            s(x),
            [type(c).__name__ for c in s.children()],
            list(lin.state_dict()),
            [p.shape for p in lin.parameters()],
        ]

    both(device, case)


def test_load_from_state_dict_overridden_the_pytorch_way(device):
    """torchvision's FrozenBatchNorm2d: an override with PyTorch's seven arguments drops a key
    before the base class loads; a module reading its ``local_metadata`` version."""

    def case(lib, dev):
        nn = lib.nn

        class Frozen(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("weight", lib.ones(2))
                self.seen = None

            def _load_from_state_dict(
                self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors
            ):
                state_dict.pop(prefix + "num_batches_tracked", None)
                self.seen = (prefix, local_metadata.get("version"), strict)
                super()._load_from_state_dict(
                    state_dict, prefix, local_metadata, strict, missing, unexpected, errors
                )

        net = nn.Sequential(nn.Linear(2, 2), Frozen()).to(dev)
        sd = {
            "0.weight": lib.eye(2),
            "0.bias": lib.zeros(2),
            "1.weight": lib.full((2,), 3.0),
            "1.num_batches_tracked": lib.tensor(5),
        }
        keys = net.load_state_dict(sd)
        loose = net.load_state_dict({"1.weight": lib.ones(2), "2.x": lib.ones(1)}, strict=False)
        return [
            net[1].weight,
            net[1].seen,
            list(sd),
            keys.missing_keys,
            loose.missing_keys,
            loose.unexpected_keys,
        ]

    both(device, case)


def test_load_state_dict_assign_makes_new_parameters(device):
    def case(lib, dev):
        lin = lib.nn.Linear(2, 2).to(dev)
        old = lin.weight
        lin.load_state_dict({"weight": lib.ones(2, 2), "bias": lib.zeros(2)}, assign=True)
        return [lin.weight is old, type(lin.weight).__name__, lin.weight.requires_grad, lin.weight]

    both(device, case)


# ---- indexed writes ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_cpu_scalar_tensor_written_through_an_index(device, dtype):
    """A 0-d cpu value written into a device tensor through tensor indices, index_put_,
    index_fill and take's index: moved to the device (it crashed the OpenCL driver)."""

    def case(lib, dev):
        dt = getattr(lib, dtype)
        x = lib.zeros(4, dtype=dt, device=dev)
        x[lib.tensor([0, 2], device=dev)] = lib.tensor(1, dtype=dt)
        y = lib.zeros(4, dtype=dt, device=dev)
        y.index_put_((lib.tensor([3], device=dev),), lib.tensor(1, dtype=dt))
        z = lib.zeros(4, dtype=dt, device=dev).index_fill(0, lib.tensor(1), lib.tensor(1, dtype=dt))
        t = lib.take(lib.arange(4, device=dev), lib.tensor(2))
        return [x, y, z, t]

    both(device, case)


def test_mask_write_of_a_one_element_value_of_another_dtype(device):
    """PyTorch writes a one-element cpu value through a lone mask with masked_fill_ (cast to
    x's dtype); with tensor indices the dtypes must match (RuntimeError)."""

    def case(lib, dev):
        x = lib.zeros(4, dtype=lib.float16, device=dev)
        x[x == 0] = lib.tensor(1.5)
        w = lib.zeros(2, 3, device=dev)
        w[w[:, 0] == 0] = lib.tensor([2], dtype=lib.int64)
        return [x, w]

    def refused(lib, dev):
        x = lib.zeros(4, dtype=lib.float16, device=dev)
        x[lib.tensor([0], device=dev)] = lib.tensor(1.5)

    both(device, case)
    both(device, refused)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "uint8", "int8"])
@pytest.mark.parametrize("value", [-1e9, 1e39, 65519.0, -2.7, 127.5, -1, 300])
def test_number_written_by_index_past_the_dtype_range(device, dtype, value):
    """``x[mask] = -1e9`` in float16 stores -inf (PyTorch's setitem skips fill_'s range check
    for floating dtypes); integer dtypes refuse a value they cannot hold, a float one
    outside their range too (-2.7 into uint8), as c10's overflow check."""

    def case(lib, dev):
        x = lib.zeros(2, 3, dtype=getattr(lib, dtype), device=dev)
        x[0] = value
        x[x == 0] = value
        return x

    def filled(lib, dev):
        return lib.zeros(2, dtype=getattr(lib, dtype), device=dev).fill_(value)

    both(device, case)
    both(device, filled)


def test_indexed_write_drops_the_values_leading_ones(device):
    def case(lib, dev):
        x = lib.zeros(2, 2, 3, device=dev)
        x[lib.tensor([[True, False], [False, True]], device=dev)] = lib.ones(1, 1, 3, device=dev)
        y = lib.zeros(2, 2, 3, device=dev)
        y[lib.tensor([0, 1], device=dev), lib.tensor([1, 0], device=dev)] = lib.ones(
            1, 1, 3, device=dev
        )
        v = lib.ones(1, 1, 3, device=dev, requires_grad=True)
        z = lib.zeros(2, 2, 3, device=dev)
        z[lib.tensor([0, 1], device=dev)] = v * 2
        z.sum().backward()
        return [x, y, z, v.grad]

    both(device, case)


def test_index_ops_take_pytorchs_keywords_and_aliases(device):
    def case(lib, dev):
        x = lib.arange(6.0, device=dev).reshape(2, 3)
        i = lib.tensor([[0], [2]], device=dev)
        return [
            lib.gather(input=x, dim=1, index=i),
            x.gather(1, i, sparse_grad=False),
            lib.index_select(input=x, dim=0, index=i[:, 0] // 2),
            lib.masked_select(input=x, mask=x > 2),
            lib.nonzero(input=x),
            lib.select(input=x, dim=0, index=1),
            lib.narrow(input=x, dim=1, start=0, length=2),
            lib.scatter_add(input=x, dim=1, index=i, src=x),
            x.scatter_reduce(0, lib.tensor([[0, 1, 1]], device=dev), x[:1] + 5, reduce="max"),
            x.scatter_reduce(0, lib.tensor([[0, 1, 1]], device=dev), -x[:1], reduce="min"),
            lib.zeros(3, dtype=lib.bool, device=dev).index_add(
                0, lib.tensor([1], device=dev), lib.tensor([True], device=dev), alpha=2
            ),
        ]

    both(device, case)


def test_cdist_refuses_tensors_on_two_devices():
    devices = [d for d in ("cpu", "cl:0") if d == "cpu" or clgrad.cl.is_available()]
    if len(devices) < 2:
        pytest.skip("one device")
    with pytest.raises(RuntimeError, match="same device"):
        clgrad.cdist(clgrad.ones(2, 2), clgrad.ones(2, 2, device="cl:0"))


# ---- NumPy scalars and nested tensors ------------------------------------------------------
def test_numpy_bool_is_a_scalar(device):
    """A comparison of NumPy scalars gives np.bool_, which PyTorch takes as a float Scalar."""

    def case(lib, dev):
        x = lib.tensor([1.0, 2.0], device=dev)
        i = lib.tensor([1, 2], device=dev)
        b = np.float64(3.0) > 1.0
        return [
            x * b,
            i + b,
            lib.tensor([True, False], device=dev) == np.True_,
            x < b,
            lib.where(x > 1, b, 0),
            lib.full((2,), b, device=dev),
            x.clone().fill_(b),
            x.clamp(max=b),
        ]

    both(device, case)


def test_arange_with_numpy_float_scalars(device):
    def case(lib, dev):
        return [
            lib.arange(0, 1, np.float32(0.25), device=dev),
            lib.arange(np.float32(2.5), device=dev),
            lib.arange(np.int32(3), device=dev),
        ]

    both(device, case)


def test_tensor_of_a_list_of_tensors(device):
    """Tensors among a list's items are numbers to torch.tensor; more than one element is a
    ValueError."""

    def case(lib, dev):
        return lib.tensor([lib.tensor([1.0]), lib.tensor(2.0)], device=dev)

    def refused(lib, dev):
        return lib.tensor([lib.tensor([1.0, 2.0]), lib.tensor([2.0, 3.0])], device=dev)

    both(device, case)
    both(device, refused)


# ---- nn utilities, containers, copies ------------------------------------------------------
def test_clip_grad_norm_of_half_gradients(device):
    """The squares of 16-bit gradients past 256 overflow: the norm is taken in float32."""

    def case(lib, dev):
        p = lib.nn.Parameter(lib.zeros(4, dtype=lib.float16, device=dev))
        p.grad = lib.full((4,), 200.0, dtype=lib.float16, device=dev)
        return [lib.nn.utils.clip_grad_norm_([p], 1.0), p.grad]

    both(device, case)


def test_a_childs_apply_override_is_reached_by_its_parents_to(device):
    def case(lib, dev):
        class WithState(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.state = lib.zeros(2)

            def _apply(self, fn, recurse=True):
                super()._apply(fn, recurse)
                self.state = fn(self.state)
                return self

        net = lib.nn.Sequential(lib.nn.Linear(2, 2), WithState()).to(dev).half()
        dtypes = [str(t.dtype).rpartition(".")[2] for t in (net[1].state, net[0].weight)]
        return [*dtypes, net[1].state.device == net[0].weight.device]

    both(device, case)


def test_container_methods():
    def case(lib, dev):
        nn = lib.nn
        params = nn.ParameterList([lib.zeros(2), lib.ones(3)])
        params[0] = nn.Parameter(lib.full((2,), 5.0))
        params.append("not a tensor")
        d = nn.ParameterDict({"a": lib.ones(1)})
        both_dicts = d | nn.ParameterDict({"z": lib.ones(1)})
        modules = nn.ModuleDict({"a": nn.ReLU()})
        modules.clear()
        return [
            len(params[0:1]),
            params[0],
            (len(params), params[2], len(list(params.parameters()))),
            d.copy()["a"] is d["a"],
            d.setdefault("b", lib.zeros(2)),
            list(both_dicts.keys()),
            list(d.fromkeys(["x", "y"], lib.ones(1)).keys()),
            len(modules),
        ]

    def bad_insert(lib, dev):
        lib.nn.Sequential(lib.nn.ReLU()).insert(10, lib.nn.ReLU())

    def bad_vector(lib, dev):
        lib.nn.utils.vector_to_parameters([1.0], lib.nn.Linear(1, 1).parameters())

    for c in (case, bad_insert, bad_vector):
        both("cpu", c)


def test_deepcopy_keeps_views_of_one_storage_together(device):
    def case(lib, dev):
        t = lib.arange(4.0, device=dev)
        views = copy.deepcopy([t, t[:2], t.view(2, 2).t()])
        views[1].fill_(9)
        alias = copy.copy(t)
        alias.add_(1)
        return [views[0], views[2], views[2].stride(), views[2].is_contiguous(), t]

    both(device, case)


def test_activation_gradients_at_their_kinks(device):
    def case(lib, dev):
        x = lib.tensor([-3.0, 3.0, -4.0, 0.5], device=dev, requires_grad=True)
        lib.nn.functional.hardswish(x).sum().backward()
        a = lib.tensor([[0.1, 0.2]], device=dev, requires_grad=True)
        b = lib.tensor([[0.3, -0.1]], device=dev)
        y = lib.nn.functional.cosine_similarity(a, b, eps=1.0)
        y.sum().backward()
        return [x.grad, y, a.grad]

    both(device, case)


@pytest.mark.parametrize(
    "shape, scale, mode",
    [
        ((1, 1, 5), 1.1, "nearest"),
        ((1, 1, 4, 4), 1.2, "nearest-exact"),
        ((1, 1, 3, 5), 1.2, "nearest"),
        ((1, 1, 4, 2, 1), 1.25, "nearest"),
        ((1, 1, 4, 4), 1.2, "bilinear-aa"),
        ((1, 1, 5, 2), 1.2, "bicubic-aa"),
    ],
)
def test_interpolate_where_a_dim_keeps_its_size(device, shape, scale, mode):
    """A dim of unchanged size is mapped by the scale (1-d and 3-d nearest, nearest-exact),
    copied (2-d nearest), or skipped (antialiased: ATen's separable kernel). The values are
    PyTorch's; the gradient is the forward's own (PyTorch's backward kernels take other
    shortcuts there than its forward ones, so its gradient is not its forward's)."""
    kind, _, aa = mode.partition("-")

    def case(lib, dev):
        x = lib.arange(float(np.prod(shape)), device=dev).reshape(shape)
        return lib.nn.functional.interpolate(
            x, scale_factor=scale, mode=kind if aa else mode, antialias=aa == "aa"
        )

    both(device, case)
    x = clgrad.arange(float(np.prod(shape)), device=device).reshape(shape).requires_grad_()
    y = clgrad.nn.functional.interpolate(
        x, scale_factor=scale, mode=kind if aa else mode, antialias=aa == "aa"
    )
    g = clgrad.arange(float(y.numel()), device=device).reshape(y.shape)
    (y * g).sum().backward()
    # linear in x: <y(x), g> = <x, grad>, so y(arange) . g must equal arange . grad
    assert abs(float((y * g).sum()) - float((x.detach() * x.grad).sum())) < 1e-3 * float(
        (y * g).abs().sum() + 1
    )


def test_transformer_encoder_inference_zeroes_padded_positions(device):
    """PyTorch's eval, no-grad encoder runs on nested tensors and pads with zeros."""

    def case(lib, dev):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        enc = lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).eval().to(dev)
        with lib.no_grad():
            for i, p in enumerate(enc.parameters()):
                p.copy_(lib.linspace(-0.5, 0.5, p.numel()).view(p.shape) * (1 + i % 3))
        x = lib.tensor(np.random.RandomState(0).randn(2, 4, 8).astype(np.float32), device=dev)
        pad = lib.tensor([[False, False, True, True], [False] * 4], device=dev)
        with lib.no_grad():
            inference = enc(x, src_key_padding_mask=pad)
            float_mask = enc(x, src_key_padding_mask=pad.float() * -1e9)
        trained = enc.train()(x, src_key_padding_mask=pad)  # (dropout: compare the shape)
        return [inference, float_mask, trained.shape]

    both(device, case)


def test_cpu_device_has_no_index():
    def case(lib, dev):
        return [
            str(lib.device("cpu").index),
            str(lib.zeros(1).device.index),
            lib.zeros(1).get_device(),
            lib.device("cpu:0").type,
        ]

    both("cpu", case)


# ---- the dtypes a kernel takes, and PyTorch's error classes ---------------------------------
_REFUSED = {
    "max_pool1d int": lambda L, x: L.nn.functional.max_pool1d(x[0].long(), 2),
    "max_pool2d bool": lambda L, x: L.nn.functional.max_pool2d(x.bool(), 2),
    "adaptive_max_pool2d int": lambda L, x: L.nn.functional.adaptive_max_pool2d(x.long(), 2),
    "adaptive_max_pool1d uint8": lambda L, x: L.nn.functional.adaptive_max_pool1d(x[0].byte(), 2),
    "adaptive_avg_pool2d int": lambda L, x: L.nn.functional.adaptive_avg_pool2d(x.long(), 2),
    "adaptive_avg_pool3d int": lambda L, x: L.nn.functional.adaptive_avg_pool3d(x[None].int(), 2),
    "interpolate nearest int": lambda L, x: L.nn.functional.interpolate(x.long(), scale_factor=2),
    "interpolate nearest bool 1-d": lambda L, x: L.nn.functional.interpolate(
        x[0].bool(), scale_factor=2
    ),
    "unfold int": lambda L, x: L.nn.functional.unfold(x.long(), 2),
    "unfold 2-d": lambda L, x: L.nn.functional.unfold(x[0, 0], 2),
    "fold int": lambda L, x: L.nn.functional.fold(x.reshape(1, 4, 4).long(), (3, 3), 2),
    "grid_sample int": lambda L, x: L.nn.functional.grid_sample(
        x.long(), L.zeros(1, 2, 2, 2).long(), align_corners=False
    ),
    "dropout int": lambda L, x: L.nn.functional.dropout(x.long(), 0.5),
    "GRU proj_size": lambda L, x: L.nn.GRU(4, 4, proj_size=2),
    "conv2d padding string": lambda L, x: L.nn.functional.conv2d(x, x[:, :, :2, :2], padding="x"),
    "multilabel_margin float target": lambda L, x: L.nn.functional.multilabel_margin_loss(
        x[0, 0], x[0, 0]
    ),
    "one_hot float classes": lambda L, x: L.nn.functional.one_hot(L.tensor([1]), 3.0),
    "index_copy count": lambda L, x: L.zeros(3, 2).index_copy_(0, L.tensor([1]), L.zeros(2, 2)),
    "index_copy dims": lambda L, x: L.zeros(3, 2).index_copy_(0, L.tensor([1]), L.zeros(2)),
}


@pytest.mark.parametrize("name", sorted(_REFUSED))
def test_refused_as_pytorch_refuses(device, name):
    def case(lib, dev):
        x = lib.arange(16.0, device=dev).reshape(1, 1, 4, 4)
        return _REFUSED[name](lib, x)

    both(device, case)


def test_kernels_take_what_pytorch_takes(device):
    def case(lib, dev):
        x = lib.arange(16.0, device=dev).reshape(1, 1, 4, 4)
        F = lib.nn.functional
        return [
            F.max_pool2d(x.long(), 2),
            F.interpolate(x.byte(), scale_factor=2),
            F.unfold(x.bool(), 2),
            F.dropout(x.long(), 0.5, training=False),
            lib.nn.modules.activation.MultiheadAttention(4, 2).embed_dim,
        ]

    both(device, case)


@pytest.mark.parametrize("value", [1.5, -0.1, float("nan"), 0.5, 0.0])
def test_binary_cross_entropy_checks_its_input_range_on_the_host(value):
    """PyTorch's CPU kernel refuses a probability outside [0, 1] (a logit passed by mistake)."""

    def case(lib, dev):
        return lib.nn.functional.binary_cross_entropy(lib.tensor([value]), lib.tensor([1.0]))

    both("cpu", case)


@pytest.mark.parametrize("expr", ["x * 2", "2 * x", "x / 2", "x * 2.5", "x + 1", "x - 1", "x"])
def test_second_backward_through_a_number_product(device, expr):
    """PyTorch's ``x * 2`` and ``x / 2`` save the number wrapped in a tensor: a second
    backward raises, as after ``x * x``; ``x + 1`` saves nothing and runs again."""

    def case(lib, dev):
        x = lib.ones(2, device=dev, requires_grad=True)
        y = eval(expr).sum()
        y.backward()
        y.backward()
        return x.grad

    both(device, case)


def test_normal_of_two_tensors_draws_in_the_means_dtype():
    def case(lib, dev):
        pairs = [
            (lib.zeros(2), lib.ones(2, dtype=lib.float64)),
            (lib.zeros(2, dtype=lib.float64), lib.ones(2)),
            (lib.zeros(2, dtype=lib.float16), lib.ones(2)),
            (0.0, lib.ones(2, dtype=lib.float64)),
        ]
        return [str(lib.normal(m, s).dtype).rpartition(".")[2] for m, s in pairs]

    both("cpu", case)


# ---- derivatives of derivatives --------------------------------------------------------------
def _hvp(lib, fn, x, w, v, create_graph=False):
    """(gradient of sum(fn(x) * w), its derivative along v)."""
    out = fn(x)
    (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad((g * v).sum(), x, create_graph=create_graph)
    return g, h


_SECOND_ORDER = {
    "smooth_l1 at a zero residual": (
        lambda L, x: L.nn.functional.smooth_l1_loss(x, L.zeros_like(x), reduction="none"),
        [0.0, 0.3, -2.0],
    ),
    "huber at a zero residual": (
        lambda L, x: L.nn.functional.huber_loss(x, L.zeros_like(x), reduction="none"),
        [0.0, 0.3, -2.0],
    ),
    "cumprod with zeros": (lambda L, x: x.cumprod(0), [0.0, 0.0, 2.0]),
    "cumprod with one zero": (lambda L, x: x.cumprod(0), [1.0, 0.0, 3.0]),
    "prod with a zero": (lambda L, x: x.prod().expand(3), [0.0, 1.0, 2.0]),
    "det of a regular matrix": (
        lambda L, x: L.linalg.det(L.stack([x, x.flip(0) * 2, x * x]).reshape(3, 3)).expand(3),
        [1.0, 2.0, 0.5],
    ),
}


@pytest.mark.parametrize("name", sorted(_SECOND_ORDER))
def test_second_derivatives_where_first_order_formulas_cut_corners(device, name):
    fn, values = _SECOND_ORDER[name]

    def case(lib, dev):
        x = lib.tensor(values, device=dev, requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0], device=dev)
        v = lib.tensor([1.0, 0.25, -0.5], device=dev)
        return list(_hvp(lib, lambda t: fn(lib, t), x, w, v))

    both(device, case)


def test_cosine_similarity_mixed_derivative_at_a_zero_vector(device):
    def case(lib, dev):
        x = lib.zeros(1, 3, device=dev, requires_grad=True)
        y = lib.tensor([[1.0, 2.0, 3.0]], device=dev, requires_grad=True)
        f = lib.nn.functional.cosine_similarity(x, y, eps=1e-3)
        (gx,) = lib.autograd.grad(f.sum(), x, create_graph=True)
        return lib.autograd.grad(gx.sum(), y)[0]

    both(device, case)


def test_det_third_derivative_is_finite():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    results = []
    for lib in (torch, clgrad):
        A = lib.tensor(a.numpy(), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(A), A, create_graph=True)
        (h,) = lib.autograd.grad(g[0, 0], A, create_graph=True)
        results.append(lib.autograd.grad(h[1, 1], A)[0].detach().numpy())
    np.testing.assert_allclose(results[1], results[0], atol=1e-12)


# ---- complex tensors -----------------------------------------------------------------------
_RNG7 = np.random.default_rng(7)
_CX = {
    k: (_RNG7.standard_normal(s) + 1j * _RNG7.standard_normal(s)).astype(np.complex64)
    for k, s in (("x", (2, 3)), ("w", (4, 3)), ("b", (4,)))
}


def test_complex_linear_and_addmm(device):
    def case(lib, dev):
        x, w, b = (lib.tensor(_CX[k], device=dev) for k in "xwb")
        lin = lib.nn.Linear(3, 4, dtype=lib.cfloat).to(dev)
        with lib.no_grad():
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        xr = x.clone().requires_grad_()
        y = lin(xr)
        y.abs().pow(2).sum().backward()
        return [
            y,
            lib.addmm(b, x, w.T, beta=0.5, alpha=2),
            xr.grad,
            lin.weight.grad,
            lin.bias.grad,
        ]

    both(device, case)


def test_complex_accumulating_index_writes(device):
    def case(lib, dev):
        idx = lib.tensor([0, 0, 2], device=dev)
        v = lib.tensor([1 + 1j, 2 - 1j, 3j], device=dev)
        real = lib.zeros(3, device=dev)
        real[0] = lib.tensor(1 + 2j, device=dev)
        real[1:] = lib.tensor([3 - 1j, 4j], device=dev)
        return [
            lib.zeros(3, dtype=lib.cfloat, device=dev).index_add_(0, idx, v),
            lib.zeros(3, dtype=lib.cfloat, device=dev).scatter_add(0, idx, v),
            lib.zeros(3, dtype=lib.cfloat, device=dev).index_put_((idx,), v, accumulate=True),
            real,
        ]

    both(device, case)


def test_clip_grad_norm_of_complex_gradients(device):
    def case(lib, dev):
        p = lib.nn.Parameter(lib.zeros(2, dtype=lib.cfloat, device=dev))
        p.grad = lib.tensor([3 + 4j, 0j], device=dev)
        return [lib.nn.utils.clip_grad_norm_([p], 1.0), p.grad]

    both(device, case)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "i0", "special.i1"])
def test_special_functions_refuse_complex(name):
    def case(lib, dev):
        fn = lib
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn(lib.tensor([1 + 2j]))

    both("cpu", case)


def test_complex_cov_corrcoef_nan_to_num_isclose(device):
    n, i = float("nan"), float("inf")

    def case(lib, dev):
        x = lib.tensor(_CX["x"], device=dev)
        z = lib.tensor([complex(n, 1), complex(i, -i), complex(1, n), 2 + 3j], device=dev)
        return [
            lib.cov(x),
            lib.corrcoef(x),
            lib.nan_to_num(z, posinf=5.0),
            lib.isclose(z, z, equal_nan=True),
            lib.isclose(z, z),
        ]

    both(device, case)


def test_a_user_optimizers_int_step_survives_a_resume():
    """PyTorch's built-in optimizers keep "step" as a tensor (their own __setstate__); a
    subclass of Optimizer keeps the int it stores (Lion's ``range(state["step"])``)."""

    def case(lib, dev):
        class Lion(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, dict(lr=0.1))

            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        state["step"] = state.get("step", 0) + 1

        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        mine, adam = Lion([p]), lib.optim.Adam([p])
        mine.step()
        adam.step()
        resumed, adam2 = Lion([p]), lib.optim.Adam([p])
        resumed.load_state_dict(mine.state_dict())
        adam2.load_state_dict(adam.state_dict())
        steps = [
            resumed.state[p]["step"],
            next(iter(copy.deepcopy(mine).state.values()))["step"],
            adam2.state[p]["step"],
        ]
        return [type(s).__name__ for s in steps]

    both("cpu", case)


def test_lbfgs_strong_wolfe_takes_pytorchs_float32_path(device):
    """PyTorch's line search computes with float32 0-d tensors: its evaluations and steps."""

    def case(lib, dev):
        x = lib.tensor([-1.2, 1.0, 0.5], device=dev, requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=1, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = (x[0] - 1) ** 2 + 3 * (x[1] + 2) ** 2 + 0.5 * (x[2] - x[0]) ** 2
            loss = loss + 0.01 * (x**4).sum()
            loss.backward()
            return loss

        opt.step(closure)
        state = opt.state[x]
        return [state["func_evals"], state["n_iter"], x]

    both(device, case)


def test_complex_division_by_large_and_tiny_divisors(device):
    def case(lib, dev):
        a = lib.tensor([1 + 1j, 3 - 2j, 1 + 1j, 2j], device=dev)
        b = lib.tensor([1e20 + 1e20j, 1e-30 + 2e-30j, 2 - 1j, 3e25 + 0j], device=dev)
        return [a / b, a / (1e20 + 1e20j), b / a]

    both(device, case)


def test_optimizer_and_scaler_refusals_as_pytorchs():
    def short_betas(lib, dev):
        lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], betas=(0.9,))

    def step_before_scale(lib, dev):
        scaler = lib.amp.GradScaler("cpu")
        w = lib.nn.Parameter(lib.ones(1))
        w.grad = lib.ones(1)
        scaler.step(lib.optim.SGD([w], lr=0.1))

    def update_before_scale(lib, dev):
        lib.amp.GradScaler("cpu").update()

    def scaled_then_stepped(lib, dev):
        scaler = lib.amp.GradScaler("cpu")
        w = lib.nn.Parameter(lib.ones(1))
        scaler.scale(w.sum() * 2).backward()
        scaler.step(lib.optim.SGD([w], lr=0.1))
        scaler.update()
        return [w, scaler.get_scale()]

    for case in (short_betas, step_before_scale, update_before_scale, scaled_then_stepped):
        both("cpu", case)
