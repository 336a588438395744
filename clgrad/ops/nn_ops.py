"""Primitives of ``clgrad.nn.functional`` that composing Tensor ops would make slow or hungry.

Each is an autograd ``Function`` whose backward is written with Tensor ops (or with another
Function of this module), so gradients of gradients work too:

- ``Pad`` / constant padding: the gradient of a pad is the pad with the negated widths (a crop).
- ``Patches``: the sliding windows of the last ``len(kernel)`` dims of a tensor as a strided
  *view* (N, C, *out, *kernel), no copy: (N, C, OH, OW, kh, kw) in 2-D. Its gradient is
  ``Fold``, which adds every window back into a (N, C, *spatial) tensor: one strided copy when
  the windows do not overlap, else one ``put`` with accumulate through int64 offsets (cached
  per geometry): never a loop in Python. convNd is ``Patches`` -> one copy into the
  (C*prod(kernel), N*prod(out)) column matrix -> one matmul; a transposed convolution is the
  matmul first, then ``Fold``; pooling reduces the window dims of the view directly.
- ``MaxLast``: max over the last dim whose gradient goes to the first maximal element (the
  last NaN), an elementwise one-hot product (no scatter, no atomics). ``WindowMax``: the same over
  sliding windows, in one kernel that reads them in place (max pooling); where the windows
  tile the input, ``WindowPut`` writes its gradient in one pass (no one-hot, no fold).
- ``EmbeddingFn`` / ``EmbeddingGrad``: whole rows gathered and added back (``gather_rows`` /
  ``add_rows``; complex weights through int64 offsets).
"""

from __future__ import annotations

import math

from .. import dtypes as D
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..backend.base import COPY, FILL
from ..tensor import Tensor, contiguous_strides
from .core import launch, sum_to
from .creation import arange
from .elementwise import add, where
from .indexing import add_rows, gather_rows, put, take
from .linalg import matmul, product_sum


# ---- constant padding ------------------------------------------------------------------------
def _pad_geometry(shape, pads):
    """For pads ((lo, hi) per dim of ``shape``, possibly negative): the output shape and the
    (start, length) of the copied region in the input and in the output, per dim."""
    out_shape, src, dst = [], [], []
    for n, (lo, hi) in zip(shape, pads):
        m = n + lo + hi
        if m < 0:
            raise RuntimeError(
                f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative "
                f"output size, which is invalid. Check dimension of your input."
            )
        s0, d0 = max(0, -lo), max(0, lo)
        length = max(0, min(n - s0, m - d0))
        out_shape.append(m)
        src.append((s0, length))
        dst.append((d0, length))
    return tuple(out_shape), src, dst


def _region(t, region):
    offset = t._offset + sum(s * st for (s, _), st in zip(region, t._stride))
    return t._view(tuple(n for _, n in region), t._stride, offset)


class Pad(Function):
    """Constant padding by ``pads`` ((lo, hi) for every dim; negative widths crop)."""

    node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, x, pads, value):
        ctx.pads = pads
        shape, src, dst = _pad_geometry(x._shape, pads)
        out = Tensor._empty(shape, x.dtype, x.device)
        if out.numel():
            if any(lo > 0 or hi > 0 for lo, hi in pads):
                launch(FILL, [value], out.dtype, out.dtype, out=out)
            if all(n for _, n in src):
                launch(COPY, [_region(x, src)], out.dtype, x.dtype, out=_region(out, dst))
        return out

    @staticmethod
    def backward(ctx, g):
        return Pad.apply(g, tuple((-lo, -hi) for lo, hi in ctx.pads), 0), None, None


def pad_constant(x, pads, value=0.0):
    """``pads`` as (lo, hi) for every dim of x."""
    for n, (lo, hi) in zip(x._shape, pads):  # ATen's crops the negative widths first
        if n + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x.clone()  # a new tensor, as PyTorch's: never the input itself
    return Pad.apply(x, tuple(pads), value)


# ---- sliding windows -------------------------------------------------------------------------
def out_size(n, k, s, d):
    return (n - d * (k - 1) - 1) // s + 1


def _windows(t, kernel, stride, dilation):
    """(shape, strides, offset) of the view (*lead, *out, *kernel) of the last ``len(kernel)``
    dims of t: (N, C, OH, OW, kh, kw) for a 2-d kernel."""
    nd = len(kernel)
    lead, spatial = t._shape[:-nd], t._shape[-nd:]
    lstride, sstride = t._stride[:-nd], t._stride[-nd:]
    outs = tuple(out_size(n, k, s, d) for n, k, s, d in zip(spatial, kernel, stride, dilation))
    strides = (
        tuple(lstride)
        + tuple(st * s for st, s in zip(sstride, stride))
        + tuple(st * d for st, d in zip(sstride, dilation))
    )
    return tuple(lead) + outs + tuple(kernel), strides, t._offset


class Patches(Function):
    """The sliding windows of a (N, C, *spatial) tensor as a view (N, C, *out, *kernel)."""

    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, dilation):
        ctx.geometry = (x.shape, kernel, stride, dilation)
        return x._view(*_windows(x, kernel, stride, dilation))

    @staticmethod
    def backward(ctx, g):
        shape, kernel, stride, dilation = ctx.geometry
        return Fold.apply(g, shape, kernel, stride, dilation), None, None, None


def _injective(n_out, k, s, d):
    """True when the window positions of one dim never share an input row."""
    rows = {o * s + i * d for o in range(n_out) for i in range(k)}
    return len(rows) == n_out * k


def _covers(n_out, k, s, d, size):
    """True when the window positions of one (injective) dim reach every input row."""
    return n_out * k == size and (n_out - 1) * s + (k - 1) * d == size - 1


def _tiles(outs, kernel, stride, dilation, spatial) -> bool:
    """True when the windows put every input element in exactly one window (max pooling's
    stride = kernel, and interleaved dilated windows too)."""
    return all(map(_injective, outs, kernel, stride, dilation)) and all(
        map(_covers, outs, kernel, stride, dilation, spatial)
    )


_OFFSETS: dict = {}


def _fold_offsets(out, kernel, stride, dilation):
    """int64 offsets into the contiguous ``out`` of every window element (N, C, *out,
    *kernel), contiguous; cached per geometry and device (a few entries)."""

    key = (str(out.device), out._shape, kernel, stride, dilation)
    offsets = _OFFSETS.get(key)
    if offsets is None:
        flat = arange(out.numel(), device=out.device).reshape(out._shape)
        offsets = flat._view(*_windows(flat, kernel, stride, dilation)).contiguous()
        if len(_OFFSETS) >= 16:
            _OFFSETS.pop(next(iter(_OFFSETS)))
        _OFFSETS[key] = offsets
    return offsets


class Fold(Function):
    """Adds every window of ``g`` (N, C, *out, *kernel) back into a (N, C, *spatial) tensor."""

    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, g, shape, kernel, stride, dilation):
        ctx.geometry = (kernel, stride, dilation)
        out = Tensor._empty(tuple(shape), g.dtype, g.device)
        wshape, wstride, offset = _windows(out, kernel, stride, dilation)
        nd = len(kernel)
        outs = wshape[-2 * nd : -nd]
        injective = g.numel() and all(map(_injective, outs, kernel, stride, dilation))
        # windows that tile the input exactly (max pooling's, stride = kernel) write every
        # element once: no zeros first (the copy then fuses with the gradient that feeds it)
        if not (injective and _tiles(outs, kernel, stride, dilation, tuple(shape)[-nd:])):
            launch(FILL, [0], out.dtype, out.dtype, out=out)
        if not g.numel():
            return out
        if injective:
            launch(COPY, [g], out.dtype, g.dtype, out=out._view(wshape, wstride, offset))
            return out
        put(out, _fold_offsets(out, kernel, stride, dilation), g, accumulate=True)
        return out

    @staticmethod
    def backward(ctx, gg):
        return Patches.apply(gg, *ctx.geometry), None, None, None, None


# ---- convolution's column matrix -------------------------------------------------------------
class Im2Col(Function):
    """The windows of a (N, C, *spatial) tensor copied into a new (N, C, *kernel, *outs)
    tensor by the device's unfold kernel: ``outs`` window positions per spatial dim at
    ``stride`` and ``dilation``, after ``lo`` zeros before each dim (the zeros after it are
    implied by ``outs``). Contiguous, but for ``align`` > 1: each (n, c, *kernel) block of
    outs then starts a multiple of ``align`` elements after the one before (room the
    device's matmul reads its rows faster with: ``Backend.matmul_row_align``)."""

    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, kernel, outs, stride, dilation, lo, align=1):
        ctx.geometry = (tuple(x._shape[2:]), stride, dilation, lo)
        lead = tuple(x._shape[:2]) + tuple(kernel)  # the (n, c, *kernel) blocks of outs
        shape = lead + tuple(outs)
        block = math.prod(outs)
        room = -(-block // align) * align
        if room == block:
            out = Tensor._empty(shape, x.dtype, x.device)
        else:  # the blocks room apart, each contiguous
            whole = Tensor._empty((math.prod(lead) * room,), x.dtype, x.device)
            strides = tuple(s * room for s in contiguous_strides(lead)) + contiguous_strides(outs)
            out = whole._view(shape, strides, 0)
        x.device.backend.unfold(out._record(), x._record(), stride, dilation, lo)
        return out

    @staticmethod
    def backward(ctx, g):
        return Col2Im.apply(g, *ctx.geometry), None, None, None, None, None, None


class Col2Im(Function):
    """The adjoint of ``Im2Col``: the windows of ``cols`` (N, C, *kernel, *outs) added back
    into a new (N, C, *spatial) tensor by the device's fold kernel (a gather per output
    element: no atomics)."""

    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, spatial, stride, dilation, lo):
        nd = len(spatial)
        ctx.geometry = (tuple(cols._shape[2 : 2 + nd]), tuple(cols._shape[2 + nd :]))
        ctx.geometry += (stride, dilation, lo)
        cols = cols.contiguous()
        out = Tensor._empty(tuple(cols._shape[:2]) + tuple(spatial), cols.dtype, cols.device)
        cols.device.backend.fold(out._record(), cols._record(), stride, dilation, lo)
        return out

    @staticmethod
    def backward(ctx, g):
        return Im2Col.apply(g, *ctx.geometry), None, None, None, None


class Convolution(Function):
    """A convolution in one node, as PyTorch's (``ConvolutionBackward0`` over input, weight
    and bias): ``Im2Col`` copies the windows of x (N, C, *spatial) into the column matrix
    (N, [G,] K, L), one matmul batched over N writes the (N, [G,] O, L) output in place, and
    the bias is added into it.

    Its gradient is written with Tensor ops and this module's Functions, so gradients of
    gradients work: the weight's is ``cols @ g^T`` summed over the batch (which reads the big
    column matrix in place as the left operand and transposes only the gradient: ``g @
    cols^T`` would repack all of cols on CPU devices), the input's ``Col2Im`` of ``w^T @ g``.
    With ``create_graph`` the column matrix is made again from x as a recorded ``Im2Col``
    (the saved one has no graph)."""

    @staticmethod
    def forward(ctx, x, weight, bias, outs, stride, dilation, lo, groups):
        kernel = tuple(weight._shape[2:])
        # (N, C, *kernel, *outs): the product's right operand, its rows padded where the
        # device reads them faster so
        unfold = (kernel, outs, stride, dilation, lo, x.device.backend.matmul_row_align(x.dtype))
        cols = Im2Col.apply(x, *unfold)
        w, c = _conv_operands(weight, cols, groups)
        out = matmul(w, c).reshape((x._shape[0], weight._shape[0]) + tuple(outs))
        if bias is not None:
            add.op.run(out, bias.reshape((1, -1) + (1,) * len(outs)), out=out)
        ctx.save_for_backward(x, weight, cols)
        ctx.unfold, ctx.groups = unfold, groups
        return out

    @staticmethod
    def backward(ctx, g):
        x, weight, cols = ctx.saved_tensors
        _, _, stride, dilation, lo, _ = ctx.unfold
        groups = ctx.groups
        needs = ctx.needs_input_grad
        if is_grad_enabled() and x.requires_grad:
            cols = Im2Col.apply(x, *ctx.unfold)
        w, c = _conv_operands(weight, cols, groups)
        g3 = g.reshape(c._shape[:-2] + (w._shape[-2], c._shape[-1]))  # (N, [G,] O, L)
        gx = gw = gb = None
        if needs[0]:
            gx = Col2Im.apply((w.mT @ g3).reshape(cols._shape), x._shape[2:], stride, dilation, lo)
        if needs[1]:
            gw = product_sum(g3, c).reshape(weight._shape)
        if needs[2]:
            gb = g.sum((0,) + tuple(range(2, g.ndim)))
        return gx, gw, gb, None, None, None, None, None


def _conv_operands(weight, cols, groups):
    """The convolution's product operands: the (O, K) or grouped (G, O/G, K) weight and the
    (N, K, L) or (N, G, K, L) column matrix."""
    n, out_c = cols._shape[0], weight._shape[0]
    k = math.prod(weight._shape[1:])
    nd = weight.ndim - 2
    length = math.prod(cols._shape[2 + nd :])  # the window positions (cols: N, C, *kernel, *outs)
    if groups == 1:
        return weight.reshape(out_c, k), cols.reshape(n, k, length)
    return weight.reshape(groups, out_c // groups, k), cols.reshape(n, groups, k, length)


# ---- max over the last dim -------------------------------------------------------------------
class MaxLast(Function):
    """max over the last dim; the gradient goes to the first maximal element, or to the last
    NaN where there is one (PyTorch's adaptive max pooling's pick: ``val > max || isnan(val)``
    replaces)."""

    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x):
        idx = x.argmax(-1)  # (the first maximum, or the first NaN)
        if x.dtype.is_floating_point:
            nan = x.isnan()
            last_nan = (x._shape[-1] - 1) - nan.flip(-1).to(D.uint8).argmax(-1)
            idx = where(nan.any(-1), last_nan, idx)
        ctx.save_for_backward(idx)
        ctx.k = x._shape[-1]
        ctx.mark_non_differentiable(idx)
        return x.amax(-1), idx

    @staticmethod
    def backward(ctx, g, _):
        (idx,) = ctx.saved_tensors
        return _to_picked(g, idx, (ctx.k,))


def _to_picked(g, idx, window):
    """``g`` (any shape) spread over new last dims of sizes ``window``, all of it at the
    row-major position ``idx`` (an elementwise one-hot product: no scatter, no atomics)."""
    new = (1,) * len(window)
    positions = arange(math.prod(window), dtype=idx.dtype, device=g.device).reshape(window)
    return (positions == idx.reshape(idx._shape + new)) * g.reshape(g._shape + new)


class WindowMax(Function):
    """Max pooling's forward: the largest element of each sliding window of ``x`` (N, C,
    *spatial) and its row-major index in the window, in one pass over the input
    (``Backend.window_max`` reads the windows in place: no copy, no second reduction); the
    gradient goes to that element, as ``MaxLast``'s."""

    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel, stride, dilation):
        win = x._view(*_windows(x, kernel, stride, dilation))
        shape = win._shape[: win.ndim - len(kernel)]
        values = Tensor._empty(shape, win.dtype, win.device)
        # the index in the window: int32 (windows are small), half the memory traffic of int64
        idx = Tensor._empty(shape, D.int32, win.device)
        win.device.backend.window_max(values._record(), idx._record(), win._record())
        ctx.save_for_backward(idx)
        ctx.geometry = (x._shape, kernel, stride, dilation)
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g, _):
        (idx,) = ctx.saved_tensors
        geometry = ctx.geometry  # (shape, kernel, stride, dilation)
        shape, kernel = geometry[:2]
        if _tiles(idx._shape[-len(kernel) :], *geometry[1:], shape[-len(kernel) :]):
            gx = WindowPut.apply(g, idx, *geometry)
        else:
            gx = Fold.apply(_to_picked(g, idx, kernel), *geometry)
        return gx, None, None, None


class WindowPut(Function):
    """Max pooling's gradient where the windows tile the input exactly (``_tiles``: every
    element in one window, as stride = kernel gives): one pass that writes each element once,
    the window's gradient at its pick and 0 elsewhere (``Backend.window_put``). Its own
    gradient picks ``gg`` at the same places."""

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, g, idx, shape, kernel, stride, dilation):
        ctx.save_for_backward(idx)
        ctx.windows = (kernel, stride, dilation)
        g = g.contiguous()
        out = Tensor._empty(tuple(shape), g.dtype, g.device)
        win = out._view(*_windows(out, kernel, stride, dilation))
        g.device.backend.window_put(out._record(), g._record(), idx._record(), win._record())
        return out

    @staticmethod
    def backward(ctx, gg):
        (idx,) = ctx.saved_tensors
        win = Patches.apply(gg, *ctx.windows)
        flat = win.reshape(win.shape[: win.ndim - len(ctx.windows[0])] + (-1,))
        picked = flat.gather(-1, idx.long().unsqueeze(-1)).squeeze(-1)
        return picked, None, None, None, None, None


# ---- normalization ---------------------------------------------------------------------------
def normalized(x, dims, eps):
    """(x - mean) / sqrt(var + eps) over ``dims`` (the variance biased), its 1 / sqrt(var +
    eps), and the mean and variance (kept dims), with Tensor ops."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    rstd = (var + eps).rsqrt()
    return centered * rstd, rstd, mean, var


def _mixed(x, weight, bias) -> bool:
    """Whether weight or bias has another dtype than x: the output is promoted, and so is its
    gradient, which the norm kernels (of x's dtype) cannot read."""
    return any(t is not None and t.dtype is not x.dtype for t in (weight, bias))


def _affine(y, weight, bias, affine):
    """``y * weight + bias`` with weight and bias (or None) seen as ``affine``."""
    if weight is not None:
        y = y * weight.reshape(affine)
    return y if bias is None else y + bias.reshape(affine)


def _closed_form_dx(h, xhat, rstd, dims):
    """The input's gradient rstd * (h - mean(h) - xhat * mean(h * xhat)) over ``dims``, for
    h = g * weight, with Tensor ops (recorded under create_graph)."""
    mean_h = h.mean(dims, keepdim=True)
    mean_hx = (h * xhat).mean(dims, keepdim=True)
    return rstd * (h - mean_h - xhat * mean_hx)


def _affine_grads(g, xhat, weight, bias_shape, affine, needs):
    """(dw, db): the sums of g * xhat and of g over all but the channels (None where not
    wanted)."""
    gw = gb = None
    if weight is not None and needs[1]:
        gw = sum_to(g * xhat, affine).reshape(weight._shape)
    if bias_shape is not None and needs[2]:
        gb = sum_to(g, affine).reshape(bias_shape)
    return gw, gb


def _norm_layout(x, dims, weight, bias):
    """(A, C, B, per) where ``Backend.norm`` takes x normalized over ``dims``: the last dims
    (layer_norm: (1, rows, n), weight and bias per position) or every dim but dim 1
    (batch_norm: (N, C, spatial), per channel); None for another layout, an empty x,
    weight and bias of another dtype, or groups too big for the device's kernels (they go
    through Tensor ops)."""
    shape, nd = x._shape, x.ndim
    if not x.numel() or _mixed(x, weight, bias):
        return None
    if dims == tuple(range(nd - len(dims), nd)):
        n = math.prod(shape[nd - len(dims) :])
        layout = 1, x.numel() // n, n, "b"
    elif nd >= 2 and dims == (0,) + tuple(range(2, nd)):
        layout = shape[0], shape[1], math.prod(shape[2:]), "c"
    else:
        return None
    return layout if x.device.backend.norm_fits(*layout[:3]) else None


class NativeNorm(Function):
    """Normalization in one node, as PyTorch's native_layer_norm / native_batch_norm: the
    mean and biased variance of x over ``dims``, ``(x - mean) / sqrt(var + eps)``, then
    ``weight`` and ``bias`` (or None) seen as ``affine`` (the shape they broadcast as, e.g.
    (1, C, 1, 1)). ``running`` (mean, var, momentum) or None: running statistics to update in
    place with the batch's (the variance unbiased), as batch norm's training does.

    Forward and gradient are a kernel each (``Backend.norm``, ``norm_backward``) where the
    layout allows (``_norm_layout``); else, and for gradients of gradients, Tensor ops: the
    closed form rstd * (h - mean(h) - xhat * mean(h * xhat)) for h = g * weight, with xhat and
    rstd made again from x (with their graph under create_graph)."""

    @staticmethod
    def forward(ctx, x, weight, bias, dims, affine, eps, running):
        compute = _params_dtype(x, weight, bias)
        xc = x if compute is None else x.to(compute)
        y, batch_mean, var, rstd, layout = _norm_forward(xc, weight, bias, dims, affine, eps)
        if compute is not None:
            y = y.to(x.dtype)
        # the kernel's statistics serve its gradient; Tensor ops' are made again (with a graph)
        mean, rstd = (None, None) if layout is None else (batch_mean, rstd)
        if running is not None:
            running_mean, running_var, momentum = running
            n = x.numel() // max(1, batch_mean.numel())
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(batch_mean.reshape(-1) * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(var.reshape(-1) * (momentum * n / (n - 1)))
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.geometry = (dims, affine, eps, None if bias is None else bias._shape, layout, compute)
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight, mean, rstd = ctx.saved_tensors
        dims, affine, eps, bias_shape, layout, compute = ctx.geometry
        needs = ctx.needs_input_grad
        x, g, as_given = _in_params_dtype(x, g, compute)
        if layout is not None and not is_grad_enabled():
            gx, gw, gb = _norm_kernel_grads(needs, g, x, weight, bias_shape, mean, rstd, layout)
            return as_given(gx), gw, gb, None, None, None, None
        xhat, rstd, _, _ = normalized(x, dims, eps)
        gx = None
        if needs[0]:
            h = g if weight is None else g * weight.reshape(affine)
            gx = _closed_form_dx(h, xhat, rstd, dims)
        gw, gb = _affine_grads(g, xhat, weight, bias_shape, affine, needs)
        return as_given(gx), gw, gb, None, None, None, None


def _params_dtype(x, weight, bias):
    """The dtype of weight and bias where it is not x's (None else): PyTorch's mixed type, a
    float16 x with float32 parameters, computes in float32 and returns x's dtype."""
    return next((t.dtype for t in (weight, bias) if t is not None and t.dtype is not x.dtype), None)


def _in_params_dtype(x, g, compute):
    """(x, g, as_given): a mixed-type norm's input and output gradient in the parameters'
    dtype ``compute`` (unchanged where None), and the function that gives the input's
    gradient back in the input's dtype."""
    if compute is None:
        return x, g, lambda gx: gx
    dt = x.dtype
    return x.to(compute), g.to(compute), lambda gx: None if gx is None else gx.to(dt)


def _norm_forward(x, weight, bias, dims, affine, eps):
    """(y, mean, var, rstd, layout): ``NativeNorm``'s output and statistics, by
    ``Backend.norm`` where the layout allows (``_norm_layout``), else by Tensor ops (rstd kept
    dims, layout None)."""
    layout = _norm_layout(x, dims, weight, bias)
    if layout is None:
        xhat, rstd, mean, var = normalized(x, dims, eps)
        return _affine(xhat, weight, bias, affine), mean, var, rstd, None
    a, c, b, per = layout
    # contiguous copies held until the launch: a copy that died first would not be made
    xc, w, bias_ = (None if t is None else t.contiguous() for t in (x, weight, bias))
    acc = D.accumulation(x.dtype)
    y = Tensor._empty(x._shape, x.dtype, x.device)
    mean, var, rstd = (Tensor._empty((c,), acc, x.device) for _ in range(3))
    x.device.backend.norm(
        _as3(y, a, c, b),
        (mean._record(), var._record(), rstd._record()),
        _as3(xc, a, c, b),
        None if w is None else w._record(),
        None if bias_ is None else bias_._record(),
        per,
        eps,
        acc,
    )
    return y, mean, var, rstd, layout


class NativeGroupNorm(Function):
    """group_norm in one node, as PyTorch's (NativeGroupNormBackward0): x (N, C, *) seen as
    (N, groups, rest) is normalized over each sample's group of channels by ``NativeNorm``'s
    kernel, then the per-channel ``weight`` and ``bias`` (or None) apply, ``affine`` being
    their broadcast shape (1, C, 1, ...). The gradient: dx by the norm kernel's backward for
    h = g * weight, dw and db as sums over the batch and the other dims (a channel's sum spans
    groups of every sample); under create_graph the closed form with Tensor ops."""

    @staticmethod
    def forward(ctx, x, weight, bias, groups, affine, eps):
        compute = _params_dtype(x, weight, bias)
        xc = x if compute is None else x.to(compute)
        grouped = _grouped(xc, groups)
        if _mixed(xc, weight, bias):  # weight and bias of two dtypes
            xhat, mean, rstd, layout = normalized(grouped, (2,), eps)[0], None, None, None
        else:
            xhat, mean, _, rstd, layout = _norm_forward(grouped, None, None, (2,), None, eps)
        y = _affine(xhat.reshape(x._shape), weight, bias, affine)
        if compute is not None:
            y = y.to(x.dtype)
        ctx.save_for_backward(x, weight, *((mean, rstd) if layout else (None, None)))
        ctx.geometry = (groups, affine, eps, None if bias is None else bias._shape, layout, compute)
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight, mean, rstd = ctx.saved_tensors
        groups, affine, eps, bias_shape, layout, compute = ctx.geometry
        needs = ctx.needs_input_grad
        x, g, as_given = _in_params_dtype(x, g, compute)
        n = x._shape[0]
        grouped = _grouped(x, groups)
        kernels = layout is not None and not is_grad_enabled() and g.dtype is x.dtype
        xhat = gx = None
        if kernels and weight is not None and needs[1]:
            xhat = (grouped - mean.reshape(n, groups, 1)) * rstd.reshape(n, groups, 1)
        elif not kernels:
            xhat, rstd = normalized(grouped, (2,), eps)[:2]
        if needs[0]:
            h = g if weight is None else g * weight.reshape(affine)
            hg = h.reshape(grouped._shape)
            if kernels:
                gx = _norm_kernel_grads((True,), hg, grouped, None, None, mean, rstd, layout)[0]
            else:
                gx = _closed_form_dx(hg, xhat, rstd, 2)
            gx = gx.reshape(x._shape)
        xhat = None if xhat is None else xhat.reshape(x._shape)
        gw, gb = _affine_grads(g, xhat, weight, bias_shape, affine, needs)
        return as_given(gx), gw, gb, None, None, None


def _grouped(x, groups):
    """x (N, C, *) seen as (N, groups, C // groups * the other dims), empty ones too."""
    return x.reshape(x._shape[0], groups, x._shape[1] // groups * math.prod(x._shape[2:]))


def _as3(t, a, c, b):
    """The record of contiguous ``t`` seen as (a, c, b)."""
    return t._view((a, c, b), (c * b, b, 1), t._offset)._record()


def _norm_kernel_grads(needs, g, x, weight, bias_shape, mean, rstd, layout):
    """``NativeNorm``'s gradients by ``Backend.norm_backward``: dx, and per channel dw and db
    in the same kernel; per position (layer_norm's) dw and db as sums over the rows."""
    a, c, b, per = layout
    # contiguous copies held until the launch (x is the input as it was given: the graph's)
    x, g = x.contiguous(), g.contiguous()
    w = None if weight is None else weight.contiguous()
    dev, dt = x.device, x.dtype
    acc = D.accumulation(dt)
    dx = Tensor._empty(x._shape, dt, dev)
    dw = db = None
    if per == "c":
        dw = None if weight is None else Tensor._empty((c,), dt, dev)
        db = None if bias_shape is None else Tensor._empty((c,), dt, dev)
    x.device.backend.norm_backward(
        _as3(dx, a, c, b),
        None if dw is None else dw._record(),
        None if db is None else db._record(),
        _as3(x, a, c, b),
        _as3(g, a, c, b),
        None if w is None else w._record(),
        mean._record(),
        rstd._record(),
        per,
        acc,
    )
    if per == "b":
        rows = g.reshape(c, b)
        if weight is not None and needs[1]:
            xhat = (x.reshape(c, b) - mean.reshape(c, 1)) * rstd.reshape(c, 1)
            dw = (rows * xhat).sum(0).to(dt)
        if bias_shape is not None and needs[2]:
            db = rows.sum(0)
    gw = None if dw is None or not needs[1] else dw.reshape(weight._shape)
    gb = None if db is None or not needs[2] else db.reshape(bias_shape)
    return (dx if needs[0] else None), gw, gb


class NativeLayerNorm(NativeNorm):
    """``NativeNorm`` over the last dims (PyTorch's node name for layer_norm)."""


class NativeBatchNorm(NativeNorm):
    """``NativeNorm`` over every dim but the channels (PyTorch's node name for batch_norm)."""


# ---- mse_loss --------------------------------------------------------------------------------
class MseLoss(Function):
    """mse_loss in one node, as PyTorch's (MseLossBackward0): ``(input - target) ** 2``
    (broadcast), reduced by ``reduction``. The gradient 2 * (input - target) * g (divided by
    the count for "mean") is written with Tensor ops; under create_graph the difference is
    made again with its graph."""

    @staticmethod
    def forward(ctx, x, y, reduction):
        d = x - y
        squares = d * d
        ctx.save_for_backward(x, y, d)
        ctx.reduction = reduction
        if reduction == "none":
            return squares
        return squares.sum() if reduction == "sum" else squares.mean()

    @staticmethod
    def backward(ctx, g):
        x, y, d = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if is_grad_enabled():  # create_graph: the difference with its graph
            d = x - y
        scale = 2 / max(1, d.numel()) if ctx.reduction == "mean" else 2
        gd = d * (g * scale)
        gx = sum_to(gd, x._shape).to(x.dtype) if needs[0] else None
        gy = sum_to(-gd, y._shape).to(y.dtype) if needs[1] else None
        return gx, gy, None


# ---- nll_loss --------------------------------------------------------------------------------
# targets one work-group of ``Backend.nll`` sums: a batch's targets are one group, whose sums
# are final (a larger target spreads over groups whose sums are added after)
NLL_CHUNK = 1 << 14


def _rows(t, cdim):
    """Contiguous ``t`` seen as (outer, C, inner) around dim ``cdim``."""
    shape = t._shape
    c = shape[cdim] if shape else 1
    inner = math.prod(shape[cdim + 1 :])
    return t._view((math.prod(shape[:cdim]), c, inner), (c * inner, inner, 1), t._offset)


def _flat(t):
    """Contiguous ``t`` seen as one dim."""
    return t._view((t.numel(),), (1,), t._offset)


def nll_loss(logp, target, weight, ignore_index, reduction):
    """``NllLoss`` (``NllLoss2D`` for an input with spatial dims: PyTorch's node names)."""
    loss = NllLoss2D if logp.ndim > 2 else NllLoss
    return loss.apply(logp, target, weight, ignore_index, reduction)


class NllLoss(Function):
    """nll_loss of the log-probabilities ``x`` ((N, C, *d), or (C,) with a 0-d target) at the
    int64 class indices ``target`` ((N, *d)), with ``weight`` (C,) of x's dtype or None, in one
    kernel (``Backend.nll``): each element's term -weight[t] * x[t], or their sum and, for
    ``"mean"``, its division by the sum of the weights that count. Targets equal to
    ``ignore_index`` count nothing; the caller has checked that the others are classes. Its
    gradient is ``NllLossGrad``'s one kernel."""

    @staticmethod
    def forward(ctx, logp, target, weight, ignore_index, reduction):
        cdim = 1 if logp.ndim >= 2 else 0
        x, target = logp.contiguous(), target.contiguous()
        weight = None if weight is None else weight.contiguous()
        acc = D.accumulation(x.dtype)
        args = (target._record(), None if weight is None else weight._record(), ignore_index, acc)
        backend, rows = x.device.backend, _rows(x, cdim)._record()
        total = None
        if reduction == "none":
            out = Tensor._empty(target._shape, x.dtype, x.device)
            if out.numel():
                backend.nll(_flat(out)._record(), rows, *args)
        else:
            groups = max(1, -(-target.numel() // NLL_CHUNK))
            sums = Tensor._empty((groups, 2), acc, x.device)
            backend.nll(sums._record(), rows, *args)
            if groups > 1:
                sums = sums.sum(0)
            out = sums._view((), (), sums._offset)  # the sum of the terms
            if reduction == "mean":
                total = sums._view((), (), sums._offset + 1)  # of the weights that count
                out = out / total
            out = out.to(x.dtype)
        # logp only for the gradient's graph: torch's gradient takes it too, so that with
        # create_graph the gradient requires grad (its gradient for logp is 0)
        ctx.save_for_backward(logp, target, weight, total)
        ctx.geometry = (cdim, ignore_index)
        return out

    @staticmethod
    def backward(ctx, g):
        logp, target, weight, total = ctx.saved_tensors
        if total is not None:
            g = (g / total).to(g.dtype)
        grad = NllLoss2DGrad if logp.ndim > 2 else NllLossGrad
        return grad.apply(g, logp, target, weight, *ctx.geometry), None, None, None, None


class NllLoss2D(NllLoss):
    """``NllLoss`` of an input with spatial dims (PyTorch's node name for them)."""


class NllLossGrad(Function):
    """nll_loss's gradient (x's shape) in one kernel (``Backend.nll_grad``): -weight[t] * g at
    each element's target class where it counts, 0 elsewhere; ``g`` holds one value per
    element or one for all (0-d). Its own gradient is nll_loss's terms of ``gg`` for ``g``,
    zeros for ``logp`` (an input only for the graph, as in torch)."""

    node_name = "NllLossBackwardBackward0"

    @staticmethod
    def forward(ctx, g, logp, target, weight, cdim, ignore_index):
        out = Tensor._empty(logp._shape, g.dtype, g.device)
        if out.numel():
            g = g.contiguous()
            n = target.numel()
            gv = g._view((n,), (1 if g.ndim else 0,), g._offset)
            acc = D.accumulation(g.dtype)
            w = None if weight is None else weight._record()
            g.device.backend.nll_grad(
                _rows(out, cdim)._record(), gv._record(), target._record(), w, ignore_index, acc
            )
        ctx.save_for_backward(target, weight)
        ctx.geometry = (g.ndim, ignore_index)
        return out

    @staticmethod
    def backward(ctx, gg):
        target, weight = ctx.saved_tensors
        g_ndim, ignore_index = ctx.geometry
        gg_g = gg_logp = None
        if ctx.needs_input_grad[0]:
            terms = nll_loss(gg, target, weight, ignore_index, "none")
            gg_g = terms if g_ndim else terms.sum()
        if ctx.needs_input_grad[1]:
            gg_logp = Tensor._full(gg._shape, 0, gg.dtype, gg.device)
        return gg_g, gg_logp, None, None, None, None


class NllLoss2DGrad(NllLossGrad):
    """``NllLossGrad`` of an input with spatial dims (PyTorch's node name for them)."""

    node_name = "NllLoss2DBackwardBackward0"


# ---- embedding -------------------------------------------------------------------------------
def _row_offsets(idx, width, device):

    return idx.unsqueeze(-1) * width + arange(width, device=device)


class EmbeddingFn(Function):
    """weight[idx] for a contiguous (V, D) weight; rows at ``padding_idx`` get no gradient;
    with ``scale_grad_by_freq`` each occurrence's gradient is divided by how often its index
    occurs in ``idx``."""

    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, idx, padding_idx, scale_grad_by_freq=False):
        ctx.save_for_backward(idx)
        ctx.meta = (weight._shape[0], padding_idx, scale_grad_by_freq)
        if weight.dtype.category != 3:
            return gather_rows(weight, 0, idx)
        w = weight if weight.is_contiguous() else weight.contiguous()
        offsets = _row_offsets(idx, w._shape[1], w.device)
        return take(w, offsets + w._offset if w._offset else offsets)

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        num, padding_idx, scale_grad_by_freq = ctx.meta
        if scale_grad_by_freq:
            flat = idx.reshape(-1)
            counts = g.new_zeros((num,)).index_add(0, flat, g.new_ones(flat.shape))
            g = g / counts[idx].unsqueeze(-1)
        if padding_idx is not None:  # (selected, as torch skips them: an inf there stays out)
            g = where((idx != padding_idx).unsqueeze(-1), g, 0.0)
        return EmbeddingGrad.apply(g, idx, num), None, None, None


class EmbeddingGrad(Function):
    """Sums the rows of ``g`` (..., D) into a zero (num, D) tensor at rows ``idx``."""

    node_name = "EmbeddingDenseBackward0"

    @staticmethod
    def forward(ctx, g, idx, num):
        ctx.save_for_backward(idx)
        width = g._shape[-1]
        out = Tensor._empty((num, width), g.dtype, g.device)
        launch(FILL, [0], out.dtype, out.dtype, out=out)
        if g.dtype.category != 3:
            add_rows(out, 0, idx, g)
        elif g.numel():
            put(out, _row_offsets(idx, width, g.device).contiguous(), g, accumulate=True)
        return out

    @staticmethod
    def backward(ctx, gg):
        (idx,) = ctx.saved_tensors
        return EmbeddingFn.apply(gg, idx, None), None, None


def check_index_dtype(idx):
    """PyTorch's RuntimeError for embedding indices that are not int64 or int32."""
    if idx.dtype not in (D.int64, D.int32):
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {idx.type_name()} instead"
        )


# ---- max unpooling ---------------------------------------------------------------------------
class Unpool(Function):
    """Puts every value of ``x`` (N, C, L) at its index along the last dim of a zero (N, C,
    size) tensor. Indices from overlapping pooling windows repeat (always with the same
    value): the repeats are averaged away in the forward, and each still gets the whole
    gradient back, as PyTorch's gather-based backward."""

    node_name = "MaxUnpool2DBackward0"

    @staticmethod
    def forward(ctx, x, idx, size):
        ctx.save_for_backward(idx)
        n, c = x._shape[0], x._shape[1]
        zero = Tensor._empty((n, c, size), x.dtype, x.device)
        launch(FILL, [0], zero.dtype, zero.dtype, out=zero)
        total = zero.scatter_add(2, idx, x)
        count = zero.scatter_add(2, idx, x * 0 + 1)
        return total / count.clamp(min=1)

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        return g.gather(2, idx), None, None


# ---- binary cross entropy ---------------------------------------------------------------------
class BinaryCrossEntropy(Function):
    """``-weight * (t * log(x) + (1 - t) * log(1 - x))`` per element, each log clamped at -100
    (PyTorch's BinaryCrossEntropyBackward0, before the reduction). Its gradient is PyTorch's:
    ``weight * (x - t) / max(x (1 - x), 1e-12)`` for x, finite where a probability is exactly 0
    or 1 (a saturated sigmoid; the chain rule through the clamped logs gave NaN there), and
    ``weight * (log(1 - x) - log(x))`` for t."""

    @staticmethod
    def forward(ctx, x, t, weight):
        log_x, log_1mx = x.log().clamp(min=-100.0), (1 - x).log().clamp(min=-100.0)
        loss = -(t * log_x + (1 - t) * log_1mx)
        ctx.save_for_backward(x, t, weight)
        return loss if weight is None else loss * weight

    @staticmethod
    def backward(ctx, g):
        x, t, weight = ctx.saved_tensors
        if weight is not None:
            g = g * weight
        gx = gt = None
        if ctx.needs_input_grad[0] and is_grad_enabled():
            # under create_graph the same value as (1 - t) / (1 - x) - t / x, whose own
            # gradient does not cancel near 0 and 1 as the quotient's does
            eps = 1e-12
            gx = g * ((1 - t) / (1 - x).clamp(min=eps) - t / x.clamp(min=eps))
        elif ctx.needs_input_grad[0]:
            gx = g * (x - t) / (x * (1 - x)).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:
            gt = g * ((1 - x).log() - x.log())
        return gx, gt, None
