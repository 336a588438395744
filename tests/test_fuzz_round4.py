"""Families a fourth differential-fuzzing round found (random programs run in torch and clgrad,
and the siblings of known mismatches), each checked against torch on every device."""

import warnings

import pytest
from conftest import supports
from test_fuzz_families import both

import clgrad

_LERP_DTYPES = ["float32", "float64", "int64", "bool"]


@pytest.mark.parametrize("inplace", [False, True], ids=["lerp", "lerp_"])
@pytest.mark.parametrize("weight", ["0.5", "1", "tensor", "float32 tensor", "0-d float64"])
@pytest.mark.parametrize("end_dtype", _LERP_DTYPES)
@pytest.mark.parametrize("dtype", _LERP_DTYPES)
def test_lerp_dtypes(device, dtype, end_dtype, weight, inplace):
    """ATen's order: ``end`` (and a weight tensor of any dims) of ``input``'s dtype
    (RuntimeError), the tensors' common dtype castable into an in-place ``self``, then a
    floating one (NotImplementedError): a number weight takes no part in it, a 0-d tensor one
    promotes (int64 tensors lerp in float64 with a float64 0-d weight)."""
    if "float64" in (dtype, end_dtype, weight) and not supports(device, clgrad.float64):
        pytest.skip(f"{device} has no float64")

    def case(lib, dev):
        x = lib.tensor([0, 1, 0], dtype=getattr(lib, dtype), device=dev)
        end = lib.tensor([1, 1, 0], dtype=getattr(lib, end_dtype), device=dev)
        w = {
            "0.5": 0.5,
            "1": 1,
            "tensor": lib.tensor([1, 0, 1], dtype=x.dtype, device=dev),
            "float32 tensor": lib.full((3,), 0.25, device=dev),
            "0-d float64": lib.tensor(0.25, dtype=lib.float64, device=dev),
        }[weight]
        return x.lerp_(end, w) if inplace else lib.lerp(x, end, w)

    both(device, case)


def _warned(lib, write):
    """``write()``'s result and the ops PyTorch's expanded-tensor warnings name, in order."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = write()
    named = [str(w.message).split()[2] for w in caught if "expanded tensors" in str(w.message)]
    return [result, named]


def _grid(lib, dev, dtype):
    """A (3, 4) tensor over 3 elements (a column expanded): writes reach every row's copy."""
    base = lib.tensor([[1], [0], [3]], device=dev).to(getattr(lib, dtype))
    return base, base.expand(3, 4)


def _MASK(lib, dev):
    return lib.tensor([[True, False, False, False], [False] * 4, [False] * 3 + [True]], device=dev)


_EXPANDED_WRITES = {
    "masked_fill_": lambda lib, dev, x, v: x.masked_fill_(_MASK(lib, dev), v),
    "masked_fill_ 0-d value": lambda lib, dev, x, v: x.masked_fill_(
        lib.tensor([False, True, False, False], device=dev), lib.tensor(v, device=dev)
    ),
    "index_fill_ shared dim": lambda lib, dev, x, v: x.index_fill_(
        1, lib.tensor([2], device=dev), v
    ),
    "index_fill_ own dim": lambda lib, dev, x, v: x.index_fill_(
        0, lib.tensor([2, 0], device=dev), v
    ),
    "index_put_": lambda lib, dev, x, v: x.index_put_(
        (lib.tensor([0, 2], device=dev), lib.tensor([3, 1], device=dev)), lib.tensor(v, device=dev)
    ),
    "index_put_ accumulate": lambda lib, dev, x, v: x.index_put_(
        (lib.tensor([0, 2, 0], device=dev), lib.tensor([3, 1, 1], device=dev)),
        lib.ones((), dtype=x.dtype, device=dev),
        accumulate=True,
    ),
    "index_put_ mask": lambda lib, dev, x, v: x.index_put_(
        (_MASK(lib, dev),), lib.tensor(v, device=dev)
    ),
    "setitem": lambda lib, dev, x, v: x.__setitem__(lib.tensor([1], device=dev), v),
    "setitem mask": lambda lib, dev, x, v: x.__setitem__(_MASK(lib, dev), v),
    "tril_": lambda lib, dev, x, v: x.tril_(1),
    "triu_": lambda lib, dev, x, v: x.triu_(),
    # refused, as PyTorch's: the internal-overlap RuntimeError
    "masked_scatter_": lambda lib, dev, x, v: x.masked_scatter_(
        _MASK(lib, dev), lib.ones(12, dtype=x.dtype, device=dev)
    ),
    "index_copy_": lambda lib, dev, x, v: x.index_copy_(
        1, lib.tensor([0], device=dev), lib.ones(3, 1, dtype=x.dtype, device=dev)
    ),
    "scatter_": lambda lib, dev, x, v: x.scatter_(1, lib.tensor([[0], [1], [2]], device=dev), v),
    "add_": lambda lib, dev, x, v: x.add_(1),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("op", list(_EXPANDED_WRITES))
def test_writes_into_an_expanded_tensor(device, op, dtype):
    """masked_fill_, index_fill_, index_put_ (x[i] = v) with PyTorch's deprecation warning, and
    tril_ / triu_ without one, write an expanded tensor element after element (a memory
    location takes the value where any of its elements is written; accumulated, the sum);
    other writes refuse it."""

    def case(lib, dev):
        base, x = _grid(lib, dev, dtype)
        value = {"float32": 9.5, "int64": 9, "bool": True}[dtype]
        got = _warned(lib, lambda: _EXPANDED_WRITES[op](lib, dev, x, value))
        return [*got, x, base]

    both(device, case)


@pytest.mark.parametrize(
    "resize",
    [
        lambda lib, dev: lib.arange(6, device=dev).reshape(2, 3).t().resize_(3, 2),
        lambda lib, dev: lib.zeros(1, 3, device=dev).expand(2, 3).resize_(2, 3),
        lambda lib, dev: lib.arange(6, device=dev).reshape(2, 3).t().resize_(2, 3),
        lambda lib, dev: lib.arange(6, device=dev)[1:5].resize_(2, 2),
        lambda lib, dev: lib.arange(6, device=dev)[1:3].resize_(4),
        lambda lib, dev: lib.arange(6.0, device=dev).clone().resize_(7)[:6],
    ],
    ids=["own shape", "own shape expanded", "transposed", "slice", "slice longer", "grown"],
)
def test_resize_keeps_memory(device, resize):
    """resize_ to the tensor's own shape changes nothing (an expanded one stays); another shape
    is row-major over the same memory from the same offset (not the elements re-read)."""

    def case(lib, dev):
        x = resize(lib, dev)
        return [x, list(x.stride()), x.storage_offset()]

    both(device, case)
