"""No silent wrong answer: each case runs on torch and on every test device, and clgrad must
give torch's value and dtype, or raise torch's exception class.

A case is ``lambda m, dev: ...`` with ``m`` the module (``torch`` or ``clgrad``) and ``dev`` the
device (always ``cpu`` for torch). One case stands for a family fixed at its root; the fuzz
test (``test_fuzz_errors.py``) covers the ops broadly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import clgrad


def T(m, dev, data, dtype=None):
    return m.tensor(data, dtype=getattr(m, dtype) if dtype else None, device=dev)


def _error_class(e: BaseException) -> str:
    """The first builtin exception class of ``e`` (torch's errors subclass RuntimeError...)."""
    return next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins")


def summarize(r):
    """A comparable form of a result: tensors as (dtype name, shape, values), recursively."""
    if isinstance(r, (torch.Tensor, clgrad.Tensor)):
        a = r.detach().cpu().numpy()
        vals = a.astype(np.float64) if a.dtype.kind == "f" else a
        return ("tensor", str(r.dtype).split(".")[-1], tuple(a.shape), vals)
    if isinstance(r, (tuple, list)):
        return tuple(summarize(x) for x in r)
    return ("py", r)


def outcome(fn, m, dev):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", summarize(fn(m, dev)))
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raise", _error_class(e), str(e))


def same(a, b) -> bool:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor"):
            return False
        if a[1:3] != b[1:3]:
            return False
        x, y = a[3], b[3]
        if x.dtype.kind == "f" or y.dtype.kind == "f":
            return np.allclose(x, y, rtol=1e-3, atol=1e-5, equal_nan=True)
        return np.array_equal(x, y)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def check(fn, device):
    want = outcome(fn, torch, "cpu")
    got = outcome(fn, clgrad, device)
    if want[0] == "raise":
        assert got[0] == "raise", f"torch raises {want[1]}: {want[2]!r}; clgrad gives {got[1]!r}"
        assert got[1] == want[1], f"torch raises {want[1]} ({want[2]!r}), clgrad {got[1:]}"
    else:
        assert got[0] == "ok", f"torch gives {want[1]!r}; clgrad raises {got[1]}: {got[2]!r}"
        assert same(want[1], got[1]), f"torch {want[1]!r} != clgrad {got[1]!r}"


def _setitem(x, key, value):
    x[key] = value
    return x


CASES = {
    # reductions and dims of 0-d and empty tensors
    "argmax_0d": lambda m, d: T(m, d, 3.0).argmax(),
    "argmin_0d_dim": lambda m, d: T(m, d, 3.0).argmin(0),
    "argmax_0d_bad_dim": lambda m, d: T(m, d, 3.0).argmax(1),
    "max_dim_0d": lambda m, d: tuple(T(m, d, 3.0).max(dim=0)),
    "max_dim_0d_grad": lambda m, d: _grad_of(m, d, lambda x: x.max(dim=0)[0]),
    "min_dim_0d_bad": lambda m, d: T(m, d, 3.0).min(dim=1),
    "max_empty": lambda m, d: m.zeros(0, device=d).max(),
    "amin_empty": lambda m, d: m.zeros(0, device=d).amin(),
    "amax_empty_dim": lambda m, d: m.zeros(0, 3, device=d).amax(0),
    "amax_empty_other_dim": lambda m, d: m.zeros(0, 3, device=d).amax(1),
    "argmax_empty": lambda m, d: m.zeros(0, device=d).argmax(),
    "max_empty_dim": lambda m, d: m.zeros(0, 3, device=d).max(0),
    "sum_0d_bad_dim": lambda m, d: T(m, d, 3.0).sum(1),
    "squeeze_0d_bad_dim": lambda m, d: T(m, d, 3.0).squeeze(10),
    "squeeze_0d": lambda m, d: T(m, d, 3.0).squeeze(-1),
    "cumsum_0d_bad_dim": lambda m, d: T(m, d, 3.0).cumsum(dim=1),
    "cumsum_0d": lambda m, d: T(m, d, 3.0).cumsum(dim=0),
    "softmax_0d_bad_dim": lambda m, d: T(m, d, 3.0).softmax(1),
    "flatten_0d_bad_dim": lambda m, d: T(m, d, 3.0).flatten(1),
    "transpose_0d_bad": lambda m, d: T(m, d, 1.0).transpose(0, 1),
    "transpose_0d": lambda m, d: T(m, d, 1.0).transpose(0, -1),
    # indexing
    "index_uint8_mask": lambda m, d: T(m, d, [1.0, 2, 3])[T(m, d, [1, 0, 1], "uint8")],
    "index_int8": lambda m, d: T(m, d, [1.0, 2, 3])[T(m, d, [1, 0], "int8")],
    "index_int16": lambda m, d: T(m, d, [1.0, 2, 3])[T(m, d, [1, 0], "int16")],
    "index_int32": lambda m, d: T(m, d, [1.0, 2, 3])[T(m, d, [2, 0], "int32")],
    "index_float": lambda m, d: T(m, d, [1.0, 2, 3])[T(m, d, [1.0])],
    "gather_negative": lambda m, d: T(m, d, [1.0, 2, 3]).gather(0, T(m, d, [-1])),
    "gather_out_of_range": lambda m, d: T(m, d, [1.0, 2, 3]).gather(0, T(m, d, [5])),
    "gather_int32": lambda m, d: T(m, d, [1.0, 2, 3]).gather(0, T(m, d, [2, 0], "int32")),
    "gather_int16": lambda m, d: T(m, d, [1.0, 2, 3]).gather(0, T(m, d, [2, 0], "int16")),
    "index_select_negative": lambda m, d: T(m, d, [1.0, 2, 3]).index_select(0, T(m, d, [-1])),
    "index_select_out_of_range": lambda m, d: T(m, d, [1.0, 2]).index_select(0, T(m, d, [2])),
    "index_select_int32": lambda m, d: T(m, d, [1.0, 2]).index_select(0, T(m, d, [1], "int32")),
    "scatter_add_negative": lambda m, d: m.zeros(3, device=d).scatter_add(
        0, T(m, d, [-1]), T(m, d, [1.0])
    ),
    "scatter_add_small_src": lambda m, d: m.zeros(3, device=d).scatter_add(
        0, T(m, d, [0, 1, 2]), T(m, d, [1.0])
    ),
    "scatter_add_int32": lambda m, d: m.zeros(3, device=d).scatter_add(
        0, T(m, d, [2, 0], "int32"), T(m, d, [1.0, 2.0])
    ),
    "index_empty_list": lambda m, d: T(m, d, [1.0, 2, 3])[[]],
    "index_empty_list_2d": lambda m, d: m.zeros(3, 2, device=d)[[]],
    "index_tuple_in_tuple": lambda m, d: m.arange(6.0, device=d).reshape(3, 2)[(0, 1),],
    "index_list_of_tuples": lambda m, d: m.arange(6.0, device=d).reshape(3, 2)[[(0, 1), (1, 0)]],
    "index_tuple_pair": lambda m, d: m.arange(6.0, device=d).reshape(3, 2)[(2, 1)],
    "setitem_one_elem_tensor": lambda m, d: _setitem(T(m, d, [1.0, 2, 3]), 1, T(m, d, [5.0])),
    "setitem_leading_ones": lambda m, d: _setitem(
        m.zeros(3, 2, device=d), 0, T(m, d, [[[5.0, 6.0]]])
    ),
    "setitem_too_big": lambda m, d: _setitem(T(m, d, [1.0, 2, 3]), 1, T(m, d, [5.0, 6.0])),
    "setitem_int_float": lambda m, d: _setitem(T(m, d, [1, 2]), 0, 2.7),
    "setitem_uint8_overflow": lambda m, d: _setitem(T(m, d, [1, 2], "uint8"), 0, 300),
    "eq_none": lambda m, d: T(m, d, [1.0]) == None,  # noqa: E711
    "ne_none": lambda m, d: T(m, d, [1.0]) != None,  # noqa: E711
    "lt_none": lambda m, d: T(m, d, [1.0]) < None,
    # creation and overflow
    "tensor_2_63": lambda m, d: T(m, d, 2**63),
    "tensor_list_2_63": lambda m, d: T(m, d, [1, 2**63]),
    "tensor_minus_2_63": lambda m, d: T(m, d, -(2**63)),
    "tensor_uint8_300": lambda m, d: T(m, d, [300], "uint8"),
    "tensor_nan_int32": lambda m, d: T(m, d, [float("nan")], "int32"),
    "tensor_float_int32": lambda m, d: T(m, d, [1.5, -2.5], "int32"),
    "randint_2_70": lambda m, d: m.randint(0, 2**70, (2,), device=d),
    "randint_uint8_range": lambda m, d: m.randint(0, 300, (2,), dtype=m.uint8, device=d),
    "full_uint8_300": lambda m, d: m.full((2,), 300, dtype=m.uint8, device=d),
    "full_uint8_minus_1": lambda m, d: m.full((2,), -1, dtype=m.uint8, device=d),
    "full_int32_float": lambda m, d: m.full((2,), 2.5, dtype=m.int32, device=d),
    "full_int32_inf": lambda m, d: m.full((2,), float("inf"), dtype=m.int32, device=d),
    "full_half_overflow": lambda m, d: m.full((2,), 1e10, dtype=m.float16, device=d),
    "zeros_float_size": lambda m, d: m.zeros(1.5, device=d),
    "zeros_negative_size": lambda m, d: m.zeros(-1, device=d),
    "arange_int_truncated_step": lambda m, d: m.arange(0, 3.5, 0.5, dtype=m.int64, device=d),
    "arange_int_float_start": lambda m, d: m.arange(0.5, 3, 1, dtype=m.int64, device=d),
    "arange_inf": lambda m, d: m.arange(0, float("inf"), device=d),
    "linspace_int_down": lambda m, d: m.linspace(5, -5, 20, dtype=m.int64, device=d),
    "linspace_int_up": lambda m, d: m.linspace(0, 10, 4, dtype=m.int64, device=d),
    "linspace_negative_steps": lambda m, d: m.linspace(0, 1, -1, device=d),
    # integer arithmetic
    "floordiv_zero": lambda m, d: T(m, d, [5]) // 0,
    "mod_zero": lambda m, d: T(m, d, [5]) % 0,
    "floordiv_zero_tensor": lambda m, d: T(m, d, [5, 6]) // T(m, d, [1, 0]),
    "mod_zero_tensor": lambda m, d: T(m, d, [5, 6]) % T(m, d, [0, 1]),
    "div_trunc_zero": lambda m, d: T(m, d, [5]).div(0, rounding_mode="trunc"),
    "floordiv_zero_float": lambda m, d: T(m, d, [5.0]) // 0,
    "floordiv_inplace_zero": lambda m, d: T(m, d, [5]).floor_divide_(0),
    "pow_int_negative": lambda m, d: T(m, d, [5]) ** -1,
    "pow_bool_negative": lambda m, d: T(m, d, [True]) ** -1,
    "pow_int_negative_float": lambda m, d: T(m, d, [5]) ** -1.0,
    "pow_int_negative_tensor": lambda m, d: T(m, d, [5, 1, -1]) ** T(m, d, [-1, -2, -3]),
    "div_bad_rounding_mode": lambda m, d: m.div(T(m, d, [1.0]), 2, rounding_mode="bad"),
    # Python numbers into kernels
    "fill_int_float": lambda m, d: T(m, d, [1, 2]).fill_(2.5),
    "fill_uint8_overflow": lambda m, d: T(m, d, [1, 2], "uint8").fill_(300),
    "fill_int_nan": lambda m, d: T(m, d, [1, 2], "int32").fill_(float("nan")),
    "add_uint8_wraps": lambda m, d: T(m, d, [1], "uint8") + 300,
    "masked_fill_int_float": lambda m, d: T(m, d, [1, 2]).masked_fill(T(m, d, [True, False]), 2.5),
    "clamp_int_float": lambda m, d: T(m, d, [1, 2], "int32").clamp(min=2.5),
    # NaN bounds
    "clamp_min_nan": lambda m, d: T(m, d, [1.0, 2.0]).clamp(min=float("nan")),
    "clamp_max_nan": lambda m, d: T(m, d, [1.0, float("nan")]).clamp(max=float("nan")),
    "sign_nan": lambda m, d: T(m, d, [float("nan"), -1.0]).sign(),
    # internal exceptions that leaked
    "cat_0d": lambda m, d: m.cat([T(m, d, 1.0), T(m, d, 2.0)]),
    "cat_none": lambda m, d: m.cat([T(m, d, [1.0]), None]),
    "cat_tensor": lambda m, d: m.cat(T(m, d, [1.0])),
    "cat_empty_list": lambda m, d: m.cat([]),
    "stack_none": lambda m, d: m.stack([T(m, d, [1.0]), None]),
    "embedding_1d_weight": lambda m, d: m.nn.functional.embedding(T(m, d, [0]), T(m, d, [1.0, 2])),
    "normalize_p0": lambda m, d: m.nn.functional.normalize(T(m, d, [[1.0, 0, 2]]), p=0),
    "normalize_pinf": lambda m, d: m.nn.functional.normalize(
        T(m, d, [[1.0, -4, 2]]), p=float("inf")
    ),
    "dot": lambda m, d: T(m, d, [1.0, 2, 3]).dot(T(m, d, [4.0, 5, 6])),
    "dot_int32": lambda m, d: T(m, d, [1, 2], "int32").dot(T(m, d, [4, 5], "int32")),
    "dot_mismatch": lambda m, d: T(m, d, [1.0, 2, 3]).dot(T(m, d, [4.0, 5])),
    "mv_mismatch": lambda m, d: m.ones(2, 3, device=d) @ m.ones(2, device=d),
    "vm": lambda m, d: T(m, d, [1.0, 2]) @ m.arange(6.0, device=d).reshape(2, 3),
    "mv_batched": lambda m, d: m.arange(12.0, device=d).reshape(2, 2, 3) @ T(m, d, [1.0, 0, 2]),
}


def _grad_of(m, d, f):
    x = T(m, d, 3.0)
    x.requires_grad_(True)
    f(x).backward()
    return x.grad


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name, device):
    check(CASES[name], device)


def test_vector_products_need_no_padded_copies(cl_device):
    """A vector product allocates about the product's size, not a vector padded into a
    16-wide panel (a 300M-element dot once asked for 19 GB)."""
    n = 1 << 20
    a = clgrad.ones(n, device=cl_device)
    b = clgrad.full((n,), 2.0, device=cl_device)
    m = clgrad.ones(4, n, device=cl_device)
    clgrad.cl.reset_peak_memory_stats(cl_device)
    before = clgrad.cl.memory_allocated(cl_device)
    assert a.dot(b).item() == 2.0 * n
    assert (m @ b).tolist() == [2.0 * n] * 4
    grown = clgrad.cl.max_memory_allocated(cl_device) - before
    assert grown <= 4 * 4 * n + (1 << 20), grown  # the 4 x n product, not 16 x n padding
