"""Reductions, selections and histograms an eighth differential round found apart from torch
(contiguous selections, histogram bins at their edges, casts into a reduction's dtype, NaN in
gradients of extremes, 16-bit and complex spreads, products with zeros); each checked against
torch on every device."""

import math

import pytest
from test_fuzz_families import both

import clgrad

NAN, INF = float("nan"), float("inf")


def _float_dtypes(lib, device):
    """The floating dtypes the tested ``device`` holds (float64 where it computes in it), for
    both libraries alike (torch's side runs on its cpu)."""
    names = ["float32", "float16", "bfloat16"]
    if clgrad.device(device).supports(clgrad.float64):
        names.append("float64")
    return [getattr(lib, n) for n in names]


# ---- contiguous selections -----------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 70])  # (70: past the OpenCL selection's largest k, a sort)
def test_topk_results_are_contiguous(device, k):
    """``topk``'s values and indices are row-major along any dim, as torch's: ``.view(-1)``
    of them works (a narrow of the whole sort refused it), and their gradient still reaches
    the elements picked."""

    def case(lib, dev):
        out = []
        for shape, dim in (((6, 80), -1), ((80, 6), 0), ((3, 80, 4), 1), ((80,), 0)):
            distinct = (lib.arange(math.prod(shape), device=dev) * 7919 % 1009).float().view(shape)
            x = distinct.requires_grad_()
            for largest in (True, False):
                v, i = lib.topk(x, k, dim, largest)
                out += [v.view(-1), i.view(-1), v.is_contiguous(), i.is_contiguous(), v.stride()]
            weights = lib.arange(float(v.numel()), device=dev).view(v.shape)
            (v * weights).sum().backward()
            out.append(x.grad)
        return out

    both(device, case)


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_and_median_results_are_contiguous(device, keepdim):
    """``kthvalue`` (and an integer ``median``) along a dim other than the first, kept or not:
    row-major results, as torch's."""

    def case(lib, dev):
        x = (lib.arange(120, device=dev) * 37 % 101).view(2, 3, 4, 5)
        out = []
        for dim in range(4):
            for v, i in (lib.kthvalue(x.float(), 2, dim, keepdim), lib.median(x, dim, keepdim)):
                out += [v.view(-1), i.view(-1), v.stride(), i.stride(), v.is_contiguous()]
        return out

    both(device, case)


# ---- histograms ----------------------------------------------------------------------------
def test_histc_places_values_at_bin_edges_in_the_input_dtype(device):
    """histc's bin of x is ``(x - min) * bins / (max - min)`` in the input's dtype: 0.7 of
    float32 falls in bin 7 where float64 arithmetic put it in bin 6; 16-bit floats round
    each step."""

    def case(lib, dev):
        out = []
        for dt in _float_dtypes(lib, device):
            x = lib.tensor([0.7, 0.6, 0.3], device=dev).to(dt)
            line = lib.linspace(-1, 1, 201, device=dev).to(dt)
            out += [lib.histc(x, 10, 0, 1).float(), lib.histc(line, 7, -1, 1).float()]
        out.append(lib.histc(lib.tensor([5.0, 5.0], device=dev), 4))  # width 0: [4, 6]
        return out

    both(device, case)


def test_histogram_edges_are_a_linspace_of_the_input_dtype(device):
    """torch.histogram's edges come from a linspace in the input's dtype (float32: the middle
    edge of (-1, 1) in 10 bins is -1.49e-8, not 0) and each value lands where those edges say,
    with the given edges too (binary search) and weights."""

    def case(lib, dev):
        x = lib.linspace(-1, 1, 201, device=dev)
        h = lib.histogram(x, 10, range=(-1.0, 1.0))
        auto = lib.histogram(lib.tensor([0.1, 0.7, 0.3, 0.45, 0.9], device=dev), 7)
        edges = lib.tensor([0.0, 0.3, 0.45, 1.0])
        given = lib.histogram(lib.tensor([0.3, 0.45, 0.44, 1.0, 2.0, NAN]), edges)
        weighted = lib.histogram(x, 4, weight=x.abs(), density=True)
        return [h.hist, h.bin_edges, auto.hist, auto.bin_edges, given.hist, weighted.hist]

    both(device, case)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.histc(x, 4),
        lambda lib, x: lib.histogram(x, 4),
        lambda lib, x: lib.histc(x, 4, 0, INF),
        lambda lib, x: lib.histogram(x, 4, range=(0.0, INF)),
        lambda lib, x: lib.histc(x, 4, 0, 3),  # a given range: NaN and inf left out
        lambda lib, x: lib.histogram(x, 4, range=(0.0, 3.0)),
    ],
)
@pytest.mark.parametrize("bad", [NAN, INF, -INF])
def test_histograms_refuse_a_range_that_is_not_finite(device, call, bad):
    """With NaN or inf among the data, the automatic range is not finite: RuntimeError, as
    torch's (NumPy's ValueError, or counts of garbage, before); a given finite range leaves
    them out."""

    def case(lib, dev):
        return call(lib, lib.tensor([1.0, bad, 2.0, 0.5], device=dev))

    both(device, case)


# ---- casts into a reduction's dtype ----------------------------------------------------------
def test_sum_prod_nansum_into_bool_test_each_element_against_zero(device):
    """``dtype=torch.bool`` makes each element ``x != 0`` (0.4 is True), not an integer
    conversion (0.4 to 0), along a dim, over every element, across rows and from ints."""

    def case(lib, dev):
        x = lib.tensor([[0.3, -0.2, 0.0], [0.5, 0.0, 0.0]], device=dev)
        big = (lib.arange(3000, device=dev) % 3).float() * 0.25  # (vector and chunked paths)
        ints = lib.tensor([256, 0, 512], device=dev)
        b = lib.bool
        return [
            x.sum(0, dtype=b),
            x.sum(dtype=b),
            x.sum(1, dtype=b),
            lib.tensor([0.4, 2.0], device=dev).prod(dtype=b),
            x.prod(1, dtype=b),
            x.nansum(0, dtype=b),
            lib.tensor([NAN, 0.0], device=dev).nansum(dtype=b),
            lib.tensor([NAN, 0.0], device=dev).sum(dtype=b),
            big.view(1000, 3).sum(0, dtype=b),
            big.view(3, 1000).prod(1, dtype=b),
            big.sum(dtype=b),
            ints.sum(dtype=b),
            ints.prod(dtype=b),
        ]

    both(device, case)


def test_nansum_into_an_integer_maps_nan_before_the_cast(device):
    """nansum with an integer dtype counts each NaN as 0, then casts the values (1.5 + NaN +
    2.7 is 1 + 0 + 2 = 3), as torch: the cast came first, NaN's integer garbage summed."""

    def case(lib, dev):
        out = []
        for dt in _float_dtypes(lib, device):
            x = lib.tensor([[1.5, NAN, 2.7], [-0.5, NAN, NAN]], device=dev).to(dt)
            out += [
                lib.nansum(x, dtype=lib.int64),
                lib.nansum(x, 1, dtype=lib.int32),
                lib.nansum(x, 0, dtype=lib.int8),
                lib.nansum(x[0, 1], dtype=lib.int64),
            ]
        long = lib.tensor([1.5, NAN, -2.7, 300.0], device=dev).repeat(2000)
        rows = long.view(4, -1)
        return out + [lib.nansum(long, dtype=lib.int64), lib.nansum(rows, 1, dtype=lib.int16)]

    both(device, case)


# ---- accumulation ----------------------------------------------------------------------------
def test_logcumsumexp_of_a_long_line_accumulates_widely(device):
    """A million logaddexps of float32 zeros end at log(1e6) = 13.8155 (torch accumulates in
    double on CPU); the host device's float32 running value drifted to 13.7591."""

    def case(lib, dev):
        out = lib.logcumsumexp(lib.zeros(10**6, device=dev), 0)
        return [out[-1], out[::99991]]

    both(device, case)


def test_std_of_16_bit_floats_takes_the_root_before_rounding(device):
    """std of float16 / bfloat16: the variance (82500, past float16's 65504) stays in float32
    until its square root, as torch's (275, not inf); std_mean too."""

    def case(lib, dev):
        out = []
        for dt in (lib.float16, lib.bfloat16):
            x = lib.tensor([300.0, -300.0, 0.0, 250.0], device=dev, dtype=dt)
            m = lib.tensor([[300.0, -300.0], [1.0, 2.0]], device=dev, dtype=dt)
            out += [x.std(), *lib.std_mean(x), m.std(1), *lib.std_mean(m, 1), x.var()]
        return [t.float() for t in out]  # (the values as they are: bfloat16's exactly)

    both(device, case)


def test_var_mean_and_std_mean_of_complex(device):
    """var_mean / std_mean of a complex tensor: the real spread (var's and std's) and the
    complex mean, with their gradients, as torch (they raised)."""

    def case(lib, dev):
        z = lib.tensor([[1 + 1j, 2 - 1j, 0.5j], [-3 + 0j, 1j, 2 + 2j]], device=dev)
        z.requires_grad_()
        v, m = lib.var_mean(z, 1)
        s, sm = lib.std_mean(z)
        kept = lib.var_mean(z, 0, keepdim=True, correction=0)
        (v.sum() + s + m.abs().sum() + sm.real + kept[0].sum()).backward()
        return [v, m, s, sm, *kept, z.grad]

    both(device, case)


def test_logsumexp_of_complex_keeps_the_imaginary_part(device):
    """logsumexp of complex values is complex (shifted by the largest real part), with
    torch's gradient ``grad * conj(exp(z - result))``."""

    def case(lib, dev):
        z = lib.tensor([[1 + 1j, 2 - 1j], [0.5j, -3 + 0j]], device=dev, requires_grad=True)
        whole = lib.logsumexp(lib.tensor([1 + 1j, 2 - 1j], device=dev), 0)
        rows = lib.logsumexp(z, 1)
        rows.abs().sum().backward()
        kept = lib.logsumexp(z.detach(), (0, 1), keepdim=True)
        return [whole, rows, z.grad, kept]

    both(device, case)


# ---- gradients -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "median", "nanmedian"])
def test_gradient_of_an_extreme_of_every_element_with_nan(device, name):
    """max() / min() of every element share the gradient evenly among the NaNs when the result
    is NaN (torch's evenly_distribute_backward; amax / amin give every element NaN, as
    torch's), and an infinite gradient leaves the other elements 0."""

    def case(lib, dev):
        out = []
        for values, seed in (
            ([1.0, NAN, 2.0, NAN], 1.0),
            ([[1.0, 3.0], [3.0, -1.0]], 1.0),
            ([1.0, 3.0, 3.0], INF),
        ):
            x = lib.tensor(values, device=dev, requires_grad=True)
            y = getattr(x, name)()
            y.backward(lib.tensor(seed, device=dev))
            out += [y, x.grad]
        return out

    both(device, case)


def test_prod_gradient_where_another_slice_holds_a_zero(device):
    """A zero anywhere in the input makes torch's prod gradient the product of the others in
    every slice: [[0, 2], [inf, 3]].prod(1) gives [[2, 0], [3, inf]] (the quotient inf / inf
    was NaN); without zeros the quotient stays (inf's NaN, as torch's); second order too."""

    def case(lib, dev):
        out = []
        for values, dim in (
            ([[0.0, 2.0], [INF, 3.0]], 1),
            ([[0.0, 2.0], [INF, 3.0]], None),
            ([[1.0, 2.0], [INF, 3.0]], 1),
            ([[0.0, 0.0, 4.0], [2.0, 3.0, 5.0]], None),
            ([[0.0, 0.0, 4.0], [2.0, 3.0, 5.0]], 0),
            (7.0, None),
        ):
            x = lib.tensor(values, device=dev, requires_grad=True)
            (x.prod() if dim is None else x.prod(dim)).sum().backward()
            out.append(x.grad)
        x = lib.tensor([[2.0, 0.0, 4.0], [1.0, 5.0, 6.0]], device=dev, requires_grad=True)
        (g,) = lib.autograd.grad(x.prod(1).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return out + [g, h]

    both(device, case)


def test_zero_d_reductions_into_bool(device):
    """A 0-d tensor reduced into bool is a copy computed in its own dtype: 0.4 and 256 are
    True."""

    def case(lib, dev):
        return [
            lib.tensor(0.4, device=dev).sum(dtype=lib.bool),
            lib.tensor(256, device=dev).prod(dtype=lib.bool),
        ]

    both(device, case)
