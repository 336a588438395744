"""The ``meta`` device against PyTorch's: tensors with shapes, dtypes and autograd but no data.
Every op's result has torch's shape and dtype there (and its gradient flows); reading values
raises torch's exception class; a model built there gets storage from ``Module.to_empty`` and
values from ``load_state_dict``."""

from __future__ import annotations

import pytest
import torch

import clgrad

BOTH = pytest.mark.parametrize("lib", [torch, clgrad], ids=["torch", "clgrad"])


def _name(dt) -> str:
    return str(dt).rpartition(".")[2]


def _shape_and_dtype(t) -> tuple:
    return tuple(t.shape), _name(t.dtype), t.device.type == "meta"


# (name, fn(lib) run inside ``with lib.device("meta")``)
OPS = [
    ("matmul", lambda m: m.ones(2, 3) @ m.ones(3, 4)),
    ("int matmul", lambda m: m.ones(2, 3, dtype=m.int64) @ m.ones(3, 2, dtype=m.int64)),
    ("broadcast add", lambda m: m.ones(2, 1) + m.ones(3) * 2),
    ("comparison", lambda m: m.ones(3) > 0),
    ("sum dtype", lambda m: m.ones(2, 3, dtype=m.int32).sum(1)),
    ("mean keepdim", lambda m: m.ones(2, 3).mean(0, keepdim=True)),
    ("argmax", lambda m: m.ones(5, 2).argmax(1)),
    ("softmax", lambda m: m.ones(3, 4).softmax(-1)),
    ("cat", lambda m: m.cat([m.ones(2), m.ones(3)])),
    ("stack", lambda m: m.stack([m.ones(2)] * 3, 1)),
    ("index", lambda m: m.ones(5, 3)[m.zeros(2, dtype=m.int64)]),
    ("gather", lambda m: m.ones(3, 4).gather(1, m.zeros(3, 2, dtype=m.int64))),
    ("scatter_add", lambda m: m.zeros(3).scatter_add(0, m.zeros(4, dtype=m.int64), m.ones(4))),
    ("sort", lambda m: m.ones(5).sort().indices),
    ("topk", lambda m: m.ones(5).topk(2).values),
    ("cumsum", lambda m: m.ones(4, dtype=m.int32).cumsum(0)),
    ("where", lambda m: m.where(m.ones(3) > 0, m.ones(3), 0.0)),
    ("randn", lambda m: m.randn(3, 2)),
    ("randint", lambda m: m.randint(0, 5, (3,))),
    ("arange", lambda m: m.arange(5)),
    ("to half", lambda m: m.ones(3).to(m.float16)),
    ("conv2d", lambda m: m.nn.functional.conv2d(m.ones(1, 3, 8, 8), m.ones(4, 3, 3, 3))),
    ("max_pool2d", lambda m: m.nn.functional.max_pool2d(m.ones(1, 2, 8, 8), 2)),
    ("interpolate", lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4), scale_factor=2)),
    ("embedding", lambda m: m.nn.Embedding(10, 3)(m.zeros(4, dtype=m.int64))),
    ("layer_norm", lambda m: m.nn.LayerNorm(5)(m.ones(2, 5))),
    (
        "cross_entropy",
        lambda m: m.nn.functional.cross_entropy(m.ones(4, 5), m.zeros(4, dtype=m.int64)),
    ),
    (
        "transformer",
        lambda m: m.nn.TransformerEncoderLayer(8, 2, batch_first=True)(m.ones(2, 3, 8)),
    ),
    ("lstm", lambda m: m.nn.LSTM(4, 5, batch_first=True)(m.ones(2, 3, 4))[0]),
    ("gru", lambda m: m.nn.GRU(3, 4, 2, batch_first=True)(m.ones(2, 5, 3))[1]),
    ("conv_transpose2d", lambda m: m.nn.ConvTranspose2d(2, 3, 3, stride=2)(m.ones(1, 2, 5, 5))),
    ("group_norm", lambda m: m.nn.GroupNorm(2, 4)(m.ones(2, 4, 3))),
    ("adaptive_avg_pool", lambda m: m.nn.AdaptiveAvgPool2d((2, 3))(m.ones(1, 2, 7, 9))),
    ("reflection_pad", lambda m: m.nn.ReflectionPad1d(1)(m.ones(1, 1, 4))),
    ("fold", lambda m: m.nn.Fold((4, 4), 2)(m.ones(1, 4, 9))),
    ("mse_loss", lambda m: m.nn.MSELoss()(m.ones(3, 4), m.ones(3, 4))),
    ("kl_div", lambda m: m.nn.KLDivLoss(reduction="batchmean")(m.ones(3, 4), m.ones(3, 4))),
    (
        "triplet_margin",
        lambda m: m.nn.TripletMarginLoss()(m.ones(3, 4), m.ones(3, 4), m.ones(3, 4)),
    ),
]


@pytest.mark.parametrize("name, fn", OPS, ids=[n for n, _ in OPS])
def test_op_on_meta(name, fn):
    with torch.device("meta"):
        expected = _shape_and_dtype(fn(torch))
    with clgrad.device("meta"):
        assert _shape_and_dtype(fn(clgrad)) == expected


# (name, fn(lib)): values are needed, or the result's shape depends on them
REFUSED = [
    ("item", lambda m: m.ones((), device="meta").item()),
    ("bool", lambda m: bool(m.ones((), device="meta"))),
    ("tolist", lambda m: m.ones(2, device="meta").tolist()),
    ("to cpu", lambda m: m.ones(2, device="meta").to("cpu")),
    ("nonzero", lambda m: m.ones(2, device="meta").nonzero()),
    ("masked_select", lambda m: m.ones(2, device="meta")[m.ones(2, device="meta") > 0]),
]


@pytest.mark.parametrize("name, fn", REFUSED, ids=[n for n, _ in REFUSED])
def test_reading_values_raises(name, fn):
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(expected.type):
        fn(clgrad)


@BOTH
def test_meta_tensor_basics(lib):
    x = lib.empty(2, 3, device="meta", requires_grad=True)
    assert x.is_meta and not lib.ones(1).is_meta
    assert str(x.device) == "meta" and x.device.type == "meta" and x.device == lib.device("meta")
    assert repr(x.device) == "device(type='meta')"
    assert lib.ones(2).to("meta").is_meta
    assert lib.empty_like(x, device="cpu").device.type == "cpu"
    y = (x * 2).relu().sum()
    y.backward()
    assert x.grad.is_meta and tuple(x.grad.shape) == (2, 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ones(2, 3, device="meta"),
        lambda m: m.ones(3, dtype=m.int64, device="meta"),
        lambda m: m.ones(0, 2, dtype=m.bool, device="meta"),
        lambda m: m.ones((), dtype=m.float16, device="meta", requires_grad=True),
        lambda m: m.ones(2, device="meta", requires_grad=True) * 2,
    ],
)
def test_repr(make):
    assert repr(make(clgrad)).replace("clgrad.", "torch.") == repr(make(torch))


@BOTH
def test_build_on_meta_then_load(lib):
    """The big-model idiom: build without memory, give storage, load the values."""
    lib.manual_seed(0)
    reference = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.device("meta"):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    assert all(p.is_meta for p in model.parameters())
    assert all(b.is_meta for b in model.buffers())
    model.to_empty(device="cpu")
    assert all(t.device.type == "cpu" for t in [*model.parameters(), *model.buffers()])
    model.load_state_dict(reference.state_dict())
    x = lib.randn(5, 3)
    assert lib.equal(model.eval()(x), reference.eval()(x))

    with lib.device("meta"):
        assigned = lib.nn.Linear(3, 4)
    assigned.load_state_dict(reference[0].state_dict(), assign=True)
    assert assigned.weight.device.type == "cpu" and lib.equal(assigned(x), reference[0](x))


@BOTH
def test_to_empty_not_recursive(lib):
    with lib.device("meta"):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2))
    model.to_empty(device="cpu", recurse=False)  # Sequential holds no tensor of its own
    assert model[0].weight.is_meta


@BOTH
def test_training_step_on_meta(lib):
    with lib.device("meta"):
        net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
        opt = lib.optim.Adam(net.parameters())
        loss = lib.nn.functional.cross_entropy(net(lib.ones(5, 4)), lib.zeros(5, dtype=lib.int64))
        loss.backward()
        opt.step()
    assert net[0].weight.grad.is_meta and tuple(net[0].weight.grad.shape) == (8, 4)
