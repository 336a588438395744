"""matmul with PyTorch's 1-D, 2-D, batched and broadcast semantics."""

from __future__ import annotations

from .. import dtypes as D
from ..autograd.function import Function
from ..tensor import Tensor
from .core import broadcast_shapes, check_device_dtype, same_device, sum_to
from .movement import view_strides


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
        ctx.save_for_backward(a, b)
        batch = broadcast_shapes(a._shape[:-2], b._shape[:-2])
        m, k, n = a._shape[-2], a._shape[-1], b._shape[-1]
        out = Tensor._empty(batch + (m, n), a.dtype, a.device)
        if out.numel():
            acc = (
                D.float32
                if a.dtype is D.float16
                else (a.dtype if a.dtype.is_floating_point else D.int64)
            )
            out3 = out._view(*_flat3(out, batch, m, n))
            # the 3-D operands may be copies: they must outlive the enqueue, or the allocator
            # hands one's buffer to the other (a record does not keep its storage alive)
            a3, b3 = _as_3d(a, batch, m, k), _as_3d(b, batch, k, n)
            a.device.backend.matmul(out3._record(), a3._record(), b3._record(), acc)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = sum_to(g @ b.mT, a.shape) if ctx.needs_input_grad[0] else None
        gb = sum_to(a.mT @ g, b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb


Bmm = type("Bmm", (Mm,), {"__module__": __name__})


def _flat3(out, batch, m, n):
    b = 1
    for s in batch:
        b *= s
    return (b, m, n), (m * n, n, 1), out._offset


# A device matmul may pad a vector operand into a panel this many columns wide (PoCL's packed
# kernel: 16 floats): a product with a vector whose other operand has fewer rows than that is
# computed as a product and a sum instead, which needs only the elementwise product (a 300M
# element dot would otherwise ask for 16 copies of the vector).
VECTOR_PANEL = 16


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
        raise TypeError("matmul(): argument 'other' must be Tensor")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    same_device(a, b)
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != {b.dtype.name}"
        )
    if a.dtype is D.bool_:
        raise NotImplementedError("\"matmul\" not implemented for 'Bool'")
    check_device_dtype(a.device, a.dtype)
    if a.ndim == 1 and b.ndim == 1:
        _check(a.reshape(1, -1), b.reshape(-1, 1), a, b)
        return (a * b).sum(dtype=a.dtype)
    if a.ndim == 1:
        _check(a.unsqueeze(0), b, a, b)
        if b.numel() < VECTOR_PANEL * b._shape[-2]:
            return (a.unsqueeze(-1) * b).sum(-2, dtype=a.dtype)
        return matmul(a.unsqueeze(0), b).squeeze(-2)
    if b.ndim == 1:
        _check(a, b.unsqueeze(-1), a, b)
        if a.numel() < VECTOR_PANEL * a._shape[-1]:
            return (a * b).sum(-1, dtype=a.dtype)
        return matmul(a, b.unsqueeze(-1)).squeeze(-1)
    _check(a, b, a, b)
    return (Mm if a.ndim == 2 and b.ndim == 2 else Bmm).apply(a, b)


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
