"""Families a fourth differential-fuzzing round found (random programs run in torch and clgrad,
and the siblings of known mismatches), each checked against torch on every device."""

import math
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
    if "float64" in (dtype, end_dtype, weight[-7:]) and not supports(device, clgrad.float64):
        pytest.skip(f"{device} has no float64")

    def case(lib, dev):
        x = lib.tensor([0, 1, 0], dtype=getattr(lib, dtype), device=dev)
        end = lib.tensor([1, 1, 0], dtype=getattr(lib, end_dtype), device=dev)
        # only the weight asked for is made: a float64 one on a device without float64 raises
        w = {
            "0.5": lambda: 0.5,
            "1": lambda: 1,
            "tensor": lambda: lib.tensor([1, 0, 1], dtype=x.dtype, device=dev),
            "float32 tensor": lambda: lib.full((3,), 0.25, device=dev),
            "0-d float64": lambda: lib.tensor(0.25, dtype=lib.float64, device=dev),
        }[weight]()
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


def _index_along(lib, index, dim, ndim):
    """``index`` shaped to run along ``dim`` of an ``ndim``-d tensor (one per slice)."""
    return index.reshape([1] * dim + [-1] + [1] * (ndim - dim - 1))


_EMPTY_INDEXED = {
    "index_add_": lambda lib, x, d, i, s: x.index_add_(d, i, s),
    "index_reduce_": lambda lib, x, d, i, s: x.index_reduce_(d, i, s, "prod"),
    "index_select": lambda lib, x, d, i, s: x.index_select(d, i),
    "index_put_": lambda lib, x, d, i, s: x.index_put_((i,), lib.tensor(1.0, device=x.device)),
    "x[i]": lambda lib, x, d, i, s: x[(slice(None),) * d + (i,)],
    "x[i] = 1": lambda lib, x, d, i, s: x.__setitem__((slice(None),) * d + (i,), 1.0),
    "gather": lambda lib, x, d, i, s: x.gather(d, _index_along(lib, i, d, x.ndim)),
    "scatter_add_": lambda lib, x, d, i, s: x.scatter_add_(
        d, _index_along(lib, i, d, x.ndim).expand(s.shape), s
    ),
    "take_along_dim": lambda lib, x, d, i, s: lib.take_along_dim(
        x, _index_along(lib, i, d, x.ndim), d
    ),
}


@pytest.mark.parametrize("index", [[5], [0], [-1]])
@pytest.mark.parametrize(
    "shape, dim", [((0, 3), 0), ((0, 3), 1), ((2, 0), 0), ((2, 0), 1), ((0, 0), 1)]
)
@pytest.mark.parametrize("op", list(_EMPTY_INDEXED))
def test_indexing_a_tensor_of_no_element(device, op, shape, dim, index):
    """PyTorch's checks of indices into a tensor of no element: index_add_ (past 1-d) checks
    none; index_reduce_ checks each; index_select raises RuntimeError ('self indexing axis dim
    should be positive' along an empty dim); advanced indexing raises IndexError for an index
    along an empty dim and checks the others only where the result has elements."""

    def case(lib, dev):
        x = lib.zeros(shape, device=dev)
        source_shape = list(shape)
        source_shape[dim] = len(index)
        source = lib.ones(source_shape, device=dev)
        i = lib.tensor(index, device=dev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (index_reduce is in beta: torch's warning)
            result = _EMPTY_INDEXED[op](lib, x, dim, i, source)
        return [result, x]

    both(device, case)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize(
    "x, q, dim, interpolation",
    [
        ("empty", "0.5", None, "linear"),
        ("empty", "0.5", 0, "linear"),
        ("empty", "0.5", 5, "linear"),
        ("int empty", "2.0", None, "nope"),  # the number's range first
        ("empty", "0.5", None, "nope"),  # then the interpolation (RuntimeError)
        ("int empty", "tensor 2-d", None, "linear"),  # then no element
        ("int", "tensor 2-d", None, "linear"),
        ("int", "float64 tensor", None, "linear"),
        ("float", "tensor out of range", 5, "linear"),  # the dim before the values
        ("float", "tensor out of range", 0, "linear"),
        ("float", "0.5", 1, "nearest"),
    ],
)
def test_quantile_checks(device, name, x, q, dim, interpolation):
    """ATen's quantile checks in its order, all RuntimeError (an unknown interpolation too, not
    ValueError), nanquantile's naming quantile() as well."""
    if x == "int" and q == "float64 tensor" and not supports(device, clgrad.float64):
        pytest.skip(f"{device} has no float64")

    def case(lib, dev):
        inputs = {
            "float": lib.arange(6.0, device=dev).reshape(2, 3),
            "empty": lib.ones(0, device=dev),
            "int": lib.ones(3, dtype=lib.int64, device=dev),
            "int empty": lib.ones(0, dtype=lib.int64, device=dev),
        }
        # only the q asked for is made: a float64 one on a device without float64 raises
        qs = {
            "0.5": lambda: 0.5,
            "2.0": lambda: 2.0,
            "tensor 2-d": lambda: lib.full((2, 2), 0.5, device=dev),
            "float64 tensor": lambda: lib.tensor([0.5], dtype=lib.float64, device=dev),
            "tensor out of range": lambda: lib.tensor([0.5, 2.0], device=dev),
        }
        return getattr(lib, name)(inputs[x], qs[q](), dim=dim, interpolation=interpolation)

    both(device, case)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, dev: lib.arange(3, dtype=lib.bool, device=dev),
        lambda lib, dev: lib.arange(0, dtype=lib.bool, device=dev),
        lambda lib, dev: lib.arange(float("inf"), dtype=lib.bool, device=dev),  # dtype first
        lambda lib, dev: lib.range(0, 2, dtype=lib.bool, device=dev),
        lambda lib, dev: lib.arange(3, dtype=lib.uint8, device=dev),
    ],
    ids=["arange", "arange empty", "arange inf", "range", "arange uint8"],
)
def test_ranges_refuse_bool(device, make):
    """ATen's arange / range kernels take no bool (NotImplementedError, before the bounds)."""

    def case(lib, dev):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch.range's deprecation)
            return make(lib, dev)

    both(device, case)


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, x, out: lib.mul(x, 2, out=out),
        lambda lib, x, out: lib.exp(x, out=out),
        lambda lib, x, out: lib.add(x.expand(2, 3), 1, out=out),
    ],
    ids=["mul", "exp", "same shape"],
)
def test_out_of_shared_memory_refused_before_a_resize(device, op):
    """An ``out=`` whose elements share memory (expanded) is refused by PyTorch's overlap check
    before its resize to the result's shape (it was resized into new memory)."""

    def case(lib, dev):
        out = lib.zeros(1, 3, device=dev).expand(2, 3)
        return op(lib, lib.ones(3, device=dev), out)

    both(device, case)


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, dev: lib.trace(lib.ones(2, 2, 2, dtype=lib.bool, device=dev)),
        lambda lib, dev: lib.kthvalue(lib.ones(2, 0, dtype=lib.bool, device=dev), 1, -1),
        lambda lib, dev: lib.kthvalue(lib.ones(2, 3, dtype=lib.bool, device=dev), 5, -1),
        lambda lib, dev: lib.kthvalue(lib.ones(2, 3, dtype=lib.bool, device=dev), 1, 1),
        lambda lib, dev: lib.kthvalue(lib.ones((), dtype=lib.bool, device=dev), 1),
        lambda lib, dev: lib.topk(lib.ones(2, 2, 2, dtype=lib.bool, device=dev), 1, 3),
        lambda lib, dev: lib.topk(lib.ones(2, 3, dtype=lib.bool, device=dev), 5),
        lambda lib, dev: lib.zeros(3, dtype=lib.bool, device=dev).index_reduce(
            0,
            lib.tensor([5], device=dev),
            lib.ones(1, dtype=lib.bool, device=dev),
            "amin",
            include_self=False,
        ),
        lambda lib, dev: lib.zeros(3, dtype=lib.bool, device=dev).index_reduce(
            0, lib.tensor([5], device=dev), lib.ones(2, dtype=lib.bool, device=dev), "prod"
        ),
        lambda lib, dev: lib.zeros(0, dtype=lib.bool, device=dev).scatter_reduce(
            0, lib.tensor([0], device=dev), lib.ones(1, dtype=lib.bool, device=dev), "mean"
        ),
        lambda lib, dev: lib.zeros(2, dtype=lib.bool, device=dev).scatter_reduce(
            0, lib.tensor([0], device=dev), lib.ones(1, dtype=lib.bool, device=dev), "mean"
        ),
    ],
    ids=[
        "trace 3-d",
        "kthvalue empty dim",
        "kthvalue k",
        "kthvalue",
        "kthvalue 0-d",
        "topk dim",
        "topk k",
        "index_reduce range",
        "index_reduce source",
        "scatter_reduce mean range",
        "scatter_reduce mean",
    ],
)
def test_bool_refusals_in_atens_order(device, op):
    """Where ATen's kernels take no bool, its dtype dispatch comes where ATen's does: trace's
    before the rank; kthvalue's and topk's after the dim and k (a 0-d kthvalue takes bool);
    index_reduce's and scatter_reduce mean's after the arguments' checks, before the indices'
    range."""

    def case(lib, dev):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (index_reduce is in beta: torch's warning)
            return op(lib, dev)

    both(device, case)


@pytest.mark.parametrize("widths", [(-3, 1), (-2, 0), (-3, 5), (1, -3), (-1, -1), (0, 0, -3, 1)])
def test_constant_pad_crops_first(device, widths):
    """Negative widths crop before the padding: a crop past the input raises ATen's narrow()
    RuntimeError, even where the padding would make the size positive again."""

    def case(lib, dev):
        x = lib.ones(2, device=dev) if len(widths) == 2 else lib.ones(2, 2, device=dev)
        return lib.nn.functional.pad(x, widths)

    both(device, case)


@pytest.mark.parametrize(
    "shape, dim, sizes",
    [
        ((), 0, (1, -1)),
        ((), 0, ()),
        ((), 1, (1,)),
        ((3,), 0, (2, -1)),
        ((3,), 0, (0, -1)),
        ((0,), 0, (0, -1)),
        ((4,), 0, (-2, 2)),
        ((3,), 0, (-1, -1)),
        ((2, 6), -1, (3, -1)),
    ],
)
def test_unflatten_errors(device, shape, dim, sizes):
    """ATen's unflatten: sizes non-empty, the dim (0-d: a RuntimeError, not IndexError), the
    sizes' product, any other error passed on as RuntimeError."""

    def case(lib, dev):
        return lib.ones(shape, device=dev).unflatten(dim, sizes)

    both(device, case)


_RESULT_READERS = {
    "reciprocal": lambda lib, x: x.reciprocal(),
    "prod": lambda lib, x: x.prod(),
    "prod dim": lambda lib, x: x.prod(0),
    "logsumexp": lambda lib, x: x.logsumexp(0),
    "logsumexp keepdim": lambda lib, x: x.logsumexp((0,), keepdim=True),
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 0),
    "erfinv": lambda lib, x: (x / 10).erfinv(),  # PyTorch's reads its input: allowed
}


@pytest.mark.parametrize("written", [False, True], ids=["as is", "written in place"])
@pytest.mark.parametrize("op", list(_RESULT_READERS))
def test_gradients_that_read_the_result(device, op, written):
    """Ops whose PyTorch gradient reads their result save it: written in place before
    backward, it raises torch's RuntimeError (an op whose gradient reads its input does not);
    the gradients equal torch's."""

    def case(lib, dev):
        x = lib.tensor([0.5, -1.0, 2.0], device=dev, requires_grad=True)
        y = _RESULT_READERS[op](lib, x)
        if written:
            y.mul_(2)
        (y * lib.tensor(1.5, device=dev)).sum().backward()
        return x.grad

    both(device, case)


@pytest.mark.parametrize("alpha", [1, 1.0, 2, True])
@pytest.mark.parametrize("index", [[5], [-2]])
def test_index_add_range_error_follows_alpha(device, alpha, index):
    """Past 1-d, an index out of range is ATen's RuntimeError naming it where alpha is 1 (its
    scatter_add path) and IndexError otherwise (its loop; a bool alpha is not 1 there)."""

    def case(lib, dev):
        x = lib.zeros(3, 4, device=dev)
        i = lib.tensor(index, device=dev)
        return x.index_add_(1, i, lib.ones(3, 1, device=dev), alpha=alpha)

    both(device, case)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "float32"])
@pytest.mark.parametrize("shapes", [((2, 1), (3, 2)), ((2, 3), (1, 2))])
def test_tensordot_broadcast_contraction_keeps_dtype(device, dtype, shapes):
    """A contracted dim of size 1 sums the other operand's dim in its own dtype, as ATen's
    (int32 stayed int64 and refused the product; bool reaches the product's refusal)."""

    def case(lib, dev):
        a, b = (lib.ones(s, dtype=getattr(lib, dtype), device=dev) for s in shapes)
        return lib.tensordot(a, b, dims=1)

    both(device, case)


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, dev: lib.nansum(lib.tensor(float("nan"), device=dev)),
        lambda lib, dev: lib.nansum(lib.tensor(float("nan"), device=dev), -1),
        lambda lib, dev: lib.nansum(lib.tensor(float("nan"), device=dev), 0, keepdim=True),
        lambda lib, dev: lib.nanmean(lib.tensor(float("nan"), device=dev)),
        lambda lib, dev: lib.nansum(lib.tensor(3, dtype=lib.int32, device=dev)),
    ],
    ids=["nansum", "nansum dim", "nansum keepdim", "nanmean", "nansum int"],
)
def test_nan_reductions_of_a_0d_tensor(device, op):
    """A 0-d input's one element goes through the reduction's mapping (NaN counted as 0), where
    it was copied as it was."""
    both(device, lambda lib, dev: op(lib, dev))


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, dev: lib.vander(lib.tensor([], dtype=lib.int32, device=dev)),
        lambda lib, dev: lib.vander(lib.tensor([1], dtype=lib.int32, device=dev), N=0),
        lambda lib, dev: lib.vander(lib.tensor([2], dtype=lib.int16, device=dev), N=1),
        lambda lib, dev: lib.vander(lib.tensor([2, 3], dtype=lib.int32, device=dev)),
        lambda lib, dev: lib.linalg.vander(lib.tensor([True], device=dev), N=1),
        lambda lib, dev: lib.linalg.vander(lib.tensor(True, device=dev)),
        lambda lib, dev: lib.linalg.vander(lib.tensor([1, 2], dtype=lib.uint8, device=dev)),
    ],
    ids=["empty", "N=0", "N=1", "int32", "linalg bool", "linalg bool 0-d", "linalg uint8"],
)
def test_vander_integers_in_int64(device, op):
    """Integer inputs give int64 for every N (short ones kept their dtype); linalg.vander
    refuses bool before its other checks."""
    both(device, lambda lib, dev: op(lib, dev))


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((1,), {}),
        ((3,), {"correction": 3}),
        ((0,), {}),
        ((2, 0), {"dim": 0}),
        ((), {"dim": -1}),
        ((1,), {"correction": 0}),  # (a degree of freedom left: no warning)
        ((2, 3), {"dim": 1}),
    ],
)
def test_variance_warns_without_degrees_of_freedom(device, name, shape, kwargs):
    """PyTorch's UserWarning naming the function where the correction leaves no degree of
    freedom (ATen's reduction factor: input numel over output numel)."""

    def case(lib, dev):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = getattr(lib, name)(lib.ones(shape, device=dev), **kwargs)
        # (torch's own text ends with where in ATen it was triggered)
        return [result, [str(w.message).split(" (Triggered")[0] for w in caught]]

    both(device, case)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_of_nothing_is_a_new_tensor(device, mode):
    """Non-constant padding of zero widths gives a new tensor (it returned the input: writing
    into the result wrote into a leaf)."""

    def case(lib, dev):
        x = lib.ones(2, 3, device=dev, requires_grad=True)
        y = lib.nn.functional.pad(x, (0, 0), mode=mode)
        y.view(-1).add_(1)
        y.sum().backward()
        return [y is x, y.grad_fn is not None, x, x.grad]

    both(device, case)


@pytest.mark.parametrize(
    "var_shape", [(1, 4, 3), (3, 1, 3), (3, 4, 1), (3, 4), (1, 1, 3), (3, 2, 3), (4, 3), (1,)]
)
def test_gaussian_nll_loss_var_shapes(device, var_shape):
    """A var of the input's rank differing from it in one dim, of size 1 there (any dim), is
    taken, as PyTorch's; var one dim short gets it appended; others are ValueError."""

    def case(lib, dev):
        x = lib.arange(36.0, device=dev).reshape(3, 4, 3) / 10
        return lib.nn.functional.gaussian_nll_loss(
            x, lib.ones(3, 4, 3, device=dev), lib.full(var_shape, 2.0, device=dev), reduction="none"
        )

    both(device, case)


@pytest.mark.parametrize("shape", [(1, 3, 3, 0), (2, 3, 0), (0, 3, 2), (1, 3, 1, 1)])
def test_instance_norm_of_no_spatial_element(device, shape):
    """No spatial element is no error (one is: PyTorch's ValueError) and leaves the running
    statistics as they are; no sample makes them NaN, as PyTorch's."""

    def case(lib, dev):
        running_mean, running_var = lib.zeros(3, device=dev), lib.ones(3, device=dev)
        y = lib.nn.functional.instance_norm(
            lib.ones(shape, device=dev), running_mean=running_mean, running_var=running_var
        )
        return [y, running_mean, running_var]

    both(device, case)


@pytest.mark.parametrize(
    "shape, samples, replacement",
    [
        ((0,), 1, False),
        ((2, 0), 1, False),
        ((0, 2), 2, True),
        ((0, 0), 1, True),
        ((0, 3), 2, False),
    ],
)
def test_multinomial_of_no_distribution_or_category(device, shape, samples, replacement):
    """A distribution over no category refuses as PyTorch's (RuntimeError, not NumPy's
    ValueError); no distribution gives an empty (0, num_samples) result."""

    def case(lib, dev):
        return lib.ones(shape, device=dev).multinomial(samples, replacement=replacement)

    both(device, case)


@pytest.mark.parametrize(
    "pool",
    [
        lambda F, x: F.adaptive_avg_pool2d(x, (8, 0)),
        lambda F, x: F.adaptive_avg_pool2d(x[0], (0, 1)),
        lambda F, x: F.adaptive_avg_pool3d(x.unsqueeze(-1), (1, 0, 1)),
        lambda F, x: F.adaptive_max_pool2d(x, (2, 0)),
        lambda F, x: F.adaptive_max_pool2d(x, (2, 0), return_indices=True)[1],
        lambda F, x: F.interpolate(x, mode="area", scale_factor=(2, 0.75)),
    ],
    ids=["avg", "avg unbatched", "avg 3d", "max", "max indices", "area"],
)
@pytest.mark.parametrize("backward", [False, True])
def test_adaptive_pooling_to_no_element(device, pool, backward):
    """An output size of 0 gives the empty result; its backward raises PyTorch's RuntimeError
    (no error before; adaptive max pooling raised NumPy's ValueError)."""

    def case(lib, dev):
        x = lib.ones(1, 2, 4, 1, device=dev, requires_grad=True)
        y = pool(lib.nn.functional, x)
        if backward and y.requires_grad:
            y.sum().backward()
        return [y, x.grad]

    both(device, case)


@pytest.mark.parametrize(
    "dtypes", [("bool", "bool"), ("bool", "int64"), ("int64", "float32"), ("float32", "int64")]
)
def test_cross_dtypes(device, dtypes):
    """ATen's cross kernel dispatches on input's dtype (no bool: NotImplementedError) and takes
    other of the same dtype only (RuntimeError; it promoted)."""

    def case(lib, dev):
        a, b = (lib.ones(2, 3, dtype=getattr(lib, d), device=dev) for d in dtypes)
        return lib.linalg.cross(a, b)

    both(device, case)


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("shape, dim", [((1, 1), 0), ((3, 2), 0), ((3, 2), 1), ((3,), 0)])
def test_index_reduce_of_bool_past_1d(device, reduce, include_self, shape, dim):
    """Past 1-d, ATen's CPU index_reduce takes bool where the input's values are included (it
    refuses it in 1-d, and without them: NotImplementedError)."""

    def case(lib, dev):
        x = (lib.arange(math.prod(shape), device=dev) % 2 == 0).reshape(shape)
        source_shape = list(shape)
        source_shape[dim] = 2
        source = (lib.arange(math.prod(source_shape), device=dev) % 3 == 0).reshape(source_shape)
        index = lib.tensor([0, 0], device=dev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (index_reduce is in beta: torch's warning)
            return x.index_reduce(dim, index, source, reduce, include_self=include_self)

    both(device, case)
