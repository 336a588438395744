"""Families a third differential-fuzzing round found (random programs over scans, sorting,
scatter/index ops, padding, interpolation, normalization layers, losses and einsum, run in
torch and clgrad), each checked against torch on every device."""

import numpy as np
import pytest
import torch
from conftest import supports
from test_fuzz_families import both

import clgrad


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


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 1, 3), ()])
def test_triplet_margin_loss_any_rank(device, shape):
    """Any rank (distances along the last dim), as ATen's; only equal ranks are checked."""

    def case(lib, dev):
        r = np.random.RandomState(0)
        a, p, n = (
            lib.tensor(np.asarray(r.randn(*shape), np.float32), device=dev, requires_grad=True)
            for _ in range(3)
        )
        loss = lib.nn.functional.triplet_margin_loss(a, p, n, reduction="none", swap=True)
        loss.sum().backward()
        return [loss, a.grad, p.grad, n.grad]

    both(device, case)


@pytest.mark.parametrize(
    "shape, groups", [((1, 1), 1), ((1, 4), 4), ((1, 2, 1, 1), 2), ((1, 4, 1), 2)]
)
def test_group_norm_one_value_a_group_refused(device, shape, groups):
    def case(lib, dev):
        return lib.nn.functional.group_norm(lib.ones(shape, device=dev), groups)

    both(device, case)


@pytest.mark.parametrize(
    "input_shape, target_shape, target_grad",
    [((4,), (2, 4), False), ((1, 4), (2, 1), False), ((2, 4), (4,), False), ((3,), (3,), True)],
)
def test_soft_margin_loss_target_checks(device, input_shape, target_shape, target_grad):
    """A target broadcasting the input to a larger shape, or one requiring grad, is refused."""

    def case(lib, dev):
        x = lib.full(input_shape, 0.5, device=dev)
        t = lib.full(target_shape, -1.0, device=dev, requires_grad=target_grad)
        return lib.nn.functional.soft_margin_loss(x, t)

    both(device, case)


def _CUMSUM_FLOAT64(lib, x):
    return x.cumsum(0, dtype=lib.float64)


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, x: x.cumsum(0, dtype=lib.int32),
        lambda lib, x: lib.cumprod(x, 0, dtype=lib.int64),
        lambda lib, x: x.sum(dtype=lib.int64),
        lambda lib, x: lib.prod(x, 0, dtype=lib.int32),
        lambda lib, x: x.nansum(0, dtype=lib.int64),
        _CUMSUM_FLOAT64,  # (a floating dtype: recorded)
        lambda lib, x: x.sum(0).to(lib.int64),  # (a cast: no graph, no error)
    ],
)
def test_integral_dtype_of_a_recorded_reduction_refused(device, op):
    """An integral ``dtype=`` on an input requiring grad: torch's 'Autograd not support dtype'
    (not a silently detached result); under no_grad the result is computed."""
    if op is _CUMSUM_FLOAT64 and not supports(device, clgrad.float64):
        pytest.skip(f"{device} has no float64")

    def case(lib, dev):
        x = lib.tensor([[1.5, -2.0], [3.0, 0.5]], device=dev, requires_grad=True)
        with lib.no_grad():
            quiet = op(lib, x)
        y = op(lib, x)
        return [quiet, y, y.requires_grad]

    both(device, case)


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, x: lib.logcumsumexp(x, 0),
        lambda lib, x: lib.kthvalue(x, 1, 0)[0],
        lambda lib, x: x.median(0)[0],
        lambda lib, x: x.median(),
        lambda lib, x: x.nanmedian(),
        lambda lib, x: x.topk(1)[0],  # (tied indices: unspecified)
        lambda lib, x: lib.isin(x, x),
        lambda lib, x: lib.isin(x.long(), x),
        lambda lib, x: x.index_reduce(0, lib.tensor([0, 1], device=x.device), x[:2], "prod"),
        lambda lib, x: x.index_reduce(
            0, lib.tensor([0, 1], device=x.device), x[:2], "amax", include_self=False
        ),
    ],
)
@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_bool_refused_by_selections_as_torch(device, op, dtype):
    """Bool (and, for logcumsumexp, integer) inputs refused as torch's CPU kernels refuse them:
    NotImplementedError, or topk's and isin's RuntimeError."""

    def case(lib, dev):
        return op(lib, lib.tensor([1, 0, 1, 1], device=dev).to(getattr(lib, dtype)))

    both(device, case)


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, x: lib.heaviside(x, x),
        lambda lib, x: lib.heaviside(x.detach(), x),
        lambda lib, x: lib.unique(x),
        lambda lib, x: lib.unique(x, return_counts=True)[0],
        lambda lib, x: lib.unique(x, dim=0),
        lambda lib, x: lib.unique_consecutive(x),
    ],
)
def test_no_derivative_ops_record_and_refuse_at_backward(device, op):
    """Ops torch records without a derivative: the result requires grad, backward raises (the
    same class); under no_grad nothing is recorded."""

    def case(lib, dev):
        x = lib.tensor([[1.0, -2.0], [0.0, 1.0]], device=dev, requires_grad=True)
        with lib.no_grad():
            quiet = op(lib, x)
        y = op(lib, x)
        try:
            y.sum().backward()
            refused = None
        except (RuntimeError, NotImplementedError) as e:  # the class and torch's message
            refused = (type(e).__name__, str(e))
        return [quiet, quiet.requires_grad, y, y.requires_grad, refused]

    both(device, case)


@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4), (2, 3, 0), (1, 3), (1, 3, 1), (1, 3, 2)])
def test_batch_norm_training_batch_sizes(device, shape):
    """torch's _verify_batch_size: one value per channel over the batch and spatial dims is a
    ValueError; an empty batch gives an empty result and leaves the statistics alone."""

    def run(lib, dev):
        x = lib.ones(*shape, device=dev)
        stats = lib.zeros(3, device=dev), lib.ones(3, device=dev)
        try:
            out = lib.nn.functional.batch_norm(x, *stats, lib.ones(3, device=dev), None, True)
        except ValueError:
            return "ValueError", [s.tolist() for s in stats]
        return tuple(out.shape), [s.tolist() for s in stats]

    assert run(clgrad, device) == run(torch, "cpu")
