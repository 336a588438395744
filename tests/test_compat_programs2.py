"""Realistic PyTorch programs (and the modules they touch) run with torch and with clgrad on
every device from the same inputs: torch's weights copied through ``state_dict``, the data drawn
once with NumPy. Outputs, losses over several steps, gradients and the state after training
must agree, as must the types, dtypes and shapes the programs see."""

from __future__ import annotations

import copy
import multiprocessing as py_multiprocessing
import warnings

import numpy as np
import pytest
from conftest import DEVICES

import clgrad

torch = pytest.importorskip("torch")


# ---- helpers ---------------------------------------------------------------------------------
def as_numpy(value):
    """A program's result, tensors to NumPy, through lists, tuples and dicts."""
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    if isinstance(value, (list, tuple)):
        return [as_numpy(v) for v in value]
    if isinstance(value, dict):
        return {k: as_numpy(v) for k, v in value.items()}
    return np.asarray(value)


def assert_same(got, want, rtol=1e-4, atol=1e-5, path="result"):
    """Equal structure, shapes, dtypes, and values (within tolerance where floating)."""
    if isinstance(want, dict):
        assert set(got) == set(want), f"{path}: keys {set(got) ^ set(want)}"
        for k in want:
            assert_same(got[k], want[k], rtol, atol, f"{path}.{k}")
        return
    if isinstance(want, list):
        assert len(got) == len(want), f"{path}: {len(got)} items, torch {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, f"{path}[{i}]")
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{path}: shape {g.shape}, torch {w.shape}"
    assert g.dtype == w.dtype, f"{path}: dtype {g.dtype}, torch {w.dtype}"
    if w.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=path)
    else:
        np.testing.assert_array_equal(g, w, err_msg=path)


class SameWeights:
    """Hands clgrad's run of a program the weights torch's run initialized: ``make(key,
    build)`` keeps a copy of torch's module under ``key`` and loads it into clgrad's."""

    def __init__(self):
        self.reference = {}

    def __call__(self, lib, key, build):
        module = build()
        if lib is torch:
            self.reference[key] = copy.deepcopy(module)
        else:
            state = self.reference[key].state_dict()
            module.load_state_dict({k: clgrad.tensor(v.numpy()) for k, v in state.items()})
        return module


def compare_program(program, device, rtol=1e-4, atol=1e-5):
    """Runs ``program(lib, device, same_weights)`` with torch on cpu, then with clgrad on
    ``device``, and compares what each returned."""
    weights = SameWeights()
    want = as_numpy(program(torch, "cpu", weights))
    got = as_numpy(program(clgrad, device, weights))
    assert_same(got, want, rtol, atol)


# ---- the modules PyTorch programs import -----------------------------------------------------
def test_version_module():
    assert clgrad.version.cuda is None and clgrad.version.hip is None
    assert clgrad.version.debug is False and isinstance(clgrad.version.git_version, str)
    assert clgrad.__version__ == clgrad.version.__version__
    # compared as a version, as torch.__version__ is: "0.10" is after "0.9"
    v = clgrad.torch_version.TorchVersion("0.10.1")
    assert v > "0.9" and v >= (0, 10) and v < "1.0" and v == "0.10.1" and v != "0.10"
    assert clgrad.__version__ >= "0.0.1"


def test_cpu_module_as_device_agnostic_code_uses_it():
    for name in ("is_available", "device_count", "current_device", "synchronize", "is_initialized"):
        assert getattr(clgrad.cpu, name)() == getattr(torch.cpu, name)()
    s = clgrad.cpu.Stream()
    with clgrad.cpu.stream(s):
        assert clgrad.cpu.current_stream() is s
    assert clgrad.cpu.current_stream() is not s
    assert clgrad.cpu.Event().query() is True
    device_module = getattr(clgrad, torch.device("cpu").type)  # device-agnostic code's lookup
    device_module.set_device("cpu")
    device_module.synchronize("cpu")


def test_cpu_amp_spellings_warn_as_deprecated():
    with pytest.warns(FutureWarning, match="torch.amp.autocast\\('cpu'"):
        ac = clgrad.cpu.amp.autocast(enabled=False)
    assert isinstance(ac, clgrad.amp.autocast) and ac.device == "cpu"
    with pytest.warns(FutureWarning, match="GradScaler"):
        scaler = clgrad.cpu.amp.GradScaler(init_scale=8.0)
    assert scaler.get_scale() == 8.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with clgrad.cpu.amp.autocast(dtype=clgrad.float16):
            assert clgrad.is_autocast_enabled("cpu")
    assert not clgrad.is_autocast_enabled("cpu")


@pytest.mark.parametrize(
    "op, args, fields",
    [
        ("max", (0,), ("values", "indices")),
        ("min", (1,), ("values", "indices")),
        ("sort", (), ("values", "indices")),
        ("topk", (2,), ("values", "indices")),
        ("kthvalue", (2,), ("values", "indices")),
        ("median", (0,), ("values", "indices")),
        ("mode", (0,), ("values", "indices")),
        ("cummax", (1,), ("values", "indices")),
        ("cummin", (0,), ("values", "indices")),
        ("aminmax", (), ("min", "max")),
        ("frexp", (), ("mantissa", "exponent")),
    ],
)
def test_return_types_name_the_results(device, op, args, fields):
    data = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 4.0]], dtype=np.float32)
    got = getattr(clgrad, op)(clgrad.tensor(data, device=device), *args)
    want = getattr(torch, op)(torch.tensor(data), *args)
    assert isinstance(got, getattr(clgrad.return_types, op))
    if op != "frexp":  # clgrad's frexp result is a tuple class of its own name
        assert type(got).__name__ == type(want).__name__ == op
    for field in fields:
        assert_same(as_numpy(getattr(got, field)), as_numpy(getattr(want, field)))
    first, second = got  # unpacks as a pair
    assert_same(as_numpy(first), as_numpy(want[0]))


def test_max_and_min_results_are_different_types():
    x = clgrad.tensor([[1.0, 2.0]])
    assert not isinstance(x.max(1), clgrad.return_types.min)
    assert not isinstance(x.min(1), clgrad.return_types.max)
    assert isinstance(clgrad.linalg.slogdet(clgrad.eye(2)), clgrad.return_types.linalg_slogdet)


def test_multiprocessing_reexports_python_and_torch_names():
    mp = clgrad.multiprocessing
    for name in ("Process", "Queue", "SimpleQueue", "Pool", "get_context", "set_start_method",
                 "get_start_method", "cpu_count", "spawn", "start_processes", "ProcessContext",
                 "ProcessRaisedException", "ProcessExitedException"):  # fmt: skip
        assert hasattr(mp, name) and hasattr(torch.multiprocessing, name), name
    assert mp.Process is py_multiprocessing.Process
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
        with pytest.raises(AssertionError):
            mp.set_sharing_strategy("shared_nothing")
    finally:
        mp.set_sharing_strategy("file_descriptor")


def _sum_into_queue(rank, queue, tensors):
    queue.put([(rank, (t * rank).sum().item(), str(t.device)) for t in tensors])


def _raise_in_rank_one(rank):
    if rank == 1:
        raise ValueError(f"rank {rank} failed")


def _exit_with_three(rank):
    raise SystemExit(3)


def test_multiprocessing_spawn_passes_tensors_and_raises_failures():
    mp = clgrad.multiprocessing
    queue = mp.get_context("spawn").SimpleQueue()
    tensors = [clgrad.arange(4.0, device=d) for d in DEVICES]
    mp.spawn(_sum_into_queue, args=(queue, tensors), nprocs=2)  # children import clgrad anew
    got = sorted([queue.get(), queue.get()])
    assert got == [[(r, 6.0 * r, d) for d in DEVICES] for r in (0, 1)]
    # the failures, in forked children (quicker to start; spawn's handling is the same)
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: rank 1 failed") as info:
        mp.start_processes(_raise_in_rank_one, nprocs=2, start_method="fork")
    assert info.value.error_index == 1
    context = mp.start_processes(_exit_with_three, nprocs=1, join=False, start_method="fork")
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as info:
        context.join()
    assert info.value.exit_code == 3
