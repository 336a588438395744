"""One op, the same inputs, PyTorch and clgrad on every test device: tinygrad's helper_test_op.

``compare(fn, *inputs)`` builds each input once as a NumPy array, makes a torch tensor and a
clgrad tensor of it on every device (contiguous, then as a transposed view and as a stepped
slice), calls ``fn`` on both and checks

- forward: the same shapes, dtype names and values (NaN where torch has NaN);
- gradients: ``backward(cotangent)`` of every floating output (a random cotangent, or ones,
  which is ``.sum().backward()``), then the ``.grad`` of every input that requires grad;
- the inputs afterwards (what an in-place op wrote, and that other ops wrote nothing);
- errors: where torch raises, clgrad raises the same exception class and changes nothing.

``fn`` is either ``lambda x, y: x + y`` (method calls and operators) or ``lambda t, x:
t.exp(x)``: with one more parameter than there are inputs (or ``lambda t, *xs``), the first
gets the module (``torch`` or ``clgrad``; ``t.nn.functional`` works for both). ``torch_fn``
replaces ``fn`` on the torch side where the two spell an op differently.

An input is an ``Input`` (shape, dtype, value range, grad), a bare shape (a tuple, in
``compare``'s ``dtype``), a NumPy array (those values) or a Python scalar (passed as is).

>>> compare(lambda x, y: x * y + 1, (3, 1), (4,), dtype="float32")      # doctest: +SKIP
>>> compare(lambda t, x: t.nn.functional.gelu(x), Input((2, 5), "float64"))  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from conftest import DEVICES

import clgrad

FLOATS = ("float32", "float64", "float16")
# bfloat16 inputs are NumPy float32 arrays of bfloat16 values (NumPy has no such type), cast to
# bfloat16 when the tensors are made
DIFFERENTIABLE = FLOATS + ("bfloat16",)
INTS = ("int64", "int32", "int16", "int8", "uint8")
ALL_DTYPES = FLOATS + INTS + ("bool",)

# (rtol, atol) per result dtype: float32 is torch.testing's, float16 allows about two ulps (both
# store half and compute in float, but composite ops round in different places)
TOLERANCE = {
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),  # (torch rounds some ops' Python numbers to bfloat16 first)
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}
GRAD_TOLERANCE = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-7, 1e-7),
}

torch.set_num_threads(1)  # the machine is shared: results are small, threads only cost


@dataclass(frozen=True)
class Input:
    """A random input: ``shape`` in ``dtype`` (a name), uniform in [low, high] (integers:
    ``low`` to ``high`` inclusive, ``uint8`` from max(low, 0)); ``grad`` None means "floating
    inputs require grad when the comparison checks gradients". ``layouts`` False keeps it
    contiguous when the others are made strided. ``values`` fixes the values; ``nonzero``
    keeps them away from zero (a divisor: floats at least 0.5 from it, integers not 0)."""

    shape: tuple = ()
    dtype: str = "float32"
    low: float = -3
    high: float = 3
    grad: bool | None = None
    layouts: bool = True
    values: object = None
    nonzero: bool = False

    def __post_init__(self):
        if self.values is not None:
            object.__setattr__(self, "shape", np.shape(self.values))
        object.__setattr__(self, "shape", tuple(self.shape))

    def sample(self, rng) -> np.ndarray:
        if self.values is not None:
            return _as_dtype(np.asarray(self.values), self.dtype)
        if self.dtype == "bool":
            return rng.random(self.shape) > 0.5 if not self.nonzero else np.ones(self.shape, bool)
        if self.dtype in INTS:
            low = max(self.low, 0) if self.dtype == "uint8" else self.low
            a = rng.integers(int(low), int(self.high) + 1, size=self.shape)
            return (np.where(a == 0, 1, a) if self.nonzero else a).astype(self.dtype)
        a = rng.uniform(self.low, self.high, size=self.shape)
        if self.nonzero:  # a divisor: at least 0.5 away from zero
            a = np.where(np.abs(a) < 0.5, a + np.copysign(0.5, a), a)
        return _as_dtype(a, self.dtype)


def _as_dtype(a: np.ndarray, dtype: str) -> np.ndarray:
    """``a`` in ``dtype``; for bfloat16, float32 numbers that bfloat16 holds."""
    if dtype == "bfloat16":
        return clgrad.dtypes.bfloat16_values(clgrad.dtypes.bfloat16_bits(a))
    return a.astype(dtype)


def index(shape, high, low=0):
    """An int64 index input with values in [low, high)."""
    return Input(tuple(shape), "int64", low, high - 1, grad=False, layouts=False)


def mask(shape):
    """A random bool mask."""
    return Input(tuple(shape), "bool", grad=False, layouts=False)


def _spec(x, dtype):
    if isinstance(x, Input):
        return x
    if isinstance(x, tuple):
        return Input(x, dtype)
    if isinstance(x, np.ndarray):
        return Input(x.shape, x.dtype.name, values=x)
    return x  # a Python scalar, a list, None: passed to both sides as is


def _layouts(specs, arrays):
    """The layouts the inputs are compared in: contiguous, and where some input allows it a
    transposed view (ndim >= 2) and a stepped slice (ndim >= 1, not empty)."""
    out = ["contiguous"]
    tensors = [(s, a) for s, a in zip(specs, arrays) if isinstance(s, Input) and s.layouts]
    if any(a.ndim >= 2 for _, a in tensors):
        out.append("transposed")
    if any(a.ndim >= 1 and a.size for _, a in tensors):
        out.append("stepped")
    return out


def _build(lib, spec, a, layout, device, requires_grad):
    """(leaf, input): the leaf holds the gradient; the input is the leaf or a view of it."""
    if layout == "transposed" and spec.layouts and a.ndim >= 2:
        base, view = np.ascontiguousarray(np.swapaxes(a, -1, -2)), lambda t: t.transpose(-1, -2)
    elif layout == "stepped" and spec.layouts and a.ndim >= 1 and a.size:
        base, view = np.ascontiguousarray(np.repeat(a, 2, axis=-1)), lambda t: t[..., ::2]
    else:
        base, view = a, None
    if lib is torch:
        leaf = torch.from_numpy(base.copy())
    else:
        leaf = clgrad.tensor(base, device=device)
    if spec.dtype == "bfloat16":
        leaf = leaf.bfloat16()
    if requires_grad:
        leaf.requires_grad_(True)
    return leaf, (view(leaf) if view else leaf)


def _name(dt) -> str:
    return str(dt).rpartition(".")[2] if isinstance(dt, torch.dtype) else dt.name


def _numpy(t) -> np.ndarray:
    if _name(t.dtype) == "bfloat16":  # (NumPy has no bfloat16: its numbers, as float32)
        t = t.float()
    if isinstance(t, torch.Tensor):
        return t.detach().numpy().copy()
    return t.detach().cpu().numpy()


def _is_tensor(x):
    return isinstance(x, (torch.Tensor, clgrad.Tensor))


def _flatten(out):
    """A result as a flat list of leaves (tensors, numbers, shapes)."""
    if isinstance(out, (tuple, list)) and not isinstance(out, (torch.Size, clgrad.Size)):
        return [leaf for o in out for leaf in _flatten(o)]
    return [out]


def _structure(out):
    if isinstance(out, (torch.Size, clgrad.Size)):
        return "Size"
    if isinstance(out, (tuple, list)):
        return [_structure(o) for o in out]
    return "tensor" if _is_tensor(out) else type(out).__name__


def _close(what, got, want, rtol, atol):
    if want.dtype.kind == "f" or got.dtype.kind == "f":
        np.testing.assert_allclose(
            got.astype(np.float64),
            want.astype(np.float64),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=what,
        )
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _check_outputs(what, got, want, rtol, atol):
    assert _structure(got) == _structure(want), f"{what}: structure {got!r} vs torch {want!r}"
    for i, (g, w) in enumerate(zip(_flatten(got), _flatten(want))):
        where = f"{what}, output {i}"
        if not _is_tensor(w):
            assert g == w, f"{where}: {g!r} != torch {w!r}"
            continue
        assert tuple(g.shape) == tuple(w.shape), (
            f"{where}: shape {tuple(g.shape)} != {tuple(w.shape)}"
        )
        assert _name(g.dtype) == _name(w.dtype), (
            f"{where}: dtype {_name(g.dtype)} != {_name(w.dtype)}"
        )
        r, a = TOLERANCE.get(_name(w.dtype), (0, 0))
        _close(
            where,
            _numpy(g),
            _numpy(w),
            rtol if rtol is not None else r,
            atol if atol is not None else a,
        )


def _call(fn, lib, args):
    return fn(lib, *args) if _takes_module(fn, len(args)) else fn(*args)


def _takes_module(fn, n):
    """Whether ``fn`` takes the module first: it has one positional parameter more than there
    are inputs, or (with ``*args``) its first parameter is named ``t``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return bool(positional) and positional[0].name == "t"
    return len(positional) == n + 1


def _torch_run(fn, args):
    """torch's result; where torch's CPU kernels lack float16 or bfloat16 (a gap of torch, not
    a rule), the op runs in float32 and its floating results are rounded to that dtype."""
    try:
        return _call(fn, torch, args), None
    except Exception as e:  # any exception is a result to compare
        lacking = [dt for name, dt in _SCALAR_NAMES if name in str(e)]
        if not lacking:
            return None, e
        first, low = e, lacking[0]
    up = [a.float() if _is_tensor(a) and a.dtype == low else a for a in args]
    try:
        out = _call(fn, torch, up)
    except Exception:  # not a 16-bit float gap after all
        return None, first
    return _map(out, lambda t: t.to(low) if t.dtype == torch.float32 else t), None


# torch's names of its 16-bit float dtypes in its messages
_SCALAR_NAMES = (("BFloat16", torch.bfloat16), ("Half", torch.float16))


def _map(out, f):
    if isinstance(out, (tuple, list)) and not isinstance(out, torch.Size):
        return type(out)(_map(o, f) for o in out) if type(out) in (tuple, list) else out
    return f(out) if _is_tensor(out) else out


def _same_error(got, want):
    """clgrad's exception is torch's class (or a subclass). Where torch has no kernel for a
    dtype it raises NotImplementedError (a RuntimeError); clgrad may raise RuntimeError."""
    if isinstance(got, type(want)):
        return True
    return (
        isinstance(want, NotImplementedError)
        and "not implemented for" in str(want)
        and isinstance(got, RuntimeError)
    )


def _device_ok(device, dtype_names):
    dev = clgrad.device(device)
    return all(dev.supports(getattr(clgrad, n)) for n in dtype_names)


def compare(
    fn,
    *inputs,
    torch_fn=None,
    dtype="float32",
    grad=True,
    cotangent="random",
    atol=None,
    rtol=None,
    grad_atol=None,
    grad_rtol=None,
    devices=None,
    layouts=None,
    seed=0,
):
    """Runs ``fn`` on torch and on clgrad on every device in ``devices`` (default: the test
    devices of conftest) and asserts they agree (see the module docstring). ``dtype`` is the
    dtype of inputs given as bare shapes; ``grad`` False compares the forward only;
    ``cotangent`` is "random" or "ones"; ``atol``/``rtol`` override the per-dtype tolerances
    of the forward values, ``grad_atol``/``grad_rtol`` those of the gradients; ``layouts``
    restricts the layouts ("contiguous", "transposed", "stepped"). Devices that lack a dtype
    used (float64 without fp64) are skipped; the test is skipped where none is left."""
    torch_fn = torch_fn or fn
    rng = np.random.default_rng(seed)
    specs = [_spec(x, dtype) for x in inputs]
    arrays = [s.sample(rng) if isinstance(s, Input) else s for s in specs]
    used = {s.dtype for s in specs if isinstance(s, Input)} & set(FLOATS)
    devices = list(devices if devices is not None else DEVICES)
    runnable = [d for d in devices if _device_ok(d, used)]
    if not runnable:
        missing = sorted(n for n in used if not all(_device_ok(d, {n}) for d in devices))
        pytest.skip(f"{', '.join(devices)}: no {' / '.join(missing)}")
    kinds = _layouts(specs, arrays)
    if layouts is not None:
        kinds = [k for k in kinds if k in layouts]
    for layout in kinds:
        _compare_one(
            fn,
            torch_fn,
            specs,
            arrays,
            layout,
            runnable,
            grad,
            cotangent,
            rng,
            (rtol, atol, grad_rtol, grad_atol),
        )


def _grad_wanted(spec, grad):
    if not isinstance(spec, Input):
        return False
    if spec.grad is not None:
        return spec.grad and grad
    return grad and spec.dtype in DIFFERENTIABLE


def _compare_one(fn, torch_fn, specs, arrays, layout, devices, grad, cotangent, rng, tols):
    rtol, atol, grad_rtol, grad_atol = tols
    wants = [_grad_wanted(s, grad) for s in specs]

    def build(lib, device=None):
        leaves, args = [], []
        for s, a, w in zip(specs, arrays, wants):
            leaf, arg = _build(lib, s, a, layout, device, w) if isinstance(s, Input) else (None, a)
            leaves.append(leaf)
            args.append(arg)
        return leaves, args

    t_leaves, t_args = build(torch)
    t_out, t_err = _torch_run(torch_fn, t_args)
    # a float64 result (sum(dtype=float64), promotion) runs only where the device has fp64
    made = {_name(o.dtype) for o in _flatten(t_out) if _is_tensor(o)} & set(FLOATS)
    devices = [d for d in devices if _device_ok(d, made)]
    if not devices:
        pytest.skip(f"no test device runs {' / '.join(sorted(made))}")
    described = ", ".join(
        f"{s.dtype}{list(s.shape)}" if isinstance(s, Input) else repr(s) for s in specs
    )
    # the outputs torch differentiates (by position), their cotangents, and torch's gradients
    diff, t_cots, t_bwd_err = [], [], None
    if t_err is None and any(wants):
        t_flat = _flatten(t_out)
        diff = [i for i, o in enumerate(t_flat) if _is_tensor(o) and o.requires_grad]
        t_cots = [_cotangent(t_flat[i], cotangent, rng) for i in diff]
        if diff:
            try:
                torch.autograd.backward(
                    [t_flat[i] for i in diff],
                    [torch.from_numpy(c).to(t_flat[i].dtype) for i, c in zip(diff, t_cots)],
                )
            except Exception as e:  # torch has no derivative: clgrad's backward must raise too
                t_bwd_err = e

    for device in devices:
        what = f"{device}, {layout}, inputs ({described})"
        leaves, args = build(clgrad, device)
        if t_err is not None:
            _check_raises(what, fn, args, leaves, t_err)
            continue
        try:
            out = _call(fn, clgrad, args)
        except Exception as e:
            if _lacks_float64(device, e):
                continue  # a float64 made inside fn (a dtype= argument, a cast)
            raise AssertionError(
                f"{what}: clgrad raised {type(e).__name__}: {e}; torch gives a result"
            ) from e
        _check_outputs(what, out, t_out, rtol, atol)
        # what the op left in its inputs (an in-place op wrote them; others wrote nothing)
        for i, (leaf, tl) in enumerate(zip(leaves, t_leaves)):
            if leaf is not None:
                r, a = TOLERANCE.get(_name(tl.dtype), (0, 0))
                _close(f"{what}: input {i} after the op", _numpy(leaf), _numpy(tl), r, a)
        if any(wants):
            _check_grads(
                what,
                out,
                diff,
                t_cots,
                t_bwd_err,
                leaves,
                t_leaves,
                wants,
                device,
                grad_rtol,
                grad_atol,
            )


def _lacks_float64(device, err) -> bool:
    """Whether ``err`` is ``device`` refusing float64, which it cannot run."""
    return not _device_ok(device, {"float64"}) and "no double precision" in str(err)


def _raised(fn):
    """The exception ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as e:
        return e
    return None


def _describe(err):
    return f"{type(err).__name__}: {err}"


def _check_raises(what, fn, args, leaves, t_err):
    """clgrad raises torch's exception class and leaves its inputs as they were."""
    before = [_numpy(leaf) if leaf is not None else None for leaf in leaves]
    err = _raised(lambda: _call(fn, clgrad, args))
    assert err is not None, f"{what}: clgrad gives a result; torch raises {_describe(t_err)}"
    assert _same_error(err, t_err), (
        f"{what}: clgrad raised {_describe(err)}; torch raises {_describe(t_err)}"
    )
    for i, (leaf, b) in enumerate(zip(leaves, before)):
        if leaf is not None:
            np.testing.assert_array_equal(
                _numpy(leaf), b, err_msg=f"{what}: the failed op changed input {i}"
            )


def _check_grads(what, out, diff, t_cots, t_bwd_err, leaves, t_leaves, wants, device, rtol, atol):
    flat = _flatten(out)
    if t_bwd_err is not None:  # torch has no derivative: clgrad's backward raises too
        outs = [flat[i] for i in diff]
        cots = [clgrad.tensor(c, device=device).to(o.dtype) for c, o in zip(t_cots, outs)]
        err = _raised(lambda: clgrad.autograd.backward(outs, cots))
        assert err is not None and _same_error(err, t_bwd_err), (
            f"{what}: clgrad's backward {'raised ' + _describe(err) if err else 'ran'}; "
            f"torch's raises {_describe(t_bwd_err)}"
        )
        return
    needs = [i for i, o in enumerate(flat) if _is_tensor(o) and o.requires_grad]
    assert needs == diff, f"{what}: outputs {needs} require grad, torch's {diff}"
    if not diff:
        return
    outs = [flat[i] for i in diff]
    cots = [clgrad.tensor(c, device=device).to(o.dtype) for c, o in zip(t_cots, outs)]
    clgrad.autograd.backward(outs, cots)
    for i, (leaf, tl, w) in enumerate(zip(leaves, t_leaves, wants)):
        if not w:
            continue
        where = f"{what}: grad of input {i}"
        if tl.grad is None:
            assert leaf.grad is None or not _numpy(leaf.grad).any(), f"{where}: torch has none"
            continue
        assert leaf.grad is not None, f"{where}: clgrad has none, torch has one"
        g, tg = leaf.grad, tl.grad
        assert tuple(g.shape) == tuple(tg.shape), f"{where}: shape {tuple(g.shape)}"
        assert _name(g.dtype) == _name(tg.dtype), f"{where}: dtype {_name(g.dtype)}"
        r, a = GRAD_TOLERANCE[_name(tg.dtype)]
        _close(
            where,
            _numpy(g),
            _numpy(tg),
            rtol if rtol is not None else r,
            atol if atol is not None else a,
        )


def _cotangent(out, kind, rng):
    dt = _name(out.dtype)
    if kind == "ones":
        return _as_dtype(np.ones(tuple(out.shape)), dt)
    return _as_dtype(rng.uniform(-1, 1, size=tuple(out.shape)), dt)


@dataclass(frozen=True)
class Case:
    """One parametrized case: ``values`` for the test function, an ``id``, and where clgrad
    is known to differ from torch, ``xfail``: a reason (every device), or a dict from device
    kind ("cpu", "cl") or device name ("cl:0") to a reason."""

    values: tuple
    id: str
    xfail: object = None


def case(*values, id, xfail=None):
    return Case(values, id, xfail)


def torch_paths_differ(fn, value, dtype=torch.float32) -> bool:
    """Whether torch's vectorized CPU kernel (a contiguous tensor of several elements) and its
    scalar path (a 0-d tensor) give ``fn(value)`` differently on this host. Some float32
    kernels do at extreme values, and which ones depends on the instructions torch's kernel
    was dispatched for (AVX-512 or AVX2): a case that differs from torch only there is an
    expected failure on such hosts alone.

    >>> torch_paths_differ(torch.exp, 1.0)
    False
    """
    vectorized = fn(torch.full((16,), value, dtype=dtype))[0].item()
    scalar = fn(torch.tensor(value, dtype=dtype)).item()
    return not (vectorized == scalar or math.isnan(vectorized) and math.isnan(scalar))


def _reason(xfail, device):
    if xfail is None or isinstance(xfail, str):
        return xfail
    kind = device.partition(":")[0]
    return xfail.get(device, xfail.get(kind))


def per_device(cases, devices=None):
    """``pytest.param(device, *values)`` for every case on every test device, marked
    ``xfail(strict=True)`` where the case's ``xfail`` names that device."""
    out = []
    for c in cases:
        for device in devices if devices is not None else DEVICES:
            reason = _reason(c.xfail, device)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(device, *c.values, id=f"{c.id}-{device}", marks=marks))
    return out
