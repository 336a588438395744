"""clgrad.load reads files written by PyTorch's torch.save (its zip format): state dicts, whole
checkpoints with optimizer state, every dtype, views sharing a storage, strided tensors,
parameters; weights_only refuses pickled code as torch.load does; damaged archives raise."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad
from clgrad.serialization import CheckpointError


def _saved(obj, **kwargs) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf, **kwargs)
    buf.seek(0)
    return buf


def _torch_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 3, 3, padding=1),
        torch.nn.BatchNorm2d(3),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(3 * 4 * 4, 5),
    )


def _clgrad_model():
    return clgrad.nn.Sequential(
        clgrad.nn.Conv2d(1, 3, 3, padding=1),
        clgrad.nn.BatchNorm2d(3),
        clgrad.nn.ReLU(),
        clgrad.nn.Flatten(),
        clgrad.nn.Linear(3 * 4 * 4, 5),
    )


def test_state_dict_of_a_torch_model(device):
    model = _torch_model()
    model(torch.randn(8, 1, 4, 4))  # running statistics that differ from their defaults
    model.eval()
    state = clgrad.load(_saved(model.state_dict()), map_location=device)
    assert list(state) == list(model.state_dict())
    assert state["1.num_batches_tracked"].dtype == clgrad.int64
    ours = _clgrad_model().to(device).eval()
    ours.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    want = model(torch.from_numpy(x)).detach().numpy()
    got = ours(clgrad.tensor(x, device=device)).detach().cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "dtype",
    [
        "float32",
        "float64",
        "float16",
        "bfloat16",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
    ],
)
def test_every_dtype(device, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    values = torch.tensor([[0, 1, -2], [3, 100, -7]]).to(getattr(torch, dtype))
    got = clgrad.load(_saved({"x": values}), map_location=device)["x"]
    assert got.dtype == getattr(clgrad, dtype) and tuple(got.shape) == (2, 3)
    assert str(got.device) == device
    want = values.float().numpy() if dtype == "bfloat16" else values.numpy()
    np.testing.assert_array_equal(
        got.float().cpu().numpy() if dtype == "bfloat16" else got.cpu().numpy(), want
    )


def test_views_strides_and_parameters(device):
    base = torch.arange(12.0)
    obj = {
        "base": base,
        "every_other": base[1::2],  # a view of the same storage, at an offset
        "transposed": torch.arange(6.0).reshape(2, 3).t(),
        "param": torch.nn.Parameter(torch.ones(2)),
        "frozen": torch.nn.Parameter(torch.ones(1), requires_grad=False),
        "grad": torch.ones(2, requires_grad=True),
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(2.5),
        "meta": {"epoch": 3, "size": torch.Size([2, 3]), "dtype": torch.float16, "lr": [0.1]},
    }
    got = clgrad.load(_saved(obj), map_location=device)
    assert got["every_other"].tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]
    assert got["transposed"].stride() == (1, 3) and got["transposed"].tolist() == [
        [0.0, 3.0],
        [1.0, 4.0],
        [2.0, 5.0],
    ]
    # views of one storage load sharing memory, as torch.load's do
    got["base"][1] = 100.0
    assert got["every_other"][0].item() == 100.0
    assert isinstance(got["param"], clgrad.nn.Parameter) and got["param"].requires_grad
    assert isinstance(got["frozen"], clgrad.nn.Parameter) and not got["frozen"].requires_grad
    assert got["grad"].requires_grad and got["grad"].is_leaf
    assert tuple(got["empty"].shape) == (0, 3) and got["scalar"].item() == 2.5
    assert got["meta"] == {"epoch": 3, "size": (2, 3), "dtype": clgrad.float16, "lr": [0.1]}
    assert isinstance(got["meta"]["size"], clgrad.Size)


def test_map_location_forms(device):
    buf = _saved({"w": torch.ones(2)})
    assert str(clgrad.load(buf, map_location={"cpu": device})["w"].device) == device
    buf.seek(0)
    seen = []

    def move(storage, location):
        seen.append(location)
        return storage.to(device)

    assert str(clgrad.load(buf, map_location=move)["w"].device) == device
    assert seen == ["cpu"]


def test_optimizer_state_continues_as_torch(device):
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.tensor([0.5, -0.2, 1.0]))
    opt = torch.optim.Adam([w], lr=0.1)
    scale = torch.tensor([1.0, 2.0, -3.0])
    for _ in range(2):
        opt.zero_grad()
        (w * scale).square().sum().backward()
        opt.step()
    ck = clgrad.load(_saved({"w": w.detach(), "opt": opt.state_dict()}), map_location=device)
    ours = clgrad.nn.Parameter(ck["w"].clone())
    ours_opt = clgrad.optim.Adam([ours], lr=0.1)
    ours_opt.load_state_dict(ck["opt"])
    ours_scale = clgrad.tensor([1.0, 2.0, -3.0], device=device)
    for _ in range(3):
        opt.zero_grad()
        (w * scale).square().sum().backward()
        opt.step()
        ours_opt.zero_grad()
        (ours * ours_scale).square().sum().backward()
        ours_opt.step()
    np.testing.assert_allclose(ours.detach().cpu().numpy(), w.detach().numpy(), rtol=1e-5)


def test_whole_module_needs_weights_only_false(device):
    model = _torch_model().eval()
    buf = _saved(model)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        clgrad.load(buf)
    buf.seek(0)
    ours = clgrad.load(buf, weights_only=False, map_location=device)
    assert type(ours) is clgrad.nn.Sequential and type(ours[0]) is clgrad.nn.Conv2d
    x = np.ones((1, 1, 4, 4), np.float32)
    want = model(torch.from_numpy(x)).detach().numpy()
    got = ours(clgrad.tensor(x, device=device)).detach().cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _rewritten(buf, change) -> io.BytesIO:
    """The archive with member names -> bytes passed through ``change(name, data)``."""
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = change(info.filename, src.read(info))
            if data is not None:
                dst.writestr(info.filename, data)
    out.seek(0)
    return out


def test_damaged_archives_raise():
    buf = _saved({"w": torch.ones(4)})
    short = _rewritten(buf, lambda n, d: d[:-4] if "/data/" in n else d)
    with pytest.raises(CheckpointError, match="declares 16 bytes but holds 12"):
        clgrad.load(short)
    buf.seek(0)
    missing = _rewritten(buf, lambda n, d: None if "/data/" in n else d)
    with pytest.raises(CheckpointError, match="missing"):
        clgrad.load(missing)


def test_a_cuda_checkpoint_needs_a_device_or_map_location():
    # a storage saved from "cuda:0" goes back there, as with torch.load; map_location moves it
    buf = _saved({"w": torch.ones(2)})
    cuda = _rewritten(
        buf, lambda n, d: d.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    )
    if not clgrad.cuda.is_available():
        with pytest.raises(RuntimeError):
            clgrad.load(cuda)
    cuda.seek(0)
    assert clgrad.load(cuda, map_location="cpu")["w"].tolist() == [1.0, 1.0]
