"""Running (cumulative) ops beyond cumsum: cumprod, cummax, cummin, logcumsumexp.

Each runs as one of the backend's scans (``Backend.scan`` by product or logaddexp,
``Backend.cum_extreme``); complex cumprod, and cummax / cummin where the backend prefers it (a
GPU's few long lines), run as a doubling scan of Tensor ops instead (log2(n) steps, each
combining every element with the one ``s`` before it). cumprod's gradient is exact where the
input holds zeros (PyTorch's formula: the first zero of a line gets the product of the others,
the elements after it nothing), logcumsumexp's reads the result, and cummax / cummin send the
gradient to the index each value came from, as PyTorch.
"""

from __future__ import annotations

from .. import dtypes as D
from ..autograd.function import Function, needs_recording
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backend.base import LOGADDEXP, PROD
from ..tensor import Tensor, wrap_dim
from .autocast import autocast_op
from .core import int_dim
from .creation import arange
from .elementwise import maximum, where
from .indexing import ScatterAdd
from .movement import cat
from .registry import SCALAR_TYPE_NAMES, refuse_integral_output
from .results import return_type

cummax_result = return_type("cummax", ["values", "indices"])
cummin_result = return_type("cummin", ["values", "indices"])


def _scan(xs, dim, combine):
    """The inclusive scan of the tuple of tensors ``xs`` along ``dim``: ``combine(earlier,
    later)`` of two tuples gives the tuple for the joined run (an associative operation)."""
    n = xs[0]._shape[dim]
    if n <= 1:  # nothing to combine: copies, never the inputs themselves (or views of them)
        return tuple(t.clone() for t in xs)
    s = 1
    while s < n:
        earlier = tuple(t.narrow(dim, 0, n - s) for t in xs)
        later = tuple(t.narrow(dim, s, n - s) for t in xs)
        joined = combine(earlier, later)
        xs = tuple(cat([t.narrow(dim, 0, s), j], dim) for t, j in zip(xs, joined))
        s *= 2
    return xs


def _dim(name, input, dim):
    return wrap_dim(int_dim(name, dim), input.ndim)


@autocast_op
def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """The running product along ``dim`` (integers and bool in int64, or ``dtype``), like
    ``torch.cumprod``; its gradient is exact where the input holds zeros.

    >>> clgrad.cumprod(clgrad.tensor([1, 2, 3, 4]), dim=0)
    tensor([ 1,  2,  6, 24])
    """
    d = _dim("cumprod", input, dim)
    dt = D.as_dtype(dtype) if dtype is not None else input.dtype
    if dtype is None and input.dtype.category < 2:
        dt = D.int64
    if dtype is not None and needs_recording((input,)):
        refuse_integral_output(dt)
    x = input if input.dtype is dt else input.to(dt)
    if x.ndim == 0:
        return x.clone()
    if x.dtype.is_complex:
        return _scan((x,), d, lambda a, b: (a[0] * b[0],))[0]
    return Cumprod.apply(x, d)


cumprod.out_dtype = "compute"  # out= computes in out's dtype, as PyTorch's (core.with_out)


def product_of_others(x, dims):
    """For each element, the product of the others along ``dims``: running products from both
    ends, excluding the element (PyTorch's prod_safe_zeros_backward). No division, so it and its
    gradient are exact where elements are zero, where the quotient form loses the dependence
    of a zero's neighbours on it."""
    if len(dims) != 1:  # every dim: as one flat dim
        return product_of_others(x.reshape(-1), (0,)).reshape(x.shape)
    (d,) = dims
    n = x.shape[d] if x.ndim else 1
    if x.ndim == 0 or n <= 1:
        return x.new_ones(x.shape)
    shape = list(x.shape)
    shape[d] = 1
    one = x.new_ones(shape)
    before = cat([one, cumprod(x.narrow(d, 0, n - 1), d)], d)
    after = cat([one, cumprod(x.flip([d]).narrow(d, 0, n - 1), d)], d).flip([d])
    return before * after


def _run_scan(x, dim, kernel):
    """A new tensor: x's scan along ``dim`` by ``kernel`` on x's backend."""
    out = Tensor._empty(x._shape, x.dtype, x.device)
    x.device.backend.scan(out._record(), x._record(), dim, D.accumulation(x.dtype), kernel)
    return out


def _saved_scan(ctx, x, dim, kernel):
    """``_run_scan``'s result, saved with its input for a backward that reads both."""
    out = _run_scan(x, dim, kernel)
    ctx.save_for_backward(x, out)
    ctx.dim = dim
    return out


def _reversed_cumsum(t, dim):
    return t.flip(dim).cumsum(dim).flip(dim)


class Cumprod(Function):
    """cumprod along ``dim`` (a real dtype); backward by PyTorch's ``cumprod_backward``: before
    a line's first zero, the reversed running sum of grad * result over the element; at the
    first zero, that sum with the zero taken as one; after it, nothing."""

    @staticmethod
    def forward(ctx, x, dim):
        return _saved_scan(ctx, x, dim, PROD)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        d = ctx.dim
        if is_grad_enabled():  # create_graph: a formula differentiable where x has zeros
            return _cumprod_grad_by_pairs(x, grad, d), None
        zeros_so_far = (x == 0).cumsum(d)
        before = zeros_so_far == 0
        first_zero = (zeros_so_far == 1) & (x == 0)
        x_safe = where(before, x, 1)
        grad_in = where(before, _reversed_cumsum(grad * out, d) / x_safe, 0)
        # (computed for every line, zeros or not: asking whether any has one would wait for
        # the device)
        past_zero = cumprod(where(first_zero, 1, x), d)
        return where(first_zero, _reversed_cumsum(grad * past_zero, d), grad_in), None


def _cumprod_grad_by_pairs(x, grad, d):
    """cumprod's input gradient as PyTorch computes it under create_graph:
    ``g_k = sum_{j >= k} grad_j * prod_{i <= j, i != k} x_i``, from the products before each
    element and those from it on to each later one (an (n, n) matrix per line: the formula
    divides by nothing, so its derivatives are exact at zeros, where the first-order one's
    lose the dependence of a zero's neighbours on it)."""
    xt, gt = x.movedim(d, -1), grad.movedim(d, -1)
    n = xt.shape[-1]
    if n == 0:
        return grad
    pos = arange(n, device=x.device)
    later = pos.unsqueeze(0) > pos.unsqueeze(1)  # [k, i]: i after k
    from_k = cumprod(where(later, xt.unsqueeze(-2), 1), -1)  # [k, j]: prod_{k < i <= j} x_i
    before = cat([xt.new_ones((*xt.shape[:-1], 1)), cumprod(xt.narrow(-1, 0, n - 1), -1)], -1)
    upper = pos.unsqueeze(0) >= pos.unsqueeze(1)  # [k, j]: j from k on
    terms = where(upper, from_k * gt.unsqueeze(-2), 0).sum(-1)
    return (before * terms).movedim(-1, d)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow, like
    ``torch.logcumsumexp``.

    >>> clgrad.logcumsumexp(clgrad.tensor([0.0, 0.0, 1000.0]), dim=0)
    tensor([0.0000e+00, 6.9315e-01, 1.0000e+03])
    """
    d = _dim("logcumsumexp", input, dim)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{SCALAR_TYPE_NAMES[input.dtype.name]}'"
        )
    if input.ndim == 0:
        return input.clone()
    return Logcumsumexp.apply(input, d)


class Logcumsumexp(Function):
    """logcumsumexp along ``dim``; its gradient reads the result, as PyTorch's (which refuses
    it written in place before backward), by PyTorch's formula: the reversed logcumsumexp of
    log |grad| - result, the positive and the negative parts apart."""

    @staticmethod
    def forward(ctx, x, dim):
        return _saved_scan(ctx, x, dim, LOGADDEXP)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        d = ctx.dim
        lowest = D.finfo(grad.dtype).min
        log_abs = grad.abs().log()
        parts = []
        for part in (where(grad > 0, log_abs, lowest), where(grad < 0, log_abs, lowest)):
            reversed_sum = logcumsumexp((part - out).flip(d), d).flip(d)
            parts.append((reversed_sum + x).exp())
        return parts[0] - parts[1], None


# dtypes whose values rank within 32 bits: cummax/cummin scan one int64 key (rank, index)
_PACKED = (D.float32, D.float16, D.bfloat16, D.int32, D.int16, D.int8, D.uint8, D.bool_)


def _ranks(x, largest):
    """int64 ranks of ``x``'s values in [-2**31, 2**31): larger for the value cummax
    (``largest``) or cummin keeps, equal for equal values (-0.0 and 0.0 too), NaN's the
    largest (it wins either way)."""
    if not x.dtype.is_floating_point:
        r = x.long()
        return r if largest else -r - 1
    f = x.float()  # (exact for the 16-bit floats)
    u = f.view(D.int32).long()
    # IEEE bits as an ordered integer: a negative value's magnitude bits flipped
    r = where(u < 0, u ^ 0x7FFFFFFF, u)
    r = where(f == 0, 0, r)
    r = r if largest else -r - 1
    return where(f.isnan(), 2**31 - 1, r)


class CumExtreme(Function):
    """cummax / cummin: values and the index each came from; the gradient of each value goes
    to that index (PyTorch's ``cummaxmin_backward``)."""

    @staticmethod
    def forward(ctx, x, dim, largest):
        n, backend = x._shape[dim], x.device.backend
        if backend.scans_extreme(x.numel() // max(n, 1), n):
            values = Tensor._empty(x._shape, x.dtype, x.device)
            indices = Tensor._empty(x._shape, D.int64, x.device)
            backend.cum_extreme(values._record(), indices._record(), x._record(), dim, largest)
            return CumExtreme._saved(ctx, x, dim, values, indices)
        shape = [1] * x.ndim
        shape[dim] = x._shape[dim]
        idx = arange(x._shape[dim], device=x.device).reshape(shape).expand(x._shape)
        floating = x.dtype.is_floating_point

        def pick(a, b):
            # the later element wins ties (PyTorch's index is the last equal one); NaN wins,
            # and a later NaN takes the index
            better = b[0] >= a[0] if largest else b[0] <= a[0]
            if floating:
                better = b[0].isnan() | (better & a[0].isnan().logical_not())
            return where(better, b[0], a[0]), where(better, b[1], a[1])

        with no_grad():
            if x.dtype in _PACKED and x._shape[dim] < 2**32:
                # one scan of rank * 2**32 + index by maximum: the winner's rank, and the
                # later index among equals (a step is a maximum and a cat where the pairs of
                # values and indices took a dozen launches); the values read back by index
                key = _ranks(x, largest) * 2**32 + idx
                (key,) = _scan((key,), dim, lambda a, b: (maximum(a[0], b[0]),))
                indices = key & 0xFFFFFFFF
                values = x.gather(dim, indices)
            else:
                values, indices = _scan((x, idx), dim, pick)
        values = values.contiguous() if values is x else values
        return CumExtreme._saved(ctx, x, dim, values, indices)

    @staticmethod
    def _saved(ctx, x, dim, values, indices):
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.shape, ctx.dim = x._shape, dim
        return values, indices

    @staticmethod
    def backward(ctx, g, _):
        (indices,) = ctx.saved_tensors
        z = Tensor._full(ctx.shape, 0, g.dtype, g.device)
        return ScatterAdd.apply(z, ctx.dim, indices, g), None, None


def _cum_extreme(name, input, dim, largest, result):
    d = _dim(name, input, dim)
    if input.ndim == 0:
        values, indices = CumExtreme.apply(input.reshape(1), 0, largest)
        return result(values.reshape(()), indices.reshape(()))
    return result(*CumExtreme.apply(input, d, largest))


def cummax(input: Tensor, dim: int):
    """``(values, indices)``: the running maximum along ``dim`` and where each was found, like
    ``torch.cummax`` (a NaN stays the maximum from where it appears).

    >>> clgrad.cummax(clgrad.tensor([1, 3, 2, 5]), dim=0)
    clgrad.return_types.cummax(
    values=tensor([1, 3, 3, 5]),
    indices=tensor([0, 1, 1, 3]))
    """
    return _cum_extreme("cummax", input, dim, True, cummax_result)


def cummin(input: Tensor, dim: int):
    """``(values, indices)``: the running minimum along ``dim`` and where each was found, like
    ``torch.cummin``.

    >>> clgrad.cummin(clgrad.tensor([3, 1, 2, 0]), dim=0)
    clgrad.return_types.cummin(
    values=tensor([3, 1, 1, 0]),
    indices=tensor([0, 1, 1, 3]))
    """
    return _cum_extreme("cummin", input, dim, False, cummin_result)


def _trapezoid_parts(name, y, x, dx, dim):
    """(the average of each pair of neighbours along ``dim``, the widths between them)."""
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    mean = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2 if n else y
    if x is None:
        return mean, (1 if dx is None else dx), d
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        widths = x[1:] - x[:-1]
        shape = [1] * y.ndim
        shape[d] = max(n - 1, 0)
        return mean, widths.reshape(shape), d
    widths = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)
    return mean, widths, d


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule's integral of ``y`` along ``dim``, with sample points ``x`` or a
    constant spacing ``dx`` (1 by default), like ``torch.trapezoid``.

    >>> clgrad.trapezoid(clgrad.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    if y.dtype is D.bool_:
        y = y.to(D.int64)
    mean, widths, d = _trapezoid_parts("trapezoid", y, x, dx, dim)
    if y.shape[d] == 0:
        return (y * 0).sum(d)
    return (mean * widths).sum(d)


def trapz(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name, like ``torch.trapz``.

    >>> clgrad.trapz(clgrad.tensor([0.0, 2.0]), clgrad.tensor([0.0, 3.0]))
    tensor(3.)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1):
    """The running trapezoidal integral of ``y`` along ``dim`` (one element fewer), like
    ``torch.cumulative_trapezoid``.

    >>> clgrad.cumulative_trapezoid(clgrad.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    if y.dtype is D.bool_:
        y = y.to(D.int64)
    mean, widths, d = _trapezoid_parts("cumulative_trapezoid", y, x, dx, dim)
    if y.shape[d] == 0:
        return y * 0
    return (mean * widths).cumsum(d)
