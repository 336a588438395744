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
