"""Families a fourth differential-fuzzing round found (random programs run in torch and clgrad,
and the siblings of known mismatches), each checked against torch on every device."""

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
