"""Views (never copy) and the copying movement ops: cat, stack, repeat, flip, clone."""

from __future__ import annotations

from .. import dtypes as D
from ..autograd.function import Function
from ..backend.base import COPY
from ..tensor import Tensor, contiguous_strides, wrap_dim
from .core import launch, normalize_dims, sum_to
from .creation import zeros


def infer_shape(shape, numel) -> tuple:
    """Resolves one -1 in ``shape``; errors as PyTorch's for a shape that can't hold numel."""
    shape = tuple(int(n) for n in shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for n in shape:
        if n != -1:
            if n < 0:
                raise RuntimeError(f"invalid shape dimension {n}")
            known *= n
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def view_strides(old_shape, old_stride, new_shape):
    """Strides that let ``new_shape`` view the same elements, or None (PyTorch's computeStride)."""
    if not old_shape or not new_shape or 0 in old_shape:
        return contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_stride[-1]
    tensor_numel = 1
    view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_stride[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_stride[d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


class _Reshaping(Function):
    """A view with new sizes over the same elements: the gradient is reshaped back."""

    @staticmethod
    def forward(ctx, x, shape, stride):
        ctx.shape = x.shape
        return x._view(shape, stride, x._offset)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None, None


View = type("View", (_Reshaping,), {"__module__": __name__})
Squeeze = type("Squeeze", (_Reshaping,), {"__module__": __name__})
Unsqueeze = type("Unsqueeze", (_Reshaping,), {"__module__": __name__})
UnsafeView = type("UnsafeView", (_Reshaping,), {"__module__": __name__})


def view(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    if len(shape) == 1 and not isinstance(shape[0], int) and hasattr(shape[0], "np"):
        return view_as_dtype(x, shape[0])
    shape = infer_shape(shape, x.numel())
    stride = view_strides(x._shape, x._stride, shape)
    if stride is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return View.apply(x, shape, stride)


def view_as_dtype(x, dt):
    dt = D.as_dtype(dt)
    if dt.itemsize != x.dtype.itemsize:
        raise RuntimeError("view(dtype) with a different element size is not supported")
    return Tensor._make(x._storage, x._shape, x._stride, x._offset, dt)


def reshape(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = infer_shape(shape, x.numel())
    stride = view_strides(x._shape, x._stride, shape)
    if stride is not None:
        return View.apply(x, shape, stride)
    c = contiguous(x)
    return UnsafeView.apply(c, shape, contiguous_strides(shape))


def flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return reshape(x, 1)
    s, e = wrap_dim(start_dim, x.ndim), wrap_dim(end_dim, x.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    n = 1
    for d in range(s, e + 1):
        n *= x._shape[d]
    return reshape(x, x._shape[:s] + (n,) + x._shape[e + 1 :])


def unflatten(x, dim, sizes):
    d = wrap_dim(dim, x.ndim)
    sizes = infer_shape(sizes, x._shape[d])
    return view(x, x._shape[:d] + tuple(sizes) + x._shape[d + 1 :])


def squeeze(x, dim=None):
    dims = normalize_dims(dim, x.ndim) if x.ndim else ()
    keep = [i for i in range(x.ndim) if not (i in dims and x._shape[i] == 1)]
    return Squeeze.apply(x, tuple(x._shape[i] for i in keep), tuple(x._stride[i] for i in keep))


def unsqueeze(x, dim):
    d = wrap_dim(dim, x.ndim + 1)
    stride = x._stride[d] * x._shape[d] if d < x.ndim else 1
    return Unsqueeze.apply(
        x, x._shape[:d] + (1,) + x._shape[d:], x._stride[:d] + (stride,) + x._stride[d:]
    )


class Permute(Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return x._view(
            tuple(x._shape[d] for d in dims), tuple(x._stride[d] for d in dims), x._offset
        )

    @staticmethod
    def backward(ctx, g):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return g.permute(inverse), None


def permute(x, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, x.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(x, dims)


class Transpose(Function):
    @staticmethod
    def forward(ctx, x, d0, d1):
        ctx.dims = (d0, d1)
        shape, stride = list(x._shape), list(x._stride)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        stride[d0], stride[d1] = stride[d1], stride[d0]
        return x._view(shape, stride, x._offset)

    @staticmethod
    def backward(ctx, g):
        return g.transpose(*ctx.dims), None, None


def transpose(x, d0, d1):
    if x.ndim == 0:
        return Transpose.apply(x, 0, 0) if d0 in (0, -1) and d1 in (0, -1) else wrap_dim(d0, 0)
    return Transpose.apply(x, wrap_dim(d0, x.ndim), wrap_dim(d1, x.ndim))


def t(x):
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x if x.ndim < 2 else transpose(x, 0, 1)


def movedim(x, source, destination):
    src = [wrap_dim(d, x.ndim) for d in ((source,) if isinstance(source, int) else source)]
    dst = [
        wrap_dim(d, x.ndim)
        for d in ((destination,) if isinstance(destination, int) else destination)
    ]
    order = [d for d in range(x.ndim) if d not in src]
    for s, d in sorted(zip(dst, src)):
        order.insert(s, d)
    return permute(x, order)


class Expand(_Reshaping):
    """A view with stride 0 along the broadcast dims: the gradient is summed back."""

    @staticmethod
    def backward(ctx, g):
        return sum_to(g, ctx.shape), None, None


def expand(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = tuple(int(n) for n in shape)
    if len(shape) < x.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({x.ndim})"
        )
    lead = len(shape) - x.ndim
    out_shape, out_stride = [], []
    for i, n in enumerate(shape):
        if i < lead:
            if n < 0:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            out_shape.append(n)
            out_stride.append(0)
            continue
        have, s = x._shape[i - lead], x._stride[i - lead]
        if n == -1:
            n = have
        if have == n:
            out_shape.append(n)
            out_stride.append(s)
        elif have == 1:
            out_shape.append(n)
            out_stride.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor sizes: "
                f"{list(x._shape)}"
            )
    if tuple(out_shape) == x._shape:
        return x
    return Expand.apply(x, tuple(out_shape), tuple(out_stride))


class Clone(Function):
    @staticmethod
    def forward(ctx, x):
        return launch(COPY, [x], x.dtype, x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g


def clone(x):
    return Clone.apply(x)


def contiguous(x):
    return x if x.is_contiguous() else Clone.apply(x)


class Slice(Function):
    """A strided sub-view (slicing, select, narrow, split): the gradient is scattered back."""

    @staticmethod
    def forward(ctx, x, shape, stride, offset, key):
        ctx.shape, ctx.key = x.shape, key
        return x._view(shape, stride, offset)

    @staticmethod
    def backward(ctx, g):

        z = zeros(ctx.shape, dtype=g.dtype, device=g.device)
        z[ctx.key] = g
        return z, None, None, None, None


Select = type("Select", (Slice,), {"__module__": __name__})


def narrow(x, dim, start, length):
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    start = start + n if start < 0 else start
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise IndexError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    shape = x._shape[:d] + (length,) + x._shape[d + 1 :]
    return Slice.apply(x, shape, x._stride, x._offset + start * x._stride[d], key)


def select(x, dim, index):
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    index %= n
    key = (slice(None),) * d + (index,)
    return Select.apply(
        x,
        x._shape[:d] + x._shape[d + 1 :],
        x._stride[:d] + x._stride[d + 1 :],
        x._offset + index * x._stride[d],
        key,
    )


def split(x, split_size_or_sections, dim=0):
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and n > 0:
            raise RuntimeError(f"split_size must be positive, got {size}")
        sizes = [min(size, n - i) for i in range(0, n, size)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, d, start, s))
        start += s
    return tuple(out)


def chunk(x, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    n = x._shape[wrap_dim(dim, x.ndim)]
    return split(x, max(1, -(-n // chunks)), dim)


def unbind(x, dim=0):
    d = wrap_dim(dim, x.ndim)
    return tuple(select(x, d, i) for i in range(x._shape[d]))


class Cat(Function):
    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.sizes = [x._shape[dim] for x in xs]
        ctx.dim = dim
        shape = list(xs[0]._shape)
        shape[dim] = sum(ctx.sizes)
        dt = D.result_type(*xs)
        out = Tensor._empty(tuple(shape), dt, xs[0].device)
        start = 0
        for x, n in zip(xs, ctx.sizes):
            if n:
                part = out._view(x._shape, out._stride, out._offset + start * out._stride[dim])
                launch(COPY, [x], dt, x.dtype, out=part)
            start += n
        return out

    @staticmethod
    def backward(ctx, g):
        return (None, *split(g, ctx.sizes, ctx.dim))


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    # PyTorch skips 1-D empty tensors, a legacy rule many programs rely on
    xs = [x for x in tensors if not (x.ndim == 1 and x._shape[0] == 0)] or tensors[:1]
    ref = xs[0]
    d = wrap_dim(dim, ref.ndim)
    for i, x in enumerate(xs):
        if x.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}"
            )
        for k in range(ref.ndim):
            if k != d and x._shape[k] != ref._shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref._shape[k]} but got size {x._shape[k]} for tensor number {i} in the list."
                )
        if x.device != ref.device:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{ref.device} and {x.device}!"
            )
    return Cat.apply(d, *xs)


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x._shape != tensors[0]._shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0]._shape)} "
                f"at entry 0 and {list(x._shape)} at entry {i}"
            )
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return cat([unsqueeze(x, d) for x in tensors], d)


class Repeat(Function):
    @staticmethod
    def forward(ctx, x, repeats):
        ctx.shape, ctx.repeats = x.shape, repeats
        lead = len(repeats) - x.ndim
        shape = (1,) * lead + x._shape
        # (r0, s0, r1, s1, ...) expanded from (1, s0, 1, s1, ...) then flattened: one copy
        inter = []
        for r, s in zip(repeats, shape):
            inter += [r, s]
        src = x.reshape([v for s in shape for v in (1, s)]).expand(inter)
        return contiguous(src).reshape([r * s for r, s in zip(repeats, shape)])

    @staticmethod
    def backward(ctx, g):
        lead = len(ctx.repeats) - len(ctx.shape)
        shape = (1,) * lead + tuple(ctx.shape)
        inter = [v for r, s in zip(ctx.repeats, shape) for v in (r, s)]
        g = g.reshape(inter).sum(dim=list(range(0, len(inter), 2)))
        return g.reshape(ctx.shape), None


def repeat(x, *repeats):
    if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)):
        repeats = repeats[0]
    repeats = tuple(int(r) for r in repeats)
    if len(repeats) < x.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor"
        )
    return Repeat.apply(x, repeats)


class Flip(Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        # a view with negative strides, copied at once: tensors never keep negative strides
        offset = x._offset + sum((x._shape[d] - 1) * x._stride[d] for d in dims if x._shape[d])
        stride = tuple(-s if d in dims else s for d, s in enumerate(x._stride))
        return launch(COPY, [x._view(x._shape, stride, offset)], x.dtype, x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g.flip(ctx.dims), None


def flip(x, dims):
    return Flip.apply(x, normalize_dims(dims, x.ndim))


def as_strided(x, size, stride, storage_offset=None):
    return x._view(
        tuple(size), tuple(stride), x._offset if storage_offset is None else storage_offset
    )
