"""Views (never copy) and the copying movement ops: cat, stack, repeat, flip, clone."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from .. import dtypes as D
from ..autograd.function import NO_GRAD_VIEW, Function
from ..backend.base import COPY
from ..tensor import Tensor, contiguous_strides, index_arg, int_list_arg, wrap_dim
from .core import broadcast_shapes, launch, normalize_dims, sum_to
from .creation import arange, tensor, zeros
from .elementwise import where
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
# squeeze's overloads with dims, each its node in PyTorch: squeeze(int), squeeze(tuple)
SqueezeDim = type(
    "SqueezeDim", (_Reshaping,), {"__module__": __name__, "node_name": "SqueezeBackward1"}
)
SqueezeDims = type(
    "SqueezeDims", (_Reshaping,), {"__module__": __name__, "node_name": "SqueezeBackward2"}
)
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
    out = Tensor._make(x._storage, x._shape, x._stride, x._offset, dt)
    out._counter = x._counter  # a view: the same version counter
    return out


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
    sizes = tuple(int(n) for n in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = wrap_dim(dim, x.ndim)
    # ATen's: the sizes' product checked, any other error passed on as "unexpected"
    if x.ndim == 0:
        raise RuntimeError(
            "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no "
            "dimensions"
        )
    n = x._shape[d]
    try:
        sizes = infer_shape(sizes, n)
    except RuntimeError as e:
        if n and min(sizes) >= -1 and sizes.count(-1) <= 1:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                f"{d} ({n}) in the input tensor"
            ) from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
    return view(x, x._shape[:d] + tuple(sizes) + x._shape[d + 1 :])


def squeeze(x: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """A view of ``x`` without its size-1 dims (only those among ``dim`` when given; a named
    dim of another size is kept), like ``torch.squeeze``.

    >>> x = clgrad.zeros(1, 2, 1)
    >>> clgrad.squeeze(x).shape, x.squeeze(0).shape, x.squeeze(1).shape
    (clgrad.Size([2]), clgrad.Size([2, 1]), clgrad.Size([1, 2, 1]))
    """
    dims = normalize_dims(dim, x.ndim, empty_is_all=False)  # (squeeze(()) squeezes nothing)
    keep = [i for i in range(x.ndim) if not (i in dims and x._shape[i] == 1)]
    node = Squeeze if dim is None else SqueezeDims if isinstance(dim, (tuple, list)) else SqueezeDim
    return node.apply(x, tuple(x._shape[i] for i in keep), tuple(x._stride[i] for i in keep))


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


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view of ``x`` with dims ``dim0`` and ``dim1`` swapped, like ``torch.transpose``.

    >>> x = clgrad.tensor([[1, 2, 3], [4, 5, 6]])
    >>> clgrad.transpose(x, 0, 1)
    tensor([[1, 4],
            [2, 5],
            [3, 6]])
    >>> clgrad.zeros(2, 3, 4).transpose(0, -1).shape
    clgrad.Size([4, 3, 2])
    """
    return Transpose.apply(x, wrap_dim(dim0, x.ndim), wrap_dim(dim1, x.ndim))


class T(Transpose):
    """``t()``: the Transpose of dims 0 and 1 (0 and 0 below two dims), PyTorch's TBackward0."""


def t(x: Tensor) -> Tensor:
    """The transpose of a 2-d tensor as a view (of a 0-d or 1-d tensor: a view of it as it
    is), like ``torch.t``.

    >>> clgrad.t(clgrad.tensor([[1, 2], [3, 4]]))
    tensor([[1, 3],
            [2, 4]])
    """
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return T.apply(x, 0, 1 if x.ndim == 2 else 0)


def movedim(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """A view of ``x`` with the dims ``source`` moved to the positions ``destination``, the
    others keeping their order, like ``torch.movedim``.

    >>> x = clgrad.zeros(2, 3, 4)
    >>> clgrad.movedim(x, 0, -1).shape, x.movedim((0, 1), (2, 0)).shape
    (clgrad.Size([3, 4, 2]), clgrad.Size([3, 4, 2]))
    """
    source, destination = int_list_arg(source), int_list_arg(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
            f"contain the same number of dims as destination ({list(destination)} dims)"
        )
    src = [wrap_dim(d, x.ndim) for d in source]
    dst = [wrap_dim(d, x.ndim) for d in destination]
    if not x.ndim:  # (its dim 0 or -1, checked above, is no dim to move)
        return permute(x, ())
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
    return Expand.apply(x, tuple(out_shape), tuple(out_stride))  # a new view, as PyTorch's


class Clone(Function):
    @staticmethod
    def forward(ctx, x):
        return launch(COPY, [x], x.dtype, x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g


def clone(x: Tensor, *, memory_format=None) -> Tensor:
    """A copy of ``x`` in new memory, recorded in the graph (gradients flow back to ``x``),
    like ``torch.clone``. Every ``memory_format`` gives a row-major copy (clgrad's kernels
    read any strides, so a channels-last layout would buy nothing).

    >>> x = clgrad.tensor([1.0, 2.0])
    >>> y = clgrad.clone(x)
    >>> y[0] = 9.0
    >>> x, y
    (tensor([1., 2.]), tensor([9., 2.]))
    """
    return Clone.apply(x)


def contiguous(x: Tensor, memory_format=None) -> Tensor:
    """``x`` itself when its elements are laid out in row-major order, else a row-major copy,
    like ``Tensor.contiguous`` (``memory_format`` is accepted; channels-last is kept
    row-major, as ``clone`` explains).

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

    @staticmethod
    def accumulate_into(ctx, total, g):
        """The input's gradient with ``g`` added where the view lies, for the backward
        engine: into ``total`` (a buffer of the engine's own, written in place) or into new
        zeros; many views of one input (the steps of a sequence, the chunks of a product)
        then fill one buffer instead of each making zeros of the input's shape."""
        if total is None:
            total = zeros(ctx.shape, dtype=g.dtype, device=g.device)
        total[ctx.key].add_(g)
        return total


Select = type("Select", (Slice,), {"__module__": __name__})
# the views of ops that return several, each their node in PyTorch (one per piece here, as
# the slices they are: the same gradients)
Split = type("Split", (Slice,), {"__module__": __name__})
SplitWithSizes = type("SplitWithSizes", (Slice,), {"__module__": __name__})
Unbind = type("Unbind", (Slice,), {"__module__": __name__})


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
    if isinstance(start, Tensor) and (start.ndim or start.is_floating_point()):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return _narrow(x, dim, start, length, Slice)


def _narrow(x, dim, start, length, node):
    """``narrow``, recorded in ``node`` (Slice's, or a split's)."""
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    start, length = index_arg(start), index_arg(length)
    start = start + n if start < 0 else start
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    shape = x._shape[:d] + (length,) + x._shape[d + 1 :]
    empty = any(s == 0 for s in shape)  # an empty view stays at its base's offset
    offset = x._offset + (0 if empty else start * x._stride[d])
    return node.apply(x, shape, x._stride, offset, key)


def select(x: Tensor, dim: int, index: int) -> Tensor:
    """A view of ``x`` at ``index`` along ``dim``, which drops that dim (``x[:, index]`` for
    ``dim=1``), like ``torch.select``.

    >>> x = clgrad.tensor([[1, 2, 3], [4, 5, 6]])
    >>> x.select(1, 0), x.select(0, -1)
    (tensor([1, 4]), tensor([4, 5, 6]))
    """
    return _select(x, dim, index, Select)


def _select(x, dim, index, node):
    """``select``, recorded in ``node`` (Select's, or unbind's)."""
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d]
    index = index_arg(index)
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    index %= n
    key = (slice(None),) * d + (index,)
    return node.apply(
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
    if not isinstance(split_size_or_sections, (list, tuple)) and (
        not isinstance(split_size_or_sections, Tensor) or not split_size_or_sections.ndim
    ):  # one size (an int, a 0-d integer tensor), else the sizes of the pieces
        split_size_or_sections = index_arg(split_size_or_sections)
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0 or (size == 0 and n > 0):
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={size}"
            )
        sizes = [min(size, n - i) for i in range(0, n, size)] if n else [0]
    else:
        sizes = list(int_list_arg(split_size_or_sections))
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
    node = Split if isinstance(split_size_or_sections, int) else SplitWithSizes
    out, start = [], 0
    for s in sizes:
        out.append(_narrow(x, d, start, s, node))
        start += s
    _multi_output(out, node.__name__)
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
    chunks = index_arg(chunks)
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    n = x._shape[wrap_dim(dim, x.ndim)]
    if n == 0:  # as ATen: `chunks` empty pieces, not split's one
        return _multi_output(split(x, [0] * chunks, dim), "SplitWithSizes")
    return _multi_output(split(x, -(-n // chunks), dim), "Split")


def unsafe_split(
    x: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """``split`` whose pieces autograd does not track as views of ``x``, as
    ``torch.unsafe_split``: writing into one in place is not refused, and the history of ``x``
    and the other pieces does not see it (use it where nothing writes into the pieces).

    >>> a, b = clgrad.unsafe_split(clgrad.arange(4.0), 2)
    >>> a._base is None, b
    (True, tensor([2., 3.]))
    """
    pieces = split(x, split_size_or_sections, dim)
    for piece in pieces:
        piece._base = piece._view_meta = None
    return pieces


def unsafe_chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk`` whose pieces autograd does not track as views, as ``torch.unsafe_chunk``
    (see ``unsafe_split``).

    >>> clgrad.unsafe_chunk(clgrad.arange(5), 3)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    pieces = chunk(x, chunks, dim)
    for piece in pieces:
        piece._base = piece._view_meta = None
    return pieces


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Every slice of ``x`` along ``dim``, as views without that dim, like ``torch.unbind``.

    >>> clgrad.unbind(clgrad.tensor([[1, 2], [3, 4]]), dim=1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    d = wrap_dim(dim, x.ndim)
    return _multi_output(tuple(_select(x, d, i, Unbind) for i in range(x._shape[d])), "Unbind")


class Cat(Function):
    @staticmethod
    def forward(ctx, dim, skipped, *xs):
        # ``skipped``: which inputs are legacy 1-d empties, inputs (they promote the dtype and
        # get an empty gradient, as in PyTorch) that take no place in the result
        ctx.sizes = [0 if s else x._shape[dim] for s, x in zip(skipped, xs)]
        ctx.dim, ctx.skipped = dim, skipped
        ref = next(x for s, x in zip(skipped, xs) if not s)
        shape = list(ref._shape)
        shape[dim] = sum(ctx.sizes)
        dt = D.result_type(*xs)
        out = Tensor._empty(tuple(shape), dt, ref.device)
        start = 0
        for x, n in zip(xs, ctx.sizes):
            if n:
                part = out._view(x._shape, out._stride, out._offset + start * out._stride[dim])
                launch(COPY, [x], dt, x.dtype, out=part)
            start += n
        return out

    @staticmethod
    def backward(ctx, g):
        kept = iter(split(g, [n for s, n in zip(ctx.skipped, ctx.sizes) if not s], ctx.dim))
        grads = [Tensor._empty((0,), g.dtype, g.device) if s else next(kept) for s in ctx.skipped]
        return (None, None, *grads)


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
    # PyTorch skips 1-D empty tensors, a legacy rule many programs rely on (unless all are)
    skipped = tuple(x.ndim == 1 and x._shape[0] == 0 for x in tensors)
    if all(skipped):
        skipped = (False,) * len(tensors)
    xs = [x for s, x in zip(skipped, tensors) if not s]
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
    return Cat.apply(d, skipped, *tensors)


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
    return Stack.apply(d, *tensors)


class Stack(Function):
    """``stack``'s node: PyTorch's StackBackward0, an edge per input (not per unsqueezed
    view of it); each gradient is the result's slice at its place."""

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim = dim
        return cat([unsqueeze(x, dim) for x in xs], dim)

    @staticmethod
    def backward(ctx, g):
        return (None, *unbind(g, ctx.dim))


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


def flip(x: Tensor, *args: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
    """A copy of ``x`` with the order of the elements reversed along ``dims`` (a sequence, or
    the method's dims one by one), like ``torch.flip``.

    >>> clgrad.flip(clgrad.tensor([[1, 2], [3, 4]]), [1])
    tensor([[2, 1],
            [4, 3]])
    >>> clgrad.tensor([[1, 2], [3, 4]]).flip(0, 1)
    tensor([[4, 3],
            [2, 1]])
    """
    if dims is None:
        if not args:
            raise TypeError('flip() missing 1 required positional arguments: "dims"')
        dims = args[0] if len(args) == 1 else args
    if isinstance(dims, (tuple, list)) and len(dims) == 0:  # flip(()) reverses nothing
        return Flip.apply(x, ())
    dims = normalize_dims(dims, x.ndim)  # (checked: a 0-d tensor takes dim 0 or -1 ...)
    return Flip.apply(x, dims if x.ndim else ())  # (... and has nothing to reverse)


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


# ---- matrix shapes: triangles and diagonals ------------------------------------------------------
def _triangle(name, x, diagonal, lower):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = x._shape[-2], x._shape[-1]
    r = arange(rows, device=x.device).reshape(rows, 1)
    c = arange(cols, device=x.device)
    keep = (c - r <= diagonal) if lower else (c - r >= diagonal)
    # a 0-d zero of x's own dtype: where keeps x's dtype (bool included) and zeroes NaN too
    if x.dtype.category == 3:  # (a complex where takes the number)
        return where(keep, x, 0.0)
    return where(keep, x, Tensor._full((), 0, x.dtype, x.device))


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims of ``input`` (on and below the ``diagonal``-th
    diagonal), the rest zero, like ``torch.tril``.

    >>> clgrad.tril(clgrad.ones(3, 3, dtype=clgrad.int64))
    tensor([[1, 0, 0],
            [1, 1, 0],
            [1, 1, 1]])
    """
    return _triangle("tril", input, diagonal, True)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims of ``input`` (on and above the ``diagonal``-th
    diagonal), the rest zero, like ``torch.triu``.

    >>> clgrad.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]])
    """
    return _triangle("triu", input, diagonal, False)


def _diagonal_geometry(x, offset, d1, d2):
    offset = index_arg(offset)
    n1, n2 = x._shape[d1], x._shape[d2]
    n = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = 0
    if n:
        start = offset * x._stride[d2] if offset >= 0 else -offset * x._stride[d1]
    keep = [d for d in range(x.ndim) if d not in (d1, d2)]
    shape = tuple(x._shape[d] for d in keep) + (n,)
    stride = tuple(x._stride[d] for d in keep) + (x._stride[d1] + x._stride[d2],)
    return shape, stride, x._offset + start


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the ``offset``-th diagonal of the ``dim1`` x ``dim2`` planes of ``input``,
    appended as the last dim, like ``torch.diagonal``.

    >>> x = clgrad.arange(9).reshape(3, 3)
    >>> clgrad.diagonal(x), x.diagonal(1), x.diagonal(-1)
    (tensor([0, 4, 8]), tensor([1, 5]), tensor([3, 7]))
    """
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    # a view of the storage at a new geometry: AsStrided's gradient lays it back
    return AsStrided.apply(input, *_diagonal_geometry(input, offset, d1, d2))


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose ``dim1`` x ``dim2`` planes hold the last dim of ``input`` on their
    ``offset``-th diagonal, zeros elsewhere, like ``torch.diag_embed``.

    >>> clgrad.diag_embed(clgrad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    nd = input.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = index_arg(offset)
    n = (input._shape[-1] if input.ndim else 1) + abs(offset)
    rest = list(input._shape[:-1])
    shape = []
    for d in range(nd):
        shape.append(n if d in (d1, d2) else rest.pop(0))
    out = zeros(shape, dtype=input.dtype, device=input.device)
    out.diagonal(offset, d1, d2).copy_(input)  # recorded when input requires grad
    return out


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-d ``input`` as the ``diagonal``-th diagonal of a square matrix, or a copy of the
    ``diagonal``-th diagonal of a 2-d ``input``, like ``torch.diag``.

    >>> clgrad.diag(clgrad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    >>> clgrad.diag(clgrad.arange(4).reshape(2, 2))
    tensor([0, 3])
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return clone(AsStrided.apply(input, *_diagonal_geometry(input, diagonal, 0, 1)))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened ``input`` as the ``offset``-th diagonal of a square matrix, like
    ``torch.diagflat``.

    >>> clgrad.diagflat(clgrad.tensor([[1, 2]]))
    tensor([[1, 0],
            [0, 2]])
    """
    return diag_embed(reshape(input, -1), offset, 0, 1)


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers summed in int64), like
    ``torch.trace``.

    >>> clgrad.trace(clgrad.arange(9).reshape(3, 3))
    tensor(12)
    """
    if input.dtype is D.bool_:  # (before the rank's check, as ATen's)
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()


# ---- reordering --------------------------------------------------------------------------------
def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None):
    """``input`` with its elements shifted ``shifts`` places along ``dims`` (wrapping around;
    without ``dims`` over the flattened tensor, shape kept), like ``torch.roll``.

    >>> clgrad.roll(clgrad.arange(5), 2)
    tensor([3, 4, 0, 1, 2])
    >>> clgrad.arange(4).reshape(2, 2).roll(1, 1)
    tensor([[1, 0],
            [3, 2]])
    """
    shifts = int_list_arg(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(
                f"roll: shifts and dims must have the same size, got {len(shifts)} and 0"
            )
        return reshape(roll(reshape(input, -1), shifts, 0), input._shape)
    dims = int_list_arg(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    out = input
    for shift, dim in zip(shifts, dims):
        if not input.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, input.ndim)
        n = out._shape[d] if out.ndim else 1
        k = shift % n if n else 0
        if out.ndim and k:
            out = cat([narrow(out, d, n - k, k), narrow(out, d, 0, n - k)], d)
    return out if out is not input else clone(input)


def fliplr(input: Tensor) -> Tensor:
    """``input`` with the order of its columns (dim 1) reversed, like ``torch.fliplr``.

    >>> clgrad.fliplr(clgrad.tensor([[1, 2], [3, 4]]))
    tensor([[2, 1],
            [4, 3]])
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input: Tensor) -> Tensor:
    """``input`` with the order of its rows (dim 0) reversed, like ``torch.flipud``.

    >>> clgrad.flipud(clgrad.tensor([[1, 2], [3, 4]]))
    tensor([[3, 4],
            [1, 2]])
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (from the first
    towards the second), like ``torch.rot90``.

    >>> clgrad.rot90(clgrad.tensor([[1, 2], [3, 4]]))
    tensor([[2, 4],
            [1, 3]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k %= 4
    if k == 1:
        return transpose(flip(input, [d1]), d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return transpose(flip(input, [d0]), d0, d1)
    return clone(input)


def repeat_interleave(
    input: Tensor,
    repeats: int | Tensor | None = None,
    dim: int | None = None,
    *,
    output_size: int | None = None,
) -> Tensor:
    """Each element (slice along ``dim``; of the flattened tensor without ``dim``) repeated
    ``repeats`` times in place, ``repeats`` an int or one count per element, like
    ``torch.repeat_interleave``; ``repeat_interleave(counts)`` alone repeats each index.

    >>> clgrad.repeat_interleave(clgrad.tensor([1, 2]), 2)
    tensor([1, 1, 2, 2])
    >>> clgrad.tensor([[1, 2], [3, 4]]).repeat_interleave(clgrad.tensor([1, 2]), dim=0)
    tensor([[1, 2],
            [3, 4],
            [3, 4]])
    """
    if repeats is None:  # the counts alone: the indices they repeat
        counts = input
        if counts.ndim > 1 or counts.dtype not in (D.int64, D.int32):
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(counts.numel(), device=counts.device), counts, 0)
    x = input
    if dim is None:
        x, d = reshape(input, -1), 0
    else:
        d = wrap_dim(dim, input.ndim)
        if x.ndim == 0:  # PyTorch's kernel looks past a 0-d input's one dim
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
            )
    n = x._shape[d]
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        inter = list(x._shape)
        inter.insert(d + 1, repeats)
        shape = list(x._shape)
        shape[d] = n * repeats
        return reshape(expand(unsqueeze(x, d + 1), inter), shape)
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (D.int64, D.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    counts = repeats.tolist()
    if len(counts) != n:
        raise RuntimeError("repeats must have the same size as input along dim")
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    idx = [i for i, c in enumerate(counts) for _ in range(c)]
    index = tensor(idx, dtype=D.int64, device=x.device)
    return x.index_select(d, index)


def meshgrid(*tensors: Tensor, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 1-d (or 0-d) tensors, as expanded views: ``indexing='ij'`` (the
    default) gives each the shape ``(len(t0), len(t1), ...)``, ``'xy'`` swaps the first two,
    like ``torch.meshgrid``.

    >>> x, y = clgrad.meshgrid(clgrad.tensor([1, 2]), clgrad.tensor([3, 4, 5]), indexing="ij")
    >>> x.shape, y[0]
    (clgrad.Size([2, 3]), tensor([3, 4, 5]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}"
            )
    ts = [reshape(t, -1) for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._shape[0] for t in ts)
    out = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = shape[i]
        out.append(expand(reshape(t, view_shape), shape))
    if swap:  # the grids of the swapped inputs already have the 'xy' shape
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every window of ``size`` elements along ``dimension``, ``step`` apart, the
    window as a new last dim, like ``Tensor.unfold``.

    >>> clgrad.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    d = wrap_dim(dimension, input.ndim)
    n = input._shape[d] if input.ndim else 1
    size, step = index_arg(size), index_arg(step)
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if input.ndim == 0:
        return AsStrided.apply(input, (size,), (1,), input._offset)
    shape = list(input._shape)
    stride = list(input._stride)
    shape[d] = (n - size) // step + 1
    stride[d] = input._stride[d] * step
    return AsStrided.apply(
        input, tuple(shape) + (size,), tuple(stride) + (input._stride[d],), input._offset
    )


# ---- NumPy-style stacking, splitting and shaping (compositions of the views and cat above) ----
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose`` under NumPy's name, like ``torch.swapaxes`` (also ``swapdims``).

    >>> clgrad.swapaxes(clgrad.zeros(2, 3, 4), 0, 2).shape
    clgrad.Size([4, 3, 2])
    """
    return transpose(input, axis0, axis1)


def _atleast(nd, tensors):
    def one(x):
        if x.ndim >= nd:
            return x
        if x.ndim == 0:
            return reshape(x, (1,) * nd)
        if nd == 2 or x.ndim == 2:  # a vector becomes a row; a matrix gets a trailing dim
            return unsqueeze(x, 0 if x.ndim == 1 else -1)
        return reshape(x, (1, x._shape[0], 1))  # NumPy's (n,) -> (1, n, 1)

    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        return tuple(one(x) for x in tensors[0])
    return one(tensors[0]) if len(tensors) == 1 else tuple(one(x) for x in tensors)


def atleast_1d(*tensors) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least one dim (a scalar becomes shape ``(1,)``), like
    ``torch.atleast_1d``.

    >>> clgrad.atleast_1d(clgrad.tensor(5.0))
    tensor([5.])
    """
    return _atleast(1, tensors)


def atleast_2d(*tensors) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least two dims (a vector becomes a row), like ``torch.atleast_2d``.

    >>> clgrad.atleast_2d(clgrad.tensor([1, 2])).shape
    clgrad.Size([1, 2])
    """
    return _atleast(2, tensors)


def atleast_3d(*tensors) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least three dims (NumPy's rule: ``(n,)`` -> ``(1, n, 1)``,
    ``(m, n)`` -> ``(m, n, 1)``), like ``torch.atleast_3d``.

    >>> clgrad.atleast_3d(clgrad.tensor([1, 2])).shape
    clgrad.Size([1, 2, 1])
    """
    return _atleast(3, tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Tensors joined column-wise (along dim 0 for vectors, else dim 1), like
    ``torch.hstack``.

    >>> clgrad.hstack([clgrad.tensor([1, 2]), clgrad.tensor([3])])
    tensor([1, 2, 3])
    """
    tensors = atleast_1d(*_tensor_list("hstack", tensors))
    tensors = (tensors,) if isinstance(tensors, Tensor) else tensors
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Tensors joined row-wise (vectors become rows), like ``torch.vstack`` (``row_stack``).

    >>> clgrad.vstack([clgrad.tensor([1, 2]), clgrad.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    tensors = atleast_2d(*_tensor_list("vstack", tensors))
    return cat((tensors,) if isinstance(tensors, Tensor) else tensors, 0)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Tensors joined depth-wise (along dim 2 after ``atleast_3d``), like ``torch.dstack``.

    >>> clgrad.dstack([clgrad.tensor([1, 2]), clgrad.tensor([3, 4])]).shape
    clgrad.Size([1, 2, 2])
    """
    tensors = atleast_3d(*_tensor_list("dstack", tensors))
    return cat((tensors,) if isinstance(tensors, Tensor) else tensors, 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Vectors as columns (and matrices as they are) joined along dim 1, like
    ``torch.column_stack``.

    >>> clgrad.column_stack([clgrad.tensor([1, 2]), clgrad.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    tensors = _tensor_list("column_stack", tensors)
    cols = [reshape(x, (x.numel(), 1)) if x.ndim <= 1 else x for x in tensors]
    return cat(cols, 1)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of ``input`` split along ``dim`` into ``n`` nearly equal parts (the first
    ``size % n`` one longer) or at the given indices, like ``torch.tensor_split``.

    >>> clgrad.tensor_split(clgrad.arange(5), 2)
    (tensor([0, 1, 2]), tensor([3, 4]))
    >>> clgrad.tensor_split(clgrad.arange(5), [1, 4])
    (tensor([0]), tensor([1, 2, 3]), tensor([4]))
    """
    if input.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        big, small = n % sections, n // sections
        bounds = [i * small + min(i, big) for i in range(sections + 1)]
    else:
        bounds = [0, *(int(i) for i in indices_or_sections), n]
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        lo, hi = (
            min(max(lo if lo >= 0 else lo + n, 0), n),
            min(max(hi if hi >= 0 else hi + n, 0), n),
        )
        out.append(narrow(input, d, lo, max(hi - lo, 0)))
    return tuple(out)


def _numpy_split(name, dim, min_dims):
    def fn(input: Tensor, indices_or_sections) -> tuple[Tensor, ...]:
        if input.ndim < min_dims:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
                f"tensor with {input.ndim} dimensions!"
            )
        d = dim if input.ndim > 1 or name != "hsplit" else 0
        if isinstance(indices_or_sections, int) and input._shape[d] % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {d}, but the size of the "
                f"dimension {input._shape[d]} is not divisible by the split_size "
                f"{indices_or_sections}!"
            )
        return tensor_split(input, indices_or_sections, d)

    fn.__name__ = fn.__qualname__ = name
    return fn


hsplit = _numpy_split("hsplit", 1, 1)
hsplit.__doc__ = """``tensor_split`` along dim 1 (dim 0 of a vector) into equal parts or at indices,
like ``torch.hsplit``.

>>> clgrad.hsplit(clgrad.arange(4), 2)
(tensor([0, 1]), tensor([2, 3]))
"""
vsplit = _numpy_split("vsplit", 0, 2)
vsplit.__doc__ = """``tensor_split`` along dim 0 of a matrix, like ``torch.vsplit``.

>>> [t.shape for t in clgrad.vsplit(clgrad.zeros(4, 2), 2)]
[clgrad.Size([2, 2]), clgrad.Size([2, 2])]
"""
dsplit = _numpy_split("dsplit", 2, 3)
dsplit.__doc__ = """``tensor_split`` along dim 2, like ``torch.dsplit``.

>>> [t.shape for t in clgrad.dsplit(clgrad.zeros(1, 2, 4), [1])]
[clgrad.Size([1, 2, 1]), clgrad.Size([1, 2, 3])]
"""


def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to one dim (a view when it can be), like ``torch.ravel``.

    >>> clgrad.ravel(clgrad.tensor([[1, 2], [3, 4]]))
    tensor([1, 2, 3, 4])
    """
    return reshape(input, (-1,))


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """``input`` repeated ``dims`` times along each dim (ones prepended to the shorter of the
    two), like ``torch.tile``.

    >>> clgrad.tile(clgrad.tensor([1, 2]), (2,))
    tensor([1, 2, 1, 2])
    """
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded (as views) to their common broadcast shape, like
    ``torch.broadcast_tensors``.

    >>> [t.shape for t in clgrad.broadcast_tensors(clgrad.zeros(2, 1), clgrad.zeros(3))]
    [clgrad.Size([2, 3]), clgrad.Size([2, 3])]
    """
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of ``input``'s samples along each of ``dim`` (every dim by default) by
    central differences inside and one-sided ones (first or second order, ``edge_order``) at
    the ends, like ``torch.gradient`` / ``numpy.gradient``: ``spacing`` is the samples' step
    (a number, one per dim) or their coordinates (a 1-d tensor per dim). One tensor per dim.

    >>> clgrad.gradient(clgrad.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError(
            f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}"
        )
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [wrap_dim(d, input.ndim) for d in dims]
    if spacing is None:  # (given as None: the default, unit spacing)
        spacing = 1
    if not isinstance(spacing, (list, tuple)):
        spacing = [spacing] * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            f"dim arguments to have the same length, but got a spacing argument of length "
            f"{len(spacing)} and a dim argument of length {len(dims)}."
        )
    f = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    for d in dims:
        if f.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, spacing))


def _gradient_along(f, d, h, edge_order):
    n = f.shape[d]

    def part(start, length):
        return narrow(f, d, start, length)

    def along(v):  # a 1-d tensor of coefficients laid along dim d
        shape = [1] * f.ndim
        shape[d] = -1
        return v.reshape(shape)

    if isinstance(h, Tensor):  # coordinates: numpy's second-order formulas for uneven steps
        x = h.to(f.dtype) if h.dtype is not f.dtype else h
        dx = narrow(x, 0, 1, n - 1) - narrow(x, 0, 0, n - 1)
        dx1, dx2 = narrow(dx, 0, 0, n - 2), narrow(dx, 0, 1, n - 2)
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        inner = along(a) * part(0, n - 2) + along(b) * part(1, n - 2) + along(c) * part(2, n - 2)
        first_step, last_step = dx[0], dx[-1]
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / first_step
            last = (part(n - 1, 1) - part(n - 2, 1)) / last_step
        else:
            p, q = dx[0], dx[1]
            first = (
                -(2 * p + q) / (p * (p + q)) * part(0, 1)
                + (p + q) / (p * q) * part(1, 1)
                - p / (q * (p + q)) * part(2, 1)
            )
            p, q = dx[-2], dx[-1]
            last = (
                q / (p * (p + q)) * part(n - 3, 1)
                - (q + p) / (p * q) * part(n - 2, 1)
                + (2 * q + p) / (q * (p + q)) * part(n - 1, 1)
            )
    else:
        step = float(h)
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * step)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / step
            last = (part(n - 1, 1) - part(n - 2, 1)) / step
        else:
            first = (-3 * part(0, 1) + 4 * part(1, 1) - part(2, 1)) / (2 * step)
            last = (3 * part(n - 1, 1) - 4 * part(n - 2, 1) + part(n - 3, 1)) / (2 * step)
    return cat([first, inner, last], d)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (scalars, vectors as rows, matrices) placed along the diagonal of a zero
    matrix, like ``torch.block_diag``.

    >>> clgrad.block_diag(clgrad.tensor([[1, 2]]), clgrad.tensor([[3], [4]]))
    tensor([[1, 2, 0],
            [0, 0, 3],
            [0, 0, 4]])
    """
    mats = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                f"{t.ndim} dimensions"
            )
        mats.append(reshape(t, (1, -1)) if t.ndim < 2 else t)
    if not mats:
        return zeros((1, 0))
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = D.promote_types(dt, m.dtype)
    total = sum(m._shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        r, c = m._shape
        left = zeros((r, col), dtype=dt, device=m.device)
        right = zeros((r, total - col - c), dtype=dt, device=m.device)
        rows.append(cat([left, m.to(dt), right], 1))
        col += c
    return cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each vector, as rows, like
    ``torch.cartesian_prod`` (one vector: itself).

    >>> clgrad.cartesian_prod(clgrad.tensor([1, 2]), clgrad.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every length-``r`` combination of the elements of a vector, as rows, in
    ``itertools.combinations`` order, like ``torch.combinations``.

    >>> clgrad.combinations(clgrad.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return zeros((0,), dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input._shape[0]), r))
    # the index pattern depends only on the length: gathered on the device, differentiable
    # (no rows too: an empty result that requires grad where input does, as PyTorch's)
    index = tensor(rows, dtype=D.int64, device=input.device).reshape(len(rows), r)
    return input[index]


def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first), like
    ``torch.diff``; booleans differ by ``!=``.

    >>> clgrad.diff(clgrad.tensor([1, 4, 9, 16]))
    tensor([3, 5, 7])
    >>> clgrad.diff(clgrad.tensor([1, 4, 9, 16]), n=2)
    tensor([2, 2])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    # n = 0 is the input itself, as ATen's: prepend and append are not joined then
    parts = [t for t in (prepend, input, append) if t is not None] if n else [input]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x._shape[d]
        if m == 0:
            break
        hi, lo = narrow(x, d, 1, m - 1), narrow(x, d, 0, m - 1)
        x = hi != lo if x.dtype == D.bool_ else hi - lo
    return x if x is not input else x.clone()  # a new tensor (n = 0), as PyTorch's


def _scattered(input, src, view_of, copy=True):
    """A copy of ``input`` (``input`` itself, already a copy, without ``copy``) with ``src``
    written into the view ``view_of`` picks: the ``*_scatter`` ops (the gradient reaches both
    through the copy and the write)."""
    out = input.clone() if copy else input
    target = view_of(out)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(target.shape)}"
        )
    target.copy_(src)
    return out


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``input`` with ``src`` embedded at ``index`` of ``dim``, like ``torch.select_scatter``.

    >>> clgrad.select_scatter(clgrad.zeros(2, 2), clgrad.ones(2), 0, 0)
    tensor([[1., 1.],
            [0., 0.]])
    """
    return _scattered(input, src, lambda t: select(t, dim, index))


def slice_scatter(
    input: Tensor, src: Tensor, dim: int = 0, start=None, end=None, step: int = 1
) -> Tensor:
    """``input`` with ``src`` embedded in ``input[start:end:step]`` along ``dim``, like
    ``torch.slice_scatter``.

    >>> clgrad.slice_scatter(clgrad.zeros(4), clgrad.ones(2), start=2)
    tensor([0., 0., 1., 1.])
    """
    d = wrap_dim(dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scattered(input, src, lambda t: t[key])


def diagonal_scatter(
    input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    """``input`` with ``src`` embedded as its diagonal, like ``torch.diagonal_scatter``.

    >>> clgrad.diagonal_scatter(clgrad.zeros(2, 2), clgrad.ones(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _scattered(input, src, lambda t: diagonal(t, offset, dim1, dim2))


def as_strided_scatter(
    input: Tensor,
    src: Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """A copy of ``input`` (in new row-major memory) with ``src`` written into its
    ``as_strided(size, stride, storage_offset)`` view, like ``torch.as_strided_scatter``.

    >>> clgrad.as_strided_scatter(clgrad.zeros(2, 3), clgrad.ones(2), (2,), (3,), 1)
    tensor([[0., 1., 0.],
            [0., 1., 0.]])
    """
    # torch's clone keeps the layout of a dense tensor (a transposed one stays so): its storage
    # order is what the strides address
    order = sorted(range(input.ndim), key=lambda d: -input._stride[d])
    permuted = permute(input, order)
    if _row_major_dense(permuted):
        inverse = [order.index(d) for d in range(input.ndim)]
        input = permute(permuted.clone(), inverse)
    out = _scattered(input, src, lambda t: as_strided(t, size, stride, storage_offset), False)
    return out


def _row_major_dense(t) -> bool:
    expected = 1
    for n, s in zip(reversed(t._shape), reversed(t._stride)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow``'s elements in new memory, like ``torch.narrow_copy``.

    >>> clgrad.narrow_copy(clgrad.arange(5), 0, 1, 2)
    tensor([1, 2])
    """
    return clone(narrow(input, dim, start, length))


narrow_copy.out_resize_warns = False  # PyTorch's narrow_copy_out resizes silently


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-d ``x``: columns ``x ** (N-1)`` ... ``x ** 0`` (the
    other way with ``increasing``), like ``torch.vander``; powers by a running product, so the
    gradient is finite at 0.

    >>> clgrad.vander(clgrad.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    out = _powers(x, n)
    if n <= 1:  # ATen's ones or empty columns: outside x's graph
        out = out.detach()
    return out if increasing else flip(out, (-1,))


def _powers(x, n):
    """``x[..., None] ** arange(n)`` as a cumulative product (integers and bool in int64, as
    PyTorch's, for any ``n``)."""
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not x.dtype.is_floating_point:
        x = x.to(D.int64)
    col = x.unsqueeze(-1)
    if n == 0:
        return col[..., :0] * 1
    ones = (col * 0 + 1).detach()
    if n == 1:
        return ones
    return cat([ones, col.expand(tuple(x.shape) + (n - 1,))], -1).cumprod(-1)


def concatenate(tensors: Iterable[Tensor], dim: int = 0) -> Tensor:
    """``cat`` under NumPy's name, like ``torch.concatenate`` (whose public form takes NumPy's
    ``axis`` for ``dim``, as every function does).

    >>> clgrad.concatenate([clgrad.zeros(1, 2), clgrad.ones(1, 2)], axis=1)
    tensor([[0., 0., 1., 1.]])
    """
    return cat(tensors, dim)
