"""Families a third differential-fuzzing round found (random programs over scans, sorting,
scatter/index ops, padding, interpolation, normalization layers, losses and einsum, run in
torch and clgrad), each checked against torch on every device."""

import numpy as np
import pytest
from test_fuzz_families import both


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize(
    "shape, widths",
    [
        ((2, 5), (-1, 2)),
        ((2, 5), (2, -1)),
        ((1, 2, 5), (-2, -1)),
        ((1, 3, 4), (1, -1, -1, 2)),
        ((5,), (1, 1)),  # 1-D: refused (NotImplementedError)
        ((2, 3), (1, 1, 1, 1)),  # 4 widths of a 2-D input: refused
        ((1, 1, 2, 3), (1, 1)),  # 2 widths of a 4-D input: refused
    ],
)
def test_pad_non_constant_widths_and_ranks(device, mode, shape, widths):
    """Non-constant padding: negative widths crop (before the padding), only ATen's rank/width
    combinations are taken."""

    def case(lib, dev):
        x = lib.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), device=dev)
        return lib.nn.functional.pad(x, widths, mode=mode)

    both(device, case)


def test_pad_non_constant_refuses_a_value(device):
    def case(lib, dev):
        return lib.nn.functional.pad(lib.ones(2, 3, device=dev), (1, 1), "reflect", value=1.0)

    both(device, case)
