"""A tensor's repr, laid out as PyTorch lays it out (``torch/_tensor_str.py``'s rules: the
width, int and scientific modes chosen from the nonzero finite values, summaries with
``...``, lines wrapped at ``linewidth``), and ``set_printoptions``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import dtypes as D


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """How tensors print, like ``torch.set_printoptions``: ``precision`` digits, summaries
    (``edgeitems`` per end of each dim) past ``threshold`` elements, lines of at most
    ``linewidth``, ``sci_mode`` True / False to force scientific notation on or off (None:
    chosen per tensor); ``profile`` "default", "short" or "full" sets the first four.

    >>> clgrad.set_printoptions(precision=2)
    >>> clgrad.tensor([1.2345])
    tensor([1.23])
    >>> clgrad.set_printoptions(profile="default")
    """
    if profile is not None:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    """torch's ``_Formatter``: one width for every element, from the nonzero finite values (a
    ``-inf`` or ``nan`` does not widen the column)."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        p = PRINT_OPTS.precision
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        flat = flat.astype(np.float64)
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if not nz.size:
            return  # nothing to measure: int mode, no scientific notation, whatever was asked
        a = np.abs(nz)
        lo, hi = a.min(), a.max()
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        self.sci_mode = (
            bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
            if PRINT_OPTS.sci_mode is None
            else PRINT_OPTS.sci_mode
        )
        if self.sci_mode:
            texts = [f"{v:.{p}e}" for v in nz.tolist()]
        elif self.int_mode:  # whole numbers print as "3." (the point marks a float)
            texts = [f"{v:.0f}." for v in nz.tolist()]
        else:
            texts = [f"{v:.{p}f}" for v in nz.tolist()]
        self.max_width = max(len(s) for s in texts)

    def format(self, value) -> str:
        p = PRINT_OPTS.precision
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{p}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{p}f}"
        return text.rjust(self.max_width)


class _ComplexFormatter:
    """torch's pair of formatters for complex elements: the real parts' and the imaginary
    parts' widths chosen apart, an element printed ``1.0000+2.j``."""

    def __init__(self, values: np.ndarray):
        self.re = _Formatter(values.real, True)
        self.im = _Formatter(values.imag, True)
        self.max_width = self.re.max_width + self.im.max_width + 1  # (the "j")

    def format(self, value) -> str:
        value = complex(value)
        imag = (self.im.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.re.format(value.real) + sign + imag


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summary shows: ``edgeitems`` from each end of every dim."""
    e = PRINT_OPTS.edgeitems
    for d in range(a.ndim):
        if a.shape[d] > 2 * e:
            ends = (a.take(range(e), d), a.take(range(a.shape[d] - e, a.shape[d]), d))
            a = np.concatenate(ends, d)
    return a


def _vector(a, indent, summarize, fmt):
    e = PRINT_OPTS.edgeitems
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2))))
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."]
        data += [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _text(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        rows = [_text(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
        rows += [_text(a[i], indent + 1, summarize, fmt) for i in range(len(a) - e, len(a))]
    else:
        rows = [_text(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _with_suffixes(text, suffixes, indent):
    """torch's ``_add_suffixes``: each suffix on the last line while it fits ``linewidth``."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            parts.append(", " + s)
            last += len(s) + 2
    return "".join(parts) + ")"


def tensor_repr(t) -> str:
    cls = type(t)
    # a program's subclass prints under its own name, as torch's (clgrad's own: Parameter
    # prints its header, then as a tensor; Buffer as a tensor)
    ours = cls.__module__ == "clgrad" or cls.__module__.startswith("clgrad.")
    prefix = "tensor(" if ours else f"{cls.__name__}("
    indent = len(prefix)
    if t.is_meta:  # no elements to show: PyTorch's "...", and the size always
        body = "..."
    elif t.numel() == 0:
        body = "[]"
    else:
        arr = np.asarray(t._numpy())
        summarize = arr.size > PRINT_OPTS.threshold
        if arr.dtype == np.float16:
            arr = arr.astype(np.float32)
        shown = _summarized(arr) if summarize else arr
        if t.dtype.category == 3:
            fmt = _ComplexFormatter(shown)
        else:
            fmt = _Formatter(shown, t.dtype.is_floating_point)
        body = _text(arr, indent, summarize, fmt)
    extras = []
    if not t.device.is_cpu:
        extras.append(f"device='{t.device}'")
    default = (
        D.get_default_dtype()
        if t.dtype.is_floating_point
        else D.get_default_dtype().to_complex()
        if t.dtype.category == 3
        else (D.int64 if t.dtype.category == 1 else D.bool_)
    )
    # (no elements, or none to show: any dtype but the default float one is named)
    if t.dtype is not default or (
        (t.numel() == 0 or t.is_meta) and t.dtype is not D.get_default_dtype()
    ):
        extras.append(f"dtype={t.dtype!r}")
    if t.is_meta:  # after the device
        extras.insert(1, f"size={tuple(t.shape)}")
    elif t.numel() == 0 and t.ndim != 1:
        extras.insert(0, f"size={tuple(t.shape)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return _with_suffixes(prefix + body, extras, indent)
