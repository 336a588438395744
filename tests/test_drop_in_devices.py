"""PyTorch's device idioms with ``import clgrad as torch`` (README: "PyTorch device names on
OpenCL").

What PyTorch can run here (its cpu build) is compared with PyTorch itself: legacy constructors,
the default dtype, grad-mode decorators, ``.numpy()``'s rules, the ``backends`` flags. What
"cuda" means depends on ``CLGRAD_DEVICE``, read once per process, so it is checked in two
subprocesses: one with ``CLGRAD_DEVICE=cl:0`` (the cuda functions, and a small PyTorch training
program, whose losses must equal those of the same program run on the cpu in this process), one
without (where "cuda" is the OpenCL GPUs only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
from conftest import CL_DEVICES

import clgrad

BOTH = pytest.mark.parametrize("lib", [torch, clgrad], ids=["torch", "clgrad"])


def _name(dt) -> str:
    return str(dt).rpartition(".")[2]


# ---- run where PyTorch runs: compared with it ------------------------------------------------
def _legacy_answers(lib):
    base = lib.arange(3.0)
    alias = lib.Tensor(base)
    alias[0] = 7.0  # Tensor(tensor) shares the storage
    got = {
        "data": (lib.Tensor([1, 2]).tolist(), _name(lib.Tensor([1, 2]).dtype)),
        "sizes": tuple(lib.Tensor(2, 3).shape),
        "size": tuple(lib.Tensor(lib.zeros(4, 5).shape).shape),
        "tuple is data": lib.Tensor((2, 3)).tolist(),
        "empty": tuple(lib.Tensor().shape),
        "numpy": _name(lib.Tensor(np.array([1, 2])).dtype),
        "alias": (base[0].item(), alias.requires_grad),
        "int alias": _name(lib.Tensor(lib.arange(3)).dtype),
        "not float": isinstance(lib.ones(2).long(), lib.FloatTensor),
        "cpu float": isinstance(lib.ones(2), lib.FloatTensor),
    }
    for cls in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"):
        t = getattr(lib, cls)([1, 0])
        got[cls] = (_name(t.dtype), t.tolist(), isinstance(t, getattr(lib, cls)))
        got[cls + " sizes"] = tuple(getattr(lib, cls)(2, 1).shape)
    got["ByteTensor"] = _name(lib.ByteTensor(1).dtype)
    with pytest.raises(TypeError, match="data must be a sequence"):
        lib.FloatTensor(2.5)
    return got


def test_legacy_constructors_as_pytorch():
    assert _legacy_answers(clgrad) == _legacy_answers(torch)


def _default_dtype_answers(lib):
    lib.set_default_dtype(lib.float64)
    try:
        made = [
            lib.Tensor([1]),
            lib.FloatTensor([1]),
            lib.tensor([1.0]),
            lib.tensor(2.5),
            lib.tensor([1, 2.5]),
            lib.tensor([1, 2]),
            lib.tensor(np.array([1.0], np.float32)),
            lib.as_tensor([1.0]),
            lib.arange(0.0, 2),
            lib.arange(2),
            lib.zeros(1),
            lib.ones(1),
            lib.empty(1),
            lib.full((1,), 1.5),
            lib.full((1,), 1),
            lib.rand(1),
            lib.randn(1),
            lib.linspace(0, 1, 2),
            lib.eye(2),
            lib.arange(3) / 2,
            lib.zeros_like(lib.ones(1, dtype=lib.float32)),
            lib.nn.Linear(2, 2).weight,
        ]
        return [_name(t.dtype) for t in made] + [_name(lib.get_default_dtype())]
    finally:
        lib.set_default_dtype(lib.float32)


def test_default_dtype_as_pytorch():
    assert _default_dtype_answers(clgrad) == _default_dtype_answers(torch)
    assert clgrad.get_default_dtype() is clgrad.float32
    with pytest.raises(TypeError):
        clgrad.set_default_dtype(clgrad.int64)


def test_default_device():
    assert clgrad.get_default_device() == clgrad.default_device()
    before = clgrad.default_device()
    try:
        clgrad.set_default_device("cpu")
        assert clgrad.zeros(1).device == "cpu" and clgrad.get_default_device() == "cpu"
    finally:
        clgrad.set_default_device(before)


def test_device_as_a_context_manager(device):
    """``with torch.device(d):`` sends the tensors created inside without a device (and a
    module's parameters) to ``d``, innermost block first, in this thread only."""
    outside = clgrad.default_device()
    with clgrad.device(device) as d:
        assert d == device
        made = [
            clgrad.zeros(2),
            clgrad.tensor([1.0]),
            clgrad.arange(3),
            clgrad.nn.Linear(2, 2).weight,
        ]
        assert all(t.device == device for t in made)
        assert clgrad.ones(1, device="cpu").device == "cpu"  # an explicit device wins
        with clgrad.device("cpu"):
            assert clgrad.ones(1).device == "cpu"
        assert clgrad.ones(1).device == device
        seen = []
        thread = threading.Thread(target=lambda: seen.append(clgrad.ones(1).device))
        thread.start()
        thread.join()
        assert seen == [outside]
    assert clgrad.default_device() == outside
    with torch.device("cpu"):  # PyTorch's, for comparison
        assert torch.zeros(1).device.type == "cpu"


def _grad_mode_answers(lib):
    out = []

    @lib.no_grad
    def bare_no_grad():
        return lib.is_grad_enabled()

    @lib.no_grad()
    def called_no_grad():
        return lib.is_grad_enabled()

    @lib.inference_mode
    def bare_inference():
        return lib.is_grad_enabled()

    @lib.inference_mode(False)
    def inference_off():
        return lib.is_grad_enabled()

    @lib.enable_grad
    def bare_enable():
        return lib.is_grad_enabled()

    @lib.enable_grad()
    def called_enable():
        return lib.is_grad_enabled()

    @lib.set_grad_enabled(False)
    def grad_off():
        return lib.is_grad_enabled()

    out += [bare_no_grad(), called_no_grad(), bare_inference(), inference_off(), grad_off()]
    out.append(lib.is_grad_enabled())  # decorating switched nothing
    with lib.no_grad():
        out += [bare_enable(), called_enable(), lib.is_grad_enabled()]
    with lib.set_grad_enabled(False):
        out.append(lib.is_grad_enabled())
    out.append(lib.is_grad_enabled())
    lib.set_grad_enabled(False)
    out.append(lib.is_grad_enabled())
    lib.set_grad_enabled(True)
    out.append(lib.is_grad_enabled())
    x = lib.ones(2, requires_grad=True)
    out.append(bare_no_grad.__name__)
    out.append(lib.no_grad()(lambda: (x * 2).requires_grad)())
    with pytest.raises(TypeError):
        lib.set_grad_enabled(lambda: None)
    return out


def test_grad_mode_decorators_as_pytorch():
    assert _grad_mode_answers(clgrad) == _grad_mode_answers(torch)
    assert clgrad.is_grad_enabled()


@BOTH
def test_numpy_rules_on_cpu(lib):
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    with lib.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0]  # grad mode off: allowed, as PyTorch 2.13
    forced = x.numpy(force=True)
    forced[0] = 5.0  # a cpu tensor's array shares its memory, force or not
    assert x[0].item() == 5.0
    y = lib.zeros(2)
    y.numpy()[1] = 3.0
    assert y.tolist() == [0.0, 3.0]
    assert x.detach().numpy().tolist() == [5.0, 1.0]


def test_numpy_of_an_opencl_tensor_says_cpu_first(cl_device):
    x = clgrad.ones(2, device=cl_device)
    with pytest.raises(TypeError, match=r"Use Tensor\.cpu\(\) to copy the tensor to host memory"):
        x.numpy()
    forced = x.numpy(force=True)  # a copy
    forced[0] = 5.0
    assert x.tolist() == [1.0, 1.0] and x.cpu().numpy().tolist() == [1.0, 1.0]
    g = clgrad.ones(2, device=cl_device, requires_grad=True)
    with pytest.raises(TypeError):  # the device is checked first, as PyTorch does
        g.numpy()
    assert g.numpy(force=True).tolist() == [1.0, 1.0]
    assert np.asarray(x).tolist() == [1.0, 1.0]  # __array__ stays lenient


def test_cpu_tensors_and_device_type():
    x = clgrad.ones(2)
    assert x.device.type == "cpu" and x.device.type != "cuda" and not x.is_cuda
    assert x.cpu() is x and clgrad.device("cpu").type is clgrad.DeviceType.HOST
    assert torch.ones(2).device.type == "cpu" and not torch.ones(2).is_cuda


def test_backends_flags_as_pytorch():
    tb, cb = torch.backends, clgrad.backends
    for name in ("benchmark", "deterministic", "enabled", "allow_tf32"):
        assert getattr(cb.cudnn, name) == getattr(tb.cudnn, name), name
    assert cb.cuda.matmul.allow_tf32 == tb.cuda.matmul.allow_tf32
    assert cb.mps.is_available() is False and cb.cudnn.is_available() is False
    cb.cudnn.benchmark, cb.cudnn.deterministic = True, True
    cb.cuda.matmul.allow_tf32 = True
    try:
        assert (clgrad.ones(2) * 2).tolist() == [2.0, 2.0]  # harmless
    finally:
        cb.cudnn.benchmark, cb.cudnn.deterministic = False, False
        cb.cuda.matmul.allow_tf32 = False


def test_device_modules_have_pytorch_names():
    cuda_names = [
        "is_available",
        "device_count",
        "current_device",
        "set_device",
        "synchronize",
        "manual_seed",
        "manual_seed_all",
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "reset_peak_memory_stats",
        "empty_cache",
        "get_device_name",
        "get_device_properties",
        "device",
    ]
    accelerator_names = [
        "is_available",
        "current_accelerator",
        "device_count",
        "current_device_index",
        "set_device_index",
        "synchronize",
        "device_index",
        "memory_allocated",
    ]
    for mod, names in ((clgrad.cuda, cuda_names), (clgrad.accelerator, accelerator_names)):
        torch_mod = getattr(torch, mod.__name__.rpartition(".")[2])
        for name in names:
            assert hasattr(torch_mod, name) and callable(getattr(mod, name)), name
    # where there is no cuda device, the functions answer as PyTorch's cpu build
    if not clgrad.cuda.is_available():
        assert clgrad.cuda.device_count() == 0 and clgrad.accelerator.current_accelerator() is None
        assert clgrad.cuda.memory_allocated() == 0 and clgrad.accelerator.device_count() == 0
        clgrad.cuda.synchronize(), clgrad.cuda.empty_cache(), clgrad.accelerator.synchronize()
        with pytest.raises(RuntimeError, match="cuda"):
            clgrad.ones(1, device="cuda")
        with pytest.raises(RuntimeError, match="cuda"):
            clgrad.ones(1).cuda()


def test_get_device_module_as_torch():
    # device-agnostic code: torch.get_device_module(x.device).synchronize(), ...
    assert clgrad.get_device_module("cpu") is clgrad.cpu
    assert clgrad.get_device_module(clgrad.device("cpu")) is clgrad.cpu
    default = clgrad.get_device_module()
    assert default is (clgrad.cuda if clgrad.cuda.is_available() else clgrad.cpu)
    assert torch.get_device_module().__name__.rpartition(".")[2] in ("cpu", "cuda")
    for name in ("mps", "xpu"):
        assert clgrad.get_device_module(name) is getattr(clgrad, name)
    for dev in clgrad.devices():
        module = clgrad.get_device_module(dev)
        module.synchronize()
        assert module.is_available() and module.device_count() >= 1
    for bad in ("meta", 3):
        errors = []
        for lib in (torch, clgrad):
            with pytest.raises(RuntimeError) as caught:
                lib.get_device_module(bad)
            errors.append(str(caught.value))
        assert errors[0] == errors[1]


# ---- "cuda" on OpenCL: in subprocesses, for CLGRAD_DEVICE is read once ------------------------
# A PyTorch program, as written for PyTorch; HEADERS say which library ``torch`` is.
PROGRAM = """
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
x = torch.randn(64, 4)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.25
x, y = x.to(device), y.to(device)
model = nn.Linear(4, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(20):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
placed = str(model.weight.device), model.weight.is_cuda, x.is_cuda
"""
HEADERS = {
    "clgrad": "import clgrad as torch\nimport clgrad.nn as nn\n",
    "torch": "import torch\nimport torch.nn as nn\n",
}


def _run_program(lib: str):
    """PROGRAM's losses and placement, run in this process with ``torch`` meaning ``lib``."""
    names = {"__name__": "program"}
    exec(HEADERS[lib] + PROGRAM, names)
    return names["losses"], names["placed"]


CUDA_CHECKS = """
import json, os, sys, tempfile
import clgrad as torch

out = {}
cl0 = torch.device("cl:0")
out["available"] = torch.cuda.is_available()
out["count"] = (torch.cuda.device_count(), torch.accelerator.device_count())
out["current"] = (torch.cuda.current_device(), torch.accelerator.current_device_index())
out["same"] = [torch.device(s) is cl0 for s in ("cuda", "cuda:0", "CUDA")] + [
    torch.device("cuda", 0) is cl0, torch.accelerator.current_accelerator() is cl0]
x = torch.ones(3).to("cuda")
out["tensor"] = [str(x.device), repr(x.device), x.is_cuda, x.device == torch.device("cuda"),
                 x.device == "cuda:0", x.device.type == "cl", repr(x)]
out["moves"] = [str(t.device) for t in (torch.ones(1).cuda(), torch.ones(1).cuda(0),
                torch.ones(1).to(0), torch.ones(1, device="cuda"), x.cpu(), x.cuda())]
out["cuda noop"] = x.cuda() is x
m = torch.nn.Linear(2, 2).cuda()
out["module"] = [str(m.weight.device), m.weight.is_cuda, str(m.cpu().weight.device)]
big = torch.zeros(1 << 20, device="cuda")
out["memory"] = [torch.cuda.memory_allocated() >= 4 << 20,
                 torch.cuda.max_memory_allocated(0) >= torch.cuda.memory_allocated(),
                 torch.cuda.memory_reserved("cuda") >= torch.cuda.memory_allocated(),
                 torch.accelerator.memory_allocated() == torch.cuda.memory_allocated()]
del big
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()
torch.cuda.synchronize(), torch.accelerator.synchronize(), torch.cuda.synchronize(0)
out["name"] = torch.cuda.get_device_name(0) == cl0.name
props = torch.cuda.get_device_properties("cuda")
out["props"] = [props.name == cl0.name, props.total_memory > 0, props.multi_processor_count > 0]
torch.cuda.set_device(0)
torch.accelerator.set_device_index(0)
with torch.cuda.device(0), torch.accelerator.device_index(0):
    out["in context"] = torch.cuda.current_device()
try:  # (a name torch makes without a second GPU: using it is what fails)
    torch.zeros(1, device=torch.device("cuda:1"))
    out["cuda:1"] = "no error"
except RuntimeError as e:
    out["cuda:1"] = "there are 1 cuda devices" in str(e)
torch.cuda.manual_seed(3)
a = torch.rand(4, device="cuda")
torch.manual_seed(3)
torch.cuda.manual_seed_all(3)
out["seed"] = a.cpu().tolist() == torch.rand(4).tolist()
try:
    x.numpy()
    out["numpy"] = "no error"
except TypeError as e:
    out["numpy"] = str(e)
path = os.path.join(tempfile.mkdtemp(), "t.pt")
torch.save({"w": torch.arange(3.0)}, path)
out["load"] = str(torch.load(path, map_location="cuda")["w"].device)
torch.set_default_device("cuda")
out["default device"] = str(torch.zeros(1).device)
torch.set_default_device("cpu")
program = {}
exec(sys.argv[1], program)  # a PyTorch program whose header is `import clgrad as torch`
out["program"] = [program["losses"], list(program["placed"])]
print(json.dumps(out))
"""


def _subprocess(script, env_device, *args):
    env = {k: v for k, v in os.environ.items() if k != "CLGRAD_DEVICE"}
    if env_device is not None:
        env["CLGRAD_DEVICE"] = env_device
    run = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.skipif("cl:0" not in CL_DEVICES, reason="needs cl:0")
def test_cuda_means_the_device_clgrad_device_names():
    got = _subprocess(CUDA_CHECKS, "cl:0", HEADERS["clgrad"] + PROGRAM)
    assert got["available"] is True and got["count"] == [1, 1] and got["current"] == [0, 0]
    assert all(got["same"]), got["same"]
    text, rep, is_cuda, eq_device, eq_str, type_cl, tensor_repr = got["tensor"]
    assert (text, rep) == ("cl:0", "device(type='cl', index=0)")  # one device, one name
    assert is_cuda and eq_device and eq_str and type_cl
    assert tensor_repr == "tensor([1., 1., 1.], device='cl:0')"
    assert got["moves"] == ["cl:0", "cl:0", "cl:0", "cl:0", "cpu", "cl:0"] and got["cuda noop"]
    assert got["module"] == ["cl:0", True, "cpu"]
    assert all(got["memory"]) and got["name"] and all(got["props"])
    assert got["in context"] == 0 and got["cuda:1"] is True and got["seed"] is True
    assert got["numpy"] == (
        "can't convert cl:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first."
    )
    assert got["load"] == "cl:0" and got["default device"] == "cl:0"
    # the PyTorch program ran on cl:0, and computed what it computes on the cpu
    losses, placed = got["program"]
    assert placed == ["cl:0", True, True]
    assert losses[-1] < losses[0] / 10
    if clgrad.cuda.is_available():
        pytest.skip("this process has a cuda device: no cpu run to compare the program with")
    cpu_losses, cpu_placed = _run_program("clgrad")
    assert cpu_placed == ("cpu", False, False)
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-4, atol=1e-6)


def test_the_program_runs_with_pytorch():
    """PROGRAM is a PyTorch program: PyTorch (its cpu build here) runs it, as clgrad does."""
    losses, placed = _run_program("torch")
    assert placed[1:] == (torch.cuda.is_available(),) * 2
    assert losses[-1] < losses[0] / 10


WITHOUT_ENV = """
import json
import clgrad as torch
from clgrad.device import DeviceType, accelerators
gpus = [str(d) for d in accelerators() if d.type is DeviceType.GPU]
out = {"gpus": gpus, "available": torch.cuda.is_available(), "count": torch.cuda.device_count(),
       "accelerator": torch.accelerator.is_available()}
cuda = torch.device("cuda")  # a name, as torch's, whether or not there is such a device
out["cuda name"] = [str(cuda), repr(cuda), cuda == "cuda"]
try:
    out["cuda"] = str(torch.ones(1, device=cuda).device)
except RuntimeError as e:
    out["cuda"] = "error: " + str(e)
out["cl0 is cuda"] = torch.ones(1, device="cl:0").is_cuda
print(json.dumps(out))
"""


@pytest.mark.skipif("cl:0" not in CL_DEVICES, reason="needs cl:0")
def test_without_clgrad_device_cuda_is_the_opencl_gpus():
    got = _subprocess(WITHOUT_ENV, None)
    gpus = got["gpus"]
    assert got["available"] is bool(gpus) and got["accelerator"] is bool(gpus)
    assert got["count"] == len(gpus)
    if gpus:
        assert got["cuda"] == gpus[0] and got["cl0 is cuda"] is (gpus[0] == "cl:0")
    else:  # a CPU OpenCL device (PoCL) alone: no cuda, and the error says how to get one
        assert got["cuda"].startswith("error:") and "CLGRAD_DEVICE=cl:0" in got["cuda"]
        assert got["cuda name"] == ["cuda", "device(type='cuda')", True]  # torch's, unused
        assert got["cl0 is cuda"] is False


def test_device_type_is_a_string(device):
    """``x.device.type`` is a ``str`` as PyTorch's: string methods, JSON, dict keys, pickling;
    two OpenCL kinds stay apart though both are "cl"."""
    import pickle

    kind = clgrad.device(device).type
    name = "cpu" if device == "cpu" else "cl"
    assert isinstance(kind, str) and kind == name and str(kind) == name and f"{kind}" == name
    assert json.dumps({"device": kind}) == json.dumps({"device": name})
    assert kind.startswith(name[0]) and {name: 1}[kind] == 1
    assert pickle.loads(pickle.dumps(kind)) is kind and repr(kind) == repr(name)
    assert clgrad.DeviceType.GPU != clgrad.DeviceType.CPU


def test_autocast_takes_device_type(device):
    """The AMP idiom ``torch.autocast(device_type=x.device.type)`` on every device ("cl" is
    autocast's "cuda")."""
    d = clgrad.device(device)
    assert clgrad.amp.is_autocast_available(d.type)
    with clgrad.autocast(device_type=d.type, dtype=clgrad.bfloat16):
        y = clgrad.ones(2, 3, device=d) @ clgrad.ones(3, 2, device=d)
        assert clgrad.is_autocast_enabled(d.type)
    assert y.dtype == clgrad.bfloat16
    with pytest.raises(ValueError):
        clgrad.autocast(device_type=d)  # a device, not its type: PyTorch's error too
