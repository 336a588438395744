"""Against PyTorch 2.13: LSTM with projections (``proj_size``), the types of the optimizers'
per-parameter state (and state dicts that load both ways), and the LR schedulers' state dicts.

LSTMs are built in torch, their state dict loaded into clgrad's (PyTorch's names, order and
shapes), and outputs, final states and the gradients of the input, the initial state and every
parameter compared on every device. Optimizers step the same two parameters in both libraries;
their state must hold what torch's holds (0-d tensors where torch keeps them, of its dtype, on
its device), and a state dict converted through NumPy must continue either's training as the
other would. Schedulers' state dicts must hold torch's keys and plain values, and load both
ways."""

import copy
import math
import re
import warnings
from collections import Counter

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as trnn

import clgrad
from clgrad.nn.utils import rnn as crnn

# torch's CPU LSTM says once that oneDNN has no projections (it runs its own implementation)
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning")


def _to_clgrad(value, device=None):
    """A torch state (dict) as clgrad's: each tensor through NumPy (on ``device``)."""
    if isinstance(value, torch.Tensor):
        return clgrad.tensor(value.detach().numpy(), device=device)
    if isinstance(value, dict):
        return type(value)((k, _to_clgrad(v, device)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_to_clgrad(v, device) for v in value)
    return value


def _to_torch(value):
    """A clgrad state (dict) as torch's: each tensor through NumPy, on the cpu."""
    if isinstance(value, clgrad.Tensor):
        return torch.tensor(value.detach().cpu().numpy())
    if isinstance(value, dict):
        return type(value)((k, _to_torch(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_to_torch(v) for v in value)
    return value


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, clgrad.Tensor) else t.detach().numpy()


# ---- LSTM(proj_size=...) ---------------------------------------------------------------------
H, P = 6, 2  # hidden_size, proj_size


def _lstm_pair(device, **kw):
    """torch's LSTM(3, H, proj_size=P) and clgrad's with its weights, on ``device``."""
    torch.manual_seed(0)
    tmod = torch.nn.LSTM(3, H, proj_size=P, **kw)
    cmod = clgrad.nn.LSTM(3, H, proj_size=P, **kw)
    loaded = cmod.load_state_dict(_to_clgrad(tmod.state_dict()))
    assert not loaded.missing_keys and not loaded.unexpected_keys
    return tmod, cmod.to(device)


def _compare_lstm(tmod, cmod, device, x, hx=None):
    """Runs both on ``x`` (and ``hx``, NumPy), compares the output, h_n and c_n, then the
    gradients of the input, the initial state and every parameter for random cotangents."""
    t_in = [torch.tensor(a, requires_grad=True) for a in [x, *(hx or ())]]
    c_in = [clgrad.tensor(a, device=device, requires_grad=True) for a in [x, *(hx or ())]]
    t_out, (t_h, t_c) = tmod(t_in[0], tuple(t_in[1:]) or None)
    c_out, (c_h, c_c) = cmod(c_in[0], tuple(c_in[1:]) or None)
    rng = np.random.default_rng(1)
    t_loss = c_loss = 0
    for a, b in ((t_out, c_out), (t_h, c_h), (t_c, c_c)):
        assert tuple(b.shape) == tuple(a.shape)
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-4, atol=1e-5)
        g = rng.normal(size=tuple(a.shape)).astype(np.float32)
        t_loss = t_loss + (a * torch.tensor(g)).sum()
        c_loss = c_loss + (b * clgrad.tensor(g, device=device)).sum()
    t_loss.backward()
    c_loss.backward()
    for a, b in zip(t_in, c_in):
        np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-4, atol=1e-5)
    c_params = dict(cmod.named_parameters())
    for name, p in tmod.named_parameters():
        np.testing.assert_allclose(_np(c_params[name].grad), _np(p.grad), rtol=1e-4, atol=1e-5)
    return t_out.shape, t_h.shape, t_c.shape


LSTM_CASES = [
    {},
    {"num_layers": 2, "bidirectional": True},
    {"num_layers": 2, "batch_first": True, "bias": False},
]


@pytest.mark.parametrize(
    "kw", LSTM_CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "plain"
)
def test_lstm_proj_matches_torch(device, kw):
    rng = np.random.default_rng(0)
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    x = rng.normal(size=(2, 4, 3) if kw.get("batch_first") else (4, 2, 3)).astype(np.float32)
    out, h, c = _compare_lstm(*_lstm_pair(device, **kw), device, x)
    # h and the output have proj_size features per direction, c has hidden_size
    assert tuple(out)[-1] == P * dirs and tuple(h) == (layers * dirs, 2, P)
    assert tuple(c) == (layers * dirs, 2, H)
    hx = (
        rng.normal(size=(layers * dirs, 2, P)).astype(np.float32),
        rng.normal(size=(layers * dirs, 2, H)).astype(np.float32),
    )
    _compare_lstm(*_lstm_pair(device, **kw), device, x, hx)


def test_lstm_proj_unbatched_matches_torch(device):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    hx = (rng.normal(size=(2, P)).astype(np.float32), rng.normal(size=(2, H)).astype(np.float32))
    tmod, cmod = _lstm_pair(device, num_layers=2)
    assert _compare_lstm(tmod, cmod, device, x, hx) == ((5, P), (2, P), (2, H))


def test_lstm_proj_packed_matches_torch(device):
    rng = np.random.default_rng(3)
    seqs = [rng.normal(size=(n, 3)).astype(np.float32) for n in (2, 4, 1)]
    tmod, cmod = _lstm_pair(device, num_layers=2, bidirectional=True, batch_first=True)
    tx = [torch.tensor(s, requires_grad=True) for s in seqs]
    cx = [clgrad.tensor(s, device=device, requires_grad=True) for s in seqs]
    t_out, (t_h, t_c) = tmod(trnn.pack_sequence(tx, enforce_sorted=False))
    c_out, (c_h, c_c) = cmod(crnn.pack_sequence(cx, enforce_sorted=False))
    assert isinstance(c_out, crnn.PackedSequence) and c_out.data.shape[-1] == 2 * P
    for a, b in ((t_out.data, c_out.data), (t_h, c_h), (t_c, c_c)):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-4, atol=1e-5)
    (t_out.data.sum() + (t_h * 2).sum() + (t_c * 3).sum()).backward()
    (c_out.data.sum() + (c_h * 2).sum() + (c_c * 3).sum()).backward()
    for a, b in zip(tx, cx):
        np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-4, atol=1e-5)
    c_params = dict(cmod.named_parameters())
    for name, p in tmod.named_parameters():
        np.testing.assert_allclose(_np(c_params[name].grad), _np(p.grad), rtol=1e-4, atol=1e-5)


def test_lstm_proj_parameters_state_dict_and_repr_as_torch(device):
    kw = {"num_layers": 2, "bidirectional": True, "dropout": 0.5}
    tmod, cmod = _lstm_pair(device, **kw)
    assert (
        repr(cmod)
        == repr(tmod)
        == "LSTM(3, 6, proj_size=2, num_layers=2, dropout=0.5, " + ("bidirectional=True)")
    )
    assert cmod._flat_weights_names == tmod._flat_weights_names
    assert [(n, tuple(p.shape)) for n, p in cmod.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in tmod.named_parameters()
    ]
    assert list(cmod.state_dict()) == list(tmod.state_dict())
    assert [[tuple(w.shape) for w in ws] for ws in cmod.all_weights] == [
        [tuple(w.shape) for w in ws] for ws in tmod.all_weights
    ]
    assert cmod.weight_hr_l1_reverse.shape == (P, H) and cmod.weight_ih_l1.shape == (4 * H, 2 * P)
    # back into torch: a strict load, and the same outputs as the module it came from
    again = torch.nn.LSTM(3, H, proj_size=P, **kw)
    again.load_state_dict(_to_torch(cmod.state_dict()))
    x = torch.randn(4, 2, 3)
    tmod.eval()
    again.eval()
    for a, b in zip(tmod(x)[1], again(x)[1]):
        assert torch.equal(a, b)


def test_lstm_proj_init_and_factory_kwargs(device):
    # float64 where the device runs it (rusticl's llvmpipe does not)
    dtype = clgrad.float64 if clgrad.device(device).supports(clgrad.float64) else clgrad.float16
    lstm = clgrad.nn.LSTM(3, H, proj_size=P, num_layers=2, device=device, dtype=dtype)
    bound = 1 / math.sqrt(H)  # every parameter from U(-1/sqrt(hidden_size), ...), as torch
    for name, p in lstm.named_parameters():
        assert str(p.device) == device and p.dtype == dtype, name
        values = _np(p)
        assert np.abs(values).max() <= bound and values.std() > bound / 10, name
    assert lstm.proj_size == P and [n for n in lstm._flat_weights_names if "hr" in n] == [
        "weight_hr_l0",
        "weight_hr_l1",
    ]


@pytest.mark.parametrize("proj_size", [-1, H, H + 1])
def test_lstm_proj_size_errors_as_torch(proj_size):
    with pytest.raises(ValueError) as want:
        torch.nn.LSTM(3, H, proj_size=proj_size)
    with pytest.raises(ValueError, match=re.escape(str(want.value))):
        clgrad.nn.LSTM(3, H, proj_size=proj_size)


def test_lstm_proj_checks_the_state_sizes(device):
    lstm = clgrad.nn.LSTM(3, H, proj_size=P, device=device)
    x = clgrad.ones(4, 2, 3, device=device)
    c0 = clgrad.zeros(1, 2, H, device=device)
    # h0 of hidden_size, as without projections: refused as torch refuses it, and a c0 of P
    with pytest.raises(
        RuntimeError, match=re.escape("Expected hidden[0] size (1, 2, 2), got [1, 2, 6]")
    ):
        lstm(x, (clgrad.zeros(1, 2, H, device=device), c0))
    with pytest.raises(
        RuntimeError, match=re.escape("Expected hidden[1] size (1, 2, 6), got [1, 2, 2]")
    ):
        lstm(x, (clgrad.zeros(1, 2, P, device=device), clgrad.zeros(1, 2, P, device=device)))
    t_lstm = torch.nn.LSTM(3, H, proj_size=P)
    with pytest.raises(
        RuntimeError, match=re.escape("Expected hidden[0] size (1, 2, 2), got [1, 2, 6]")
    ):
        t_lstm(torch.ones(4, 2, 3), (torch.zeros(1, 2, H), torch.zeros(1, 2, H)))
    with pytest.raises(
        RuntimeError, match=re.escape("Expected hidden[1] size (1, 2, 6), got [1, 2, 2]")
    ):
        t_lstm(torch.ones(4, 2, 3), (torch.zeros(1, 2, P), torch.zeros(1, 2, P)))
    out, (h, c) = lstm(x, (clgrad.zeros(1, 2, P, device=device), c0))
    assert out.shape == (4, 2, P) and h.shape == (1, 2, P) and c.shape == (1, 2, H)


# ---- optimizer state -------------------------------------------------------------------------
OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("Adam", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("RMSprop", {"momentum": 0.9, "centered": True}),
    ("Adadelta", {}),
    ("Adagrad", {"lr_decay": 0.1}),
    ("Adamax", {}),
    ("NAdam", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01}),
    ("ASGD", {"lr": 0.05, "t0": 3}),  # past t0 the running average mixes (mu < 1)
    ("Rprop", {}),
    ("Adafactor", {}),
    ("LBFGS", {"lr": 0.2, "history_size": 3, "max_iter": 2}),
]
OPT_IDS = [name for name, _ in OPTIMIZERS]
W0 = np.random.default_rng(4).normal(size=(2, 3)).astype(np.float32)
B0 = np.random.default_rng(5).normal(size=3).astype(np.float32)


def _host_keys(name):
    """The state entries torch makes without a device (on the cpu, whatever the parameter's):
    the step counts and NAdam's mu_product. ASGD keeps its step, eta and mu on the parameter's
    device, and torch's load_state_dict moves every other tensor there."""
    return set() if name == "ASGD" else {"step", "mu_product"}


def _optimizer(lib, name, kw, device="cpu"):
    """The optimizer over a (2, 3) and a (3,) parameter, and a closure of a bounded loss."""
    dev = {"device": device} if lib is clgrad else {}
    w, b = (lib.nn.Parameter(lib.tensor(a, **dev)) for a in (W0, B0))
    opt = getattr(lib.optim, name)([w, b], **kw)

    def closure():
        opt.zero_grad()
        loss = 0.1 * (w**4).sum() + ((w.sum(0) - b) ** 2).sum() + (b * b).sum()
        loss.backward()
        return loss

    return opt, (w, b), closure


def _steps(opt, closure, n):
    for _ in range(n):
        opt.step(closure)


def _check_state(mine, theirs, device, host_keys, key=None, rtol=1e-4):
    """``mine`` (clgrad's state, or a piece of it) holds what ``theirs`` (torch's) does: the same
    keys in the same order, tensors of torch's dtype and shape (on the host for ``host_keys``,
    else on ``device``) and close values, the same Python types elsewhere."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, clgrad.Tensor), (key, type(mine))
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], key
        assert tuple(mine.shape) == tuple(theirs.shape), key
        assert str(mine.device) == ("cpu" if key in host_keys else device), key
        np.testing.assert_allclose(_np(mine), _np(theirs), rtol=rtol, atol=1e-6, err_msg=key)
    elif isinstance(theirs, dict):
        assert list(mine) == list(theirs), (key, list(mine), list(theirs))
        for k in theirs:
            _check_state(mine[k], theirs[k], device, host_keys, k, rtol)
    elif isinstance(theirs, (list, tuple)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs), key
        for a, b in zip(mine, theirs):
            _check_state(a, b, device, host_keys, key, rtol)
    else:
        assert type(mine) is type(theirs), (key, type(mine), type(theirs))
        if isinstance(theirs, float):
            assert mine == pytest.approx(theirs, rel=rtol), key
        else:
            assert mine == theirs, key


@pytest.mark.parametrize("name, kw", OPTIMIZERS, ids=OPT_IDS)
def test_optimizer_state_holds_torchs_types(device, name, kw):
    t_opt, _, t_closure = _optimizer(torch, name, kw)
    c_opt, _, c_closure = _optimizer(clgrad, name, kw, device)
    _steps(t_opt, t_closure, 2)
    _steps(c_opt, c_closure, 2)
    theirs, mine = t_opt.state_dict(), c_opt.state_dict()
    _check_state(mine["state"], theirs["state"], device, _host_keys(name))
    # the groups' options: torch's keys, in its order, with its values; the defaults too
    assert [list(g.items()) for g in mine["param_groups"]] == [
        list(g.items()) for g in theirs["param_groups"]
    ]
    assert list(c_opt.defaults.items()) == list(t_opt.defaults.items())


@pytest.mark.parametrize("name, kw", OPTIMIZERS, ids=OPT_IDS)
def test_optimizer_state_dict_loads_both_ways(device, name, kw):
    """3 steps in one library, its state dict (through NumPy) into the other's optimizer over
    the same weights, 3 more steps in both: the same weights and state."""
    for first in (torch, clgrad):
        # loaded as torch loads: the step stays where the state dict had it (the host), the
        # rest goes to the parameter's device (NAdam's mu_product too, as torch's cast moves it)
        host_keys = {"step"} if first is torch else _host_keys(name)
        t_opt, t_params, t_closure = _optimizer(torch, name, kw)
        c_opt, c_params, c_closure = _optimizer(clgrad, name, kw, device)
        if first is torch:
            _steps(t_opt, t_closure, 3)
            with clgrad.no_grad():
                for c, t in zip(c_params, t_params):
                    c.copy_(clgrad.tensor(_np(t), device=device))
            c_opt.load_state_dict(_to_clgrad(t_opt.state_dict()))
            _check_state(
                c_opt.state_dict()["state"], t_opt.state_dict()["state"], device, host_keys
            )
        else:
            _steps(c_opt, c_closure, 3)
            with torch.no_grad():
                for t, c in zip(t_params, c_params):
                    t.copy_(torch.tensor(_np(c)))
            t_opt.load_state_dict(_to_torch(c_opt.state_dict()))
        _steps(t_opt, t_closure, 3)
        _steps(c_opt, c_closure, 3)
        for c, t in zip(c_params, t_params):
            np.testing.assert_allclose(_np(c), _np(t), rtol=1e-5, atol=1e-6)
        _check_state(c_opt.state_dict()["state"], t_opt.state_dict()["state"], device, host_keys)


@pytest.mark.parametrize(
    "name, kw, numbers",
    [
        ("Adam", {"lr": 0.01}, ("step",)),
        ("NAdam", {"lr": 0.01}, ("step", "mu_product")),
        ("ASGD", {"lr": 0.05, "t0": 1}, ("step", "eta", "mu")),
    ],
    ids=["Adam", "NAdam", "ASGD"],
)
def test_state_dict_of_python_numbers_loads_as_tensors(device, name, kw, numbers):
    """A state dict that holds the counts as Python numbers (saved by an earlier clgrad, or
    written by hand) loads as torch's ``__setstate__`` takes it: as 0-d tensors."""
    opt, params, closure = _optimizer(clgrad, name, kw, device)
    _steps(opt, closure, 2)
    saved = opt.state_dict()
    old = copy.deepcopy(saved)
    for state in old["state"].values():
        for key in numbers:
            state[key] = state[key].item()
            assert isinstance(state[key], float)
    weights = [p.detach().clone() for p in params]
    want, _, want_closure = _optimizer(clgrad, name, kw, device)
    got, got_params, got_closure = _optimizer(clgrad, name, kw, device)
    with clgrad.no_grad():
        for a, b, w in zip(want.param_groups[0]["params"], got_params, weights):
            a.copy_(w)
            b.copy_(w)
    want.load_state_dict(saved)
    got.load_state_dict(old)
    where = "cpu" if name != "ASGD" else device
    for state in got.state.values():
        for key in numbers:
            assert isinstance(state[key], clgrad.Tensor) and state[key].shape == (), key
            assert state[key].dtype == clgrad.float32 and str(state[key].device) == where, key
    _steps(want, want_closure, 3)
    _steps(got, got_closure, 3)
    for a, b in zip(want.param_groups[0]["params"], got_params):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["NAdam", "ASGD", "Adagrad"])
def test_state_numbers_follow_the_default_dtype(name):
    """torch's 0-d state is float64 while the default dtype is (``_get_scalar_dtype``)."""
    states = []
    for lib in (torch, clgrad):
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            w = lib.nn.Parameter(lib.ones(2))
            opt = getattr(lib.optim, name)([w])
            w.grad = lib.ones(2)
            opt.step()
        finally:
            lib.set_default_dtype(previous)
        states.append({k: str(v.dtype).split(".")[-1] for k, v in opt.state[w].items()})
    assert states[1] == states[0] and "float64" in states[0].values()


@pytest.mark.parametrize(
    "name, kw",
    [("Adam", {}), ("RMSprop", {}), ("Adam", {"foreach": False}), ("NAdam", {}), ("Adagrad", {})],
    ids=["Adam", "RMSprop", "Adam-per_op", "NAdam", "Adagrad"],
)
def test_compiled_steps_count_as_eager(cl_device, name, kw):
    """The counts are host tensors written in place, which a capture's snapshot of Python state
    cannot see change: a captured step must count them at each replay (Adam's and RMSprop's
    fused kernels, checked replays too) or run eagerly with a warning, never replay stale
    counts and bias corrections."""

    def train(compiled, check=False):
        clgrad.manual_seed(0)
        model = clgrad.nn.Linear(3, 2).to(cl_device)
        opt = getattr(clgrad.optim, name)(model.parameters(), lr=0.01, **kw)

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).sum()
            loss.backward()
            opt.step()
            return loss

        fn = clgrad.compile(step, check=check) if compiled else step
        x = clgrad.ones(4, 3, device=cl_device)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(6):
                fn(x)
        steps = [s["step"].item() for s in opt.state.values()]
        return [_np(p) for p in model.parameters()], steps, fn, caught

    want, want_steps, _, _ = train(False)
    kernel = kw.get("foreach") is not False and name in ("Adam", "RMSprop")
    for check in (False, True) if kernel else (False,):
        got, got_steps, fn, caught = train(True, check)
        assert got_steps == want_steps == [6.0, 6.0]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        if kernel:
            assert fn.counts["replay"] == 4 and not caught
        else:
            assert fn.counts["replay"] == 0
            assert any("step count" in str(w.message) for w in caught)


# ---- LR schedulers ---------------------------------------------------------------------------
class Decay:
    """A callable object as an lr_lambda / scale_fn: torch saves its attributes."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x):
        return self.rate**x


def _sgd(lib, groups=2):
    ps = [lib.nn.Parameter(lib.zeros(1)) for _ in range(groups)]
    return lib.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)],
                         lr=0.1, momentum=0.9)  # fmt: skip


def _adam(lib):
    ps = [lib.nn.Parameter(lib.zeros(1)) for _ in range(2)]
    return lib.optim.Adam([{"params": [p]} for p in ps], lr=0.1)


def _schedulers():
    """{name: build(lib, rate) -> (optimizer, scheduler)}; ``rate`` goes into the callable
    objects, so a load that restores their attributes shows."""

    def plain(cls, *args, **kw):
        def build(lib, rate):
            opt = _sgd(lib)
            return opt, getattr(lib.optim.lr_scheduler, cls)(opt, *args, **kw)

        return build

    def lam(cls, obj):
        def build(lib, rate):
            opt = _sgd(lib)
            fn = Decay(rate) if obj else (lambda e: 0.9**e)
            return opt, getattr(lib.optim.lr_scheduler, cls)(opt, fn)

        return build

    def cyclic(lib, rate):
        opt = _sgd(lib)
        sched = lib.optim.lr_scheduler.CyclicLR(
            opt, 0.01, [0.1, 0.2], step_size_up=2, step_size_down=3, mode="triangular2"
        )
        return opt, sched

    def cyclic_obj(lib, rate):
        opt = _adam(lib)
        sched = lib.optim.lr_scheduler.CyclicLR(
            opt, 0.01, 0.1, step_size_up=2, scale_fn=Decay(rate), scale_mode="iterations"
        )
        return opt, sched

    def one_cycle(lib, rate):
        opt = _adam(lib)
        return opt, lib.optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=12, three_phase=True)

    def plateau(lib, rate):
        opt = _sgd(lib)
        return opt, lib.optim.lr_scheduler.ReduceLROnPlateau(
            opt, factor=0.5, patience=1, cooldown=1, min_lr=[0.0, 0.05]
        )

    def sequential(lib, rate):
        opt = _sgd(lib)
        L = lib.optim.lr_scheduler
        parts = [L.LinearLR(opt, 0.2, total_iters=2), L.LambdaLR(opt, Decay(rate))]
        return opt, L.SequentialLR(opt, parts, milestones=[3])

    def chained(lib, rate):
        opt = _sgd(lib)
        L = lib.optim.lr_scheduler
        return opt, L.ChainedScheduler([L.ConstantLR(opt, 0.5, 2), L.ExponentialLR(opt, 0.9)])

    def swalr(lib, rate):
        opt = _sgd(lib)
        return opt, lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=3)

    return {
        "LambdaLR": lam("LambdaLR", False),
        "LambdaLR-object": lam("LambdaLR", True),
        "MultiplicativeLR": lam("MultiplicativeLR", False),
        "MultiplicativeLR-object": lam("MultiplicativeLR", True),
        "StepLR": plain("StepLR", 2, 0.5),
        "MultiStepLR": plain("MultiStepLR", [3, 1, 3], 0.5),
        "ConstantLR": plain("ConstantLR", 0.5, 3),
        "LinearLR": plain("LinearLR", 0.25, 0.75, 4),
        "ExponentialLR": plain("ExponentialLR", 0.8),
        "PolynomialLR": plain("PolynomialLR", 6, 2.0),
        "CosineAnnealingLR": plain("CosineAnnealingLR", 4, 0.01),
        "CosineAnnealingWarmRestarts": plain("CosineAnnealingWarmRestarts", 2, 2, 0.01),
        "CyclicLR": cyclic,
        "CyclicLR-object": cyclic_obj,
        "OneCycleLR": one_cycle,
        "ReduceLROnPlateau": plateau,
        "SequentialLR": sequential,
        "ChainedScheduler": chained,
        "SWALR": swalr,
    }


SCHEDULERS = _schedulers()
METRICS = [1.0, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.8, 0.7, 0.7, 0.7]


def _advance(opt, sched, start, n):
    for i in range(start, start + n):
        opt.step()
        if isinstance(sched, (torch.optim.lr_scheduler.ReduceLROnPlateau,
                              clgrad.optim.lr_scheduler.ReduceLROnPlateau)):  # fmt: skip
            sched.step(METRICS[i])
        else:
            sched.step()


def _same_plain(mine, theirs, key=None):
    """The same plain data: types (a Counter is a Counter), keys, lengths; floats to rounding."""
    assert type(mine) is type(theirs), (key, type(mine), type(theirs))
    if isinstance(theirs, dict):
        assert sorted(mine) == sorted(theirs), (key, sorted(mine), sorted(theirs))
        for k in theirs:
            _same_plain(mine[k], theirs[k], k)
    elif isinstance(theirs, (list, tuple)):
        assert len(mine) == len(theirs), key
        for a, b in zip(mine, theirs):
            _same_plain(a, b, key)
    elif isinstance(theirs, float):
        assert mine == pytest.approx(theirs, rel=1e-12, abs=1e-15), key
    else:
        assert mine == theirs, key


def _group_values(opt):
    keys = ("lr", "momentum", "betas", "initial_lr")
    return [{k: g[k] for k in keys if k in g} for g in opt.param_groups]


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_state_dict_holds_torchs_keys_and_values(name):
    t_opt, t_sched = SCHEDULERS[name](torch, 0.5)
    c_opt, c_sched = SCHEDULERS[name](clgrad, 0.5)
    for sched_opt in ((t_opt, t_sched), (c_opt, c_sched)):
        _advance(*sched_opt, 0, 5)
    theirs, mine = t_sched.state_dict(), c_sched.state_dict()
    assert sorted(mine) == sorted(theirs)
    _same_plain(mine, theirs)
    if name in ("LambdaLR", "MultiplicativeLR"):
        assert mine["lr_lambdas"] == [None, None]  # plain functions are not saved
    if name.endswith("-object"):
        saved = mine["lr_lambdas"] if "lr_lambdas" in mine else [mine["_scale_fn_custom"]]
        assert saved[0] == {"rate": 0.5}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_state_dict_loads_both_ways(name):
    """4 steps in one library; a fresh scheduler of the other (its callable objects built with
    another rate) takes the optimizer's and the scheduler's state dicts; 4 more steps in both
    give the same lrs, momenta and state."""
    for first in (torch, clgrad):
        second = clgrad if first is torch else torch
        opt, sched = SCHEDULERS[name](first, 0.5)
        _advance(opt, sched, 0, 4)
        other_opt, other_sched = SCHEDULERS[name](second, 0.7)
        convert = _to_clgrad if second is clgrad else _to_torch
        other_opt.load_state_dict(convert(opt.state_dict()))
        other_sched.load_state_dict(copy.deepcopy(sched.state_dict()))
        _advance(opt, sched, 4, 4)
        _advance(other_opt, other_sched, 4, 4)
        _same_plain(other_sched.get_last_lr(), sched.get_last_lr())
        _same_plain(_group_values(other_opt), _group_values(opt))
        _same_plain(other_sched.state_dict(), sched.state_dict())


def test_multistep_milestones_are_a_counter_as_torch():
    opt = _sgd(clgrad, groups=1)
    sched = clgrad.optim.lr_scheduler.MultiStepLR(opt, [3, 1, 3], gamma=0.5)
    assert sched.state_dict()["milestones"] == Counter({3: 2, 1: 1})
    lrs = []
    for _ in range(5):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == pytest.approx([0.05, 0.05, 0.0125, 0.0125, 0.0125])
    with pytest.warns(UserWarning, match="deprecated"):
        sched.step(2)  # the closed form: one milestone passed
    assert sched.get_last_lr() == pytest.approx([0.05])
