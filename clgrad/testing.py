"""``torch.testing``: ``assert_close`` (torch's default tolerances per dtype and its messages),
``make_tensor``, and the deprecated ``assert_allclose``.

>>> import clgrad.testing
>>> clgrad.testing.assert_close(clgrad.tensor([1.0, 2.0]), clgrad.tensor([1.0, 2.0000001]))
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from . import dtypes as D
from .ops.creation import rand, randint, tensor
from .tensor import Tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# (rtol, atol) torch.testing uses for each dtype when neither is given
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),  # as their parts' dtypes
    "complex128": (1e-7, 1e-7),
}


def _default_tolerances(*dtypes) -> tuple[float, float]:
    pairs = [_TOLERANCES.get(dt.name, (0.0, 0.0)) for dt in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fail(msg, generated):
    if callable(msg):
        raise AssertionError(msg(generated))
    raise AssertionError(generated if msg is None else msg)


def _attr(name, a, b, msg):
    _fail(msg, f"The values for attribute '{name}' do not match: {a} != {b}.")


def _close_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_device, msg):
    if actual.shape != expected.shape:
        _attr("shape", actual.shape, expected.shape, msg)
    if check_device and actual.device != expected.device:
        _attr("device", actual.device, expected.device, msg)
    if check_dtype and actual.dtype != expected.dtype:
        _attr("dtype", actual.dtype, expected.dtype, msg)
    if rtol is None:
        rtol, atol = _default_tolerances(actual.dtype, expected.dtype)
    a = actual.detach().cpu()._numpy()
    e = expected.detach().cpu()._numpy()
    if a.dtype != e.dtype:  # check_dtype=False: compared in the promoted dtype, as torch
        common = np.promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    if a.dtype == np.bool_:
        a, e = a.astype(np.uint8), e.astype(np.uint8)
    floating = np.issubdtype(a.dtype, np.inexact)  # (complex: |a - e| is the distance)
    work = a.dtype if floating else np.float64
    a64, e64 = a.astype(work), e.astype(work)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(a64 - e64)
        ok = diff <= atol + rtol * np.abs(e64)
        ok |= a64 == e64  # equal infinities
        if equal_nan:
            ok |= np.isnan(a64) & np.isnan(e64)
        if ok.all():
            return
        rel = diff / np.abs(e64)
    what = "close" if rtol or atol else "equal"
    n, total = int((~ok).sum()), ok.size
    lines = [
        f"Tensor-likes are not {what}!",
        "",
        f"Mismatched elements: {n} / {total} ({100 * n / total:.1f}%)",
    ]
    for name, d, tol in (("absolute", diff, atol), ("relative", rel, rtol)):
        flat = np.nan_to_num(d.reshape(-1), nan=np.inf)
        k = int(np.argmax(np.where(ok.reshape(-1), -np.inf, flat)))
        value = d.reshape(-1)[k].item()
        if not floating and name == "absolute":
            value = int(value)
        index = tuple(int(i) for i in np.unravel_index(k, a.shape))
        allowed = f" (up to {tol} allowed)" if what == "close" else ""
        lines.append(f"Greatest {name} difference: {value} at index {index}{allowed}")
    _fail(msg, "\n".join(lines))


def _close_scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg):
    if check_dtype and type(actual) is not type(expected):
        _attr("type", type(actual), type(expected), msg)
    if rtol is None:
        float_like = isinstance(actual, float) or isinstance(expected, float)
        rtol, atol = _TOLERANCES["float64"] if float_like else (0.0, 0.0)
    if actual == expected or (equal_nan and math.isnan(actual) and math.isnan(expected)):
        return
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected):
        return
    what = "close" if rtol or atol else "equal"
    rel = diff / abs(expected) if expected else math.inf
    up = (f" (up to {atol} allowed)", f" (up to {rtol} allowed)") if what == "close" else ("", "")
    _fail(
        msg,
        f"Scalars are not {what}!\n\nExpected {expected} but got {actual}.\n"
        f"Absolute difference: {diff}{up[0]}\nRelative difference: {rel}{up[1]}",
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg=None,
) -> None:
    """Raises AssertionError unless ``actual`` and ``expected`` are close, like
    ``torch.testing.assert_close``: tensors (or numbers, or sequences and mappings of them)
    must first match in shape, device and dtype (each check reported as torch words it), then
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with torch's defaults per
    dtype (float32: rtol 1.3e-6, atol 1e-5; integers and bool: exact). ``msg`` (a string, or
    a function of the generated message) replaces the message.

    >>> clgrad.testing.assert_close(clgrad.tensor([1.0, 2.0]), clgrad.tensor([1.0, 4.0]))
    Traceback (most recent call last):
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 2 (50.0%)
    Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}."
        )
    args = (rtol, atol, equal_nan, check_dtype)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        _close_tensors(actual, expected, *args, check_device, msg)
    elif isinstance(actual, (bool, int, float)) and isinstance(expected, (bool, int, float)):
        _close_scalars(actual, expected, *args, msg)
    elif isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(msg, f"The keys of the mappings do not match: {set(actual)} != {set(expected)}")
        for k in actual:
            assert_close(
                actual[k],
                expected[k],
                rtol=rtol,
                atol=atol,
                equal_nan=equal_nan,
                check_device=check_device,
                check_dtype=check_dtype,
                msg=msg,
            )
    elif (
        isinstance(actual, Sequence)
        and isinstance(expected, Sequence)
        and not isinstance(actual, str)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(
                a,
                e,
                rtol=rtol,
                atol=atol,
                equal_nan=equal_nan,
                check_device=check_device,
                check_dtype=check_dtype,
                msg=msg,
            )
    else:
        raise TypeError(
            f"No comparison pair was able to handle inputs of type {type(actual)} and "
            f"{type(expected)}."
        )


def make_tensor(
    *shape,
    dtype: D.dtype,
    device=None,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """A random tensor for tests, like ``torch.testing.make_tensor``: floats uniform in
    ``[low, high)`` (default ``[-9, 9)``), integers in ``[low, high)`` (default ``[-9, 10)``,
    from 0 for uint8), bools either; ``exclude_zero`` replaces zeros by a small value.

    >>> t = clgrad.testing.make_tensor(2, 3, dtype=clgrad.float32, low=0, high=1)
    >>> t.shape, bool(((t >= 0) & (t < 1)).all())
    (clgrad.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dt = D.as_dtype(dtype)
    if dt == D.bool_:
        out = randint(0, 2, shape, device=device).to(D.bool_)
    elif dt.is_floating_point:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        if lo > hi:
            raise ValueError(f"low must be less than or equal to high, but got {lo} > {hi}")
        out = (rand(shape, dtype=dt, device=device) * (hi - lo) + lo).to(dt)
    else:
        info = D.iinfo(dt)
        lo = max(-9 if low is None else math.ceil(low), info.min)
        hi = min(10 if high is None else math.ceil(high), info.max)
        out = randint(
            max(lo, 0) if dt == D.uint8 and low is None else lo, hi, shape, dtype=dt, device=device
        )
    if exclude_zero:
        tiny = D.finfo(dt).tiny if dt.is_floating_point else 1
        out = out.masked_fill(out == 0, tiny)
    if noncontiguous and out.numel() > 1:
        out = out.repeat_interleave(2, dim=-1)[..., ::2]
    if requires_grad:
        out.requires_grad_(True)
    return out


# assert_allclose's own defaults, per dtype (looser than assert_close's)
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg="") -> None:
    """PyTorch's deprecated ``torch.testing.assert_allclose``: a FutureWarning, then
    ``assert_close`` without the dtype check, NaNs equal, and its older default tolerances
    (float32: rtol 1e-4, atol 1e-5); numbers and lists become tensors first.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clgrad.testing.assert_allclose(clgrad.tensor([1.0, 2.0]), [1.00001, 2.0])
    """
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        msg=msg or None,
    )
