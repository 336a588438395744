"""A tensor's repr, laid out as PyTorch lays it out."""

from __future__ import annotations

import numpy as np

from . import dtypes as D


def _float_text(values: np.ndarray):
    """How each float prints, as PyTorch chooses: scientific for very large or small
    magnitudes, ``3.`` when every value is whole, else four decimals."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: f"{v}"
    big, small = np.abs(finite).max(), np.abs(finite[finite != 0]).min() if np.any(finite) else 1
    if big >= 1e8 or small < 1e-4:
        return lambda v: f"{v:.4e}" if np.isfinite(v) else f"{v}"
    if np.all(finite == np.round(finite)):
        return lambda v: f"{v:.0f}." if np.isfinite(v) else f"{v}"
    return lambda v: f"{v:.4f}" if np.isfinite(v) else f"{v}"


def _padded(text, values: np.ndarray):
    """``text`` right-justified to the widest element, as PyTorch aligns every element."""
    width = max((len(text(v)) for v in values), default=0)
    return lambda v: text(v).rjust(width)


def tensor_repr(t) -> str:
    arr = t._numpy() if t.numel() <= 1000 or t.ndim == 0 else _summary(t)
    kw = dict(separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)
    flat = np.asarray(arr).reshape(-1)
    if t.dtype.is_floating_point:
        values = flat.astype(np.float64)
        kw["formatter"] = {"float_kind": _padded(_float_text(values), values)}
    if t.dtype is D.bool_:
        kw["formatter"] = {"bool": _padded(lambda v: "True" if v else "False", flat)}
    body = np.array2string(np.asarray(arr), **kw) if arr.size else "[]"
    if t.numel() == 0 and t.ndim != 1:
        body = "[]"
    extras = []
    if not t.device.is_cpu:
        extras.append(f"device='{t.device}'")
    default = (
        D.get_default_dtype()
        if t.dtype.is_floating_point
        else (D.int64 if t.dtype.category == 1 else D.bool_)
    )
    if t.dtype is not default or (t.numel() == 0 and t.dtype is not D.get_default_dtype()):
        extras.append(f"dtype={t.dtype!r}")
    if t.numel() == 0 and t.ndim != 1:
        extras.insert(0, f"size={tuple(t.shape)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *extras]) + ")"


def _summary(t):
    return t._numpy()
