"""matmul with PyTorch's 1-D, 2-D, batched and broadcast semantics, and the products built on
it: mv, outer, the addmm family, kron, cross, tensordot and einsum."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..autograd.function import Function, needs_recording
from ..tensor import Tensor, new_view, wrap_dim
from .autocast import autocast_op
from .core import (
    COMPLEX_HOOKS,
    SCALAR_TYPE_NAMES,
    TYPE_META_NAMES,
    broadcast_shapes,
    same_device,
    sum_to,
)
from .elementwise import add, where
from .indexing import select_positions
from .movement import cat, view_strides


def _as_3d(x, batch, rows, cols):
    """x expanded to the batch shape and viewed as (B, rows, cols); copies only when the
    broadcast batch dims cannot be walked with one stride."""
    x = x.expand(batch + (rows, cols))
    b = 1
    for n in batch:
        b *= n
    stride = view_strides(x._shape, x._stride, (b, rows, cols))
    if stride is None:
        x = x.contiguous()
        stride = view_strides(x._shape, x._stride, (b, rows, cols))
    return x._view((b, rows, cols), stride, x._offset)


class Mm(Function):
    """(…, M, K) @ (…, K, N) with broadcast batch dims."""

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, 0)
        if len(a._shape) == 2 and len(b._shape) == 2:
            return _mm2(a, b)
        batch = broadcast_shapes(a._shape[:-2], b._shape[:-2])
        m, k, n = a._shape[-2], a._shape[-1], b._shape[-1]
        out = Tensor._empty(batch + (m, n), a.dtype, a.device)
        if out.numel():
            out3 = out._view(*_flat3(out, batch, m, n))
            # the 3-D operands may be copies: they must outlive the enqueue, or the allocator
            # hands one's buffer to the other (a record does not keep its storage alive)
            a3, b3 = _as_3d(a, batch, m, k), _as_3d(b, batch, k, n)
            _products(out3, a3, b3)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return _product_grads(ctx.needs_input_grad, g, a, b, ctx.layouts)


def _save_operands(ctx, a, b, first):
    """Saves each operand of ``a @ b`` only where the other one's gradient reads it, as
    PyTorch's mm (a write into an operand whose partner needs no gradient is then not refused
    at backward); what the gradients need of the operands' layouts is kept instead.
    ``first``: the index of ``a`` among the Function's arguments."""
    needs = ctx.needs_input_grad[first:] if ctx.recording else (True, True)
    ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
    ctx.layouts = (a._shape, _column_major(a), b._shape, _column_major(b))


def _product_grads(needs, g, a, b, layouts):
    """The gradients of ``a @ b`` for the operands ``needs`` says, each in its operand's
    layout, as PyTorch's mm_mat1/mat2_backward: for a column-major operand (a Linear weight,
    seen as weight.mT) the transpose of a row-major product, so the weight's own gradient is
    contiguous (no copy into .grad)."""
    a_shape, a_column_major, b_shape, b_column_major = layouts
    ga = gb = None
    if needs[0]:
        ga = sum_to((b @ g.mT).mT if a_column_major else g @ b.mT, a_shape)
    if needs[1]:
        gb = sum_to((g.mT @ a).mT if b_column_major else a.mT @ g, b_shape)
    return ga, gb


class Addmm(Function):
    """``bias + a @ b`` for matrices ``a``, ``b`` and a ``bias`` that broadcasts to the
    product: one node, as PyTorch's for a Linear layer (``AddmmBackward0``); the bias is added
    into the product where it lies (an elementwise launch the next ones fuse with)."""

    @staticmethod
    def forward(ctx, bias, a, b):
        _save_operands(ctx, a, b, 1)
        ctx.bias_shape = bias._shape
        return _addmm2(bias, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        g_bias = sum_to(g, ctx.bias_shape) if needs[0] else None
        return (g_bias, *_product_grads(needs[1:], g, a, b, ctx.layouts))


def _addmm2(bias, a, b):
    if a.dtype in _ROUNDED_ONCE:
        # the bias joins the float32 sums and the result is rounded once, as PyTorch's (a
        # rounded product plus the bias, rounded again, was 1-3 bfloat16 ulps off a layer)
        a.device.require(a.dtype)
        out = _mm2(a, b, D.float32)
        if out.numel():
            add.op.run(out, bias, out=out)
        return out.to(a.dtype)
    out = _mm2(a, b) if a.dtype in _FAST_DTYPES else matmul(a, b)  # (float64's checks)
    if out.numel():
        add.op.run(out, bias, out=out)
    return out


def _column_major(t) -> bool:
    """Whether the matrices of ``t`` are column-major (and not also row-major)."""
    rows, cols = t._shape[-2:]
    return rows > 1 and cols > 1 and t._stride[-2] == 1 and t._stride[-1] == rows


Bmm = type("Bmm", (Mm,), {"__module__": __name__})

# the dtype a product's sums are kept in
_ACC = {dt: D.accumulation(dt) for dt in D.ALL if dt.is_floating_point}
_ACC.update({dt: D.int64 for dt in D.ALL if not dt.is_floating_point})


# the dtypes whose biased products are summed and rounded in float32 (``_addmm2``)
_ROUNDED_ONCE = frozenset((D.float16, D.bfloat16))
# what every device runs (float64 and the 16-bit floats go through ``matmul``'s checks)
_FAST_DTYPES = frozenset(
    dt for dt in D.ALL if dt not in (D.bool_, D.float64, D.float16, D.bfloat16)
)


def _record3(t):
    """The record of a matrix as a batch of one (its batch stride is never stepped)."""
    s = t._storage
    return new_view((s.data, t._offset, (1, *t._shape), (0, *t._stride), t.dtype, s.nbytes))


def _mm2(a, b, dtype=None):
    """The product of two matrices (in ``dtype``, by default theirs): the records made
    directly, without 3-D views (the path of every Linear layer, forward and backward)."""
    m, n = a._shape[0], b._shape[1]
    out = Tensor._empty((m, n), dtype or a.dtype, a.device)
    if m and n:
        backend = a.device.backend
        max_k = backend.matmul_max_k()
        if max_k is None or a._shape[1] <= max_k:
            backend.matmul(_record3(out), _record3(a), _record3(b), _ACC[a.dtype])
        else:
            _products(*(t._view((1, *t._shape), (0, *t._stride), t._offset) for t in (out, a, b)))
    return out


def _products(out3, a3, b3):
    """out3 = a3 @ b3 for 3-D views by the device's matmul; a K past what its kernels sum
    (``Backend.matmul_max_k``: llvmpipe's loop limit) as products over slices of K, added up
    in ``out3``."""
    backend = a3.device.backend
    acc = _ACC[a3.dtype]
    max_k = backend.matmul_max_k()
    k = a3._shape[2]
    if max_k is None or k <= max_k:
        backend.matmul(out3._record(), a3._record(), b3._record(), acc)
        return
    part = Tensor._empty(out3._shape, out3.dtype, out3.device)
    for k0 in range(0, k, max_k):
        k1 = min(k, k0 + max_k)
        into = out3 if k0 == 0 else part
        backend.matmul(into._record(), a3[:, :, k0:k1]._record(), b3[:, k0:k1]._record(), acc)
        if k0:
            add.op.run(out3, part, out=out3)


def _flat3(out, batch, m, n):
    b = 1
    for s in batch:
        b *= s
    return (b, m, n), (m * n, n, 1), out._offset


class ProductSum(Function):
    """``product_sum`` by the device's kernel that sums over the batch as it multiplies."""

    @staticmethod
    def forward(ctx, a, b, chunks):
        ctx.save_for_backward(a, b)
        a4, b4 = (t if t.ndim == 4 else t.unsqueeze(1) for t in (a, b))  # (Z, G, rows, K)
        g, m, n = a4._shape[1], a4._shape[2], b4._shape[2]
        out = Tensor._empty((chunks, g, m, n), a.dtype, a.device)
        a.device.backend.product_sum(out._record(), a4._record(), b4._record(), _ACC[a.dtype])
        return out.sum(0) if a.ndim == 4 else out.sum((0, 1))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (g @ b if needs[0] else None), (g.mT @ a if needs[1] else None), None


def product_sum(a: Tensor, b: Tensor) -> Tensor:
    """The sum over the batch of ``a[z] @ b[z].mT`` for ``a`` (Z, [G,] M, K) and ``b`` (Z, [G,]
    N, K): a convolution's weight gradient, each group's (the output gradient and the column
    matrix, both contiguous along the window positions K). Where the device has a kernel that
    sums over the batch as it multiplies (``Backend.product_sum_chunks``: CPU devices, for a
    small (M, N), as the first convolution of a network and a depthwise one have) it runs there:
    one pass over both operands, no transposed copy and no (Z, [G,] M, N) products to add up.
    Else a batched product reads the bigger ``b`` in place as its left operand, then sums.

    >>> a, b = clgrad.ones(4, 2, 3), clgrad.ones(4, 5, 3)
    >>> product_sum(a, b)[0]
    tensor([12., 12., 12., 12., 12.])
    """
    z, m, k = a._shape[0], a._shape[-2], a._shape[-1]
    groups = a._shape[1] if a.ndim == 4 else 1
    chunks = 0
    if a.dtype is b.dtype and a._stride[-1] == 1 and b._stride[-1] == 1 and a.device is b.device:
        chunks = a.device.backend.product_sum_chunks(z, groups, m, b._shape[-2], k, a.dtype)
    if not chunks:
        return (b @ a.mT).sum(0).mT
    return ProductSum.apply(a, b, chunks)


# A device matmul may pad a vector operand into a panel this many columns wide (PoCL's packed
# kernel: 16 floats): a product with a vector whose other operand has fewer rows than that is
# computed as a product and a sum instead, which needs only the elementwise product (a 300M
# element dot would otherwise ask for 16 copies of the vector).
VECTOR_PANEL = 16


@autocast_op
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """The matrix product ``a @ b`` with PyTorch's rules, like ``torch.matmul``: two 1-d
    tensors give their dot product, a 1-d operand acts as a row (left) or column (right) vector
    and its dim is dropped, and the batch dims of higher-dim operands broadcast.

    >>> a = clgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> clgrad.matmul(a, clgrad.tensor([1.0, 1.0]))
    tensor([3., 7.])
    >>> (clgrad.ones(5, 2, 3) @ clgrad.ones(3, 4)).shape
    clgrad.Size([5, 2, 4])
    """
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        # a sparse COO matrix (clgrad.ops.sparse), as torch.mm and @ take one either side
        if getattr(a, "is_sparse", False) and isinstance(b, Tensor):
            return a.mm(b)
        if getattr(b, "is_sparse", False) and isinstance(a, Tensor):
            return b.t().mm(a.t()).t()
        raise TypeError("matmul(): argument 'other' must be Tensor")
    if (  # two matrices that multiply, of one device and dtype: the checks below all pass
        len(a._shape) == 2
        and len(b._shape) == 2
        and a._shape[1] == b._shape[0]
        and a._storage.device is b._storage.device
        and a.dtype is b.dtype
        and a.dtype in _FAST_DTYPES
    ):
        return Mm.apply(a, b) if needs_recording((a, b)) else _mm2(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    same_device(a, b)
    if a.dtype is not b.dtype:
        if a.ndim == 1 and b.ndim == 1:  # torch's dot
            raise RuntimeError(
                "dot : expected both vectors to have same dtype, but found "
                f"{SCALAR_TYPE_NAMES[a.dtype.name]} and {SCALAR_TYPE_NAMES[b.dtype.name]}"
            )
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{TYPE_META_NAMES[a.dtype.name]} != {TYPE_META_NAMES[b.dtype.name]}"
        )
    if a.dtype is D.bool_:
        raise NotImplementedError("\"matmul\" not implemented for 'Bool'")
    if a.dtype.category == 3:
        return COMPLEX_HOOKS["matmul"](a, b)
    a.device.require(a.dtype)
    if a.ndim == 1 and b.ndim == 1:
        _check(a.reshape(1, -1), b.reshape(-1, 1), a, b)
        return _product_sum_over(a, b, 0)
    if a.ndim == 1:
        _check(a.unsqueeze(0), b, a, b)
        if b.numel() < VECTOR_PANEL * b._shape[-2]:
            return _product_sum_over(a.unsqueeze(-1), b, -2)
        return matmul(a.unsqueeze(0), b).squeeze(-2)
    if b.ndim == 1:
        _check(a, b.unsqueeze(-1), a, b)
        if a.numel() < VECTOR_PANEL * a._shape[-1]:
            return _product_sum_over(a, b, -1)
        return matmul(a, b.unsqueeze(-1)).squeeze(-1)
    _check(a, b, a, b)
    return (Mm if a.ndim == 2 and b.ndim == 2 else Bmm).apply(a, b)


def _product_sum_over(a, b, dim):
    """The sum over ``dim`` of ``a * b`` (broadcast, one dtype) in that dtype, as PyTorch's dot
    and matrix-vector kernels compute it: float16 and bfloat16 products and their sum in
    float32, rounded once (300 * 300 past float16's range cancels against -300 * 300)."""
    dt = a.dtype
    wide = D.accumulation(dt)
    if wide is dt:
        return (a * b).sum(dim, dtype=dt)
    return (a.to(wide) * b.to(wide)).sum(dim).to(dt)


def _check(a, b, orig_a, orig_b):
    if a._shape[-1] != b._shape[-2]:
        if orig_a.ndim == 1 and orig_b.ndim == 1:
            na, nb = orig_a._shape[0], orig_b._shape[0]
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{na}] and src [{nb}] to have the "
                f"same number of elements, but got {na} and {nb} elements respectively"
            )
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied "
            f"({'x'.join(map(str, a._shape[-2:]))} and {'x'.join(map(str, b._shape[-2:]))})"
        )
    broadcast_shapes(a._shape[:-2], b._shape[:-2])


@autocast_op
def mm(a: Tensor, b: Tensor) -> Tensor:
    """The product of two matrices, ``(n, m) @ (m, p) -> (n, p)``, like ``torch.mm`` (no
    broadcasting).

    >>> clgrad.mm(clgrad.tensor([[1, 2], [3, 4]]), clgrad.tensor([[1, 0], [0, 1]]))
    tensor([[1, 2],
            [3, 4]])
    """
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm(): expected 2-D tensors, got {a.ndim}-D and {b.ndim}-D")
    return matmul(a, b)


@autocast_op
def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched matrix products of two 3-d tensors, ``(B, n, m) @ (B, m, p) -> (B, n, p)``, like
    ``torch.bmm``.

    >>> clgrad.bmm(clgrad.ones(4, 2, 3), clgrad.ones(4, 3, 5)).shape
    clgrad.Size([4, 2, 5])
    """
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (got {a.ndim}-D and {b.ndim}-D)")
    return matmul(a, b)


def dot(a: Tensor, b: Tensor) -> Tensor:
    """The dot product of two 1-d tensors of the same length, a 0-d tensor, like
    ``torch.dot``.

    >>> clgrad.dot(clgrad.tensor([1.0, 2.0, 3.0]), clgrad.tensor([4.0, 5.0, 6.0]))
    tensor(32.)
    """
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return matmul(a, b)


@autocast_op
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """The product of a matrix and a vector, ``(n, m) @ (m,) -> (n,)``, like ``torch.mv``.

    >>> clgrad.mv(clgrad.tensor([[1.0, 2.0], [3.0, 4.0]]), clgrad.tensor([1.0, -1.0]))
    tensor([-1., -1.])
    """
    if input.ndim != 2 or vec.ndim != 1 or input._shape[1] != vec._shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input._shape[0] if input.ndim else 0}), mat "
            f"({'x'.join(map(str, input._shape))}), vec ({'x'.join(map(str, vec._shape))})"
        )
    return matmul(input, vec)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-d tensors, ``out[i][j] = input[i] * vec2[j]``, in their
    promoted dtype, like ``torch.outer`` (and ``torch.ger``).

    >>> clgrad.outer(clgrad.tensor([1, 2]), clgrad.tensor([1, 10, 100]))
    tensor([[  1,  10, 100],
            [  2,  20, 200]])
    """
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"outer: Expected 1-D argument self, but got {input.ndim}-D"
            if input.ndim != 1
            else f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D"
        )
    return input.reshape(-1, 1) * vec2


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-d tensors (the first conjugated: real tensors are their own
    conjugates), like ``torch.vdot``.

    >>> clgrad.vdot(clgrad.tensor([1.0, 2.0]), clgrad.tensor([3.0, 4.0]))
    tensor(11.)
    """
    return dot(input.conj(), other)


def _scaled_sum(name, input, product, beta, alpha):
    """``beta * input + alpha * product`` (input broadcast to product's shape; ignored, NaN
    and all, where beta is 0), as PyTorch's addmm family."""
    shape = broadcast_shapes(input._shape, product._shape)
    if shape != product._shape:
        raise RuntimeError(
            f"{name}: the expanded size of the input {list(input._shape)} must match the "
            f"result's {list(product._shape)}"
        )
    if product.dtype.category < 2:  # integers and bools (complex scalars stay as they are)
        if name == "addr":  # (the other ops truncate, as ATen casts the scalars to the dtype)
            for arg, value in (("beta", beta), ("alpha", alpha)):
                if isinstance(value, float):
                    raise RuntimeError(
                        f"For integral input tensors, argument {arg} must not be a floating "
                        "point number."
                    )
        if product.dtype is D.bool_:  # addr of bools: the logical form
            out = product if alpha else product & False
            return out | (input & bool(beta)) if beta else out
        beta, alpha = int(beta), int(alpha)
    out = product if alpha == 1 else product * alpha
    if beta == 0:
        if input.requires_grad:  # a zero gradient, as PyTorch's, and none of input's NaN
            out = out + where(Tensor._full((), False, D.bool_, input.device), input, 0)
        return out if out.dtype is input.dtype else out.to(input.dtype)
    return (input if beta == 1 else input * beta) + out


@autocast_op
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices, like ``torch.addmm``.

    >>> clgrad.addmm(clgrad.ones(2, 2), clgrad.eye(2), clgrad.eye(2), beta=2)
    tensor([[3., 2.],
            [2., 3.]])
    """
    if beta == 1 and alpha == 1 and _fast_addmm(input, mat1, mat2):
        args = (input, mat1, mat2)
        return Addmm.apply(*args) if needs_recording(args) else _addmm2(*args)
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def _fast_addmm(bias, a, b) -> bool:
    """Whether ``Addmm`` takes ``bias + a @ b``: matrices that multiply and a bias that
    broadcasts to their product, of one device and one dtype (not bool: matmul's error)."""
    dev, dt = a._storage.device, a.dtype
    return (
        isinstance(bias, Tensor)
        and len(a._shape) == 2
        and len(b._shape) == 2
        and a._shape[1] == b._shape[0]
        and len(bias._shape) <= 2
        and all(n in (1, m) for n, m in zip(bias._shape[::-1], (b._shape[1], a._shape[0])))
        and b._storage.device is dev
        and bias._storage.device is dev
        and b.dtype is dt
        and bias.dtype is dt
        and dt is not D.bool_
        and dt.category != 3  # (complex: through the complex product and sum)
    )


@autocast_op
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``, like ``torch.addmv``.

    >>> clgrad.addmv(clgrad.ones(2), clgrad.eye(2), clgrad.tensor([1.0, 2.0]))
    tensor([2., 3.])
    """
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


@autocast_op
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``, like ``torch.baddbmm``.

    >>> clgrad.baddbmm(clgrad.zeros(1, 2, 2), clgrad.ones(3, 2, 4), clgrad.ones(3, 4, 2)).shape
    clgrad.Size([3, 2, 2])
    """
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


@autocast_op
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (the sum of the products bmm(batch1, batch2))``, like
    ``torch.addbmm``.

    >>> clgrad.addbmm(clgrad.zeros(2, 2), clgrad.ones(3, 2, 4), clgrad.ones(3, 4, 2))
    tensor([[12., 12.],
            [12., 12.]])
    """
    products = bmm(batch1, batch2)  # summed in their own type (an int32 sum stays int32)
    return _scaled_sum("addbmm", input, products.sum(0, dtype=products.dtype), beta, alpha)


addbmm.out_resize_warns = False  # PyTorch's addbmm_out resizes silently


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of ``input`` times the whole of ``other``, laid
    out block by block, like ``torch.kron``.

    >>> clgrad.kron(clgrad.tensor([1, 10]), clgrad.tensor([1, 2]))
    tensor([ 1,  2, 10, 20])
    """
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + input._shape
    sb = (1,) * (nd - other.ndim) + other._shape
    a = input.reshape([v for n in sa for v in (n, 1)])
    b = other.reshape([v for n in sb for v in (1, n)])
    return (a * b).reshape([x * y for x, y in zip(sa, sb)])


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the two broadcast; without ``dim`` the
    first dim of size 3), like ``torch.cross``.

    >>> clgrad.cross(clgrad.tensor([1.0, 0.0, 0.0]), clgrad.tensor([0.0, 1.0, 0.0]), dim=0)
    tensor([0., 0., 1.])
    """
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions. Got {input.ndim} "
            f"and {other.ndim}"
        )
    shape = broadcast_shapes(input._shape, other._shape)
    a, b = input.expand(shape), other.expand(shape)
    if dim is None:
        d = next((i for i, n in enumerate(shape) if n == 3), None)
        if d is None:
            raise RuntimeError("no dimension of size 3 in input")
    else:
        d = wrap_dim(dim, len(shape))
        if shape[d] != 3:
            raise RuntimeError(
                f"linalg.cross: inputs dimension {d} must have length 3. Got {input._shape[d]} "
                f"and {other._shape[d]}"
            )
    # ATen's kernel: dispatched on input's dtype (no bool), other of the same (no promotion)
    if input.dtype is D.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if other.dtype is not input.dtype:
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[input.dtype.name]} but found "
            f"{SCALAR_TYPE_NAMES[other.dtype.name]}"
        )
    a0, a1, a2 = (a.narrow(d, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(d, i, 1) for i in range(3))
    return cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """The sum of products over the last ``dims`` dims of ``a`` and the first ``dims`` of
    ``b`` (or over the dims named by two lists), like ``torch.tensordot``.

    >>> clgrad.tensordot(clgrad.ones(2, 3, 4), clgrad.ones(3, 4, 5)).shape
    clgrad.Size([2, 5])
    >>> clgrad.tensordot(clgrad.ones(3, 2), clgrad.ones(3, 4), dims=([0], [0])).shape
    clgrad.Size([2, 4])
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [wrap_dim(d, a.ndim) for d in da]
    db = [wrap_dim(d, b.ndim) for d in db]
    for x, y in zip(da, db):
        # a contracted dim of size 1 broadcasts against the other (ATen's): the other's dim
        # is summed first, in its own dtype (int32 stays int32 for the product)
        if a._shape[x] == 1 and b._shape[y] != 1:
            b = b.sum(y, keepdim=True, dtype=b.dtype)
        elif b._shape[y] == 1 and a._shape[x] != 1:
            a = a.sum(x, keepdim=True, dtype=a.dtype)
        elif a._shape[x] != b._shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a._shape[x]} in dim "
                f"{x} and second has size {b._shape[y]} in dim {y}"
            )
    ra = [d for d in range(a.ndim) if d not in da]
    rb = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a._shape[d] for d in da)
    out_shape = [a._shape[d] for d in ra] + [b._shape[d] for d in rb]
    am = a.permute(ra + da).reshape(math.prod(out_shape[: len(ra)]), k)
    bm = b.permute(db + rb).reshape(k, math.prod(out_shape[len(ra) :]))
    return matmul(am, bm).reshape(out_shape)


# ---- einsum ------------------------------------------------------------------------------------
def _einsum_terms(equation, operands):
    """Each operand's labels (letters; its ``...`` dims as "0", "1", ... aligned from the
    right) and the output's labels."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    parsed, ell = [], 0
    for i, (term, x) in enumerate(zip(terms, operands)):
        has_ell = "..." in term
        letters = term.replace("...", "")
        if not all(c.isalpha() for c in letters) or term.count("...") > 1:
            raise RuntimeError(f"einsum(): invalid subscript given in the equation for operand {i}")
        n_ell = x.ndim - len(letters)
        if (n_ell != 0 and not has_ell) or n_ell < 0:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(letters)}) does not "
                f"match the number of dimensions ({x.ndim}) for operand {i} and no ellipsis was "
                "given"
            )
        ell = max(ell, n_ell)
        parsed.append((term, n_ell))
    labels = []
    for term, n_ell in parsed:
        before, _, after = term.partition("...")
        if "..." not in term:
            before, after = term, ""
        labels.append(list(before) + [str(ell - n_ell + j) for j in range(n_ell)] + list(after))
    ell_labels = [str(j) for j in range(ell)]
    if arrow:
        if not all(c.isalpha() for c in rhs.replace("...", "")):
            raise RuntimeError("einsum(): invalid subscript given in the equation output")
        before, _, after = rhs.partition("...")
        out = list(before) + ell_labels + list(after) if "..." in rhs else list(rhs)
        seen = {label for ls in labels for label in ls}
        for c in out:
            if out.count(c) > 1:
                raise RuntimeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
            if c not in seen:
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the equation for any "
                    "input operand"
                )
    else:
        counts = {}
        for ls in labels:
            for c in ls:
                counts[c] = counts.get(c, 0) + 1
        out = ell_labels + sorted(c for c, n in counts.items() if n == 1 and c.isalpha())
    return labels, out


def _einsum_diagonals(x, labels):
    """``x`` with every label repeated within it reduced to its diagonal (one dim)."""
    labels = list(labels)
    while True:
        dup = next((c for c in labels if labels.count(c) > 1), None)
        if dup is None:
            return x, labels
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        if x._shape[i] != x._shape[j]:
            raise RuntimeError(
                f"einsum(): subscript {dup} is repeated for operand but the sizes don't match, "
                f"{x._shape[i]} != {x._shape[j]}"
            )
        x = x.diagonal(0, i, j)
        labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [dup]


def _contract(a, la, b, lb, keep, sizes):
    """The product of ``a`` and ``b`` summed over their shared labels not in ``keep``, as one
    batched matmul: (batch, a's own, summed) @ (batch, summed, b's own)."""
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    own_a = [c for c in la if c not in lb]
    own_b = [c for c in lb if c not in la]

    def arrange(x, lx, order):
        x = x.permute([lx.index(c) for c in order])
        return x.expand([sizes[c] for c in order])

    def size(labels):
        n = 1
        for c in labels:
            n *= sizes[c]
        return n

    am = arrange(a, la, batch + own_a + summed).reshape(size(batch), size(own_a), size(summed))
    bm = arrange(b, lb, batch + summed + own_b).reshape(size(batch), size(summed), size(own_b))
    if summed and a.dtype is not b.dtype:  # (torch's bmm: one type; a product promotes)
        raise RuntimeError(
            f"expected scalar type {SCALAR_TYPE_NAMES[a.dtype.name]} but found "
            f"{SCALAR_TYPE_NAMES[b.dtype.name]}"
        )
    # nothing summed: an outer product per batch, by a broadcast multiply (PyTorch's, which
    # promotes mixed types and takes bool where a matmul would refuse them)
    out = (am * bm if not summed else matmul(am, bm)).reshape(
        [sizes[c] for c in batch + own_a + own_b]
    )
    return out, batch + own_a + own_b


def _einsum_sublists(args) -> tuple[str, tuple]:
    """(equation, operands) of einsum's sublist form: operands each followed by its list of
    subscripts (ints in [0, 52): 0-25 for A-Z and 26-51 for a-z, as PyTorch's, so an implicit
    output orders them by number; ``...`` for broadcast dims), then optionally the output's
    list."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

    def term(sublist):
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < len(letters):
                out.append(letters[s])
            else:
                raise ValueError(
                    "einsum(): subscript in subscript list is not within the valid range [0, 52)"
                )
        return "".join(out)

    with_output = len(args) % 2 == 1  # (an output sublist last)
    operands = args[0:-1:2] if with_output else args[0::2]
    equation = ",".join(term(sub) for sub in args[1::2])
    if with_output:
        equation += "->" + term(args[-1])
    return equation, tuple(operands)


@autocast_op
def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Sums of products of the operands' elements named by Einstein notation, like
    ``torch.einsum``: ``...`` for broadcast dims, a label repeated in one operand for its
    diagonal, implicit output (the labels seen once, sorted) without ``->``. Reduces to
    diagonals, sums, permutes, reshapes and batched matmuls.

    >>> a, b = clgrad.ones(2, 3), clgrad.ones(3, 4)
    >>> clgrad.einsum("ij,jk->ik", a, b).shape, clgrad.einsum("ii", clgrad.eye(3))
    (clgrad.Size([2, 4]), tensor(3.))
    >>> clgrad.einsum(a, [0, 1], b, [1, 2], [0, 2]).shape  # the sublist form
    clgrad.Size([2, 4])
    """
    if isinstance(equation, Tensor):  # einsum(op1, sublist1, op2, sublist2, ..., [out])
        equation, operands = _einsum_sublists((equation, *operands))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for x in operands:
        if not isinstance(x, Tensor):
            raise TypeError(
                f"einsum(): argument 'operands' must be tuple of Tensors, not {type(x).__name__}"
            )
    labels, out = _einsum_terms(equation, operands)
    same_device(*operands)
    xs = []
    sizes = {}
    for i, (x, ls) in enumerate(zip(operands, labels)):
        x, ls = _einsum_diagonals(x, ls)
        for c, n in zip(ls, x._shape):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {i} which does not "
                    f"broadcast with previously seen size {sizes[c]}"
                )
            sizes[c] = n if n != 1 else sizes.get(c, 1)
        xs.append((x, ls))
    # a label only one operand has and the output lacks is summed there first
    for i, (x, ls) in enumerate(xs):
        others = set(out).union(*(set(l2) for j, (_, l2) in enumerate(xs) if j != i))
        gone = [d for d, c in enumerate(ls) if c not in others]
        if gone:
            xs[i] = (x.sum(gone), [c for d, c in enumerate(ls) if d not in gone])
    x, lx = xs[0]
    for k in range(1, len(xs)):
        keep = set(out).union(*(set(l2) for _, l2 in xs[k + 1 :]))
        x, lx = _contract(x, lx, *xs[k], keep, sizes)
    x = x.expand([sizes[c] for c in lx])
    return x.permute([lx.index(c) for c in out]).expand([sizes[c] for c in out])


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns; a vector is one variable), like ``torch.cov``: ``correction`` subtracted from the
    (weighted) count, ``fweights`` integer frequencies and ``aweights`` observation weights.

    >>> clgrad.cov(clgrad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an "
            f"input with {input.ndim} dimensions"
        )
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if x.dtype.category < 2:  # (integers and bools; complex stays complex)
        x = x.to(D.get_default_dtype())
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        n = x.shape[1]
        avg = x.mean(1, keepdim=True)
        norm = n - correction
    else:
        total = w.sum()
        avg = (x * w).sum(1, keepdim=True) / total
        norm = (
            total
            if correction == 0
            else (
                total - correction * ((w * aweights).sum() / total if aweights is not None else 1)
            )
        )
    xm = x - avg
    xw = xm if w is None else xm * w
    c = matmul(xw, xm.mT.conj() if xm.dtype.category == 3 else xm.mT) / norm
    # one variable (a vector, or a single row): a 0-d result, as PyTorch's
    return c.reshape(()) if input.ndim < 2 or input.shape[0] == 1 else c


def corrcoef(input):
    """The Pearson correlation coefficients of the variables in the rows of ``input``, like
    ``torch.corrcoef`` (``cov`` over the outer product of the standard deviations, clipped to
    [-1, 1]).

    >>> clgrad.corrcoef(clgrad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    d = (d.real if d.dtype.category == 3 else d).sqrt()
    c = c / d.unsqueeze(1) / d.unsqueeze(0)
    if c.dtype.category == 3:  # each part clipped, as PyTorch's
        return c.real.clamp(-1, 1) + c.imag.clamp(-1, 1) * 1j
    return c.clamp(-1, 1)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The dot product over the last dims of ``input`` and ``other`` (every pair of rows),
    ``input * other`` when either is 0-d, like ``torch.inner``.

    >>> clgrad.inner(clgrad.tensor([[1.0, 2.0]]), clgrad.tensor([[3.0, 4.0], [1.0, 0.0]]))
    tensor([[11.,  1.]])
    """
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    return tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


@autocast_op
def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), like ``torch.dist``.

    >>> clgrad.dist(clgrad.tensor([0.0, 0.0]), clgrad.tensor([3.0, 4.0]))
    tensor(5.)
    """
    return (input - other).norm(p)


@autocast_op
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` (…, P, M) and each row of ``x2``
    (…, R, M): (…, P, R), like ``torch.cdist``; computed from the broadcast differences, with
    PyTorch's gradient (``Cdist``), or for p = 2 where PyTorch does (``compute_mode``, by default
    past 25 rows) from a matrix product (``EuclideanDist``).

    >>> clgrad.cdist(clgrad.tensor([[0.0, 0.0]]), clgrad.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D"
            if x1.ndim < 2
            else f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D"
        )
    same_device(x1, x2)
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if not (x1.dtype.is_floating_point and x2.dtype.is_floating_point):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.name}")
    if x1.dtype is D.bfloat16:  # (torch's CPU kernel has none)
        raise NotImplementedError("\"cdist\" not implemented for 'BFloat16'")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _CDIST_MODES[compute_mode]
    r1, r2 = x1.shape[-2], x2.shape[-2]
    # PyTorch's rule: p = 2 through a matrix product where asked, or by default past 25 rows
    # (no empty input); its rounding (and gradient) as PyTorch's _euclidean_dist
    if p == 2 and x1.numel() and x2.numel() and (mode == 1 or (mode == 0 and max(r1, r2) > 25)):
        return EuclideanDist.apply(x1, x2)
    return Cdist.apply(x1, x2, float(p))


_CDIST_MODES = {
    None: 0,
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


class EuclideanDist(Function):
    """``cdist``'s p = 2 distances from one matrix product, as PyTorch's ``_euclidean_dist``:
    [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped at 0, square-rooted; its gradient is
    PyTorch's ``_euclidean_dist_backward`` (none through a zero distance), written with Tensor
    ops, batch dims summed back to each input's shape."""

    @staticmethod
    def forward(ctx, x1, x2):
        n1, n2 = (x1 * x1).sum(-1, keepdim=True), (x2 * x2).sum(-1, keepdim=True)
        a = cat([x1 * -2, n1, Tensor._full(n1._shape, 1, n1.dtype, n1.device)], -1)
        b = cat([x2, Tensor._full(n2._shape, 1, n2.dtype, n2.device), n2], -1)
        out = matmul(a, b.transpose(-2, -1)).clamp_min(0).sqrt()
        ctx.save_for_backward(x1, x2, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, out = ctx.saved_tensors
        ratio = where(out == 0, 0.0, grad / where(out == 0, 1.0, out))  # (safe inside too)
        g1 = x1 * ratio.sum(-1, keepdim=True) - matmul(ratio, x2)
        g2 = x2 * ratio.sum(-2).unsqueeze(-1) - matmul(ratio.transpose(-2, -1), x1)
        return sum_to(g1, x1.shape), sum_to(g2, x2.shape)


def _cdist_values(x1, x2, p):
    """cdist's distances: the backend's one pass where it serves them (``Backend.distances``:
    no (..., P, R, M) array of differences), else the broadcast differences reduced."""
    batch = broadcast_shapes(x1._shape[:-2], x2._shape[:-2])
    (P, M), R, B = x1._shape[-2:], x2._shape[-2], math.prod(batch)
    n = B * P * R
    backend = x1.device.backend
    if x1.dtype is not x2.dtype or not backend.computes_distances(n, M):
        return _distances(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)
    a = x1.expand(batch + (P, M)).reshape(B, P, M)
    b = x2.expand(batch + (R, M)).reshape(B, R, M)
    out = Tensor._empty((B, P, R), x1.dtype, x1.device)
    if n:
        backend.distances(out._record(), a._record(), b._record(), p)
    return out.reshape(batch + (P, R))


def _distances(diff, p):
    """The ``p``-norm over the last dim of the differences ``diff``."""
    if p == 0:  # how many differ; a NaN makes it NaN, as PyTorch's min(ceil(|d|), 1)
        return diff.abs().ceil().clamp_max(1).sum(-1)
    if p == 2:  # PyTorch's two-norm: the root of the summed squares
        return (diff * diff).sum(-1).sqrt()
    a = diff.abs()
    if p == float("inf"):  # a NaN passed over, as PyTorch's max(agg, d)
        return a.nan_to_num(nan=0.0).amax(-1)
    if p == 1:
        return a.sum(-1)
    return (a**p).sum(-1) ** (1.0 / p)


class Cdist(Function):
    """``cdist``'s distances, (..., P, R) from x1 (..., P, M) and x2 (..., R, M), with
    PyTorch's gradient (``_cdist_backward``), written with Tensor ops so that it has one too:
    per pair, a zero distance passes none, p < 1 none through an equal coordinate (the chain
    rule's 0 * inf there), p = inf all of it to every coordinate at the largest difference
    (amax's rule would split it among ties). x2's gradient is the negated sum over x1's rows."""

    @staticmethod
    def forward(ctx, x1, x2, p):
        out = _cdist_values(x1, x2, p)
        # the result too, as PyTorch's (writing into it before backward fails there)
        ctx.save_for_backward(x1, x2, out)
        ctx.p = p
        return out

    @staticmethod
    def backward(ctx, grad):
        x1, x2, out = ctx.saved_tensors
        p = ctx.p
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
        g = grad.unsqueeze(-1)
        dist = out.unsqueeze(-1)
        if p == 0:
            per = diff * 0
        elif p == 1:
            per = diff.sign() * g
        elif p == float("inf"):
            per = diff.sign() * (diff.abs() == dist) * g
        else:
            none = dist == 0
            if p < 1:
                none = none | (diff == 0)
            safe = where(none, 1.0, dist)
            if p == 2:
                per = diff * g / safe
            elif p < 2:
                per = diff.sign() * where(none, 1.0, diff.abs()) ** (p - 1) * g / safe ** (p - 1)
            else:
                per = diff * diff.abs() ** (p - 2) * g / safe ** (p - 1)
            per = where(none, 0.0, per)
        return sum_to(per.sum(-2), x1.shape), sum_to(-per.sum(-3), x2.shape), None


@autocast_op
def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the 2-d ``matrices`` in order, like ``torch.chain_matmul`` (deprecated
    there for ``linalg.multi_dot``).

    >>> clgrad.chain_matmul(clgrad.eye(2), clgrad.ones(2, 2)).sum()
    tensor(4.)
    """
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    out = matrices[0]
    for m in matrices[1:]:
        out = matmul(out, m)
    return out if len(matrices) > 1 else out.clone()


@autocast_op
def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down
    to norm ``maxnorm``, like ``torch.renorm``.

    >>> clgrad.renorm(clgrad.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError('"renorm" not implemented for integer tensors')
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got {p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim < 2:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions"
        )
    d = wrap_dim(dim, input.ndim)
    others = [i for i in range(input.ndim) if i != d]
    norms = input.norm(p, others, keepdim=True) if others else input.abs()
    # PyTorch's factor: maxnorm / (norm + 1e-7) where the norm is too large
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * factor.to(input.dtype)


@autocast_op
def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distance between every pair of rows of an (N, M) ``input``: the upper
    triangle of ``cdist(input, input)`` row by row, N * (N - 1) / 2 values, like
    ``torch.pdist`` (built on ``cdist``, so a zero distance has gradient 0).

    >>> clgrad.pdist(clgrad.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:
        return input.reshape(-1)[:0]  # no pairs: empty, still in input's graph
    rows, cols = np.triu_indices(n, 1)
    # PyTorch's direct differences (never the matrix product: an equal pair is exactly 0), of
    # every pair at once, and the upper triangle's taken at positions computed here (no range
    # check, which would wait for the device): gathering the two rows of each pair first
    # moved more than all N * N distances do
    return select_positions(Cdist.apply(input, input, float(p)).reshape(-1), 0, rows * n + cols)


@autocast_op
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``, like ``torch.addr``.

    >>> clgrad.addr(clgrad.zeros(2, 2), clgrad.tensor([1.0, 2.0]), clgrad.tensor([3.0, 4.0]))
    tensor([[3., 4.],
            [6., 8.]])
    """
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D"
            if vec1.ndim != 1
            else f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D"
        )
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha)
