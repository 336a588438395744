"""Views (never copy) and the copying movement ops: cat, stack, repeat, flip, clone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .. import dtypes as D
from ..autograd.function import NO_GRAD_VIEW, Function
from ..backend.base import COPY
from ..tensor import Tensor, contiguous_strides, wrap_dim
from .core import launch, normalize_dims, sum_to
from .creation import zeros
from .inplace import AsStrided


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


def view(x: Tensor, *shape: int | Sequence[int] | D.dtype) -> Tensor:
    """A view of ``x`` with a new shape over the same elements (one size may be -1, inferred),
    like ``Tensor.view``: never copies, so the strides must allow it (``reshape`` copies when
    they don't). ``view(dtype)`` reinterprets the bytes as a dtype of the same size.

    >>> x = clgrad.arange(6)
    >>> x.view(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    >>> x.view(-1, 2).shape
    clgrad.Size([3, 2])
    """
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


def view_as_dtype(x: Tensor, dt: D.dtype) -> Tensor:
    """``x.view(dtype)``: the same bytes read as ``dt`` (of the same element size)."""
    dt = D.as_dtype(dt)
    if dt.itemsize != x.dtype.itemsize:
        raise RuntimeError("view(dtype) with a different element size is not supported")
    return Tensor._make(x._storage, x._shape, x._stride, x._offset, dt)


def reshape(x: Tensor, *shape: int | Sequence[int]) -> Tensor:
    """``x`` with a new shape holding the same elements in the same order (one size may be
    -1), like ``torch.reshape``: a view when the strides allow it, else a copy.

    >>> clgrad.reshape(clgrad.arange(6), (3, 2))
    tensor([[0, 1],
            [2, 3],
            [4, 5]])
    >>> clgrad.arange(6).reshape(2, 3).t().reshape(-1)
    tensor([0, 3, 1, 4, 2, 5])
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = infer_shape(shape, x.numel())
    stride = view_strides(x._shape, x._stride, shape)
    if stride is not None:
        return View.apply(x, shape, stride)
    c = contiguous(x)
    out = UnsafeView.apply(c, shape, contiguous_strides(shape))
    out._base = out._view_meta = None  # a copy, not a view of x (as PyTorch's)
    return out


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """``x`` with the dims ``start_dim`` to ``end_dim`` merged into one, like
    ``torch.flatten`` (a 0-d tensor becomes 1-d).

    >>> x = clgrad.zeros(2, 3, 4)
    >>> clgrad.flatten(x).shape, x.flatten(1).shape
    (clgrad.Size([24]), clgrad.Size([2, 12]))
    """
    s, e = wrap_dim(start_dim, x.ndim), wrap_dim(end_dim, x.ndim)
    if x.ndim == 0:
        return reshape(x, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    n = 1
    for d in range(s, e + 1):
        n *= x._shape[d]
    return reshape(x, x._shape[:s] + (n,) + x._shape[e + 1 :])


def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """A view of ``x`` with dim ``dim`` split into ``sizes`` (one may be -1), like
    ``Tensor.unflatten``.

    >>> clgrad.zeros(2, 12).unflatten(1, (3, -1)).shape
    clgrad.Size([2, 3, 4])
    """
    d = wrap_dim(dim, x.ndim)
    sizes = infer_shape(sizes, x._shape[d])
    return view(x, x._shape[:d] + tuple(sizes) + x._shape[d + 1 :])


def squeeze(x: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """A view of ``x`` without its size-1 dims (only those among ``dim`` when given; a named
    dim of another size is kept), like ``torch.squeeze``.

    >>> x = clgrad.zeros(1, 2, 1)
    >>> clgrad.squeeze(x).shape, x.squeeze(0).shape, x.squeeze(1).shape
    (clgrad.Size([2]), clgrad.Size([2, 1]), clgrad.Size([1, 2, 1]))
    """
    dims = normalize_dims(dim, x.ndim)
    keep = [i for i in range(x.ndim) if not (i in dims and x._shape[i] == 1)]
    return Squeeze.apply(x, tuple(x._shape[i] for i in keep), tuple(x._stride[i] for i in keep))


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """A view of ``x`` with a new size-1 dim at position ``dim`` (negative counts from the end
    of the result), like ``torch.unsqueeze``.

    >>> x = clgrad.tensor([1, 2])
    >>> clgrad.unsqueeze(x, 0)
    tensor([[1, 2]])
    >>> x.unsqueeze(-1).shape
    clgrad.Size([2, 1])
    """
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


def permute(x: Tensor, *dims: int | Sequence[int]) -> Tensor:
    """A view of ``x`` with its dims reordered: dim ``i`` of the result is dim ``dims[i]`` of
    ``x``, like ``torch.permute``.

    >>> clgrad.permute(clgrad.zeros(2, 3, 4), (2, 0, 1)).shape
    clgrad.Size([4, 2, 3])
    >>> clgrad.zeros(2, 3, 4).permute(1, 2, 0).shape
    clgrad.Size([3, 4, 2])
    """
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
        if x.ndim:  # a 0-d tensor's only dims, 0 and -1, swap with themselves
            shape[d0], shape[d1] = shape[d1], shape[d0]
            stride[d0], stride[d1] = stride[d1], stride[d0]
        return x._view(shape, stride, x._offset)

    @staticmethod
    def backward(ctx, g):
        return g.transpose(*ctx.dims), None, None


def transpose(x: Tensor, d0: int, d1: int) -> Tensor:
    """A view of ``x`` with dims ``d0`` and ``d1`` swapped, like ``torch.transpose``.

    >>> x = clgrad.tensor([[1, 2, 3], [4, 5, 6]])
    >>> clgrad.transpose(x, 0, 1)
    tensor([[1, 4],
            [2, 5],
            [3, 6]])
    >>> clgrad.zeros(2, 3, 4).transpose(0, -1).shape
    clgrad.Size([4, 3, 2])
    """
    return Transpose.apply(x, wrap_dim(d0, x.ndim), wrap_dim(d1, x.ndim))


def t(x: Tensor) -> Tensor:
    """The transpose of a 2-d tensor as a view (0-d and 1-d tensors come back as they are),
    like ``torch.t``.

    >>> clgrad.t(clgrad.tensor([[1, 2], [3, 4]]))
    tensor([[1, 3],
            [2, 4]])
    """
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x if x.ndim < 2 else transpose(x, 0, 1)


def movedim(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """A view of ``x`` with the dims ``source`` moved to the positions ``destination``, the
    others keeping their order, like ``torch.movedim``.

    >>> x = clgrad.zeros(2, 3, 4)
    >>> clgrad.movedim(x, 0, -1).shape, x.movedim((0, 1), (2, 0)).shape
    (clgrad.Size([3, 4, 2]), clgrad.Size([3, 4, 2]))
    """
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
            f"contain the same number of dims as destination ({list(destination)} dims)"
        )
    src = [wrap_dim(d, x.ndim) for d in source]
    dst = [wrap_dim(d, x.ndim) for d in destination]
    order = [d for d in range(x.ndim) if d not in src]
    for s, d in sorted(zip(dst, src)):
        order.insert(s, d)
    return permute(x, order)


class Expand(_Reshaping):
    """A view with stride 0 along the broadcast dims: the gradient is summed back."""

    @staticmethod
    def backward(ctx, g):
        return sum_to(g, ctx.shape), None, None


def expand(x: Tensor, *shape: int | Sequence[int]) -> Tensor:
    """A view of ``x`` broadcast to ``shape`` without copying (size-1 dims repeat with stride
    0, -1 keeps a size, new dims go in front), like ``Tensor.expand`` and
    ``torch.broadcast_to``.

    >>> clgrad.tensor([[1], [2]]).expand(2, 3)
    tensor([[1, 1, 1],
            [2, 2, 2]])
    >>> clgrad.tensor([1, 2]).expand(3, -1).shape
    clgrad.Size([3, 2])
    """
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


def clone(x: Tensor) -> Tensor:
    """A copy of ``x`` in new memory, recorded in the graph (gradients flow back to ``x``),
    like ``torch.clone``.

    >>> x = clgrad.tensor([1.0, 2.0])
    >>> y = clgrad.clone(x)
    >>> y[0] = 9.0
    >>> x, y
    (tensor([1., 2.]), tensor([9., 2.]))
    """
    return Clone.apply(x)


def contiguous(x: Tensor) -> Tensor:
    """``x`` itself when its elements are laid out in row-major order, else a row-major copy,
    like ``Tensor.contiguous``.

    >>> x = clgrad.zeros(2, 3).t()
    >>> x.is_contiguous(), x.contiguous().is_contiguous()
    (False, True)
    """
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


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A view of ``length`` elements of ``x`` along ``dim`` from ``start``, like
    ``torch.narrow``.

    >>> x = clgrad.arange(9).reshape(3, 3)
    >>> clgrad.narrow(x, 0, 1, 2)
    tensor([[3, 4, 5],
            [6, 7, 8]])
    >>> x.narrow(1, 0, 1).shape
    clgrad.Size([3, 1])
    """
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    start = start + n if start < 0 else start
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    shape = x._shape[:d] + (length,) + x._shape[d + 1 :]
    empty = any(s == 0 for s in shape)  # an empty view stays at its base's offset
    offset = x._offset + (0 if empty else start * x._stride[d])
    return Slice.apply(x, shape, x._stride, offset, key)


def select(x: Tensor, dim: int, index: int) -> Tensor:
    """A view of ``x`` at ``index`` along ``dim``, which drops that dim (``x[:, index]`` for
    ``dim=1``), like ``torch.select``.

    >>> x = clgrad.tensor([[1, 2, 3], [4, 5, 6]])
    >>> x.select(1, 0), x.select(0, -1)
    (tensor([1, 4]), tensor([4, 5, 6]))
    """
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


def split(
    x: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """Views of ``x`` split along ``dim``: into pieces of ``split_size`` (the last may be
    shorter), or of the given sizes, like ``torch.split``.

    >>> x = clgrad.arange(6)
    >>> clgrad.split(x, 4)
    (tensor([0, 1, 2, 3]), tensor([4, 5]))
    >>> x.split([1, 5])
    (tensor([0]), tensor([1, 2, 3, 4, 5]))
    """
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0 or (size == 0 and n > 0):
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={size}"
            )
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
    _multi_output(out, "Split" if isinstance(split_size_or_sections, int) else "SplitWithSizes")
    return tuple(out)


def _multi_output(views, name):
    """Marks the outputs of an op that returns several views: PyTorch forbids writing into
    them in place while recording (``Output i of Split is a view and is being modified
    inplace...``)."""
    for i, v in enumerate(views):
        if v._view_meta is not NO_GRAD_VIEW:
            v._view_meta = ("multi", name, i)
    return views


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of ``x`` split along ``dim`` into at most ``chunks`` pieces of equal size (the
    last may be shorter), like ``torch.chunk``.

    >>> clgrad.chunk(clgrad.arange(5), 3)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    n = x._shape[wrap_dim(dim, x.ndim)]
    return _multi_output(split(x, max(1, -(-n // chunks)), dim), "Split")


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Every slice of ``x`` along ``dim``, as views without that dim, like ``torch.unbind``.

    >>> clgrad.unbind(clgrad.tensor([[1, 2], [3, 4]]), dim=1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    d = wrap_dim(dim, x.ndim)
    return _multi_output(tuple(select(x, d, i) for i in range(x._shape[d])), "Unbind")


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


def _tensor_list(name, tensors) -> list:
    """``tensors`` as a list, TypeError (as PyTorch's argument parser) unless a sequence of
    tensors."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(x).__name__}"
            )
    return list(tensors)


def cat(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    """The tensors joined along the existing dim ``dim`` (their other sizes must match; 1-d
    empty tensors are skipped), in their promoted dtype, like ``torch.cat``.

    >>> clgrad.cat([clgrad.zeros(1, 2), clgrad.ones(2, 2)])
    tensor([[0., 0.],
            [1., 1.],
            [1., 1.]])
    >>> clgrad.cat([clgrad.tensor([[1]]), clgrad.tensor([[2.5]])], dim=1)
    tensor([[1.0000, 2.5000]])
    """
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
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


def stack(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    """Tensors of one shape joined along a new dim ``dim``, like ``torch.stack``.

    >>> a, b = clgrad.tensor([1, 2]), clgrad.tensor([3, 4])
    >>> clgrad.stack([a, b])
    tensor([[1, 2],
            [3, 4]])
    >>> clgrad.stack([a, b], dim=1).shape
    clgrad.Size([2, 2])
    """
    tensors = _tensor_list("stack", tensors)
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


def repeat(x: Tensor, *repeats: int | Sequence[int]) -> Tensor:
    """A copy of ``x`` tiled ``repeats[i]`` times along each dim (extra leading counts add
    dims), like ``Tensor.repeat``.

    >>> clgrad.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)):
        repeats = repeats[0]
    repeats = tuple(int(r) for r in repeats)
    if len(repeats) < x.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor"
        )
    shape = (1,) * (len(repeats) - x.ndim) + x._shape
    sizes = [r * n for r, n in zip(repeats, shape)]
    if any(n < 0 for n in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {sizes}")
    return Repeat.apply(x, repeats)


class Flip(Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        if not x.numel():  # nothing to reverse; the view below would start past the storage
            dims = ()
        # a view with negative strides, copied at once: tensors never keep negative strides
        offset = x._offset + sum((x._shape[d] - 1) * x._stride[d] for d in dims if x._shape[d])
        stride = tuple(-s if d in dims else s for d, s in enumerate(x._stride))
        return launch(COPY, [x._view(x._shape, stride, offset)], x.dtype, x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g.flip(ctx.dims), None


def flip(x: Tensor, dims: int | Sequence[int]) -> Tensor:
    """A copy of ``x`` with the order of the elements reversed along ``dims``, like
    ``torch.flip``.

    >>> clgrad.flip(clgrad.tensor([[1, 2], [3, 4]]), [1])
    tensor([[2, 1],
            [4, 3]])
    """
    if not isinstance(dims, int) and len(dims) == 0:  # flip(()) reverses nothing
        return Flip.apply(x, ())
    return Flip.apply(x, normalize_dims(dims, x.ndim))


def as_strided(
    x: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    """A view of ``x``'s storage with the given size, strides and storage offset (``x``'s own
    offset when left out), like ``torch.as_strided``; differentiable (the gradient of
    elements that share a location adds up there).

    >>> x = clgrad.arange(6)
    >>> x.as_strided((2, 2), (1, 2))
    tensor([[0, 2],
            [1, 3]])
    >>> x.as_strided((2,), (3,), 1)
    tensor([1, 4])
    """
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    offset = x._offset if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in size):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(size)} and "
            f"strides={list(stride)}"
        )
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    x._view(size, stride, offset)  # raises unless every element is in x's storage
    return AsStrided.apply(x, size, stride, offset)
