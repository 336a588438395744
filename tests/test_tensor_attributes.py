"""What a program may do to a tensor object itself, as on torch's: set attributes of its own
(kept by pickling and deepcopy, not by views or new tensors), delete ``.grad``, detach a view
in place (refused), and print a subclass under the subclass's name."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch

import clgrad


@pytest.mark.parametrize("lib", [torch, clgrad], ids=["torch", "clgrad"])
def test_attributes_a_program_sets(lib):
    x = lib.ones(2)
    assert x.__dict__ == {}
    x.shared, x.name_tag = True, "w"
    assert x.__dict__ == {"shared": True, "name_tag": "w"}
    assert pickle.loads(pickle.dumps(x)).__dict__ == {"shared": True, "name_tag": "w"}
    assert copy.deepcopy(x).shared is True
    for other in (x.detach(), x.view(2), x.clone(), x + 1, x.to(lib.float64)):
        assert not hasattr(other, "shared")
    p = lib.nn.Parameter(lib.ones(2))
    p.sharded = 3
    assert pickle.loads(pickle.dumps(p)).sharded == 3
    assert not hasattr(copy.deepcopy(p), "sharded")  # torch's Parameter copies its data alone
    model = lib.nn.Linear(2, 2)
    model.weight.flag = 1
    assert model.weight.flag == 1 and not hasattr(copy.deepcopy(model).weight, "flag")
    del x.shared
    assert not hasattr(x, "shared")


def test_a_tensors_attributes_on_the_device(device):
    x = clgrad.ones(3, device=device)
    x.tag = "kept"
    y = pickle.loads(pickle.dumps(x))
    assert y.tag == "kept" and str(y.device) == str(x.device)


@pytest.mark.parametrize("lib", [torch, clgrad], ids=["torch", "clgrad"])
def test_deleting_grad_and_detaching_a_view_in_place(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    del x.grad
    assert x.grad is None
    base = lib.ones(3)
    for view in (base.view(3), base[1:]):
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            view.detach_()
    assert base.detach().detach_() is not None  # (a detached tensor is no view)


@pytest.mark.parametrize("lib", [torch, clgrad], ids=["torch", "clgrad"])
def test_a_subclass_prints_under_its_name(lib):
    class Mine(lib.Tensor):
        pass

    x = lib.ones(2, 3).as_subclass(Mine)
    assert repr(x) == "Mine([[1., 1., 1.],\n      [1., 1., 1.]])"
    assert repr(lib.nn.Parameter(lib.ones(2))).startswith("Parameter containing:\ntensor(")


def test_deleting_grad_while_torch_function_dispatch_is_on():
    """``del t.grad`` works while a Tensor subclass keeps ``__torch_function__`` dispatch on
    (its property wrappers keep the deleter)."""

    class Alive(clgrad.Tensor):
        pass

    keep = clgrad.ones(1).as_subclass(Alive)
    x = clgrad.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    del x.grad
    assert x.grad is None
    del keep
