"""``torch.signal.windows``: the window functions of SciPy's ``signal.windows`` that PyTorch
has, with PyTorch's signatures (``M``, then keyword-only ``sym``, each window's parameters,
``dtype``, ``layout``, ``device``, ``requires_grad``), errors and computations: each window is
computed as torch computes it (a ``linspace`` and elementwise ops in ``dtype`` on ``device``), so
the values agree with torch's to the dtype's rounding and ``requires_grad`` gives a window whose
gradient flows back through those ops, as torch's does.

>>> import clgrad.signal
>>> clgrad.signal.windows.bartlett(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ... import dtypes as _D
from ... import functional as _F
from ...ops import creation as _C

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _checks(name: str, M: int, dtype, layout):
    """torch's checks common to every window; the dtype (the default one for None)."""
    dtype = _D.get_default_dtype() if dtype is None else _D.as_dtype(dtype)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _D.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_D.float32, _D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _filled(M, dtype, device, requires_grad):
    """The windows of no point (empty) and of one point (a one)."""
    make = _C.empty if M == 0 else _C.ones
    return make((M,), dtype=dtype, device=device, requires_grad=requires_grad)


def _points(start, constant, M, dtype, device, requires_grad):
    """The M points ``(start + n) * constant``, n = 0 .. M - 1, as torch's windows make them:
    ``linspace`` between the two ends (ATen's arithmetic: the ends exact)."""
    return _C.linspace(
        start * constant,
        (start + (M - 1)) * constant,
        M,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
    )


def exponential(
    M: int,
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``, as
    ``torch.signal.windows.exponential`` (``center`` only for ``sym=False``).

    >>> clgrad.signal.windows.exponential(5, tau=2.0)
    tensor([0.3679, 0.6065, 1.0000, 0.6065, 0.3679])
    """
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _filled(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _points(-center, constant, M, dtype, device, requires_grad)
    return _F.exp(-_F.abs(k))


def cosine(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The cosine (sine) window ``sin(pi (n + 0.5) / M)``, as ``torch.signal.windows.cosine``.

    >>> clgrad.signal.windows.cosine(4)
    tensor([0.3827, 0.9239, 0.9239, 0.3827])
    """
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _filled(M, dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _points(start, constant, M, dtype, device, requires_grad)
    return _F.sin(k)


def gaussian(
    M: int,
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The Gaussian window ``exp(-(n / (2 std))^2)`` about the window's middle, as
    ``torch.signal.windows.gaussian``.

    >>> clgrad.signal.windows.gaussian(5, std=2.0)
    tensor([0.6065, 0.8825, 1.0000, 0.8825, 0.6065])
    """
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _filled(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _points(start, constant, M, dtype, device, requires_grad)
    return _F.exp(-(k**2))


def kaiser(
    M: int,
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The Kaiser window ``I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)``, as
    ``torch.signal.windows.kaiser``.

    >>> clgrad.signal.windows.kaiser(3, beta=0.0)
    tensor([1., 1., 1.])
    """
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _filled(M, dtype, device, requires_grad)
    # beta in the window's dtype, as torch takes it (no NaN from rounding)
    beta = _C.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = _F.minimum(beta, start + (M - 1) * constant)
    k = _C.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _F.i0(_F.sqrt(beta * beta - _F.pow(k, 2))) / _F.i0(beta)


def general_cosine(
    M: int,
    *,
    a: Iterable,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The general cosine window ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``, as
    ``torch.signal.windows.general_cosine``.

    >>> clgrad.signal.windows.general_cosine(5, a=[0.5, 0.5])
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    dtype = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return _filled(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _points(0, constant, M, dtype, device, requires_grad)
    a_i = _C.tensor(
        [(-1) ** i * w for i, w in enumerate(a)],
        device=device,
        dtype=dtype,
        requires_grad=requires_grad,
    )
    i = _C.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * _F.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(
    M: int,
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The general Hamming window ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``, as
    ``torch.signal.windows.general_hamming``.

    >>> clgrad.signal.windows.general_hamming(3)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return general_cosine(
        M,
        a=[alpha, 1.0 - alpha],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def hamming(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The Hamming window ``0.54 - 0.46 cos(2 pi n / (M - 1))``, as
    ``torch.signal.windows.hamming``.

    >>> clgrad.signal.windows.hamming(4, sym=False)
    tensor([0.0800, 0.5400, 1.0000, 0.5400])
    """
    return general_hamming(
        M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hann(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (M - 1))``, as ``torch.signal.windows.hann``.

    >>> clgrad.signal.windows.hann(4, sym=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return general_hamming(
        M,
        alpha=0.5,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def blackman(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The Blackman window ``0.42 - 0.5 cos(2 pi n/(M-1)) + 0.08 cos(4 pi n/(M-1))``, as
    ``torch.signal.windows.blackman``.

    >>> clgrad.signal.windows.blackman(5)[1:4]
    tensor([0.3400, 1.0000, 0.3400])
    """
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(
        M,
        a=[0.42, 0.5, 0.08],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def bartlett(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """The Bartlett (triangular) window ``1 - |2n / (M - 1) - 1|``, as
    ``torch.signal.windows.bartlett``.

    >>> clgrad.signal.windows.bartlett(4, sym=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _filled(M, dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _C.linspace(
        start,
        start + (M - 1) * constant,
        M,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
    )
    return 1 - _F.abs(k)


def nuttall(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=_D.strided,
    device=None,
    requires_grad: bool = False,
):
    """Nuttall's minimum 4-term Blackman-Harris window, as ``torch.signal.windows.nuttall``.

    >>> clgrad.signal.windows.nuttall(3)
    tensor([3.6280e-04, 1.0000e+00, 3.6280e-04])
    """
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
