"""randint draws integers from Philox's bits, as ATen's random_from_to: a 32-bit draw modulo the
span, 63 bits of two draws past 2**32. It scaled a 24-bit float uniform by the span, which
reaches only 2**24 values: randint(0, 2**31 - 1) gave odd numbers only, randint(0, 2**40)
even ones. random_() without bounds on bool and bfloat16 (it raised / drew zeros)."""

from __future__ import annotations

import numpy as np
import pytest

import clgrad


@pytest.mark.parametrize("low, high", [(0, 2**31 - 1), (0, 2**32), (-(2**40), 2**40), (0, 2**62)])
def test_wide_spans_use_every_bit(low, high, device):
    clgrad.manual_seed(0)
    r = clgrad.randint(low, high, (4000,), device=device).cpu().numpy()
    assert r.dtype == np.int64 and r.min() >= low and r.max() < high
    odd = float(np.mean(r % 2))
    assert 0.45 < odd < 0.55  # both parities (one alone before)
    assert len(np.unique(r)) > 3990  # no 2**24-value grid
    mean = (r.astype(np.float64) - low).mean() / (high - low)
    assert 0.45 < mean < 0.55


def test_devices_draw_the_same_integers(device):
    clgrad.manual_seed(3)
    host = clgrad.randint(-7, 100, (50,)).tolist()
    clgrad.manual_seed(3)
    assert clgrad.randint(-7, 100, (50,), device=device).tolist() == host
    clgrad.manual_seed(3)
    wide = clgrad.randint(0, 2**50, (20,)).tolist()
    clgrad.manual_seed(3)
    assert clgrad.randint(0, 2**50, (20,), device=device).tolist() == wide


def test_small_span_is_uniform(device):
    clgrad.manual_seed(1)
    r = clgrad.randint(0, 6, (60000,), device=device).cpu().numpy()
    counts = np.bincount(r, minlength=6)
    assert counts.min() > 9500 and counts.max() < 10500


@pytest.mark.parametrize(
    "dtype, top", [("bool", 1), ("bfloat16", 2**8), ("uint8", 255), ("int64", 2**63 - 1)]
)
def test_random_without_bounds(dtype, top, device):
    clgrad.manual_seed(2)
    x = clgrad.empty(2000, dtype=getattr(clgrad, dtype), device=device).random_()
    values = [int(v) for v in x.tolist()]
    assert min(values) >= 0 and max(values) <= top
    assert len(set(values)) > 1


def test_float64_uniforms_have_53_bits(device):
    # a double's draw takes a counter's first two words, as PyTorch's double draws have 53
    # bits: it was the float draw's 24, a grid of 2**24 values (100,000 draws had ~300 repeats)
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip("no float64 on this device")
    clgrad.manual_seed(5)
    u = clgrad.rand(100_000, dtype=clgrad.float64, device=device).cpu().numpy()
    assert u.min() >= 0 and u.max() < 1 and 0.49 < u.mean() < 0.51
    assert len(np.unique(u)) == u.size
    fine = (u * 2.0**24) % 1 != 0  # below the float grid
    assert fine.mean() > 0.99
    assert np.all((u * 2.0**53) % 1 == 0)  # exact 53-bit fractions
    clgrad.manual_seed(5)
    host = clgrad.rand(50, dtype=clgrad.float64).numpy()
    np.testing.assert_array_equal(u[:50], host)  # one stream on every device
    clgrad.manual_seed(5)
    assert clgrad.rand(50, device=device).cpu().numpy().tolist() == pytest.approx(
        host.astype(np.float32).tolist(), abs=2**-23
    )  # a float32 draw is a double's first 24 bits


def test_float64_normals_agree_across_devices(device):
    # a double's Box-Muller takes 52-bit uniforms from two words on every device (24 bits
    # bounded its draws by 5.9 and left them on a coarse grid)
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip("no float64 on this device")
    clgrad.manual_seed(7)
    z = clgrad.randn(20_000, dtype=clgrad.float64, device=device).cpu().numpy()
    clgrad.manual_seed(7)
    host = clgrad.randn(20_000, dtype=clgrad.float64).numpy()
    np.testing.assert_allclose(z, host, rtol=1e-12, atol=1e-12)
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
