"""Helpers the distributions share, under ``torch.distributions.utils``' names: broadcasting
parameters, converting between probabilities and logits, ``lazy_property`` (a parameter derived
on first use, such as ``probs`` of a distribution given ``logits``) and the packing of a lower
triangle into a vector and back."""

from __future__ import annotations

import functools
from numbers import Number

from ..autograd.grad_mode import enable_grad
from ..ops.indexing import select_positions
from ..ops.movement import cat
from ..tensor import Size, Tensor
from .distribution import _broadcast_all, _clamp_probs, _logits_to_probs, _probs_to_logits
from .distribution import _sum_rightmost as _sum_rightmost  # torch's utils has it too

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values) -> tuple:
    """The values (tensors or numbers) as tensors of one shape; numbers take the dtype and
    device of the first tensor, as ``torch.distributions.utils.broadcast_all``.

    >>> U = clgrad.distributions.utils
    >>> U.broadcast_all(clgrad.tensor([1.0, 2.0]), 0.5)
    (tensor([1., 2.]), tensor([0.5000, 0.5000]))
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or objects "
            "implementing __torch_function__."
        )
    return tuple(_broadcast_all(*values))


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into [eps, 1 - eps] (eps of its dtype), so logs stay finite.

    >>> clgrad.distributions.utils.clamp_probs(clgrad.tensor([0.0, 0.5, 1.0]))
    tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])
    """
    return _clamp_probs(probs)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds of ``probs`` (``is_binary``) or log-probabilities of categories (last dim).

    >>> clgrad.distributions.utils.probs_to_logits(clgrad.tensor([0.5, 0.8]), is_binary=True)
    tensor([0.0000, 1.3863])
    """
    return _probs_to_logits(probs, is_binary)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """``sigmoid(logits)`` (``is_binary``) or ``softmax(logits, -1)`` (categories).

    >>> clgrad.distributions.utils.logits_to_probs(clgrad.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """
    return _logits_to_probs(logits, is_binary)


class lazy_property:
    """A property computed on first use (with gradients recorded) and then stored on the
    instance, as torch's: a distribution's parameters derived from the ones it was given.

    >>> class Square:
    ...     def __init__(self, x):
    ...         self.x = x
    ...     @clgrad.distributions.utils.lazy_property
    ...     def y(self):
    ...         return self.x**2
    >>> s = Square(clgrad.tensor(3.0))
    >>> s.y, "y" in vars(s)
    (tensor(9.), True)
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.name = wrapped.__name__
        functools.update_wrapper(self, wrapped)

    def __set_name__(self, owner, name):
        # the attribute it is bound to (``probs = lazy_property(shared_function)``)
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        # a parameter derived inside no_grad (a draw) must still carry its graph later
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.name, value)
        return value


def _tril_positions(n: int, diag: int) -> list:
    """Row-major flat positions of the entries of an n x n matrix on or below diagonal
    ``diag`` (0: the main diagonal, -1: strictly below it)."""
    return [i * n + j for i in range(n) for j in range(n) if j < i + diag + 1]


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of ``mat`` on or below diagonal ``diag``, row by row, as a vector (batched
    over leading dims).

    >>> m = clgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> clgrad.distributions.utils.tril_matrix_to_vec(m)
    tensor([1., 3., 4.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return select_positions(mat.reshape(*mat.shape[:-2], n * n), -1, _tril_positions(n, diag))


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``: a lower triangular D x D matrix (zeros above
    diagonal ``diag``) filled row by row from ``vec``'s last dim.

    >>> clgrad.distributions.utils.vec_to_tril_matrix(clgrad.tensor([1.0, 3.0, 4.0]))
    tensor([[1., 0.],
            [3., 4.]])
    """
    # the positive root of D**2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len(vec) = 0
    b = 1 + 2 * diag
    n = (-b + (b**2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    # both ways (torch checks one side only, and fails later on the other with a RuntimeError)
    if abs(round(n) - n) > 1e-9:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    positions = _tril_positions(n, diag)
    # every entry reads from vec padded with one zero: those above the diagonal read the zero
    source = [len(positions)] * (n * n)
    for k, p in enumerate(positions):
        source[p] = k
    padded = cat([vec, vec.new_zeros((*vec.shape[:-1], 1))], -1)
    return select_positions(padded, -1, source).reshape(Size((*vec.shape[:-1], n, n)))
