"""clgrad.save / clgrad.load (the documented .npz format) and clgrad.utils.data."""

import io
import json
import math
from collections import OrderedDict

import numpy as np
import pytest
from conftest import CL_DEVICES, DEVICES

import clgrad
import clgrad.nn as nn
import clgrad.optim as optim
from clgrad.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool"]


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    clgrad.save(obj, buf)
    buf.seek(0)
    return clgrad.load(buf, **load_kwargs)


# ---- save / load -----------------------------------------------------------------------------
@pytest.mark.parametrize("dt", DTYPES)
def test_tensor_dtypes_round_trip(device, dt):
    dtype = getattr(clgrad, dt if dt != "bool" else "bool")
    if not clgrad.device(device).supports(dtype):
        pytest.skip(f"{device} has no {dt}")
    values = np.arange(-3, 9).reshape(3, 4) % (2 if dt == "bool" else 200)
    x = clgrad.tensor(values, dtype=dtype, device=device)
    y = roundtrip(x)
    assert y.dtype == dtype and y.shape == x.shape and y.device == x.device
    np.testing.assert_array_equal(y.cpu().numpy(), x.cpu().numpy())


def test_nested_containers(device):
    a = clgrad.randn(2, 3, device=device)
    obj = {
        "a": a,
        "same": a,  # stored once, loaded as one tensor
        "nested": [1, 2.5, None, "text", True, (a[0], {"deep": clgrad.arange(3, device=device)})],
        7: float("inf"),
        "nan": math.nan,
        "od": OrderedDict([("z", 1), ("y", 2)]),
        "dtype": clgrad.float16,
        "dev": clgrad.device(device),
        (1, 2): "tuple key",
    }
    back = roundtrip(obj)
    assert back["same"] is back["a"]
    np.testing.assert_array_equal(back["a"].cpu().numpy(), a.cpu().numpy())
    n = back["nested"]
    assert n[:5] == [1, 2.5, None, "text", True] and isinstance(n[1], float)
    assert isinstance(n[5], tuple) and n[5][1]["deep"].tolist() == [0, 1, 2]
    np.testing.assert_array_equal(n[5][0].cpu().numpy(), a[0].cpu().numpy())
    assert back[7] == math.inf and math.isnan(back["nan"])
    assert isinstance(back["od"], OrderedDict) and list(back["od"]) == ["z", "y"]
    assert back["dtype"] is clgrad.float16 and back["dev"] == clgrad.device(device)
    assert back[(1, 2)] == "tuple key"


def test_views_saved_alone_keep_their_elements_together_their_storage(device):
    base = clgrad.arange(12.0, device=device).reshape(3, 4)
    view = base.T[1:, ::2]
    back = roundtrip([view, base[2]])  # two views of one storage: it is stored once, as torch
    np.testing.assert_array_equal(back[0].cpu().numpy(), view.cpu().numpy())
    assert back[1].tolist() == [8, 9, 10, 11] and back[0].stride() == view.stride()
    back[1][1] = -1.0
    assert back[0][0, 1].item() == -1.0  # base[2, 1] is base.T[1:, ::2][0, 1]
    alone = roundtrip([view])[0]  # a view saved alone: its own elements
    assert alone.tolist() == view.tolist() and alone.is_contiguous()


def test_requires_grad_and_parameters():
    p = nn.Parameter(clgrad.randn(3))
    q = clgrad.randn(2, requires_grad=True)
    back = roundtrip({"p": p, "q": q, "r": clgrad.zeros(1)})
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad
    assert back["q"].requires_grad and back["q"].is_leaf and not back["r"].requires_grad


def test_format_is_plain_numpy(tmp_path):
    """The file opens with NumPy and json alone, as the module docstring documents."""
    path = tmp_path / "model.pt"
    sd = nn.Linear(3, 2).state_dict()
    clgrad.save(sd, path)
    assert path.exists() and not (tmp_path / "model.pt.npz").exists()
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(z["__structure__"].item())
        assert meta["format"] == "clgrad.npz" and meta["version"] == 1
        root = meta["object"]
        assert root["type"] == "dict" and root["ordered"]
        key, node = root["items"][0]
        assert key == {"type": "str", "value": "weight"}
        assert node["type"] == "tensor" and node["dtype"] == "float32"
        np.testing.assert_array_equal(z[node["key"]], sd["weight"].numpy())
    assert list(clgrad.load(str(path))) == ["weight", "bias"]


def test_save_errors(tmp_path):
    # what neither is data nor pickles (torch.save pickles the rest: see test_save_modules.py)
    with pytest.raises(TypeError, match="cannot save an object of type function"):
        clgrad.save(lambda: 0, tmp_path / "m.npz")
    with pytest.raises(TypeError, match="cannot save an object of type generator"):
        clgrad.save({"g": (i for i in range(2))}, tmp_path / "s.npz")
    np.savez(tmp_path / "plain.npz", a=np.zeros(2))
    with pytest.raises(RuntimeError, match="not a clgrad file"):
        clgrad.load(tmp_path / "plain.npz")


@pytest.mark.parametrize("src", DEVICES)
@pytest.mark.parametrize("dst", DEVICES)
def test_map_location_across_devices(src, dst):
    x = clgrad.arange(6.0, device=src).reshape(2, 3)
    buf = io.BytesIO()
    clgrad.save({"x": x, "n": 3}, buf)
    for loc in (dst, clgrad.device(dst), {str(x.device): dst}):
        buf.seek(0)
        y = clgrad.load(buf, map_location=loc)["x"]
        assert y.device == clgrad.device(dst)
        assert y.tolist() == [[0, 1, 2], [3, 4, 5]]
    buf.seek(0)
    seen = []

    def fn(t, where):
        seen.append(where)
        return t.to(dst) * 2

    assert clgrad.load(buf, map_location=fn)["x"].tolist() == [[0, 2, 4], [6, 8, 10]]
    assert seen == [str(x.device)]


def test_model_and_optimizer_checkpoint(device, tmp_path):
    """Save on the host, load onto ``device``: same outputs, and training goes on identically.

    (No bias before the BatchNorm: its gradient is zero up to rounding, which Adam would
    amplify into device-dependent noise.)"""
    clgrad.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(4, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2)
    )
    opt = optim.Adam(model.parameters(), lr=0.01)
    x, y = clgrad.randn(16, 4), clgrad.randint(0, 2, (16,))

    def train_step(m, o, xs, ys):
        o.zero_grad()
        loss = nn.functional.cross_entropy(m(xs), ys)
        loss.backward()
        o.step()
        return loss.item()

    train_step(model, opt, x, y)
    clgrad.save(
        {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 1}, tmp_path / "ckpt.npz"
    )
    ckpt = clgrad.load(tmp_path / "ckpt.npz", map_location=device)
    assert ckpt["epoch"] == 1 and isinstance(next(iter(ckpt["opt"]["state"])), int)
    clone = nn.Sequential(
        nn.Linear(4, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2)
    )
    clone.to(device).load_state_dict(ckpt["model"])
    opt2 = optim.Adam(clone.parameters(), lr=0.5)
    opt2.load_state_dict(ckpt["opt"])
    model.eval()
    clone.eval()
    np.testing.assert_allclose(
        clone(x.to(device)).detach().cpu().numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6
    )
    model.train()
    clone.train()
    a = train_step(model, opt, x, y)
    b = train_step(clone, opt2, x.to(device), y.to(device))
    assert a == pytest.approx(b, rel=1e-5)
    for p, q in zip(model.parameters(), clone.parameters()):
        np.testing.assert_allclose(
            q.detach().cpu().numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-6
        )


@pytest.mark.skipif(not CL_DEVICES, reason="no OpenCL device")
def test_saved_on_opencl_loaded_on_host(tmp_path):
    dev = CL_DEVICES[0]
    lin = nn.Linear(3, 3).to(dev)
    clgrad.save(lin.state_dict(), tmp_path / "cl.npz")
    sd = clgrad.load(tmp_path / "cl.npz")
    assert sd["weight"].device == clgrad.device(dev)
    host = clgrad.load(tmp_path / "cl.npz", map_location="cpu")
    assert host["weight"].device == clgrad.device("cpu")
    np.testing.assert_array_equal(host["weight"].numpy(), lin.weight.detach().cpu().numpy())


# ---- data ------------------------------------------------------------------------------------
def test_tensor_dataset_batches(device):
    x = clgrad.arange(20.0, device=device).reshape(10, 2)
    y = clgrad.arange(10, device=device)
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    xi, yi = ds[3]
    assert xi.tolist() == [6.0, 7.0] and yi.item() == 3
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].device == clgrad.device(device)
    assert isinstance(batches[0], list) and batches[0][1].dtype == clgrad.int64
    batches[0][0].zero_()  # a batch is a copy, never a view of the dataset
    assert x[0].tolist() == [0.0, 1.0]
    dropped = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [b[1].tolist() for b in dropped] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    with pytest.raises(AssertionError, match="Size mismatch"):  # as torch's assert
        TensorDataset(x, clgrad.arange(3))


def test_shuffle_is_seeded(device):
    x = clgrad.arange(30, device=device)
    ds = TensorDataset(x * 10, x)

    def epoch(loader):
        return [v for a, b in loader for v in b.tolist()]

    g = clgrad.ops.creation.Generator(123)
    order = epoch(DataLoader(ds, batch_size=8, shuffle=True, generator=g))
    assert sorted(order) == list(range(30)) and order != list(range(30))
    g.manual_seed(123)
    assert epoch(DataLoader(ds, batch_size=8, shuffle=True, generator=g)) == order
    clgrad.manual_seed(5)
    loader = DataLoader(ds, batch_size=8, shuffle=True)
    first, second = epoch(loader), epoch(loader)
    assert first != second  # a new order every epoch
    clgrad.manual_seed(5)
    assert epoch(loader) == first
    for a, b in DataLoader(ds, batch_size=7, shuffle=True):
        assert (a == b * 10).all().item()  # rows stay paired


class Squares(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {
            "x": clgrad.tensor([float(i), float(i * i)]),
            "i": i,
            "f": i / 2,
            "name": f"s{i}",
            "pair": (i, clgrad.tensor(i)),
        }


def test_default_collate_and_custom_datasets():
    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert batch["x"].tolist() == [[0, 0], [1, 1], [2, 4]]
    assert batch["i"].dtype == clgrad.int64 and batch["i"].tolist() == [0, 1, 2]
    assert batch["f"].dtype == clgrad.float64 and batch["name"] == ["s0", "s1", "s2"]
    assert batch["pair"][0].tolist() == [0, 1, 2] and batch["pair"][1].tolist() == [0, 1, 2]
    assert default_collate([np.zeros(2), np.ones(2)]).tolist() == [[0, 0], [1, 1]]
    # NumPy scalars keep their dtype (a Dataset's np.float32 labels batch as float32)
    assert default_collate([np.float32(1), np.float32(2)]).dtype == clgrad.float32
    assert default_collate([np.int32(1), np.int32(2)]).dtype == clgrad.int32
    assert default_collate([np.bool_(True)]).dtype == clgrad.bool
    # collate_fn, batch_size=None, samplers
    lens = [len(b) for b in DataLoader(Squares(), batch_size=2, collate_fn=lambda b: b)]
    assert lens == [2, 2, 1]
    single = list(DataLoader(Squares(), batch_size=None))
    assert len(single) == 5 and single[4]["i"] == 4
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    by_sampler = DataLoader(Squares(), batch_sampler=[[4, 0], [2]])
    assert [b["i"].tolist() for b in by_sampler] == [[4, 0], [2]]
    assert len(list(RandomSampler(range(4), replacement=True, num_samples=9))) == 9
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(Squares(), sampler=SequentialSampler(range(5)), shuffle=True)


def test_subset_and_random_split():
    ds = TensorDataset(clgrad.arange(10))
    sub = Subset(ds, [9, 3])
    assert len(sub) == 2 and sub[0][0].item() == 9
    clgrad.manual_seed(0)
    parts = random_split(ds, [0.7, 0.3])
    assert [len(p) for p in parts] == [7, 3]
    seen = sorted(v[0].item() for p in parts for v in (p[i] for i in range(len(p))))
    assert seen == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    joined = ds + Subset(ds, [1])
    assert len(joined) == 11 and joined[10][0].item() == 1


def test_concat_dataset_as_torchs():
    import torch

    for lib in (torch, clgrad):
        ds = lib.utils.data.ConcatDataset([lib.arange(3), lib.arange(10, 12)])
        # plain ints, as torch's (NumPy's int64 printed as np.int64(3) in a list's repr)
        assert ds.cumulative_sizes == [3, 5] and all(type(n) is int for n in ds.cumulative_sizes)
        assert len(ds) == 5 and ds[3].item() == 10 and ds[-1].item() == 11
        with pytest.raises(AssertionError, match="empty iterable"):
            lib.utils.data.ConcatDataset([])
        with pytest.raises(ValueError, match="num_workers=0 to disable"):
            lib.utils.data.DataLoader(range(4), num_workers=-1)
