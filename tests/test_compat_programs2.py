"""Realistic PyTorch programs (and the modules they touch) run with torch and with clgrad on
every device from the same inputs: torch's weights copied through ``state_dict``, the data drawn
once with NumPy. Outputs, losses over several steps, gradients and the state after training
must agree, as must the types, dtypes and shapes the programs see."""

from __future__ import annotations

import contextlib
import copy
import importlib
import math
import multiprocessing as py_multiprocessing
import warnings

import numpy as np
import pytest
import spawn_children

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


def test_multiprocessing_spawn_passes_tensors_and_raises_failures():
    mp = clgrad.multiprocessing
    queue = mp.get_context("spawn").SimpleQueue()
    # (host tensors: a child given an OpenCL tensor starts the OpenCL runtime, seconds more)
    tensors = [clgrad.arange(4.0), clgrad.ones(2, dtype=clgrad.int64)]
    mp.spawn(
        spawn_children.sum_into_queue, args=(queue, tensors), nprocs=2
    )  # children import clgrad anew
    got = sorted([queue.get(), queue.get()])
    assert got == [[(r, 6.0 * r, "cpu"), (r, 2 * r, "cpu")] for r in (0, 1)]
    # the failures, in forked children (quicker to start; spawn's handling is the same)
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: rank 1 failed") as info:
        mp.start_processes(spawn_children.raise_in_rank_one, nprocs=2, start_method="fork")
    assert info.value.error_index == 1
    context = mp.start_processes(
        spawn_children.exit_with_three, nprocs=1, join=False, start_method="fork"
    )
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as info:
        context.join()
    assert info.value.exit_code == 3


# ---- library fixes found by the programs -----------------------------------------------------
def test_random_fills_an_int64_tensor_without_bounds(device):
    # a DataLoader's base seed is drawn so in PyTorch: [0, 2**63 - 1], where the upper bound
    # overflowed int64 (ValueError)
    g = clgrad.Generator().manual_seed(0)
    x = clgrad.empty(64, dtype=clgrad.int64, device=device).random_(generator=g)
    assert x.dtype == clgrad.int64 and bool((x >= 0).all())
    assert int(x.max()) > 2**40  # the full range, not a small one
    small = clgrad.empty(64, dtype=clgrad.int32, device=device).random_()
    assert bool((small >= 0).all())


def test_parameter_containers_print_as_torch(device):
    def text(lib):
        params = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2, 3))]
        return [
            str(lib.nn.ParameterList(params)),
            str(lib.nn.ParameterList(params[:1])),
            str(lib.nn.ParameterDict({"a": params[0], "b": 3})),
            str(lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.ParameterList(params[:1]))),
        ]

    assert [s.replace("clgrad", "torch") for s in text(clgrad)] == text(torch)


def _custom_schedulers(lib, device, weights):
    # schedulers written for PyTorch before 2.0 subclass _LRScheduler; newer ones LRScheduler
    class Warmup(lib.optim.lr_scheduler._LRScheduler):
        def __init__(self, optimizer, warmup, last_epoch=-1):
            self.warmup = warmup
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            return [b * min(1.0, (self.last_epoch + 1) / self.warmup) for b in self.base_lrs]

    class Poly(lib.optim.lr_scheduler.LRScheduler):
        def __init__(self, optimizer, total, power=0.9, last_epoch=-1):
            self.total, self.power = total, power
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            return [b * (1 - self.last_epoch / self.total) ** self.power for b in self.base_lrs]

    w = lib.nn.Parameter(lib.ones(2, device=device))
    extra = lib.nn.Parameter(lib.ones(1, device=device))
    opt = lib.optim.SGD([{"params": [w]}, {"params": [extra], "lr": 0.5}], lr=0.1)
    warmup, lrs = Warmup(opt, 4), []
    for _ in range(6):
        opt.step()
        warmup.step()
        lrs.append(warmup.get_last_lr())
    opt2 = lib.optim.SGD([w], lr=0.2)
    poly = Poly(opt2, 10)
    for _ in range(4):
        opt2.step()
        poly.step()
        lrs.append(poly.get_last_lr() + [opt2.param_groups[0]["initial_lr"]])
    return {
        "lrs": np.array(lrs, dtype=object).tolist(),
        "state": sorted(poly.state_dict()),
        "is_scheduler": isinstance(warmup, lib.optim.lr_scheduler.LRScheduler),
    }


def test_custom_lr_schedulers(device):
    compare_program(_custom_schedulers, device)


def _dataloader_workers(lib, device, weights):
    data = lib.utils.data

    class Shard(data.IterableDataset):
        # the sharding of torch's IterableDataset documentation, by get_worker_info()
        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            info = data.get_worker_info()
            if info is None:
                return iter(range(self.start, self.end))
            per = -(-(self.end - self.start) // info.num_workers)
            start = self.start + info.id * per
            return iter(range(start, min(start + per, self.end)))

    class Unsharded(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            return iter([(i, -1 if info is None else info.id) for i in range(3)])

    class Tagged(data.Dataset):
        def __init__(self):
            self.opened, self.inits = -1, 0

        def __len__(self):
            return 7

        def __getitem__(self, i):
            info = data.get_worker_info()
            row = [i, info.id, info.num_workers, self.opened, self.inits]
            return lib.tensor(row, device=device), np.float32(i) / 2

    def open_per_worker(worker_id):  # a handle of its own in each worker's dataset
        info = data.get_worker_info()
        info.dataset.opened = worker_id * 10 + info.id
        info.dataset.inits += 1

    out = {
        "main": list(data.DataLoader(Shard(3, 10), batch_size=2)),
        "sharded": list(data.DataLoader(Shard(3, 10), num_workers=2, batch_size=2)),
        "unbatched": list(data.DataLoader(Shard(0, 5), num_workers=2, batch_size=None)),
        "unsharded": [list(b) for b in data.DataLoader(Unsharded(), num_workers=2, batch_size=2)],
    }
    tagged = Tagged()
    for epoch in range(2):
        loader = data.DataLoader(
            tagged, batch_size=3, num_workers=2, worker_init_fn=open_per_worker
        )
        out[f"epoch{epoch}"] = [list(b) for b in loader]
    persistent = data.DataLoader(
        tagged, batch_size=4, num_workers=2, worker_init_fn=open_per_worker,
        persistent_workers=True, prefetch_factor=2,
    )  # fmt: skip
    out["persistent"] = [[list(b) for b in persistent] for _ in range(2)]
    out["main_dataset_untouched"] = [tagged.opened, tagged.inits]
    out["outside_a_worker"] = data.get_worker_info() is None
    return out


def test_dataloader_workers_shard_and_initialize_as_torch(device):
    compare_program(_dataloader_workers, device)


# ---- the import paths programs take into the library -----------------------------------------
@pytest.mark.parametrize(
    "path, names",
    [
        ("nn.modules.batchnorm", ["_BatchNorm", "_NormBase", "BatchNorm2d", "SyncBatchNorm"]),
        ("nn.modules.instancenorm", ["_InstanceNorm", "InstanceNorm2d"]),
        ("nn.modules.utils", ["_single", "_pair", "_triple", "_quadruple", "_ntuple"]),
        ("nn.modules.flatten", ["Flatten", "Unflatten"]),
        ("nn.modules.fold", ["Fold", "Unfold"]),
        ("nn.modules.pixelshuffle", ["PixelShuffle", "PixelUnshuffle"]),
        ("nn.modules.channelshuffle", ["ChannelShuffle"]),
        ("nn.common_types", ["_size_2_t", "_size_any_t", "_ratio_2_t"]),
        ("nn.utils.clip_grad", ["clip_grad_norm_", "clip_grad_value_"]),
        ("nn.utils.convert_parameters", ["parameters_to_vector", "vector_to_parameters"]),
        ("nn.utils.init", ["skip_init"]),
        ("nn.utils.spectral_norm", ["spectral_norm", "remove_spectral_norm"]),
        ("nn.utils.weight_norm", ["weight_norm", "remove_weight_norm"]),
        ("utils.data.dataloader", ["DataLoader", "default_collate", "get_worker_info"]),
        ("utils.data.sampler", ["Sampler", "SubsetRandomSampler", "WeightedRandomSampler"]),
        ("utils.data.dataset", ["Dataset", "Subset", "random_split", "ConcatDataset"]),
        ("utils.data._utils.collate", ["default_collate", "default_convert"]),
        ("utils.hooks", ["RemovableHandle"]),
        ("types", ["Number", "Device", "_size"]),
        ("optim.lr_scheduler", ["_LRScheduler", "LRScheduler"]),
    ],
)
def test_import_paths_of_torch_programs(path, names):
    import importlib

    ours = importlib.import_module(f"clgrad.{path}")
    theirs = importlib.import_module(f"torch.{path}")
    for name in names:
        assert hasattr(theirs, name), name  # (the list is torch's)
        assert hasattr(ours, name), f"clgrad.{path}.{name}"


def test_submodule_imports_leave_the_functions_of_their_names():
    import clgrad.nn.utils.spectral_norm
    import clgrad.nn.utils.weight_norm  # noqa: F401

    assert callable(clgrad.nn.utils.spectral_norm) and callable(clgrad.nn.utils.weight_norm)
    layer = clgrad.nn.utils.spectral_norm(clgrad.nn.Linear(3, 2))
    assert hasattr(layer, "weight_orig")


def test_norm_layers_share_torchs_base():
    from clgrad.nn.modules.batchnorm import _BatchNorm, _NormBase

    for name in ("BatchNorm1d", "InstanceNorm2d", "SyncBatchNorm", "LazyBatchNorm2d"):
        mine = getattr(clgrad.nn, name)
        theirs = getattr(torch.nn, name)
        assert issubclass(mine, _NormBase) == issubclass(
            theirs, torch.nn.modules.batchnorm._NormBase
        )
        assert issubclass(mine, _BatchNorm) == issubclass(
            theirs, torch.nn.modules.batchnorm._BatchNorm
        )
    assert not issubclass(clgrad.nn.LayerNorm, _NormBase)


def test_module_utils_helpers_as_torch():
    import torch.nn.modules.utils as theirs

    import clgrad.nn.modules.utils as ours

    for value in (3, (1, 2), [4, 5, 6], (7,)):
        for helper in ("_single", "_pair", "_triple", "_quadruple"):
            assert getattr(ours, helper)(value) == getattr(theirs, helper)(value)
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert ours._list_with_default([None, 3], [8, 4, 5]) == theirs._list_with_default(
        [None, 3], [8, 4, 5]
    )

    # a checkpoint saved from DataParallel loads into the bare model
    def strip(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        state = lib.nn.DataParallel(model).state_dict()
        (ours if lib is clgrad else theirs).consume_prefix_in_state_dict_if_present(
            state, "module."
        )
        return sorted(state), sorted(getattr(state, "_metadata", {}) or {})

    got, want = strip(clgrad), strip(torch)
    assert got[0] == want[0]
    assert not got[1] or got[1] == want[1]


def _optimizer_state_hooks(lib, device, weights):
    # a checkpointing helper that stamps the epoch into the optimizer's state dict and
    # remaps an old learning-rate key on loading
    model = weights(lib, "linear", lambda: lib.nn.Linear(3, 2)).to(device)
    opt = lib.optim.Adam(model.parameters(), lr=0.01)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("first"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "epoch": 7})
    model(lib.ones(4, 3, device=device)).pow(2).sum().backward()
    opt.step()
    saved = opt.state_dict()
    fresh = lib.optim.Adam(model.parameters(), lr=0.5)

    def rename(o, sd):
        sd["param_groups"] = [{**g, "lr": g.pop("old_lr", g["lr"])} for g in sd["param_groups"]]

    handle = fresh.register_load_state_dict_pre_hook(rename)
    fresh.register_load_state_dict_post_hook(lambda o: calls.append("loaded"))
    legacy = {**saved, "param_groups": [{**g, "old_lr": 0.02} for g in saved["param_groups"]]}
    fresh.load_state_dict(legacy)
    handle.remove()
    fresh.load_state_dict(saved)
    return {
        "calls": calls,
        "epoch": saved["epoch"],
        "lr": fresh.param_groups[0]["lr"],
        "exp_avg": fresh.state_dict()["state"][0]["exp_avg"],
    }


def test_optimizer_state_dict_hooks(device):
    compare_program(_optimizer_state_hooks, device)


def _swap_layers(lib, device, weights):
    # fine-tuning: the classifier head replaced by path, then refused where torch refuses
    model = weights(lib, "net", lambda: lib.nn.Sequential(
        lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Sequential(lib.nn.Linear(8, 3))
    )).to(device)  # fmt: skip
    model.set_submodule("2.0", weights(lib, "head", lambda: lib.nn.Linear(8, 2)).to(device))
    model.set_submodule("extra", lib.nn.Identity())
    outcomes = []
    for args in (("", lib.nn.Identity()), ("1", 5), ("2.missing", lib.nn.Identity(), True)):
        try:
            model.set_submodule(*args)
            outcomes.append("set")
        except (ValueError, AttributeError) as e:
            outcomes.append(type(e).__name__)
    packed = lib.nn.utils.rnn.pack_sequence(
        [lib.tensor(v, device=device) for v in ([1.0, 2.0], [3.0], [4.0, 5.0, 6.0])],
        enforce_sorted=False,
    )
    return {
        "out": model(lib.ones(2, 4, device=device)),
        "names": [n for n, _ in model.named_modules()],
        "outcomes": outcomes,
        "inverse": lib.nn.utils.rnn.invert_permutation(packed.sorted_indices),
        "unsorted": packed.unsorted_indices,
    }


def test_set_submodule_and_invert_permutation(device):
    compare_program(_swap_layers, device)


# ---- whole programs --------------------------------------------------------------------------
def _transformer_classifier(lib, device, weights):
    # token classification with a padded batch: Embedding(padding_idx), sinusoidal positions
    # in a buffer, TransformerEncoder(batch_first) with src_key_padding_mask, masked mean
    # pooling, AdamW with a LambdaLR warm-up and clip_grad_norm_
    nn = lib.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=16):
            super().__init__()
            pe = lib.zeros(max_len, d_model)
            position = lib.arange(0, max_len, dtype=lib.float).unsqueeze(1)
            div_term = lib.exp(lib.arange(0, d_model, 2).float() * (-math.log(1e4) / d_model))
            pe[:, 0::2] = lib.sin(position * div_term)
            pe[:, 1::2] = lib.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0))

        def forward(self, x):
            return x + self.pe[:, : x.size(1)]

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8, padding_idx=0)
            self.pos = PositionalEncoding(8)
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
            self.head = nn.Linear(8, 3)

        def forward(self, tokens):
            pad = tokens == 0
            h = self.enc(self.pos(self.emb(tokens) * math.sqrt(8)), src_key_padding_mask=pad)
            h = h.masked_fill(pad.unsqueeze(-1), 0.0)
            return self.head(h.sum(1) / (~pad).sum(1, keepdim=True).clamp(min=1))

    model = weights(lib, "classifier", Classifier).to(device)
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, 20, size=(4, 6))
    for row, length in enumerate([6, 4, 2, 5]):
        tokens[row, length:] = 0
    x = lib.tensor(tokens, device=device)
    y = lib.tensor(rng.integers(0, 3, size=4), device=device)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 3))
    losses, norms, lrs = [], [], []
    for _ in range(3):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), y)
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), 0.5))
        opt.step()
        sched.step()
        losses.append(loss.item())
        lrs.append(sched.get_last_lr()[0])
    model.eval()
    with lib.no_grad():
        out = model(x)
    # the key projection's bias gets no gradient (softmax ignores a shift): Adam's update of
    # its rounding noise is left out of the comparison
    state = {k: v for k, v in model.state_dict().items() if "in_proj_bias" not in k}
    return {"losses": losses, "norms": norms, "lrs": lrs, "out": out, "state": state}


def test_transformer_encoder_classifier(device):
    compare_program(_transformer_classifier, device, rtol=1e-3, atol=1e-4)


def _resnet_resume(lib, device, weights, tmp_path):
    # a residual net (ModuleList, Sequential shortcut, Dropout2d, AdaptiveAvgPool2d) trained
    # with label smoothing, SGD(nesterov) in decay / no-decay groups and OneCycleLR; saved
    # with torch.save mid-run, then resumed into fresh objects
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
            return F.relu(out + self.shortcut(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.ReLU())
            self.blocks = nn.ModuleList([Block(4, 4, 1), Block(4, 8, 2)])
            self.drop = nn.Dropout2d(0.0)
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            x = self.stem(x)
            for block in self.blocks:
                x = block(x)
            return self.fc(lib.flatten(self.pool(self.drop(x)), 1))

    def make_optimizer(model):
        groups = [
            {"params": [p for p in model.parameters() if p.ndim > 1], "weight_decay": 5e-4},
            {"params": [p for p in model.parameters() if p.ndim <= 1], "weight_decay": 0.0},
        ]
        opt = lib.optim.SGD(groups, lr=0.1, momentum=0.9, nesterov=True)
        return opt, lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=6)

    model = weights(lib, "resnet", Net).to(device)
    opt, sched = make_optimizer(model)
    rng = np.random.default_rng(5)
    X = lib.tensor(rng.standard_normal((4, 3, 6, 6)).astype(np.float32), device=device)
    Y = lib.tensor(rng.integers(0, 5, 4), device=device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    losses, lrs = [], []

    def step():
        model.train()
        opt.zero_grad()
        loss = criterion(model(X), Y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        lrs.append(opt.param_groups[0]["lr"])

    for _ in range(2):
        step()
    path = tmp_path / f"{lib.__name__}.pt"
    lib.save(
        {"epoch": 2, "model": model.state_dict(), "optimizer": opt.state_dict(),
         "scheduler": sched.state_dict()},
        path,
    )  # fmt: skip
    checkpoint = lib.load(path, map_location=device, weights_only=True)
    model = Net().to(device)
    opt, sched = make_optimizer(model)
    model.load_state_dict(checkpoint["model"])
    opt.load_state_dict(checkpoint["optimizer"])
    sched.load_state_dict(checkpoint["scheduler"])
    for _ in range(2):
        step()
    model.eval()
    with lib.no_grad():
        probabilities = F.softmax(model(X), dim=1)
    return {
        "losses": losses,
        "lrs": lrs,
        "eval": probabilities,
        "momentum": opt.state_dict()["state"][0]["momentum_buffer"],
        "state": dict(model.state_dict()),
    }


def test_resnet_checkpoint_and_resume(device, tmp_path):
    compare_program(
        lambda lib, dev, w: _resnet_resume(lib, dev, w, tmp_path), device, rtol=1e-3, atol=1e-4
    )


def _attention_step(lib, device, weights):
    # a seq2seq decoder's attention over a padded encoder batch (bmm, masked_fill, softmax),
    # scaled_dot_product_attention with boolean, float and causal masks, and
    # MultiheadAttention with kdim/vdim, key_padding_mask, attn_mask and per-head weights
    nn, F = lib.nn, lib.nn.functional
    rng = np.random.default_rng(6)

    def t(shape, grad=False):
        data = rng.standard_normal(shape).astype(np.float32)
        return lib.tensor(data, device=device, requires_grad=grad)

    enc, dec = t((3, 5, 8), True), t((3, 8), True)
    src_len = lib.tensor([5, 3, 2], device=device)
    pad = lib.arange(5, device=device)[None, :] >= src_len[:, None]
    scores = lib.bmm(enc, dec.unsqueeze(2)).squeeze(2) / math.sqrt(8)
    attn = F.softmax(scores.masked_fill(pad, float("-inf")), dim=1)
    context = lib.bmm(attn.unsqueeze(1), enc).squeeze(1)
    q, k, v = t((3, 2, 4, 8), True), t((3, 2, 5, 8)), t((3, 2, 5, 8))
    o1 = F.scaled_dot_product_attention(q, k, v, attn_mask=~pad[:, None, None, :])
    o2 = F.scaled_dot_product_attention(q, k[:, :, :4], v[:, :, :4], is_causal=True, scale=0.3)
    upper = lib.ones(4, 5, device=device).triu(1).bool()
    float_mask = lib.zeros(4, 5, device=device).masked_fill(upper, float("-inf"))
    o3 = F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask)
    mha = weights(lib, "mha", lambda: nn.MultiheadAttention(8, 2, batch_first=True, kdim=6, vdim=7))
    mha = mha.to(device)
    keys, values, queries = t((3, 5, 6)), t((3, 5, 7)), t((3, 4, 8), True)
    causal = lib.ones(4, 5, device=device, dtype=lib.bool).triu(2)
    out_avg, w_avg = mha(queries, keys, values, key_padding_mask=pad, attn_mask=causal)
    out_heads, w_heads = mha(
        queries, keys, values, key_padding_mask=pad, average_attn_weights=False
    )
    out_none, none = mha(queries, keys, values, need_weights=False)
    total = context.sum() + o1.sum() + o2.pow(2).sum() + o3.sum() + out_avg.sum()
    (total + out_heads.pow(2).sum()).backward()
    return {
        "attn": attn, "context": context, "o1": o1, "o2": o2, "o3": o3, "out_avg": out_avg,
        "w_avg": w_avg, "w_heads": w_heads, "out_none": out_none, "none": none is None,
        "g_enc": enc.grad, "g_dec": dec.grad, "g_q": q.grad, "g_queries": queries.grad,
        "g_q_proj": mha.q_proj_weight.grad,
    }  # fmt: skip


def test_seq2seq_attention_step(device):
    compare_program(_attention_step, device)


def _gradient_penalty_and_checkpointing(lib, device, weights):
    # WGAN-GP's critic step (autograd.grad with create_graph through the critic), a frozen
    # first layer, two param groups, gradient accumulation over micro-batches through
    # utils.checkpoint, and inference_mode / no_grad evaluation
    nn = lib.nn
    checkpoint = importlib.import_module(f"{lib.__name__}.utils.checkpoint")
    critic = weights(lib, "critic", lambda: nn.Sequential(
        nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1)
    )).to(device)  # fmt: skip
    # (SGD: Adam would blow the rounding noise of gradients that cancel to ~0 up to whole steps)
    opt = lib.optim.SGD(critic.parameters(), lr=1e-2, momentum=0.9)
    rng = np.random.default_rng(7)

    def t(shape):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32), device=device)

    real, fake = t((5, 4)), t((5, 4))
    penalties = []
    for _ in range(2):
        alpha = lib.tensor(rng.random((5, 1)).astype(np.float32), device=device)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        score = critic(mixed)
        (grads,) = lib.autograd.grad(
            score, mixed, grad_outputs=lib.ones_like(score), create_graph=True
        )
        penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        penalties.append(penalty.item())
    model = weights(lib, "mlp", lambda: nn.Sequential(
        nn.Linear(6, 12), nn.GELU(), nn.LayerNorm(12), nn.Linear(12, 3)
    )).to(device)  # fmt: skip
    for name, p in model.named_parameters():
        if name.startswith("0."):
            p.requires_grad_(False)
    opt = lib.optim.Adam(
        [{"params": model[3].parameters(), "lr": 1e-2}, {"params": model[2].parameters()}],
        lr=1e-3,
    )
    X, Y = t((8, 6)), lib.tensor(rng.integers(0, 3, 8), device=device)
    losses = []
    for step in range(4):
        xb, yb = X[(step % 2) * 4 :][:4], Y[(step % 2) * 4 :][:4]
        hidden = checkpoint.checkpoint(model[:3], xb, use_reentrant=False)
        loss = nn.functional.cross_entropy(model[3](hidden), yb) / 2
        loss.backward()
        losses.append(loss.item())
        if step % 2 == 1:
            opt.step()
            opt.zero_grad(set_to_none=True)
    with lib.inference_mode():
        inferred = model(X)
    with lib.no_grad():
        doubled = model(X) * 2
    return {
        "penalties": penalties, "critic": dict(critic.state_dict()), "losses": losses,
        "frozen": model[0].weight.grad is None, "model": dict(model.state_dict()),
        "inferred": inferred, "flags": [inferred.requires_grad, doubled.requires_grad],
    }  # fmt: skip


def test_gradient_penalty_and_checkpointed_accumulation(device):
    compare_program(_gradient_penalty_and_checkpointing, device)


def _compiled_in_place(lib, device, weights):
    # PyTorch 2's model.compile(): the module stays itself (its class, its state dict keys);
    # training steps and eval calls (replayed on an OpenCL device) give eager's numbers
    net = weights(lib, "net", lambda: lib.nn.Sequential(
        lib.nn.Linear(3, 8), lib.nn.ReLU(), lib.nn.Dropout(0.0), lib.nn.Linear(8, 1)
    )).to(device)  # fmt: skip
    if lib is clgrad:
        # torch's own run is its eager one, which compiling must not change (and torch.compile
        # would patch torch for the rest of the process: distributions' validation, jit.trace)
        net.compile()
    opt = lib.optim.SGD(net.parameters(), lr=0.1)
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32), device=device)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    net.eval()
    with lib.no_grad():
        evals = [net(x * scale) for scale in (1.0, 2.0, 3.0, 4.0)]
    return {
        "losses": losses, "evals": evals, "class": type(net).__name__,
        "keys": sorted(net.state_dict()), "state": dict(net.state_dict()),
    }  # fmt: skip


def test_module_compile_in_place(device):
    compare_program(_compiled_in_place, device)


def _checkpoint_options(lib, device, weights):
    # checkpoint's keywords for the non-reentrant variant: the forward and the recomputation
    # each run in their context from context_fn; the options torch refuses, refused alike
    cp = importlib.import_module(f"{lib.__name__}.utils.checkpoint")
    layer = weights(lib, "layer", lambda: lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh()))
    layer = layer.to(device)
    entered = []

    @contextlib.contextmanager
    def tag(name):
        entered.append(f"enter {name}")
        try:  # (torch's recomputation stops early by raising through it)
            yield
        finally:
            entered.append(f"exit {name}")

    x = lib.tensor([[0.5, -1.0, 2.0]], device=device, requires_grad=True)
    out = cp.checkpoint(
        layer, x, use_reentrant=False, context_fn=lambda: (tag("forward"), tag("recompute")),
        determinism_check="none", debug=False,
    )  # fmt: skip
    entered.append("backward")
    out.sum().backward()
    outcomes = []
    for kwargs in ({"use_reentrant": True, "context_fn": lambda: (tag("a"), tag("b"))},
                   {"use_reentrant": False, "determinism_check": "strict"},
                   {"use_reentrant": True, "unknown": 1}):  # fmt: skip
        try:
            cp.checkpoint(layer, x, **kwargs)
            outcomes.append("ran")
        except ValueError as e:
            outcomes.append(type(e).__name__)
    detached = cp.detach_variable((x, 3))
    with cp.set_checkpoint_early_stop(False):
        y = cp.checkpoint(layer, x * 2, use_reentrant=False)
    y.sum().backward()
    return {
        "entered": entered, "out": out, "grad": x.grad, "w_grad": layer[0].weight.grad,
        "outcomes": outcomes, "detached": [detached[0].requires_grad, detached[1]],
        "is_runtime_error": issubclass(cp.CheckpointError, RuntimeError),
    }  # fmt: skip


def test_checkpoint_context_fn_and_options(device):
    compare_program(_checkpoint_options, device)


def _typed_datasets(lib, device, weights):
    # annotated data pipelines subclass the generic classes: Dataset[tuple[Tensor, int]],
    # IterableDataset[int], Sampler[int], and annotate DataLoader[...] and Subset[...]
    data = lib.utils.data

    class Pairs(data.Dataset[tuple]):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return lib.full((2,), float(i), device=device), i

    class Counter(data.IterableDataset[int]):
        def __iter__(self):
            return iter(range(4))

    class Reversed(data.Sampler[int]):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n - 1, -1, -1))

        def __len__(self):
            return self.n

    def first_batch(loader: data.DataLoader[tuple]) -> list:
        return list(next(iter(loader)))

    subset: data.Subset[tuple] = data.Subset(Pairs(), [4, 0])
    return {
        "pairs": first_batch(data.DataLoader(Pairs(), batch_size=2, sampler=Reversed(5))),
        "counter": list(data.DataLoader(Counter(), batch_size=3)),
        "subset": list(subset[0]),
        "concat": len(Pairs() + Pairs()),
        "generic": [data.Dataset[int].__origin__ is data.Dataset, str(data.Sampler[int])[-12:]],
    }


def test_typed_dataset_subclasses(device):
    compare_program(_typed_datasets, device)


def _forward_mode_ad(lib, device, weights):
    # the forward-mode AD tutorial's uses: a dual input through a function of it and of a
    # plain tensor, composites (matmul, tanh, layer_norm, softmax), a module whose parameters
    # are replaced by duals, and the level's end forgetting the tangents
    fwAD = importlib.import_module(f"{lib.__name__}.autograd.forward_ad")
    F = lib.nn.functional
    rng = np.random.default_rng(3)

    def t(*shape):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32), device=device)

    primal, tangent, plain, w = t(6, 6), t(6, 6), t(6, 6), t(6, 4)
    out = {}
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        dual_output = dual**2 + plain**2
        out["jvp"] = fwAD.unpack_dual(dual_output).tangent
        out["plain_has_none"] = fwAD.unpack_dual(plain).tangent is None
        out["itself"] = list(fwAD.unpack_dual(dual))
        x = fwAD.make_dual(primal[:3], tangent[:3])
        y = F.layer_norm(lib.tanh(x @ w), (4,)).softmax(-1)
        out["composite"] = list(fwAD.unpack_dual(y))
    out["after_the_level"] = fwAD.unpack_dual(dual_output).tangent is None
    model = weights(lib, "linear", lambda: lib.nn.Linear(6, 3)).to(device)
    params = dict(model.named_parameters())
    tangents = {name: lib.ones_like(p) * 0.5 for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out["module_jvp"] = fwAD.unpack_dual(model(primal)).tangent
    refusals = []
    for make in (lambda: fwAD.make_dual(primal, tangent), lambda: fwAD.make_dual(primal, w)):
        try:
            with fwAD.dual_level() if refusals else contextlib.nullcontext():
                make()
            refusals.append("made")
        except RuntimeError as e:
            refusals.append(type(e).__name__)
    out["refusals"] = refusals
    return out


def test_forward_mode_ad(device):
    compare_program(_forward_mode_ad, device)


def test_hardtanh_old_keywords_and_refusal():
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = lib.nn.Hardtanh(min_value=-2.0, max_value=0.5)
        out = layer(lib.tensor([-3.0, 0.0, 3.0])).tolist()
        try:
            lib.nn.Hardtanh(1.0, 0.0)
            refused = None
        except AssertionError as e:
            refused = str(e)
        return out, [type(w.message).__name__ for w in caught], refused

    assert run(clgrad) == run(torch)


def _char_language_model(lib, device, weights):
    # a char-level LM: Embedding(padding_idx), 2-layer LSTM and GRU over packed sequences of
    # different lengths (enforce_sorted=False), pad_packed_sequence back to the batch's length,
    # the hidden state carried across batches detached, CrossEntropyLoss(ignore_index=0)
    nn, rnn = lib.nn, lib.nn.utils.rnn

    class CharLM(nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.emb = nn.Embedding(12, 6, padding_idx=0)
            self.rnn = getattr(nn, cell)(6, 8, num_layers=2, dropout=0.0, batch_first=True)
            self.out = nn.Linear(8, 12)

        def forward(self, x, lengths, h=None):
            packed = rnn.pack_padded_sequence(
                self.emb(x), lengths, batch_first=True, enforce_sorted=False
            )
            out, h = self.rnn(packed, h)
            out, out_lengths = rnn.pad_packed_sequence(
                out, batch_first=True, total_length=x.size(1)
            )
            return self.out(out), h, out_lengths

    results = {}
    for cell in ("LSTM", "GRU"):
        model = weights(lib, cell, lambda cell=cell: CharLM(cell)).to(device)
        rng = np.random.default_rng(1)
        seqs = [lib.tensor(rng.integers(1, 12, size=n)) for n in (7, 3, 5)]
        batch = rnn.pad_sequence(seqs, batch_first=True, padding_value=0).to(device)
        inputs, targets = batch[:, :-1], batch[:, 1:].clone()
        lengths = lib.tensor([len(s) - 1 for s in seqs])
        criterion = nn.CrossEntropyLoss(ignore_index=0)
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        h, losses = None, []
        for _ in range(3):
            logits, h, out_lengths = model(inputs, lengths, h)
            h = tuple(t.detach() for t in h) if isinstance(h, tuple) else h.detach()
            loss = criterion(logits.reshape(-1, 12), targets.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results[cell] = {
            "losses": losses, "lengths": out_lengths, "logits": logits,
            "h": list(h) if isinstance(h, tuple) else h, "w": model.rnn.weight_hh_l1,
        }  # fmt: skip
    return results


def test_char_language_model(device):
    compare_program(_char_language_model, device, rtol=1e-3, atol=1e-4)


def _dcgan_step(lib, device, weights):
    # DCGAN's alternating updates: ConvTranspose2d/BatchNorm2d generator, LeakyReLU critic,
    # BCELoss, two Adam optimizers, fake.detach() for the discriminator, then eval sampling
    nn = lib.nn

    def generator():
        return nn.Sequential(
            nn.ConvTranspose2d(4, 8, 4, 1, 0, bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
            nn.ConvTranspose2d(8, 1, 4, 2, 1, bias=False), nn.Tanh(),
        )  # fmt: skip

    def discriminator():
        return nn.Sequential(
            nn.Conv2d(1, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(4, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8),
            nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(8, 1, 2, 1, 0, bias=False), nn.Sigmoid(),
        )  # fmt: skip

    netG = weights(lib, "G", generator).to(device)
    netD = weights(lib, "D", discriminator).to(device)
    criterion = nn.BCELoss()
    optD = lib.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = lib.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    rng = np.random.default_rng(4)
    real = lib.tensor(np.tanh(rng.standard_normal((3, 1, 8, 8))).astype(np.float32), device=device)
    errs = []
    for _ in range(2):
        netD.zero_grad()
        label = lib.full((3,), 1.0, device=device)
        err_real = criterion(netD(real).view(-1), label)
        err_real.backward()
        noise = lib.tensor(rng.standard_normal((3, 4, 1, 1)).astype(np.float32), device=device)
        fake = netG(noise)
        label.fill_(0.0)
        err_fake = criterion(netD(fake.detach()).view(-1), label)
        err_fake.backward()
        optD.step()
        netG.zero_grad()
        label.fill_(1.0)
        err_g = criterion(netD(fake).view(-1), label)
        err_g.backward()
        optG.step()
        errs.append([(err_real + err_fake).item(), err_g.item()])
    netG.eval()
    with lib.no_grad():
        sample = netG(lib.ones(2, 4, 1, 1, device=device))
    bn = netD[3]
    return {
        "errs": errs, "sample": sample, "running": [bn.running_mean, bn.running_var],
        "batches": bn.num_batches_tracked, "G": dict(netG.state_dict()),
    }  # fmt: skip


def test_dcgan_alternating_updates(device):
    compare_program(_dcgan_step, device, rtol=1e-3, atol=1e-4)


def _message_passing(lib, device, weights):
    # a graph attention layer written with index_add_ / scatter_add_ / scatter_reduce /
    # index_reduce_ over an edge list, as GNN code without a graph library does
    nn, F = lib.nn, lib.nn.functional
    src, dst = lib.tensor([[0, 1, 1, 2, 3, 4, 4], [1, 0, 2, 1, 4, 3, 0]], device=device)
    rng = np.random.default_rng(21)
    x = lib.tensor(rng.standard_normal((5, 6)).astype(np.float32), device=device)
    lin = weights(lib, "lin", lambda: nn.Linear(6, 4)).to(device)
    att = weights(lib, "att", lambda: nn.Linear(8, 1)).to(device)
    h = lin(x)
    e = F.leaky_relu(att(lib.cat([h[src], h[dst]], dim=-1)).squeeze(-1), 0.2)
    w = (e - e.max()).exp()
    alpha = w / lib.zeros(5, device=device).index_add_(0, dst, w)[dst]
    out = lib.zeros(5, 4, device=device).index_add_(0, dst, alpha.unsqueeze(-1) * h[src])
    degree = lib.zeros(5, device=device).scatter_add_(0, dst, lib.ones_like(dst, dtype=lib.float))
    graph = lib.tensor([0, 0, 1, 1, 1], device=device)
    pooled = lib.zeros(2, 4, device=device).scatter_reduce(
        0, graph[:, None].expand(5, 4), out, reduce="amax", include_self=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: index_reduce is in beta)
        mean = lib.zeros(2, 4, device=device).index_reduce_(
            0, graph, out, "mean", include_self=False
        )
    (out.sum() + pooled.pow(2).sum() + mean.sum()).backward()
    return {
        "out": out, "degree": degree, "pooled": pooled, "mean": mean,
        "g_lin": lin.weight.grad, "g_att": att.weight.grad,
    }  # fmt: skip


def test_graph_message_passing(device):
    compare_program(_message_passing, device)
