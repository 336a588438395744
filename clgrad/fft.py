"""Discrete Fourier transforms, as ``torch.fft``: computed on the tensor's device with Tensor
ops, so autograd differentiates them (for a real loss the gradients are PyTorch's).

A transform along one dim works on the (real, imag) parts as two real tensors of shape
(batch, n): a mixed-radix Cooley-Tukey (decimation in time) where each stage splits n = p * m
(p the largest factor of n up to 16): the p interleaved subsequences of length m are
transformed (recursively), multiplied by the twiddles exp(-+2 pi i j k / n) and combined by one
real matmul with the (2p, 2p) block form of the p-point DFT matrix; O(n * sum of the factors).
A length with no small factor is a DFT matrix up to 64 and Bluestein's chirp-z (a convolution
by power-of-2 transforms) beyond. The constant tables are computed once per size, dtype and
device in float64 on the host.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import dtypes as D
from .ops.complex import join, view_as_real
from .ops.core import with_out
from .ops.creation import tensor, zeros
from .ops.linalg import matmul
from .ops.movement import cat
from .tensor import Tensor, wrap_dim

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_MAX_RADIX = 16  # the largest stage factor (a (2p, 2p) real matrix per stage)
_MATRIX_MAX = 64  # a length with no factor up to 16: a DFT matrix up to this, else Bluestein
_TABLES: dict = {}


# ---- constant tables --------------------------------------------------------------------------
def _table(key, make, dt, device) -> Tensor:
    full = (key, dt.name, str(device))
    t = _TABLES.get(full)
    if t is None:
        if len(_TABLES) > 512:
            _TABLES.clear()
        t = _TABLES[full] = tensor(make(), dtype=dt, device=device)
    return t


def _roots(num, den, sign):
    """exp(sign 2 pi i num / den) for integer ``num`` (reduced mod ``den`` first), exact at the
    quarter turns (a float64 cos(pi / 2) is 6e-17, not 0)."""
    num = np.asarray(num) % den
    w = np.exp(sign * 2j * np.pi * num / den)
    quarter = (4 * num) % den == 0
    w[quarter] = np.array([1, sign * 1j, -1, -sign * 1j])[(4 * num[quarter]) // den]
    return w


def _stage_matrix(p, sign):
    """The p-point DFT as a real (2p, 2p) matrix acting on [re; im] stacked along rows."""
    k = np.arange(p)
    w = _roots(np.outer(k, k), p, sign)
    return np.block([[w.real, -w.imag], [w.imag, w.real]])


def _base_matrix(n, sign, real_input):
    """The n-point DFT as a real matrix acting from the right on [re, im] rows ((2n, 2n)), or
    on real rows ((n, 2n)) where the input is real."""
    k = np.arange(n)
    wt = _roots(np.outer(k, k), n, sign).T
    if real_input:
        return np.concatenate([wt.real, wt.imag], 1)
    return np.block([[wt.real, wt.imag], [-wt.imag, wt.real]])


def _twiddles(p, m, sign):
    w = _roots(np.outer(np.arange(p), np.arange(m)), p * m, sign)
    return np.stack([w.real, w.imag])


def _radix(n) -> int:
    for p in range(min(_MAX_RADIX, n - 1), 1, -1):
        if n % p == 0:
            return p
    q = 17
    while q * q <= n:  # the smallest prime factor past 16
        if n % q == 0:
            return q
        q += 2 if q > 2 else 1
    return n


# ---- one dim: (re, im) of shape (batch, n) ------------------------------------------------
def _transform(re, im, n, sign):
    """The n-point DFT (sign -1) or its unscaled inverse (+1) of each row; ``im`` None: real
    rows. Returns (re, im)."""
    if n == 1:
        return re, (im if im is not None else re * 0)
    p = _radix(n)
    if p == n:
        if n > _MATRIX_MAX:
            return _bluestein(re, im, n, sign)
        dt, device = re.dtype, re.device
        m = _table(
            ("base", n, sign, im is None), lambda: _base_matrix(n, sign, im is None), dt, device
        )
        out = matmul(re if im is None else cat([re, im], 1), m)
        return out[:, :n], out[:, n:]
    m = n // p
    b = re._shape[0]

    def split(t):  # x[p * j2 + j1] -> row (b, j1) of length m
        return t.reshape(b, m, p).transpose(1, 2).reshape(b * p, m)

    yr, yi = _transform(split(re), None if im is None else split(im), m, sign)
    yr, yi = yr.reshape(b, p, m), yi.reshape(b, p, m)
    tw = _table(("twiddle", p, m, sign), lambda: _twiddles(p, m, sign), re.dtype, re.device)
    tr, ti = tw[0], tw[1]
    zr, zi = yr * tr - yi * ti, yr * ti + yi * tr
    stage = _table(("stage", p, sign), lambda: _stage_matrix(p, sign), re.dtype, re.device)
    out = matmul(stage, cat([zr, zi], 1))  # (b, 2p, m): rows k2 of X[k1 + m k2]
    return out[:, :p].reshape(b, n), out[:, p:].reshape(b, n)


def _bluestein(re, im, n, sign):
    """Bluestein's chirp-z: X_k = c_k sum_j (x_j c_j) conj(c)_{k-j}, c_k = exp(sign i pi k^2 / n),
    the convolution by transforms of a power-of-2 length M >= 2n - 1."""
    size = 1 << (2 * n - 2).bit_length()
    k = np.arange(n)
    chirp = _roots(k * k, 2 * n, sign)  # exp(sign i pi k^2 / n)

    def kernel():
        b = np.zeros(size, complex)
        b[:n] = chirp.conj()
        b[size - n + 1 :] = chirp.conj()[1:][::-1]
        f = np.fft.fft(b)
        return np.stack([f.real, f.imag])

    dt, device = re.dtype, re.device
    c = _table(("chirp", n, sign), lambda: np.stack([chirp.real, chirp.imag]), dt, device)
    f = _table(("bluestein", n, sign), kernel, dt, device)
    cr, ci = c[0], c[1]
    ar, ai = (re * cr, re * ci) if im is None else (re * cr - im * ci, re * ci + im * cr)
    pad = zeros((re._shape[0], size - n), dtype=dt, device=device)
    ar, ai = cat([ar, pad], 1), cat([ai, pad], 1)
    fr, fi = _transform(ar, ai, size, -1)
    gr, gi = fr * f[0] - fi * f[1], fr * f[1] + fi * f[0]
    hr, hi = _transform(gr, gi, size, 1)  # the inverse, unscaled
    hr, hi = hr[:, :n] / size, hi[:, :n] / size
    return hr * cr - hi * ci, hr * ci + hi * cr


# ---- arguments ----------------------------------------------------------------------------------
def _norm_scale(norm, n, forward) -> float:
    if norm is None or norm == "backward":
        return 1.0 if forward else 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 / n if forward else 1.0
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_norm(norm):
    if norm not in (None, "backward", "ortho", "forward"):
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _parts(x, name, real_only=False):
    """(re, im or None, the complex dtype) of the input, promoted as torch.fft does."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype.category == 3:
        if real_only:
            raise RuntimeError(
                f"{name} expects a real input tensor, but got "
                f"{'ComplexFloat' if x.dtype is D.complex64 else 'ComplexDouble'}"
            )
        r = view_as_real(x)
        return r.select(-1, 0), r.select(-1, 1), x.dtype
    dt = x.dtype if x.dtype.category == 2 else D.get_default_dtype()
    if dt in (D.float16, D.bfloat16):
        raise RuntimeError(f"Unsupported dtype {'Half' if dt is D.float16 else 'BFloat16'}")
    return (x if x.dtype is dt else x.to(dt)), None, dt.to_complex()


def _resize(t, dim, n):
    """``t`` trimmed or zero-padded to ``n`` along ``dim``."""
    have = t._shape[dim]
    if have == n:
        return t
    if have > n:
        return t.narrow(dim, 0, n)
    shape = list(t._shape)
    shape[dim] = n - have
    return cat([t, zeros(shape, dtype=t.dtype, device=t.device)], dim)


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _along(re, im, dim, n, sign):
    """The transform of the parts along ``dim`` (already of length n)."""
    re_m = re.movedim(dim, -1)
    shape = re_m._shape
    flat = re_m.reshape(-1, n)
    im_flat = None if im is None else im.movedim(dim, -1).reshape(-1, n)
    xr, xi = _transform(flat, im_flat, n, sign)
    return xr.reshape(shape).movedim(-1, dim), xi.reshape(shape).movedim(-1, dim)


def _scaled(re, im, scale):
    if scale == 1.0:
        return re, im
    return re * scale, im * scale


def _dims_and_sizes(x, s, dim, name, default_all=True):
    """torch.fft's n-dim arguments: the dims (unique, wrapped) and their output sizes."""
    ndim = x.ndim
    if s is not None:
        s = [int(v) for v in s]
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [wrap_dim(d, ndim) for d in dims]
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions."
            )
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim)) if default_all else []
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is None:
        s = [x._shape[d] for d in dims]
    else:
        s = [x._shape[d] if v == -1 else v for d, v in zip(dims, s)]
    for v in s:
        _check_n(v)
    return dims, s


def _c2c(x, s, dim, norm, sign, name):
    _check_norm(norm)
    re, im, cdt = _parts(x, name)
    if im is None:
        im_zero = True
    else:
        im_zero = False
    total = 1
    for d, n in zip(dim, s):
        re = _resize(re, d, n)
        im = None if im is None else _resize(im, d, n)
        re, im = _along(re, im, d, n, sign)
        total *= n
    if not dim:
        re, im = re * 1, (re * 0 if im_zero else im * 1)
    re, im = _scaled(re, im, _norm_scale(norm, total, sign < 0))
    return join(re, im, cdt)


def _one_dim(x, n, dim):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    n = x._shape[d] if n is None else int(n)
    _check_n(n)
    return d, n


# ---- public: one dim ---------------------------------------------------------------------------
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform along ``dim``, ``input`` trimmed or
    zero-padded to ``n`` points, like ``torch.fft.fft`` (a real input gives a complex result).

    >>> clgrad.fft.fft(clgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    d, n = _one_dim(input, n, dim)
    return _c2c(input, [n], [d], norm, -1, "fft")


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``fft`` along ``dim`` (scaled by 1/n with the default norm), like
    ``torch.fft.ifft``.

    >>> clgrad.fft.ifft(clgrad.tensor([10 + 0j, -2 + 2j, -2, -2 - 2j]))
    tensor([1.+0.j, 2.+0.j, 3.+0.j, 4.+0.j])
    """
    d, n = _one_dim(input, n, dim)
    return _c2c(input, [n], [d], norm, 1, "ifft")


def _r2c(x, s, dims, norm, name, onesided=True, sign=-1):
    """The transform of a real input (one-sided in ``dims[-1]``); ``sign`` 1: the inverse
    transform, scaled as one (ihfft: the conjugate of the forward one)."""
    _check_norm(norm)
    re, _, cdt = _parts(x, name, real_only=True)
    last, n_last = dims[-1], s[-1]
    re = _resize(re, last, n_last)
    re, im = _along(re, None, last, n_last, sign)
    if onesided:
        re, im = re.narrow(last, 0, n_last // 2 + 1), im.narrow(last, 0, n_last // 2 + 1)
    total = n_last
    for d, n in zip(dims[:-1], s[:-1]):
        re, im = _resize(re, d, n), _resize(im, d, n)
        re, im = _along(re, im, d, n, sign)
        total *= n
    re, im = _scaled(re, im, _norm_scale(norm, total, sign == -1))
    return join(re, im, cdt)


def _c2r(x, s, dims, norm, name, conjugate=False, forward=False):
    """The inverse of a one-sided transform: c2c inverses along ``dims[:-1]``, then the real
    result of the Hermitian-extended last dim of length ``s[-1]``."""
    _check_norm(norm)
    re, im, cdt = _parts(x, name)
    if im is None:
        im = re * 0
    if conjugate:
        im = -im
    sign = 1  # (hfft: the conjugate's inverse transform, scaled as a forward one)
    total = 1
    for d, n in zip(dims[:-1], s[:-1]):
        re, im = _resize(re, d, n), _resize(im, d, n)
        re, im = _along(re, im, d, n, sign)
        total *= n
    last, n = dims[-1], s[-1]
    half = n // 2 + 1
    re, im = _resize(re, last, half), _resize(im, last, half)
    if n > 1:  # X[n - k] = conj(X[k]) for the upper half
        tail = n - half
        mirror_re = re.narrow(last, 1, tail).flip(last)
        mirror_im = -im.narrow(last, 1, tail).flip(last)
        re, im = cat([re, mirror_re], last), cat([im, mirror_im], last)
    out, _ = _along(re, im, last, n, sign)
    total *= n
    scale = _norm_scale(norm, total, forward)
    return out * scale if scale != 1.0 else out


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The transform of a real input's ``n // 2 + 1`` non-negative frequencies, like
    ``torch.fft.rfft``.

    >>> clgrad.fft.rfft(clgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    d, n = _one_dim(input, n, dim)
    return _r2c(input, [n], [d], norm, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The real signal of ``n`` points (default ``2 * (m - 1)``) whose one-sided transform is
    ``input``, like ``torch.fft.irfft``.

    >>> clgrad.fft.irfft(clgrad.tensor([10 + 0j, -2 + 2j, -2]))
    tensor([1., 2., 3., 4.])
    """
    d, n = _one_dim_c2r(input, n, dim)
    return _c2r(input, [n], [d], norm, "irfft")


def _one_dim_c2r(x, n, dim):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    n = 2 * (x._shape[d] - 1) if n is None else int(n)
    _check_n(n)
    return d, n


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The real transform of a Hermitian-symmetric signal given by its first half, like
    ``torch.fft.hfft`` (``irfft`` of its conjugate, the other normalization).

    >>> clgrad.fft.hfft(clgrad.tensor([1 + 0j, 2, 3]))
    tensor([ 8., -2.,  0., -2.])
    """
    d, n = _one_dim_c2r(input, n, dim)
    return _c2r(input, [n], [d], norm, "hfft", conjugate=True, forward=True)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``hfft``: the one-sided inverse transform of a real signal, like
    ``torch.fft.ihfft``.

    >>> clgrad.fft.ihfft(clgrad.tensor([8.0, -2.0, 0.0, -2.0])).real
    tensor([1., 2., 3.])
    """
    d, n = _one_dim(input, n, dim)
    return _r2c(input, [n], [d], norm, "ihfft", sign=1)


# ---- public: n dims ------------------------------------------------------------------------------
def fftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The n-dimensional transform over ``dim`` (every dim by default; the last ``len(s)``
    where only ``s`` is given), like ``torch.fft.fftn``.

    >>> clgrad.fft.fftn(clgrad.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    dims, sizes = _dims_and_sizes(input, s, dim, "fftn")
    return _c2c(input, sizes, dims, norm, -1, "fftn")


def ifftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The inverse of ``fftn``, like ``torch.fft.ifftn``.

    >>> clgrad.fft.ifftn(clgrad.tensor([[4 + 0j, 0], [0, 0]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]])
    """
    dims, sizes = _dims_and_sizes(input, s, dim, "ifftn")
    return _c2c(input, sizes, dims, norm, 1, "ifftn")


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``fftn`` over the last two dims, like ``torch.fft.fft2``.

    >>> clgrad.fft.fft2(clgrad.ones(2, 2)).real
    tensor([[4., 0.],
            [0., 0.]])
    """
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``ifftn`` over the last two dims, like ``torch.fft.ifft2``.

    >>> clgrad.fft.ifft2(clgrad.fft.fft2(clgrad.ones(2, 2))).real
    tensor([[1., 1.],
            [1., 1.]])
    """
    return ifftn(input, s, dim, norm)


def rfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The n-dimensional transform of a real input, one-sided in the last dim, like
    ``torch.fft.rfftn``.

    >>> clgrad.fft.rfftn(clgrad.ones(2, 4)).shape
    clgrad.Size([2, 3])
    """
    dims, sizes = _dims_and_sizes(input, s, dim, "rfftn")
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    return _r2c(input, sizes, dims, norm, "rfftn")


def irfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The inverse of ``rfftn`` (the last dim's output size ``2 * (m - 1)`` by default), like
    ``torch.fft.irfftn``.

    >>> clgrad.fft.irfftn(clgrad.fft.rfftn(clgrad.ones(2, 4)))
    tensor([[1., 1., 1., 1.],
            [1., 1., 1., 1.]])
    """
    return _c2r_n(input, s, dim, norm, "irfftn")


def _c2r_n(input, s, dim, norm, name, **how):
    """``_c2r`` over ``dim`` and sizes ``s`` as torch's n-dimensional forms take them."""
    given = s is not None
    dims, sizes = _dims_and_sizes(input, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if not given:
        sizes[-1] = 2 * (input._shape[dims[-1]] - 1)
        _check_n(sizes[-1])
    return _c2r(input, sizes, dims, norm, name, **how)


def hfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The n-dimensional real transform of a Hermitian-symmetric signal given by its first half
    in the last dim, like ``torch.fft.hfftn`` (``irfftn`` of its conjugate, the other
    normalization; the last dim's output size ``2 * (m - 1)`` by default).

    >>> clgrad.fft.hfftn(clgrad.tensor([[1 + 0j, 2, 3], [0, 0, 0]]))
    tensor([[ 8., -2.,  0., -2.],
            [ 8., -2.,  0., -2.]])
    """
    return _c2r_n(input, s, dim, norm, "hfftn", conjugate=True, forward=True)


def ihfftn(
    input: Tensor,
    s: Sequence[int] | None = None,
    dim: int | Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The inverse of ``hfftn``: the n-dimensional inverse transform of a real signal, one-sided
    in the last dim, like ``torch.fft.ihfftn``.

    >>> clgrad.fft.ihfftn(clgrad.ones(2, 4)).real
    tensor([[1., 0., 0.],
            [0., 0., 0.]])
    """
    dims, sizes = _dims_and_sizes(input, s, dim, "ihfftn")
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    return _r2c(input, sizes, dims, norm, "ihfftn", sign=1)


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``hfftn`` over the last two dims, like ``torch.fft.hfft2``.

    >>> clgrad.fft.hfft2(clgrad.fft.ihfft2(clgrad.ones(2, 4)))
    tensor([[1., 1., 1., 1.],
            [1., 1., 1., 1.]])
    """
    return hfftn(input, s, dim, norm)


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``ihfftn`` over the last two dims, like ``torch.fft.ihfft2``.

    >>> clgrad.fft.ihfft2(clgrad.ones(2, 4)).shape
    clgrad.Size([2, 3])
    """
    return ihfftn(input, s, dim, norm)


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``rfftn`` over the last two dims, like ``torch.fft.rfft2``.

    >>> clgrad.fft.rfft2(clgrad.ones(2, 4)).shape
    clgrad.Size([2, 3])
    """
    return rfftn(input, s, dim, norm)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """``irfftn`` over the last two dims, like ``torch.fft.irfft2``.

    >>> clgrad.fft.irfft2(clgrad.fft.rfft2(clgrad.ones(2, 4))).shape
    clgrad.Size([2, 4])
    """
    return irfftn(input, s, dim, norm)


# ---- frequencies and shifts --------------------------------------------------------------------
def fftfreq(
    n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The sample frequencies of an ``n``-point transform (spacing ``d``): 0, 1, ...,
    -(n // 2), ..., -1 over ``d * n``, like ``torch.fft.fftfreq``.

    >>> clgrad.fft.fftfreq(5)
    tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]) / (d * n)
    out = tensor(k, dtype=dt, device=device)
    return out.requires_grad_(True) if requires_grad else out


def rfftfreq(
    n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point ``rfft`` (spacing ``d``), like
    ``torch.fft.rfftfreq``.

    >>> clgrad.fft.rfftfreq(6, 0.5)
    tensor([0.0000, 0.3333, 0.6667, 1.0000])
    """
    dt = D.as_dtype(dtype) if dtype is not None else D.get_default_dtype()
    out = np.arange(n // 2 + 1) / (d * n)  # (on the host: the default device may be another)
    out = tensor(out, dtype=dt, device=device)
    return out.requires_grad_(True) if requires_grad else out


def _shift(x, dim, sign):
    if dim is None:
        dims = list(range(x.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [wrap_dim(d, x.ndim) for d in dims]
    if not dims:
        return x.clone()
    shifts = [(x._shape[d] // 2) * sign if sign > 0 else -(x._shape[d] // 2) for d in dims]
    return x.roll(shifts, dims)


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """``input`` rolled so that the zero frequency is in the middle (over every dim by
    default), like ``torch.fft.fftshift``.

    >>> clgrad.fft.fftshift(clgrad.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of ``fftshift``, like ``torch.fft.ifftshift``.

    >>> clgrad.fft.ifftshift(clgrad.fft.fftshift(clgrad.arange(5)))
    tensor([0, 1, 2, 3, 4])
    """
    return _shift(input, dim, -1)


# torch.fft's functions take out= (written as torch's out= variants write; frequencies and shifts
# too where torch's take it)
for _name in __all__:
    if _name not in ("fftshift", "ifftshift"):
        globals()[_name] = with_out(globals()[_name])
del _name
