"""Differences from torch that the differential fuzzer's fifth round found (seeds 70000+),
each checked against torch on every device."""

import pytest
from test_fuzz_families import both


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["bool", "float32", "int64"])
@pytest.mark.parametrize(
    "shape, dim", [((0, 3), 0), ((2, 3), 5), ((2, 3), -4), ((), 0), ((2, 0), 1), ((2, 3), 1)]
)
def test_median_checks_in_atens_order(device, fn, dtype, shape, dim):
    """The dim (IndexError), an empty reduction dim (IndexError naming median() for nanmedian
    too), then the dtype (bool: NotImplementedError)."""

    def case(lib, dev):
        return getattr(lib.zeros(shape, dtype=getattr(lib, dtype), device=dev), fn)(dim)

    both(device, case)
