"""``torch.save(model)`` / ``torch.load(path, weights_only=...)`` as PyTorch 2.6+ behaves: whole
modules and other objects are pickled (their tensors stored as arrays), refused by the default
``weights_only=True`` with pickle's UnpicklingError, loaded with ``weights_only=False`` or for
allow-listed classes; optimizer state dicts, containers of tensors and every ``map_location``
form round-trip."""

import fractions
import pickle

import numpy as np
import pytest

import clgrad
import clgrad.nn as nn

torch = pytest.importorskip("torch")


class Net(nn.Module):
    """A module with a parameter, a buffer and a submodule (importable, as pickling needs)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("offset", clgrad.arange(2.0))

    def forward(self, x):
        return self.fc(x) + self.offset


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.register_buffer("offset", torch.arange(2.0))

    def forward(self, x):
        return self.fc(x) + self.offset


@pytest.mark.parametrize("lib,cls", [(clgrad, Net), (torch, TorchNet)], ids=["clgrad", "torch"])
def test_whole_module_needs_weights_only_false(tmp_path, lib, cls):
    path = tmp_path / "model.pth"
    model = cls()
    lib.save(model, path)
    with pytest.raises(pickle.UnpicklingError, match="weights_only") as info:
        lib.load(path)
    assert "add_safe_globals" in str(info.value) and "Net" in str(info.value)
    with pytest.raises(pickle.UnpicklingError):
        lib.load(path, weights_only=True)
    again = lib.load(path, weights_only=False)
    assert type(again) is cls and again is not model
    x = lib.ones(1, 3)
    np.testing.assert_allclose(again(x).detach().numpy(), model(x).detach().numpy())
    assert isinstance(again.fc.weight, lib.nn.Parameter) and again.fc.weight.requires_grad
    assert [n for n, _ in again.named_buffers()] == ["offset"]


def test_whole_module_map_location_and_allow_list(tmp_path, cl_device):
    path = tmp_path / "model.pth"
    model = Net()
    clgrad.save(model, path)
    moved = clgrad.load(path, map_location=cl_device, weights_only=False)
    assert str(moved.fc.weight.device) == cl_device and str(moved.offset.device) == cl_device
    x = clgrad.ones(1, 3)
    np.testing.assert_allclose(
        moved(x.to(cl_device)).detach().cpu().numpy(), model(x).detach().numpy(), rtol=1e-6
    )
    # allow-listing every class the pickle names lets weights_only=True load it
    with clgrad.serialization.safe_globals([Net, nn.Linear]):
        assert type(clgrad.load(path)) is Net
    with pytest.raises(pickle.UnpicklingError):
        clgrad.load(path)


def test_shared_tensors_stay_shared_and_data_needs_no_pickle(tmp_path):
    model = Net()
    path = tmp_path / "both.pth"
    clgrad.save({"model": model, "weight": model.fc.weight, "epoch": 3}, path)
    both = clgrad.load(path, weights_only=False)
    assert both["model"].fc.weight is both["weight"] and both["epoch"] == 3
    # a state dict is data: no pickle inside, loads under weights_only=True
    clgrad.save(model.state_dict(), path)
    with np.load(path, allow_pickle=False) as z:
        assert not [k for k in z.files if k.startswith("p")]
    assert list(clgrad.load(path)) == list(TorchNet().state_dict())


def test_plain_containers_load_under_weights_only(tmp_path):
    obj = {"s": {1, 2}, "b": b"xy", "c": 1 + 2j, "r": fractions.Fraction(1, 3)}
    path = tmp_path / "x.pth"
    clgrad.save(obj, path)
    with pytest.raises(pickle.UnpicklingError, match="Fraction"):
        clgrad.load(path)
    clgrad.serialization.add_safe_globals([fractions.Fraction])
    try:
        assert clgrad.load(path) == obj
    finally:
        clgrad.serialization.clear_safe_globals()


def test_optimizer_state_dict_and_containers_round_trip(tmp_path, device):
    model = Net().to(device)
    opt = clgrad.optim.Adam(model.parameters(), lr=0.01)
    model(clgrad.ones(2, 3, device=device)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pth"
    clgrad.save(
        {"opt": opt.state_dict(), "pair": (clgrad.ones(2), [clgrad.zeros(1, device=device)])}, path
    )
    ckpt = clgrad.load(path)
    fresh = clgrad.optim.Adam(model.parameters(), lr=0.5)
    fresh.load_state_dict(ckpt["opt"])
    assert fresh.param_groups[0]["lr"] == 0.01 and fresh.state_dict()["state"][0]["step"] == 1
    assert isinstance(ckpt["pair"], tuple) and str(ckpt["pair"][1][0].device) == device


def test_map_location_forms(tmp_path, device):
    path = tmp_path / "t.pth"
    clgrad.save([clgrad.ones(2, device=device)], path)
    for where in ("cpu", clgrad.device("cpu"), {device: "cpu"}, lambda t, loc: t):
        (t,) = clgrad.load(path, map_location=where)
        assert str(t.device) == "cpu"
    (t,) = clgrad.load(path, map_location=lambda storage, loc: storage.to(loc))
    assert str(t.device) == device
