"""The ``clgrad.<op>`` functions: every declared op (``ops.registry``) and the hand-written
families' public functions, each the same op as the Tensor method of that name."""

from __future__ import annotations

import builtins as _builtins

from .autograd.grad_mode import is_inference_mode_enabled as _is_inference_mode_enabled
from .format import set_printoptions as _set_printoptions
from .ops import activation as _A
from .ops import complex as _CX
from .ops import creation as _C
from .ops import decomp as _DC
from .ops import elementwise as _E
from .ops import foreach as _FE
from .ops import indexing as _I
from .ops import linalg as _L
from .ops import lu as _LU
from .ops import methods as _methods  # attaches Tensor's methods
from .ops import movement as _M
from .ops import reduction as _R
from .ops import scans as _SC
from .ops import sorting as _SO
from .ops import special_math as _SM
from .ops.core import broadcast_shapes as _broadcast_shapes
from .ops.core import factory_out as _factory_out
from .ops.core import numpy_named as _numpy_named
from .ops.core import with_out as _with_out
from .ops.registry import ELEMENTWISE as _ELEMENTWISE
from .ops.registry import REDUCTIONS as _REDUCTIONS
from .tensor import Size as _Size
from .tensor import Tensor as _Tensor

_DECLARED = {op.name: op.public for op in (*_ELEMENTWISE.values(), *_REDUCTIONS.values())}
_HAND_WRITTEN = {
    # elementwise helpers and aliases
    **{alias: _DECLARED[name] for alias, name in _E.ALIASES.items()},
    "true_divide": _E.true_divide,
    "float_power": _E.float_power,
    "positive": _E.positive,
    "isreal": _E.isreal,
    "isclose": _E.isclose,
    "allclose": _E.allclose,
    "equal": _E.equal,
    "clip": _E.clip,
    "clamp_min": _E.clamp_min,
    "clamp_max": _E.clamp_max,
    "square": _E.square,
    "reciprocal": _E.reciprocal,
    # reductions built on the declared ones
    "mean": _R.mean,
    "var": _R.var,
    "std": _R.std,
    "max": _R.max,
    "min": _R.min,
    "all": _R.all,
    "any": _R.any,
    "logsumexp": _R.logsumexp,
    "softmax": _R.softmax,
    "log_softmax": _R.log_softmax,
    "cumsum": _R.cumsum,
    "var_mean": _R.var_mean,
    "std_mean": _R.std_mean,
    "aminmax": _R.aminmax,
    "count_nonzero": _R.count_nonzero,
    "norm": _R.norm,
    # sorting, selection and running ops
    "sort": _SO.sort,
    "argsort": _SO.argsort,
    "msort": _SO.msort,
    "topk": _SO.topk,
    "kthvalue": _SO.kthvalue,
    "median": _SO.median,
    "nanmedian": _SO.nanmedian,
    "cumprod": _SC.cumprod,
    "cummax": _SC.cummax,
    "cummin": _SC.cummin,
    "logcumsumexp": _SC.logcumsumexp,
    # linear algebra
    "matmul": _L.matmul,
    "mm": _L.mm,
    "bmm": _L.bmm,
    "dot": _L.dot,
    "vdot": _L.vdot,
    "mv": _L.mv,
    "outer": _L.outer,
    "ger": _L.outer,
    "addmm": _L.addmm,
    "addmv": _L.addmv,
    "baddbmm": _L.baddbmm,
    "addbmm": _L.addbmm,
    "kron": _L.kron,
    "cross": _L.cross,
    "tensordot": _L.tensordot,
    "einsum": _L.einsum,
    # movement
    "reshape": _M.reshape,
    "flatten": _M.flatten,
    "permute": _M.permute,
    "transpose": _M.transpose,
    "t": _M.t,
    "squeeze": _M.squeeze,
    "unsqueeze": _M.unsqueeze,
    "cat": _M.cat,
    "concat": _M.cat,
    "stack": _M.stack,
    "split": _M.split,
    "chunk": _M.chunk,
    "split_with_sizes": lambda input, split_sizes, dim=0: _M.split(input, list(split_sizes), dim),
    "prelu": _A.prelu,
    "unsafe_split": _M.unsafe_split,
    "unsafe_chunk": _M.unsafe_chunk,
    "unsafe_split_with_sizes": lambda input, split_sizes, dim=0: _M.unsafe_split(
        input, list(split_sizes), dim
    ),
    "narrow": _M.narrow,
    "flip": _M.flip,
    "unbind": _M.unbind,
    "movedim": _M.movedim,
    "broadcast_to": _M.expand,
    "clone": _M.clone,
    "tril": _M.tril,
    "triu": _M.triu,
    "diag": _M.diag,
    "diagonal": _M.diagonal,
    "diag_embed": _M.diag_embed,
    "diagflat": _M.diagflat,
    "trace": _M.trace,
    "roll": _M.roll,
    "fliplr": _M.fliplr,
    "flipud": _M.flipud,
    "rot90": _M.rot90,
    "repeat_interleave": _M.repeat_interleave,
    "meshgrid": _M.meshgrid,
    # indexing
    "gather": _I.gather,
    "scatter_add": _I.scatter_add,
    "index_select": _I.index_select,
    "masked_fill": _I.masked_fill,
    "nonzero": _I.nonzero,
    "nonzero_static": _I.nonzero_static,
    "masked_select": _I.masked_select,
    "scatter": _I.scatter,
    "scatter_reduce": _I.scatter_reduce,
    "index_add": _I.index_add,
    "index_copy": _I.index_copy,
    "index_reduce": _I.index_reduce,
    "index_fill": _I.index_fill,
    "index_put": _I.index_put,
    "masked_scatter": _I.masked_scatter,
    "take": _I.take_elements,
    "take_along_dim": _I.take_along_dim,
    "put": _I.put_elements,
    "argwhere": _I.argwhere,
    # NumPy-style shaping, stacking and splitting
    "swapaxes": _M.swapaxes,
    "swapdims": _M.swapaxes,
    "moveaxis": _M.movedim,
    "atleast_1d": _M.atleast_1d,
    "atleast_2d": _M.atleast_2d,
    "atleast_3d": _M.atleast_3d,
    "hstack": _M.hstack,
    "vstack": _M.vstack,
    "row_stack": _M.vstack,
    "dstack": _M.dstack,
    "column_stack": _M.column_stack,
    "tensor_split": _M.tensor_split,
    "hsplit": _M.hsplit,
    "vsplit": _M.vsplit,
    "dsplit": _M.dsplit,
    "ravel": _M.ravel,
    "tile": _M.tile,
    "broadcast_tensors": _M.broadcast_tensors,
    "block_diag": _M.block_diag,
    "cartesian_prod": _M.cartesian_prod,
    "combinations": _M.combinations,
    "diff": _M.diff,
    # compositions of elementwise ops, statistics, searching and counting
    "rsub": _E.rsub,
    "addcmul": _E.addcmul,
    "addcdiv": _E.addcdiv,
    "nan_to_num": _E.nan_to_num,
    "nanmean": _R.nanmean,
    "cov": _L.cov,
    "corrcoef": _L.corrcoef,
    "searchsorted": _SO.searchsorted,
    "bucketize": _SO.bucketize,
    "histc": _SO.histc,
    "histogram": _SO.histogram,
    "gradient": _M.gradient,
    "bincount": _SO.bincount,
    "unique": _SO.unique,
    "unique_consecutive": _SO.unique_consecutive,
}
# PyTorch's out= where its function takes one (views and splits have none, nor do a few
# others: flip, roll, trace, ...); NumPy's axis= and keepdims= names on every one of these
_NO_OUT = {"reshape", "flatten", "permute", "transpose", "t", "squeeze", "unsqueeze", "split"}
_NO_OUT |= {"chunk", "narrow", "unbind", "movedim", "broadcast_to", "clone", "isclose"}
_NO_OUT |= {"allclose", "equal", "isreal", "positive", "count_nonzero", "argwhere", "swapaxes"}
_NO_OUT |= {"swapdims", "moveaxis", "atleast_1d", "atleast_2d", "atleast_3d", "tensor_split"}
_NO_OUT |= {"histogram", "nonzero_static", "gradient"}
_NO_OUT |= {"split_with_sizes", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"}
_NO_OUT |= {"hsplit", "vsplit", "dsplit", "ravel", "tile", "rsub", "broadcast_tensors"}
_NO_OUT |= {"block_diag", "cartesian_prod", "combinations", "cov", "corrcoef", "bincount"}
_NO_OUT |= {"unique", "unique_consecutive", "searchsorted", "bucketize", "flip", "fliplr"}
_NO_OUT |= {"flipud", "roll", "rot90", "diagonal", "diag_embed", "diagflat", "trace", "einsum"}
_NO_OUT |= {"repeat_interleave", "meshgrid", "masked_fill", "index_fill", "masked_scatter", "put"}
# out= over an input's memory, refused as PyTorch refuses it (core.check_out): over any of it
# where the op reads its inputs while it writes out, over part of it where the op is
# elementwise or computes out from a copy of its input (PyTorch's TensorIterator)
_OUT_OVERLAP = dict.fromkeys(
    "cat concat concatenate stack hstack vstack row_stack dstack column_stack index_select "
    "gather take take_along_dim masked_select diff kron".split(),
    "any",
)
# the indexed writes (computed on a copy of their input): the input over part of out, any
# other argument over any of it
_OUT_OVERLAP.update(
    dict.fromkeys("index_add index_copy scatter scatter_add".split(), "input partial")
)
_OUT_OVERLAP.update(
    dict.fromkeys(
        "addcmul addcdiv nan_to_num cumsum cumprod sort true_divide float_power clip clamp_min "
        "clamp_max square reciprocal".split(),
        "partial",
    )
)


# how a result reaches out's dtype where it is not PyTorch's casting rules (core.with_out)
_OUT_DTYPE = dict.fromkeys(
    "cat concat concatenate stack hstack vstack row_stack dstack column_stack".split(), "cat"
)
_OUT_DTYPE.update(dict.fromkeys("isin multinomial softmax log_softmax histc".split(), "same"))
_OUT_DTYPE["bernoulli"] = "any"  # its 0s and 1s, drawn in out's dtype


def _public_form(name, fn):
    if hasattr(fn, "op"):  # a declared op's alias: its function has both already
        return fn
    if name in _NO_OUT:
        return _numpy_named(fn)
    return _with_out(fn, _OUT_OVERLAP.get(name), _OUT_DTYPE.get(name, "cast"))


_HAND_WRITTEN = {name: _public_form(name, fn) for name, fn in _HAND_WRITTEN.items()}
globals().update(_DECLARED)
globals().update(_HAND_WRITTEN)


def broadcast_shapes(*shapes) -> _Size:
    """The shape the given shapes broadcast to.

    >>> clgrad.broadcast_shapes((2, 1), (3,))
    clgrad.Size([2, 3])
    """
    return _Size(_broadcast_shapes(*shapes))


__all__ = [*_DECLARED, *_HAND_WRITTEN, "broadcast_shapes"]
del _methods

# PyTorch names added for drop-in use (tests/test_drop_in_names.py, tests/test_drop_in_linalg.py)
# whose own signatures already follow PyTorch's (out= where they take one)
_MORE = {
    "select": _numpy_named(_M.select),  # (input= for its first parameter, as the others)
    "unflatten": _numpy_named(_M.unflatten),
    "select_scatter": _M.select_scatter,
    "slice_scatter": _M.slice_scatter,
    "diagonal_scatter": _M.diagonal_scatter,
    "as_strided_scatter": _M.as_strided_scatter,
    "narrow_copy": _M.narrow_copy,
    "vander": _M.vander,
    "inner": _L.inner,
    "dist": _L.dist,
    "cdist": _L.cdist,
    "pdist": _L.pdist,
    "addr": _L.addr,
    "chain_matmul": _L.chain_matmul,
    "renorm": _L.renorm,
    "isin": _SO.isin,
    "quantile": _SO.quantile,
    "nanquantile": _SO.nanquantile,
    "mode": _SO.mode,
    "trapezoid": _SC.trapezoid,
    "trapz": _SC.trapz,
    "cumulative_trapezoid": _SC.cumulative_trapezoid,
    "tril_indices": _C.tril_indices,
    "triu_indices": _C.triu_indices,
    "asarray": _C.asarray,
    "frombuffer": _C.frombuffer,
    "hann_window": _C.hann_window,
    "hamming_window": _C.hamming_window,
    "blackman_window": _C.blackman_window,
    "bartlett_window": _C.bartlett_window,
    "kaiser_window": _C.kaiser_window,
    "unravel_index": _I.unravel_index,
    "concatenate": _M.concatenate,
    "scalar_tensor": _C.scalar_tensor,
    "empty_strided": _C.empty_strided,
    "det": _DC.det,
    "logdet": _DC.logdet,
    "slogdet": _DC.slogdet,
    "inverse": _DC.inv,
    "cholesky": _DC.cholesky_legacy,
    "cholesky_solve": _DC.cholesky_solve,
    "cholesky_inverse": _DC.cholesky_inverse,
    "qr": _DC.qr_legacy,
    "svd": _DC.svd_legacy,
    "pinverse": _DC.pinverse,
    "matrix_power": _DC.matrix_power,
    "matrix_exp": _DC.matrix_exp,
    "triangular_solve": _DC.triangular_solve,
    "lu": _with_out(_LU.lu_legacy),
    "lu_unpack": _with_out(_LU.lu_unpack),
    "lu_solve": _with_out(_LU.lu_solve_legacy),
    "geqrf": _with_out(_DC.geqrf),
    "ormqr": _with_out(_DC.ormqr),
    "orgqr": _DC.orgqr,
    "lgamma": _SM.lgamma,
    "digamma": _SM.digamma,
    "polygamma": _SM.polygamma,
    "igamma": _SM.igamma,
    "igammac": _SM.igammac,
    "mvlgamma": _SM.multigammaln,
    "erfinv": _SM.erfinv,
    "i0": _SM.i0,
    "gcd": _SM.gcd,
    "lcm": _SM.lcm,
    "frexp": _SM.frexp,
    "ldexp": _SM.ldexp,
    "set_printoptions": _set_printoptions,
    "as_strided": _M.as_strided,
    # complex numbers' API on real tensors (clgrad has no complex dtypes): the Tensor methods
    **{
        name: getattr(_Tensor, name)
        for name in "conj conj_physical resolve_conj resolve_neg is_conj is_neg".split()
    },
}


def is_same_size(input, other) -> bool:
    """Whether two tensors have the same shape.

    >>> clgrad.is_same_size(clgrad.zeros(2), clgrad.ones(2))
    True
    """
    return tuple(input.shape) == tuple(other.shape)


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block is in effect.

    >>> with clgrad.inference_mode():
    ...     clgrad.is_inference_mode_enabled()
    True
    """
    return _is_inference_mode_enabled()


def _inplace_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"``input.{name}(...)``: the in-place function ``torch.{name}``."
    return fn


# torch's top-level in-place functions (torch.relu_, torch.exp_, ...): the Tensor method
_INPLACE = [
    name
    for name in (
        "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
        "atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ "
        "exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ lcm_ ldexp_ log10_ log1p_ log2_ "
        "log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ "
        "sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_ detach_ "
        "addmv_ as_strided_ resize_as_"
    ).split()
    if hasattr(_Tensor, name)
]
_MORE.update({name: _inplace_function(name) for name in _INPLACE})
# of those, the functions PyTorch gives an out= (the others take none there either)
_MORE.update(
    {
        name: _public_form(name, _MORE[name])
        for name in (
            "inner addr chain_matmul renorm isin matrix_power lgamma digamma erfinv i0 gcd lcm "
            "ldexp narrow_copy slice_scatter concatenate"
        ).split()
    }
)
# the factories and random draws, with PyTorch's out=
_MORE.update(
    {
        name: _factory_out(getattr(_C, name))
        for name in (
            "empty zeros ones full arange linspace logspace eye rand randn randint randperm"
        ).split()
    }
)
_MORE["range"] = _factory_out(_C.range_inclusive)
_MORE.update(
    {name: _public_form(name, getattr(_C, name)) for name in ("normal", "bernoulli", "multinomial")}
)
globals().update(_MORE)
__all__ += [*_MORE, "is_same_size", "is_inference_mode_enabled"]
# torch._foreach_add_ and the rest of the family (EMA updates and hand-written optimizers)
globals().update({name: getattr(_FE, name) for name in _FE.__all__})
__all__ += _FE.__all__


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, as ``torch.cond``:
    ``pred`` a bool or a one-element tensor (read on the host here: clgrad runs eagerly, so
    the branch not taken never runs); gradients flow through the branch taken.

    >>> x = clgrad.ones(2)
    >>> clgrad.cond(x.sum() > 1, lambda x: x * 2, lambda x: x - 1, (x,))
    tensor([2., 2.])
    """
    if isinstance(pred, _Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"Expected pred to be bool or single-element tensor, but got {pred}."
            )
        pred = bool(pred.item())
    elif not isinstance(pred, bool):
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    return (true_fn if pred else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs ``carried_inputs = body_fn(*carried_inputs)`` while ``cond_fn(*carried_inputs)``
    holds, as ``torch.while_loop``; returns the final carried values (a tuple).

    >>> clgrad.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
    ...                   (clgrad.tensor(0), clgrad.ones(2)))
    (tensor(3), tensor([8., 8.]))
    """
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while cond(cond_fn(*carried), lambda: True, lambda: False):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried


__all__ += ["cond", "while_loop"]


# ---- short-time Fourier transforms ---------------------------------------------------------------
# (this module's globals shadow range, min, max, abs with clgrad's: Python's are _builtins')


def _window_of(window, win_length, n_fft, device, dtype, name):
    """The window as n_fft samples: ones where None (torch's warning), zero-padded on both
    sides to n_fft where shorter."""
    import warnings

    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied, which is known to "
            "cause spectral leakage.",
            UserWarning,
            stacklevel=3,
        )
        window = _C.ones(win_length, dtype=dtype, device=device)
    if window.ndim != 1 or window._shape[0] != win_length:
        raise RuntimeError(
            f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, but "
            f"got window with size {list(window._shape)}"
        )
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _M.cat(
            [
                _C.zeros(left, dtype=window.dtype, device=window.device),
                window,
                _C.zeros(n_fft - win_length - left, dtype=window.dtype, device=window.device),
            ]
        )
    return window


def _pad_last(x, p, mode):
    """``x`` padded by ``p`` on both ends of its last dim (stft's ``center``)."""
    n = x._shape[-1]
    if mode == "constant":
        z = _C.zeros((*x._shape[:-1], p), dtype=x.dtype, device=x.device)
        return _M.cat([z, x, z], -1)
    idx = list(_builtins.range(-p, n + p))
    if mode == "reflect":
        if p >= n:
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({p}, {p}) at dimension {x.ndim - 1} of input "
                f"{list(x._shape)}"
            )
        idx = [-i if i < 0 else 2 * (n - 1) - i if i >= n else i for i in idx]
    elif mode == "replicate":
        idx = [_builtins.min(_builtins.max(i, 0), n - 1) for i in idx]
    elif mode == "circular":
        idx = [i % n for i in idx]
    else:
        raise NotImplementedError(f"stft: pad_mode {mode!r} is not supported")
    return _I.select_positions(x, x.ndim - 1, idx)


def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
):
    """The short-time Fourier transform of a 1-d signal or a batch of them (B, L), like
    ``torch.stft``: frames of ``n_fft`` samples every ``hop_length`` (default n_fft // 4),
    times ``window``, transformed; (B, n_fft // 2 + 1, frames) complex (onesided, the default
    for real inputs). ``return_complex`` must be given for a real input (False: the deprecated
    real view, with torch's warning).

    >>> x = clgrad.arange(16.0)
    >>> clgrad.stft(x, 8, window=clgrad.hann_window(8), return_complex=True).shape
    clgrad.Size([5, 9])
    """
    import warnings

    from . import fft as _fft

    if (
        return_complex is None
        and not input.is_complex()
        and not (window is not None and window.is_complex())
    ):
        raise RuntimeError(
            "stft requires the return_complex parameter be given for real inputs, and will "
            "further require that return_complex=True in a future PyTorch release."
        )
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D")
    hop, win = _frame_sizes("stft", n_fft, hop_length, win_length)
    x = input.unsqueeze(0) if input.ndim == 1 else input
    if center:
        x = _pad_last(x, n_fft // 2, pad_mode)
    length = x._shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    real_dt = x.dtype.to_real() if x.is_complex() else x.dtype
    w = _window_of(window, win, n_fft, x.device, real_dt, "stft")
    frames = x.unfold(-1, n_fft, hop) * w  # (B, frames, n_fft)
    complex_in = frames.is_complex()
    if onesided is None:
        onesided = not complex_in
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(frames, norm=norm) if onesided else _fft.fft(frames, norm=norm)
    spec = spec.transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    if not return_complex and return_complex is not None:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise "
            "an error.",
            UserWarning,
            stacklevel=2,
        )
        return _CX.view_as_real(spec)
    return spec


def _frame_sizes(name, n_fft, hop_length, win_length):
    """(hop, window length) of stft / istft, their defaults n_fft // 4 and n_fft, refused as
    torch refuses them (istft also wants the hop within the window, to overlap-add)."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got win_length={win}")
    if name == "stft" and hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if name == "istft" and not 0 < hop <= win:
        raise RuntimeError(f"istft: expected 0 < hop_length <= win_length, but got {hop}")
    return hop, win


def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """The inverse of ``stft`` by overlap-add, divided by the window's summed squares, like
    ``torch.istft``: (B, freqs, frames) complex -> (B, length) real (complex with
    ``return_complex``).

    >>> x = clgrad.arange(16.0)
    >>> w = clgrad.hann_window(8)
    >>> y = clgrad.istft(clgrad.stft(x, 8, window=w, return_complex=True), 8, window=w)
    >>> bool((y - x).abs().max() < 1e-4)
    True
    """
    from . import fft as _fft

    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions, got {input.ndim}")
    hop, win = _frame_sizes("istft", n_fft, hop_length, win_length)
    spec = input.unsqueeze(0) if input.ndim == 2 else input
    if onesided is None:
        onesided = spec._shape[-2] != n_fft
    if onesided and spec._shape[-2] != n_fft // 2 + 1:
        raise RuntimeError(
            f"istft: expected the frequency dimension (3rd to the last) of the input tensor "
            f"to match n_fft / 2 + 1 when onesided=True, but got {spec._shape[-2]}"
        )
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    real_dt = spec.dtype.to_real()
    w = _window_of(window, win, n_fft, spec.device, real_dt, "istft")
    norm = "ortho" if normalized else "backward"
    spec = spec.transpose(-1, -2)  # (B, frames, freqs)
    frames = _fft.irfft(spec, n=n_fft, norm=norm) if onesided else _fft.ifft(spec, norm=norm)
    if not return_complex and frames.is_complex():
        frames = frames.real
    frames = frames * w
    b, n_frames = frames._shape[0], frames._shape[1]
    total = n_fft + hop * (n_frames - 1)
    pos = (
        _C.arange(n_frames, device=frames.device).unsqueeze(1) * hop
        + _C.arange(n_fft, device=frames.device)
    ).reshape(-1)
    zeros = _C.zeros((b, total), dtype=frames.dtype, device=frames.device)
    y = zeros.index_add(1, pos, frames.reshape(b, -1))
    envelope = _C.zeros(total, dtype=real_dt, device=frames.device).index_add(
        0, pos, (w * w).expand(n_frames, n_fft).reshape(-1)
    )
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = total - n_fft // 2
    else:
        end = total
    stop = _builtins.min(end, total)
    y, envelope = y[:, start:stop], envelope[start:stop]
    if envelope.numel() and float(envelope.abs().min()) < 1e-11:
        raise RuntimeError(f"istft(...): window overlap add min: {float(envelope.abs().min())}")
    y = y / envelope
    if end > total:
        y = _M.cat([y, _C.zeros((b, end - total), dtype=y.dtype, device=y.device)], 1)
    return y.squeeze(0) if input.ndim == 2 else y


_Tensor.stft = stft
_Tensor.istft = istft
__all__ += ["stft", "istft"]
