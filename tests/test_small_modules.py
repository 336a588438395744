"""clgrad.backends.opt_einsum, clgrad.overrides, clgrad.mps and clgrad.xpu against torch's
modules of those names on this CPU machine (no MPS, no XPU): the same values, the same errors."""

from __future__ import annotations

import warnings

import pytest

import clgrad
import clgrad.backends.opt_einsum as coe
from clgrad import overrides as co

torch = pytest.importorskip("torch")
from torch import overrides as to  # noqa: E402


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 -- the class and message are what is compared
        return (type(e).__name__, str(e))


# ---- opt_einsum --------------------------------------------------------------------------------
def test_opt_einsum_like_torch():
    toe = torch.backends.opt_einsum
    assert coe.is_available() == toe.is_available()
    assert coe.enabled == toe.enabled and coe.strategy == toe.strategy
    assert (coe.get_opt_einsum() is None) == (toe.get_opt_einsum() is None)
    assert clgrad.backends.opt_einsum is coe


@pytest.mark.skipif(coe.is_available(), reason="checks the errors without opt_einsum")
def test_opt_einsum_setters_refuse_as_torch():
    toe = torch.backends.opt_einsum
    for mod in (coe, toe):
        with pytest.raises(ValueError, match="opt_einsum is not available, so setting `enabled`"):
            mod.set_flags(True)
        with pytest.raises(ValueError, match="opt_einsum is not available"):
            mod.set_flags(None, "greedy")
        with pytest.raises(ValueError, match="opt_einsum is not available"):
            with mod.flags(enabled=True):
                pass
        assert mod.set_flags(False) == (False, None)
        assert mod.enabled is False
    assert coe.set_flags() == toe.set_flags() == (False, None)
    with coe.flags(enabled=False):
        assert coe.enabled is False


@pytest.mark.skipif(not coe.is_available(), reason="needs opt_einsum")
def test_opt_einsum_strategy_checks():
    with pytest.raises(ValueError, match="must be one of the following"):
        coe.set_flags(None, "fastest")
    with coe.flags(strategy="greedy"):
        assert coe.strategy == "greedy"
    assert coe.strategy == "auto"


# ---- overrides ---------------------------------------------------------------------------------
class Logged:
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func.__name__, [t.__name__ for t in types]))
        return "logged"


class LoggedChild(Logged):
    pass


class Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def api(a, b=None):
    if co.has_torch_function_variadic(a, b):
        return co.handle_torch_function(api, (a, b), a, b=b)
    return "plain"


def test_has_torch_function_on_plain_values_and_tensors():
    for args in [(1, 2.0), (None,), ("s", [1])]:
        assert co.has_torch_function(args) == to.has_torch_function(args) is False
    # a plain clgrad Tensor does not override (torch's Tensor is excluded the same way)
    assert co.has_torch_function((clgrad.zeros(1),)) is False
    assert to.has_torch_function((torch.zeros(1),)) is False
    assert co.has_torch_function_unary(clgrad.zeros(1)) is False
    assert co.has_torch_function((Logged(),)) == to.has_torch_function((Logged(),)) is True
    assert co.has_torch_function_unary(Logged()) == to.has_torch_function_unary(Logged())
    assert co.has_torch_function_variadic(1, Logged()) == to.has_torch_function_variadic(
        1, Logged()
    )


def test_handle_torch_function_order_and_types_like_torch():
    def run(mod):
        Logged.calls = []

        def f(a, b):
            return mod.handle_torch_function(f, (a, b), a, b)

        return f(Logged(), LoggedChild()), list(Logged.calls)

    assert run(co) == run(to)
    result, calls = run(co)
    # the subclass's override is called first, and sees both types
    assert result == "logged" and calls == [("f", ["LoggedChild", "Logged"])]
    assert api(clgrad.zeros(1)) == "plain" and api(1, Logged()) == "logged"


def test_handle_torch_function_errors_like_torch():
    def f(x):
        return None

    ours = _outcome(co.handle_torch_function, f, (Declines(),), Declines())
    theirs = _outcome(to.handle_torch_function, f, (Declines(),), Declines())
    assert ours[0] == theirs[0] == "TypeError"
    assert ours[1].split(":")[0] == theirs[1].split(":")[0]

    class Plain:
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return 1

    with pytest.warns(DeprecationWarning, match="plain method is deprecated"):
        assert co.handle_torch_function(f, (Plain(),), 0) == 1


def test_is_tensor_like():
    class Sub(clgrad.Tensor):
        pass

    for v in (6, None, "s", [1]):
        assert co.is_tensor_like(v) == to.is_tensor_like(v) is False
    assert co.is_tensor_like(Logged()) == to.is_tensor_like(Logged()) is True
    assert co.is_tensor_like(clgrad.zeros(1)) and co.is_tensor_like(Sub(2))
    assert clgrad.overrides is co


def test_get_ignored_functions_match_torch_names():
    ours = co.get_ignored_functions()
    theirs = to.get_ignored_functions()
    for name in ("zeros", "ones", "tensor", "manual_seed", "is_grad_enabled", "arange"):
        assert getattr(clgrad, name) in ours and getattr(torch, name) in theirs
    for name in ("add", "matmul", "sum"):
        assert getattr(clgrad, name) not in ours and getattr(torch, name) not in theirs
    assert clgrad.Tensor.new_zeros in ours


# ---- mps and xpu -------------------------------------------------------------------------------
MPS_CALLS = [
    ("is_available", ()),
    ("device_count", ()),
    ("synchronize", ()),
    ("empty_cache", ()),
    ("manual_seed", (0,)),
    ("seed", ()),
    ("get_rng_state", ()),
    ("set_per_process_memory_fraction", (0.5,)),
    ("current_allocated_memory", ()),
    ("driver_allocated_memory", ()),
    ("recommended_max_memory", ()),
]


@pytest.mark.parametrize("name, args", MPS_CALLS, ids=[c[0] for c in MPS_CALLS])
def test_mps_like_torch_without_mps(name, args):
    if torch.mps.is_available():
        pytest.skip("torch sees an MPS device here")
    assert _outcome(getattr(clgrad.mps, name), *args) == _outcome(getattr(torch.mps, name), *args)


XPU_CALLS = [
    ("is_available", ()),
    ("device_count", ()),
    ("is_initialized", ()),
    ("init", ()),
    ("synchronize", ()),
    ("empty_cache", ()),
    ("current_device", ()),
    ("set_device", (0,)),
    ("get_device_name", ()),
    ("get_device_properties", ()),
    ("get_device_capability", ()),
    ("mem_get_info", ()),
    ("initial_seed", ()),
    ("get_rng_state", ()),
    ("get_rng_state_all", ()),
    ("set_rng_state_all", ([],)),
    ("manual_seed", (0,)),
    ("manual_seed_all", (0,)),
    ("seed", ()),
    ("seed_all", ()),
    ("memory_stats", ()),
    ("memory_allocated", ()),
    ("max_memory_allocated", ()),
    ("memory_reserved", ()),
    ("max_memory_reserved", ()),
    ("memory_snapshot", ()),
    ("is_bf16_supported", ()),
    ("is_tf32_supported", ()),
    ("get_arch_list", ()),
    ("get_gencode_flags", ()),
]


@pytest.mark.parametrize("name, args", XPU_CALLS, ids=[c[0] for c in XPU_CALLS])
def test_xpu_like_torch_without_xpu(name, args):
    if torch.xpu.is_available():
        pytest.skip("torch sees an XPU device here")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _outcome(getattr(torch.xpu, name), *args)
    assert _outcome(getattr(clgrad.xpu, name), *args) == theirs


def test_device_modules_are_attributes_of_clgrad():
    assert clgrad.mps.device_count() == 0 and clgrad.xpu.device_count() == 0
    assert not clgrad.mps.is_available() and not clgrad.xpu.is_available()
