"""nn modules against torch on the cases torch's own ModuleInfo database
(torch.testing._internal.common_modules.module_db) found differing: each module is built with
the same arguments in both libraries, torch's state dict loaded into clgrad's, and the forward
results, gradients, state after the forward, or the exception class compared. The cases are
written out here (torch's testing internals need expecttest)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import supports

import clgrad

torch = pytest.importorskip("torch")


# ---- helpers ---------------------------------------------------------------------------------
def to_clgrad(value, device, requires_grad=False):
    """A torch tensor (or a tuple of them) as a clgrad one on ``device``."""
    if isinstance(value, tuple):
        return tuple(to_clgrad(v, device, requires_grad) for v in value)
    t = clgrad.tensor(value.detach().numpy(), device=device)
    return t.requires_grad_(True) if requires_grad else t


def load_torch_state(module, reference, device):
    module.load_state_dict({k: to_clgrad(v, device) for k, v in reference.state_dict().items()})
    return module.to(device)


def assert_matches(got, want, rtol=1e-4, atol=1e-5, what="result"):
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape}, torch {want.shape}"
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], what
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), rtol=rtol, atol=atol, err_msg=what
    )


def raises_like(build_torch, build_clgrad):
    """Both raise, the same class (clgrad's may be a subclass) and message."""
    with pytest.raises(Exception) as want:
        build_torch()
    with pytest.raises(want.type) as got:
        build_clgrad()
    return got.value, want.value


# ---- batch norm: eps checks ------------------------------------------------------------------
@pytest.mark.parametrize("eps", [-1.0, 0.0])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_batch_norm_refuses_eps_not_positive_in_training(device, dims, eps):
    # module_error_inputs_torch_nn_BatchNorm1d_2d_3d: the forward raises ValueError
    shape = (2, 10) + ((3,) * dims if dims > 1 else ())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    name = f"BatchNorm{dims}d"
    got, want = raises_like(
        lambda: getattr(torch.nn, name)(10, eps=eps)(torch.tensor(x)),
        lambda: getattr(clgrad.nn, name)(10, eps=eps).to(device)(clgrad.tensor(x, device=device)),
    )
    assert str(got) == str(want)
    assert "eps must be positive" in str(got)


def test_batch_norm_eps_in_evaluation(device):
    # eval: eps = 0 is allowed (the running variance is used), a negative eps is not
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    got, want = raises_like(
        lambda: torch.nn.BatchNorm1d(3, eps=-1e-3).eval()(torch.tensor(x)),
        lambda: (
            clgrad.nn.BatchNorm1d(3, eps=-1e-3).to(device).eval()(clgrad.tensor(x, device=device))
        ),
    )
    assert str(got) == str(want)
    out = clgrad.nn.functional.batch_norm(
        clgrad.tensor(x, device=device),
        clgrad.zeros(3, device=device),
        clgrad.ones(3, device=device),
        eps=0.0,
    )
    np.testing.assert_allclose(out.cpu().numpy(), x)


# ---- recurrent layers: constructor and dtype checks ------------------------------------------
RNN_BAD_ARGUMENTS = [
    ({"bias": 1}, TypeError),
    ({"bias": "True"}, TypeError),
    ({"batch_first": 0}, TypeError),
    ({"batch_first": "False"}, TypeError),
    ({"input_size": 0}, ValueError),
    ({"input_size": -1}, ValueError),
    ({"input_size": 3.0}, TypeError),
    ({"hidden_size": 0}, ValueError),
    ({"hidden_size": 4.0}, TypeError),
    ({"num_layers": 0}, ValueError),
    ({"dropout": "0.5"}, ValueError),
]


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "bad", RNN_BAD_ARGUMENTS, ids=lambda b: str(b[0]) if isinstance(b, tuple) else None
)
def test_rnn_constructor_checks(name, bad):
    kwargs = {"input_size": 3, "hidden_size": 4, **bad[0]}
    got, want = raises_like(
        lambda: getattr(torch.nn, name)(**kwargs), lambda: getattr(clgrad.nn, name)(**kwargs)
    )
    assert type(want) is bad[1]
    assert str(got) == str(want)


def test_rnn_dropout_on_one_layer_warns():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        clgrad.nn.LSTM(3, 4, dropout=0.5)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_rnn_input_dtype_must_match_the_weights(device, name):
    # module_error_inputs_torch_nn_RNN_GRU: a float64 input into a float32 module
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    if not supports(device, clgrad.float64):
        pytest.skip("no float64 on this device")
    got, want = raises_like(
        lambda: getattr(torch.nn, name)(3, 4)(torch.tensor(x)),
        lambda: getattr(clgrad.nn, name)(3, 4).to(device)(clgrad.tensor(x, device=device)),
    )
    assert type(got) is ValueError
    assert str(got) == str(want).replace("torch.", "clgrad.")


# ---- recurrent cells: ATen's checks of the input and the state -------------------------------
CELL_CASES = [
    ((3, 11), (3, 20)),  # input_size
    ((3, 10), (3, 21)),  # hidden_size
    ((3, 10), (5, 20)),  # batch sizes
    ((3, 10), (3, 1, 1, 20)),  # a 4-d state
    ((10,), (3, 20)),  # an unbatched input, a batched state
    ((3, 10), (20,)),
]


@pytest.mark.parametrize("name", ["RNNCell", "GRUCell", "LSTMCell"])
@pytest.mark.parametrize("shapes", CELL_CASES, ids=str)
def test_rnn_cell_checks_input_and_state(name, shapes):
    x_shape, h_shape = shapes
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    h = rng.standard_normal(h_shape).astype(np.float32)
    c = rng.standard_normal((3, 20)).astype(np.float32)

    def state(lib):
        if name != "LSTMCell":
            return lib.tensor(h)
        return (lib.tensor(h), lib.tensor(c))  # the cell state's checks come second

    got, want = raises_like(
        lambda: getattr(torch.nn, name)(10, 20)(torch.tensor(x), state(torch)),
        lambda: getattr(clgrad.nn, name)(10, 20)(clgrad.tensor(x), state(clgrad)),
    )
    assert str(got) == str(want)


def test_lstm_cell_checks_the_cell_state_too():
    got, want = raises_like(
        lambda: torch.nn.LSTMCell(10, 20)(
            torch.zeros(3, 10), (torch.zeros(3, 20), torch.zeros(3, 21))
        ),
        lambda: clgrad.nn.LSTMCell(10, 20)(
            clgrad.zeros(3, 10), (clgrad.zeros(3, 20), clgrad.zeros(3, 21))
        ),
    )
    assert str(got) == str(want)


def test_rnn_cell_without_state_checks_input_size():
    got, want = raises_like(
        lambda: torch.nn.GRUCell(10, 20)(torch.zeros(3, 11)),
        lambda: clgrad.nn.GRUCell(10, 20)(clgrad.zeros(3, 11)),
    )
    assert str(got) == str(want)


# ---- padding, group norm: torch's classes and messages -----------------------------------------
@pytest.mark.parametrize("kind", ["Reflection", "Replication", "Circular", "Zero", "Constant"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_pad_modules_refuse_dims_as_torch(kind, n):
    # the circular modules check the dims themselves (ValueError); reflect and replicate leave
    # it to pad (NotImplementedError)
    name = f"{kind}Pad{n}d"
    args = (1, 0.5) if kind == "Constant" else (1,)
    for ndim in (n, n + 3):
        x = np.zeros((2,) * ndim, dtype=np.float32)
        try:
            getattr(torch.nn, name)(*args)(torch.tensor(x))
        except Exception as e:  # noqa: BLE001 -- torch's class is what is compared
            with pytest.raises(type(e)) as got:
                getattr(clgrad.nn, name)(*args)(clgrad.tensor(x))
            assert str(got.value) == str(e)
        else:
            getattr(clgrad.nn, name)(*args)(clgrad.tensor(x))


def test_group_norm_divisibility_message():
    got, want = raises_like(lambda: torch.nn.GroupNorm(3, 10), lambda: clgrad.nn.GroupNorm(3, 10))
    assert str(got) == str(want)


# ---- pooling: torch's checks of the input's dims ---------------------------------------------
POOL_SHAPES = {
    1: [(3,), (1, 2, 3, 4), (2, 0, 3), (0, 2, 3), (2, 3, 0)],
    2: [(3, 4), (1, 2, 3, 4, 5), (0, 2, 3), (2, 0, 3, 3), (2, 3, 0, 3)],
    3: [(3, 4, 5), (1, 2, 3, 4, 5, 6), (2, 0, 3, 3, 3), (0, 2, 3, 3)],
}
POOLS = [
    ("max_pool{}d", {}),
    ("max_pool{}d", {"return_indices": True}),
    ("avg_pool{}d", {}),
    ("lp_pool{}d", {}),
    ("adaptive_max_pool{}d", {}),
    ("adaptive_avg_pool{}d", {}),
    ("adaptive_avg_pool{}d", {"output_size": 2}),
]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("pool", POOLS, ids=lambda p: p[0] + str(p[1]))
def test_pooling_refuses_dims_as_torch(n, pool):
    pattern, kwargs = pool
    name = pattern.format(n)

    def call(lib, x):
        f = getattr(lib.nn.functional, name)
        if name.startswith("lp"):
            return f(x, 2.0, 1)
        if name.startswith("adaptive"):
            return f(x, kwargs.get("output_size", 1))
        return f(x, 1, **kwargs)

    for shape in POOL_SHAPES[n]:
        x = np.ones(shape, dtype=np.float32)
        try:
            want = call(torch, torch.tensor(x))
        except Exception as e:  # noqa: BLE001 -- torch's class is what is compared
            with pytest.raises(type(e)) as got:
                call(clgrad, clgrad.tensor(x))
            assert str(got.value) == str(e), shape
        else:
            # adaptive_avg_pool to ones is a mean over the last dims, whatever the dim count
            got = call(clgrad, clgrad.tensor(x))
            got, want = (got, want) if not isinstance(want, tuple) else (got[0], want[0])
            assert tuple(got.shape) == tuple(want.shape), shape
            np.testing.assert_allclose(got.numpy(), want.numpy(), equal_nan=True)


# ---- cross_entropy / nll_loss: ATen's order of checks, uint8 targets, soft targets -------------
def _t(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


LOSS_CASES = [
    # (function, input, target, kwargs)
    ("cross_entropy", _t((2, 3)), np.zeros((2, 3), np.int64), {}),  # soft path, long target
    ("cross_entropy", _t((2, 3)), _t((5, 3), 1), {}),  # a batch mismatch before the dtype
    ("cross_entropy", _t((2, 3)), np.full((2, 3), 1 / 3, np.float32), {"ignore_index": 1}),
    ("cross_entropy", _t((2, 3)), _t((2, 4), 1), {}),  # multi-target
    ("cross_entropy", _t((2, 3)), _t((2, 3), 1), {"weight": np.ones(2, np.float32)}),
    ("cross_entropy", _t((2, 3)), _t((2, 3), 1), {"label_smoothing": 1.5}),
    ("cross_entropy", _t((2, 3)), np.array([0, 1]), {"label_smoothing": 1.5}),
    ("cross_entropy", _t((2, 3)), np.array([0, 1]), {"label_smoothing": -0.5}),
    ("cross_entropy", _t((2, 3)), _t((2, 3), 1), {"label_smoothing": -0.5}),
    ("cross_entropy", _t((2, 3)), np.array([0, 2], np.uint8), {"reduction": "none"}),
    ("cross_entropy", _t((2, 3)), np.array([0, 2], np.uint8), {"label_smoothing": 0.2}),
    ("cross_entropy", _t((2, 3, 4, 5)), np.zeros((2, 4, 5), np.uint8), {}),
    ("cross_entropy", _t((2, 3)), np.array([0, 3]), {}),
    ("cross_entropy", _t(()), np.array(0), {}),
    ("cross_entropy", _t((3,)), np.array([2]), {"reduction": "none"}),
    ("nll_loss", _t((3,)), np.array([2]), {"reduction": "none"}),
    ("nll_loss", _t((3,)), np.array([0, 1]), {}),
    ("nll_loss", _t((3,)), np.zeros((2, 2), np.int64), {}),
    ("nll_loss", _t(()), np.array(0), {}),
    ("nll_loss", _t((2, 3)), np.zeros((2, 3), np.int64), {}),
    (
        "nll_loss",
        _t((2, 3, 4, 5)),
        np.zeros((2, 4, 5), np.int64),
        {"weight": np.ones(2, np.float32)},
    ),
    ("nll_loss", _t((2, 3, 5)), np.zeros((2, 5), np.int64), {"weight": np.ones(2, np.float32)}),
    ("nll_loss", _t((2, 3)), np.array([0, 5], np.uint8), {}),
]


def _loss_as_torch(device, name, x, target, kwargs):
    """F.<name>(x, target, **kwargs) (arrays as tensors) in torch and clgrad: the same value,
    or the same error class and message."""

    def call(lib, dev=None):
        def conv(a):
            return lib.tensor(a) if dev is None else lib.tensor(a, device=dev)

        kw = {k: conv(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        return getattr(lib.nn.functional, name)(conv(x), conv(target), **kw)

    try:
        want = call(torch)
    except Exception as e:  # noqa: BLE001 -- torch's class is what is compared
        with pytest.raises(type(e)) as got:
            call(clgrad, device)
        assert str(got.value) == str(e)
        return
    assert_matches(call(clgrad, device), want)


@pytest.mark.parametrize(
    "case", LOSS_CASES, ids=lambda c: f"{c[0]}-{c[1].shape}-{c[2].shape}-{c[3]}"
)
def test_class_losses_as_torch(device, case):
    name, x, target, kwargs = case
    _loss_as_torch(device, name, x, target, kwargs)


def test_huber_loss_refuses_a_complex_delta():
    got, want = raises_like(
        lambda: torch.nn.HuberLoss(delta=1 + 2j), lambda: clgrad.nn.HuberLoss(delta=1 + 2j)
    )
    assert str(got) == str(want)


# ---- the multi-class margin losses: ATen's shape checks and target range -----------------------
MARGIN_CASES = [
    ("multi_margin_loss", (5, 10), np.zeros(3, np.int64), {}),
    ("multi_margin_loss", (10,), np.zeros(3, np.int64), {}),
    ("multi_margin_loss", (5, 10), np.zeros((5, 2), np.int64), {}),
    ("multi_margin_loss", (5, 10), np.zeros(5, np.int64), {"weight": np.ones(3, np.float32)}),
    ("multi_margin_loss", (5, 10), np.zeros(5, np.int64), {"weight": np.ones((10, 1), np.float32)}),
    ("multi_margin_loss", (5, 10, 2), np.zeros(5, np.int64), {}),
    ("multi_margin_loss", (5, 0), np.zeros(5, np.int64), {}),
    ("multi_margin_loss", (5, 10), np.full(5, 10), {}),
    ("multi_margin_loss", (5, 10), np.full(5, -1), {}),
    (
        "multi_margin_loss",
        (5, 10),
        np.arange(5),
        {"weight": np.linspace(0.5, 2, 10, dtype=np.float32)},
    ),
    ("multilabel_margin_loss", (5, 10), np.zeros(3, np.int64), {}),
    ("multilabel_margin_loss", (10,), np.zeros((1, 10), np.int64), {}),
    ("multilabel_margin_loss", (5, 10, 2), np.zeros((5, 10, 2), np.int64), {}),
    ("multilabel_margin_loss", (5, 0), np.zeros((5, 0), np.int64), {}),
    ("multilabel_margin_loss", (2, 4), np.array([[1, -1, 4, 0], [0, 1, -1, 2]]), {}),  # after -1
    ("multilabel_margin_loss", (2, 4), np.array([[1, -2, 3, 0], [0, 1, -1, 2]]), {}),
    ("multilabel_margin_loss", (2, 4), np.array([[1, -1, 3, 0], [0, 1, 2, -1]]), {}),
]


@pytest.mark.parametrize(
    "case", MARGIN_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2].shape}-{list(c[3])}"
)
def test_margin_losses_as_torch(device, case):
    name, shape, target, kwargs = case
    _loss_as_torch(device, name, _t(shape), target, kwargs)


# ---- activations: repr, in place, class hierarchy ---------------------------------------------
ACTIVATION_CASES = [
    ("Hardtanh", (-2.0, 2.0, True)),
    ("Hardtanh", ()),
    ("Hardsigmoid", (True,)),
    ("Hardswish", (True,)),
    ("SiLU", (True,)),
    ("SiLU", ()),
    ("ReLU6", (True,)),
    ("ReLU6", ()),
    ("Softshrink", (0.3,)),
    ("Hardshrink", (0.3,)),
    ("Mish", (True,)),
    ("SELU", (True,)),
]


@pytest.mark.parametrize("case", ACTIVATION_CASES, ids=lambda c: f"{c[0]}{c[1]}")
def test_activation_modules_as_torch(device, case):
    name, args = case
    want_module, got_module = getattr(torch.nn, name)(*args), getattr(clgrad.nn, name)(*args)
    assert repr(got_module) == repr(want_module)
    x = _t((3, 5))
    tx, cx = torch.tensor(x), clgrad.tensor(x, device=device)
    want, got = want_module(tx), got_module(cx)
    assert (got is cx) == (want is tx)  # in place: the input itself comes back
    assert_matches(cx, tx, what="the input after the call")
    assert_matches(got, want)


def test_activation_class_hierarchy_as_torch():
    # ReLU6 is a Hardtanh (0 to 6) and Softshrink no Hardshrink, as in torch: code that
    # replaces or fuses activations by isinstance sees the same classes
    for name in ("ReLU6", "Hardtanh", "ReLU", "Softshrink", "Hardshrink"):
        for base in ("ReLU6", "Hardtanh", "ReLU", "Softshrink", "Hardshrink"):
            want = issubclass(getattr(torch.nn, name), getattr(torch.nn, base))
            assert issubclass(getattr(clgrad.nn, name), getattr(clgrad.nn, base)) == want
    relu6 = clgrad.nn.ReLU6()
    assert (relu6.min_val, relu6.max_val) == (0.0, 6.0)


# ---- channel dropout: torch's rules for the input's dims ----------------------------------------
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 2, 2), (4,)])
@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
def test_channel_dropout_dims_as_torch(device, name, shape):
    x = np.ones(shape, np.float32)
    with warnings.catch_warnings(record=True) as torch_warnings:
        warnings.simplefilter("always")
        try:
            want = getattr(torch.nn.functional, name)(torch.tensor(x), 0.5)
        except Exception as e:  # noqa: BLE001 -- torch's class is what is compared
            with pytest.raises(type(e)) as got:
                getattr(clgrad.nn.functional, name)(clgrad.tensor(x, device=device), 0.5)
            assert str(got.value) == str(e)
            return
    with warnings.catch_warnings(record=True) as clgrad_warnings:
        warnings.simplefilter("always")
        got = getattr(clgrad.nn.functional, name)(clgrad.tensor(x, device=device), 0.5)
    assert [str(w.message) for w in clgrad_warnings] == [str(w.message) for w in torch_warnings]
    assert tuple(got.shape) == tuple(want.shape)
    # one draw per (dim 0, dim 1) pair of what torch drops from: an unbatched input (dropout1d
    # below 3 dims, dropout3d below 5) gets a batch dim first, dropout2d never does
    batched = name == "dropout2d" or len(shape) == {"dropout1d": 3, "dropout3d": 5}[name]
    values = got.cpu().numpy()
    drawn = values.reshape(values.shape[: 2 if batched else 1] + (-1,))
    assert (drawn.max(-1) == drawn.min(-1)).all()


def test_in_place_channel_dropout_of_an_unbatched_input_returns_it(device):
    x = clgrad.ones(3, 4, device=device)
    assert clgrad.nn.functional.dropout1d(x, 0.5, inplace=True) is x
    y = clgrad.ones(2, 2, 2, 2, device=device)
    assert clgrad.nn.functional.dropout3d(y, 0.5, inplace=True) is y


# ---- TransformerEncoder: torch's nested-tensor attributes and warning ---------------------------
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"batch_first": True}, {"batch_first": True, "norm_first": True},
     {"batch_first": True, "bias": False}, {"batch_first": True, "activation": "gelu"},
     {"batch_first": True, "nhead": 1}],
    ids=str,
)  # fmt: skip
def test_transformer_encoder_nested_tensor_attributes(kwargs):
    kwargs = dict(kwargs)
    nhead = kwargs.pop("nhead", 2)
    seen = []
    for lib in (torch, clgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = lib.nn.TransformerEncoderLayer(4, nhead, 8, **kwargs)
            encoder = lib.nn.TransformerEncoder(layer, 2)
        seen.append(
            (
                layer.activation_relu_or_gelu,
                encoder.enable_nested_tensor,
                encoder.use_nested_tensor,
                encoder.mask_check,
                [str(w.message) for w in caught if "nested" in str(w.message)],
            )
        )
    assert seen[1] == seen[0]


# ---- Module's constructor: torch's arguments rule ------------------------------------------------
def test_module_constructor_arguments_as_torch():
    for args, kwargs in (((1,), {}), ((), {"x": 1})):
        got, want = raises_like(
            lambda a=args, k=kwargs: torch.nn.Module(*a, **k),
            lambda a=args, k=kwargs: clgrad.nn.Module(*a, **k),
        )
        assert str(got) == str(want)
    assert clgrad.nn.Module.call_super_init is False and clgrad.nn.Module.dump_patches is False

    class Mixin:
        def __init__(self, *args, **kwargs):
            self.received = (args, kwargs)

    class WithMixin(clgrad.nn.Module, Mixin):
        call_super_init = True  # the arguments go on to Mixin, as in torch

    module = WithMixin(1, x=2)
    assert module.received == ((1,), {"x": 2}) and module.training
