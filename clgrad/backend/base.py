"""The boundary between the front end and a backend: the record a backend sees of a tensor,
the declarations of the kernels it runs, and the primitives every backend provides.

A backend never sees a ``Tensor``: the front end hands it ``View`` records. An elementwise or
reduction op reaches a backend as data (a ``MapKernel`` or ``ReduceKernel``: C expressions and a
NumPy reference), so a backend holds no per-op code and never imports ``clgrad.ops``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class View(NamedTuple):
    """What a backend knows of a tensor: elements ``offset + sum(i_d * strides[d])`` of
    ``buffer`` (a host array or an OpenCL buffer), in units of ``dtype``. ``nbytes`` is the
    size of the whole storage: no index a backend forms may reach past it.

    A record does not keep the storage alive: the caller holds the tensor until the primitive
    has enqueued its work (queues run in order, so freeing after that is safe)."""

    buffer: Any
    offset: int
    shape: tuple
    strides: tuple
    dtype: Any
    nbytes: int

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def is_contiguous(self) -> bool:
        expected = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != expected:
                return False
            expected *= n
        return True

    @property
    def ndim(self) -> int:
        return len(self.shape)


class MapKernel:
    """An elementwise computation: ``expr`` is OpenCL C over ``in0``, ``in1``, ... (operands
    already converted to the compute type ``{T}``) and ``_i`` (the output's linear index);
    ``numpy`` computes the same from NumPy arrays or scalars in the compute dtype.

    Identity matters: backends key their kernel caches on the object, so declare each once.
    """

    __slots__ = ("name", "expr", "numpy", "__weakref__")

    def __init__(self, name: str, expr: str, numpy: Callable | None):
        self.name, self.expr, self.numpy = name, expr, numpy

    def __repr__(self):
        return f"MapKernel({self.name!r}, {self.expr!r})"


class ReduceKernel:
    """A reduction, as pyopencl's ``ReductionKernel`` takes it: each element is mapped by
    ``map_expr`` (C over ``x``), combined by ``reduce_expr`` (C over ``a`` and ``b``, valid on
    scalars and on vectors) starting from ``neutral``.

    ``neutral`` is C text with ``{T}`` for the compute type; the words ``LOWEST`` and
    ``HIGHEST`` stand for the type's smallest and largest value (-INFINITY and INFINITY for
    floats). An arg reduction (``arg=True``) keeps the index of the first element for which
    ``better`` (C over ``v`` and ``s``: v replaces s) holds, a NaN counting as better.
    ``numpy(array, axis)`` is the host reference.
    """

    __slots__ = ("name", "neutral", "reduce_expr", "map_expr", "arg", "better", "numpy")

    def __init__(
        self,
        name: str,
        neutral: str,
        reduce_expr: str = "",
        numpy: Callable | None = None,
        map_expr: str = "x",
        arg: bool = False,
        better: str = "",
    ):
        self.name, self.neutral, self.reduce_expr, self.map_expr = (
            name,
            neutral,
            reduce_expr,
            map_expr,
        )
        self.arg, self.better, self.numpy = arg, better, numpy

    def __repr__(self):
        return f"ReduceKernel({self.name!r})"


# Kernels a backend may build in one program (``bundle``): elementwise kernels by what they
# compute, (number of operands, compute C type, result dtype name), whatever their operands'
# storage types;
# reductions by ("reduce", whether they are arg reductions).
BUNDLES: dict[tuple, list] = {}


def bundle(key: tuple, kernel: MapKernel | ReduceKernel) -> None:
    """Files ``kernel`` under ``key`` (see ``BUNDLES``): a backend whose compiler costs per
    program rather than per kernel builds all of a key's kernels in one program, at the first
    use of any of them.

    >>> k = MapKernel("twice", "(in0 + in0)", None)
    >>> key = (1, "float", "float32")
    >>> bundle(key, k)
    >>> k in BUNDLES[key]
    True
    >>> BUNDLES[key].remove(k)
    """
    members = BUNDLES.setdefault(key, [])
    if kernel not in members:
        members.append(kernel)


# Kernels every backend needs for its own primitives.
COPY = MapKernel("copy", "in0", lambda a: a)
FILL = MapKernel("fill", "in0", lambda v: v)
ARANGE = MapKernel("arange", "(in0 + ({T})_i * in1)", None)
# the combinations ``Backend.scan`` runs (cumsum, cumprod, logcumsumexp); a long line's chunks
# are reduced by the same kernels first
SUM = ReduceKernel("sum", "0", "a + b")
PROD = ReduceKernel("prod", "1", "a * b")
# log(exp(a) + exp(b)), shifted by the larger; two equal infinities are themselves (their
# difference would be NaN); a NaN reaches the result through fabs(a - b)
LOGADDEXP = ReduceKernel(
    "logaddexp", "LOWEST", "((a) == (b) && isinf(a)) ? (a) : fmax(a, b) + log1p(exp(-fabs(a - b)))"
)


class OptimizerKernel(NamedTuple):
    """A fused optimizer update, declared once for every backend: ``Backend.optimizer_step``
    gets the views ``("param", "grad", *states)`` (the states that ``flags`` switch on, in the
    order of ``states``) and one number per name of ``scalars``, in that order. ``flags`` are
    the switches that change the code (each is a separate kernel); everything that may change
    from step to step (lr, the bias corrections) is a scalar, so a new lr never rebuilds.

    ``states`` pairs each state with the flag it needs (None: always there).
    """

    states: tuple
    flags: tuple
    scalars: tuple

    def state_names(self, flags) -> tuple:
        """The states present under ``flags`` (a set of flag names), in argument order.

        >>> OPTIMIZERS["adam"].state_names({"amsgrad"})
        ('exp_avg', 'exp_avg_sq', 'max_exp_avg_sq')
        """
        return tuple(name for name, need in self.states if need is None or need in flags)


# The formulas (PyTorch's, in the rounding order of clgrad's per-op path; d is the gradient,
# negated with "maximize"; "weight_decay" adds p * weight_decay to d, or with "decoupled"
# first scales p by decay = 1 - lr * weight_decay):
#   sgd:     buf = first ? d : buf * momentum + d * dampening1;  d = nesterov ? d + buf *
#            momentum : buf (with "momentum");  p = p + d * neg_lr
#   adam:    m = m * beta1 + d * one_minus_beta1;  v = v * beta2 + d * d * one_minus_beta2;
#            vmax = max(vmax, v) with "amsgrad" (the denominator then uses vmax);
#            p = p - m / (sqrt(v) / bias2_sqrt + eps) * step_size
#   rmsprop: sq = sq * alpha + d * d * one_minus_alpha;  ga = ga * alpha + d * one_minus_alpha
#            and avg = sqrt(sq - ga * ga) + eps with "centered", else sqrt(sq) + eps;
#            buf = buf * momentum + d / avg and p = p + buf * neg_lr with "momentum", else
#            p = p + d / avg * neg_lr
OPTIMIZERS = {
    "sgd": OptimizerKernel(
        states=(("momentum_buffer", "momentum"),),
        flags=("momentum", "nesterov", "weight_decay", "maximize"),
        scalars=("neg_lr", "momentum", "dampening1", "weight_decay", "first"),
    ),
    "adam": OptimizerKernel(
        states=(("exp_avg", None), ("exp_avg_sq", None), ("max_exp_avg_sq", "amsgrad")),
        flags=("amsgrad", "weight_decay", "decoupled", "maximize"),
        scalars=(
            "beta1",
            "one_minus_beta1",
            "beta2",
            "one_minus_beta2",
            "eps",
            "weight_decay",
            "decay",
            "step_size",
            "bias2_sqrt",
        ),
    ),
    "rmsprop": OptimizerKernel(
        states=(("square_avg", None), ("momentum_buffer", "momentum"), ("grad_avg", "centered")),
        flags=("momentum", "centered", "weight_decay", "maximize"),
        scalars=("neg_lr", "alpha", "one_minus_alpha", "eps", "weight_decay", "momentum"),
    ),
}


class Backend:
    """The primitives a device kind implements. Every argument named ``out``, ``x``, ``src``,
    ``dst``, ``offsets``, ``a`` or ``b`` is a ``View``; dtypes are ``clgrad.dtypes.dtype``.

    The front end checks shapes, dtypes and devices before calling; a primitive only computes.
    """

    def elementwise(self, kernel: MapKernel, out: View, operands: list, compute: list) -> None:
        """``out = kernel(operands...)``; an operand is a ``View`` whose shape broadcasts to
        ``out.shape``, or a Python number; each is converted to its ``compute`` dtype first."""
        raise NotImplementedError

    def elementwise_plan(self, kernel: MapKernel, out: View, operands: list, compute: list):
        """What ``elementwise`` decides from the geometry and dtypes alone (no buffer, offset or
        number), for ``run_elementwise`` to launch for any views of that geometry: the front
        end keeps it for the operands' shapes, strides and dtypes, and skips deciding again."""
        return kernel, compute

    def run_elementwise(self, plan, out: View, operands: list) -> None:
        """``elementwise`` of a plan from ``elementwise_plan`` (views of the same geometry)."""
        kernel, compute = plan
        self.elementwise(kernel, out, operands, compute)

    def arange(self, out: View, start, step, dt) -> None:
        """``out[i] = start + i * step`` computed in ``dt``."""
        raise NotImplementedError

    def reduce(self, kernel: ReduceKernel, out: View, x: View, dims: tuple, acc) -> None:
        """``out`` (x's shape without ``dims``) = the reduction of x over ``dims``,
        accumulated in dtype ``acc``; arg reductions write int64 indices."""
        raise NotImplementedError

    def scan(self, out: View, x: View, dim: int, acc, kernel: ReduceKernel) -> None:
        """The inclusive scan of x along ``dim`` by ``kernel`` (``SUM``, ``PROD`` or
        ``LOGADDEXP``), accumulated in ``acc``."""
        raise NotImplementedError

    def scans_extreme(self, lines: int, length: int) -> bool:
        """Whether ``cum_extreme`` serves ``lines`` lines of ``length`` elements (by default it
        does not: the caller scans with Tensor ops)."""
        return False

    def cum_extreme(self, values: View, indices: View, x: View, dim: int, largest: bool) -> None:
        """The running maximum (``largest``) or minimum of x along ``dim`` into contiguous
        ``values`` and the int64 index each came from into contiguous ``indices``, as
        ``torch.cummax`` / ``torch.cummin``: a later equal value takes the index, a NaN stays
        the extreme and a later NaN takes the index."""
        raise NotImplementedError

    def matmul(self, out: View, a: View, b: View, acc) -> None:
        """Batched ``out[i] = a[i] @ b[i]`` over 3-D views, accumulated in ``acc``."""
        raise NotImplementedError

    def take(self, out: View, src: View, offsets: View) -> None:
        """``out`` (contiguous) = src's storage at int64 element ``offsets``."""
        raise NotImplementedError

    def put(self, dst: View, offsets: View, values: View, accumulate: bool) -> None:
        """dst's storage at ``offsets`` = values (``+=`` with ``accumulate``)."""
        raise NotImplementedError

    def gather_rows(self, out: View, src: View, index: View) -> None:
        """``out[o, j, i] = src[o, index[j], i]``: ``out`` contiguous (O, J, I), ``src``
        (O, R, I) through its strides, ``index`` a contiguous int64 vector of J positions in
        [0, R) (checked by the caller)."""
        raise NotImplementedError

    def gather_dim(self, out: View, src: View, index: View, dim: int) -> None:
        """``torch.gather``: ``out`` (contiguous, index's shape) = src at each coordinate of
        index's shape with its coordinate along ``dim`` replaced by ``index``'s value there
        (int64, in [0, src.shape[dim]): checked by the caller); src and index strided."""
        raise NotImplementedError

    def add_rows(self, out: View, index: View, src: View) -> None:
        """``out[o, index[j], i] += src[o, j, i]``, a repeated index's rows all added:
        ``out`` (O, R, I) through its strides, ``src`` contiguous (O, J, I)."""
        raise NotImplementedError

    def sort(self, values: View, indices: View, x: View, descending: bool) -> None:
        """Sorts every row (the last dim) of the contiguous ``x`` into contiguous ``values``
        and int64 ``indices`` (the position of each value in its row): stably, NaN as the
        largest value (PyTorch's order), ascending or ``descending``."""
        raise NotImplementedError

    def selects_topk(self, rows: int, n: int, k: int) -> bool:
        """Whether ``topk`` serves k of (rows, n) rows better than a sort of them (by default it
        has no selection: the caller sorts)."""
        return False

    def topk(self, values: View, indices: View, x: View, k: int, largest: bool) -> None:
        """The first ``k`` of every row of the contiguous ``x`` in ``sort``'s order (``largest``:
        descending) into contiguous (rows, k) ``values`` and int64 ``indices``, where
        ``selects_topk`` says so."""
        raise NotImplementedError

    def nonzero(self, x: View):
        """A NumPy int64 array (count, ndim) of the indices of x's nonzero elements."""
        raise NotImplementedError

    def random(self, out: View, kind: str, seed: int, offset: int, dt) -> None:
        """Philox uniform [0, 1) or standard normal numbers, or (``kind`` "bits", an int64
        ``out``) the raw 32-bit draws, identical on every backend."""
        raise NotImplementedError

    def optimizer_step(self, kind: str, flags: frozenset, views: list, scalars: tuple) -> None:
        """One fused update of a parameter, in place: ``views`` are the contiguous param, its
        gradient and the states ``OPTIMIZERS[kind]`` lists for ``flags`` (same shape, one
        device, floating dtypes; computed in float for float16), ``scalars`` its numbers."""
        raise NotImplementedError

    # how many parameters ``optimizer_step_group`` updates in one launch where that pays
    optimizer_group_max = 1

    def optimizer_step_group(self, kind: str, flags: frozenset, members: list, scalars) -> None:
        """``optimizer_step`` of several parameters with the same ``scalars``: ``members``
        holds each one's views (one dtype signature). A device may run them as one launch."""
        for views in members:
            self.optimizer_step(kind, flags, views, scalars)

    def to_numpy(self, x: View):
        """A NumPy array of x's elements (waits for queued work)."""
        raise NotImplementedError

    def from_numpy(self, dst: View, array) -> None:
        """Copies a host array into contiguous ``dst``."""
        raise NotImplementedError

    def copy_from(self, dst: View, src: View, src_backend: Backend, keep) -> bool:
        """Copies the contiguous ``src`` of another device into the contiguous ``dst`` of this
        one without the host, where the two devices allow it (an OpenCL context they share);
        False where they don't, and the caller goes through the host. ``keep`` owns src's
        memory and is kept alive until the copy has read it. The copy waits for the work
        queued on src's device, and nothing else."""
        return False

    def synchronize(self) -> None:
        """Waits until every queued kernel is done."""
        raise NotImplementedError

    def matmul_max_k(self):
        """The longest sum a product's kernels take on this device (None: any); ``matmul``
        splits a longer K into products it adds up."""
        return None

    def norm_fits(self, a, c, b) -> bool:
        """Whether ``norm`` and ``norm_backward`` take ``c`` groups of ``a * b`` elements on
        this device (else Tensor ops normalize)."""
        return True

    def product_sum_chunks(self, Z, G, M, N, K, dtype) -> int:
        """How many chunks of its Z batches ``product_sum`` sums a batched product of G
        groups over on this device (0: it has no such kernel, and the caller multiplies, then
        sums)."""
        return 0

    def product_sum(self, out: View, a: View, b: View, acc) -> None:
        """``out`` (C, G, M, N), contiguous = for each of the C chunks of the Z batches that
        ``product_sum_chunks`` gave and each group g, the sum over its batches of ``a[z, g] @
        b[z, g].T``; ``a`` (Z, G, M, K) and ``b`` (Z, G, N, K) are contiguous along K."""
        raise NotImplementedError

    def matmul_row_align(self, dtype) -> int:
        """How many elements the rows of a matmul's right operand of ``dtype`` are best
        padded to (the column matrix of a convolution is made so): 1, no padding."""
        return 1

    def unfold(self, out: View, x: View, stride, dilation, padding) -> None:
        """Convolution's column matrix (im2col): ``out`` (N, C, *kernel, *outs), contiguous
        but for the stride of its last kernel dim, which may leave room after each block of
        outs (``matmul_row_align``), holds the windows of ``x`` (N, C, *spatial; 1 to 3
        spatial dims, any strides):
        ``out[n, c, k, o] = x[n, c, o * stride - padding + k * dilation]`` per spatial dim, 0
        where that falls outside x (``padding`` zeros before each dim; after it, as many as
        the windows reach)."""
        raise NotImplementedError

    def fold(self, out: View, cols: View, stride, dilation, padding) -> None:
        """The adjoint of ``unfold`` (col2im): ``out`` (N, C, *spatial), contiguous, = the sum
        of the elements of ``cols`` (N, C, *kernel, *outs), contiguous, that ``unfold`` would
        have taken from each position."""
        raise NotImplementedError

    def window_max(self, values: View, indices: View, win: View) -> None:
        """Max pooling's forward: ``values`` and ``indices`` (N, C, *outs), contiguous, hold
        the largest element of each window of ``win`` (N, C, *outs, *kernel; 1 to 3 spatial
        dims, any strides) and its row-major index (int32) in the window: the first largest,
        or the last NaN where there are NaNs (PyTorch's max pooling)."""
        raise NotImplementedError

    def window_put(self, out: View, grad: View, indices: View, win: View) -> None:
        """Max pooling's gradient where the windows tile the input: ``win`` (N, C, *outs,
        *kernel) is a view of ``out`` in which every element of ``out`` lies in exactly one
        window; each window's element at ``indices`` (int32, as ``window_max`` gives) gets
        ``grad``, the others 0 (``grad`` and ``indices``: (N, C, *outs), contiguous)."""
        raise NotImplementedError

    def softmax_fits(self, n: int, inner: int) -> bool:
        """Whether ``softmax`` and ``softmax_backward`` take rows of ``n`` elements ``inner``
        apart on this device (else Tensor ops compute them)."""
        return True

    def softmax(self, out: View, x: View, dim: int, log: bool, acc) -> None:
        """``out`` = softmax (``log``: log_softmax) of x along ``dim``, computed in dtype
        ``acc``; x and out are contiguous, of one shape, with at least one element."""
        raise NotImplementedError

    def norm(self, y: View, stats, x: View, weight, bias, per, eps, acc) -> None:
        """Normalization of ``x`` (A, C, B), contiguous: each c in C over its A * B elements
        (layer_norm: (1, rows, n); batch_norm: (N, C, spatial)). ``y`` (like x) = (x - mean)
        * rstd, times ``weight`` and plus ``bias`` where given, with the mean and biased
        variance of the group and rstd = 1 / sqrt(var + eps); ``stats``, three (C) views of
        dtype ``acc`` (the compute dtype), receive mean, var and rstd. ``per``: "c" (weight
        and bias hold a value per group) or "b" (a value per position b: layer_norm's, where
        A is 1); weight and bias are contiguous, of x's dtype."""
        raise NotImplementedError

    def norm_backward(
        self, dx: View, dw, db, x: View, g: View, weight, mean: View, rstd: View, per, acc
    ) -> None:
        """``norm``'s gradient for the incoming ``g`` (like x, contiguous): ``dx`` = rstd * (h -
        mean(h) - xhat * mean(h * xhat)) per group, for h = g * weight (g without one) and xhat
        = (x - mean) * rstd. Where ``per`` is "c", ``dw`` (C) receives each group's sum of g *
        xhat (given where weight is) and ``db`` (C), or None, its sum of g."""
        raise NotImplementedError

    def softmax_backward(self, out: View, y: View, g: View, dim: int, log: bool, acc) -> None:
        """The gradient of (log_)softmax along ``dim`` for the incoming ``g``, from its output
        ``y``: ``g - exp(y) * sum(g)`` (``log``) or ``y * (g - sum(g * y))``, the sums along
        ``dim``, computed in dtype ``acc``; y, g and out contiguous, of one shape, with at least
        one element."""
        raise NotImplementedError

    def nll(self, out: View, x: View, target: View, weight, ignore_index: int, acc) -> None:
        """nll_loss's terms of the log-probabilities ``x`` (outer, C, inner) at the int64
        targets ``target`` (outer, inner), computed in dtype ``acc``; ``weight`` (C) or None
        for ones, of x's dtype; x, target and weight contiguous. Element e = o * inner + i
        counts where its target t is in [0, C) and is not ``ignore_index`` (an out-of-range
        target is left to the caller's check: it counts nothing here). A 1-D ``out`` (n = outer
        * inner, contiguous, x's dtype) gets each element's term -weight[t] * x[o, t, i], 0
        where it doesn't count. A 2-D ``out`` (groups, 2), contiguous, of dtype ``acc``, gets
        per group of chunk = ceil(n / groups) consecutive elements the sum of the terms and
        the sum of the weights of those that count (one group: the totals)."""
        raise NotImplementedError

    def computes_distances(self, outputs: int, length: int) -> bool:
        """Whether ``distances`` serves ``outputs`` distances over ``length`` coordinates (by
        default it does not: the caller reduces the broadcast differences)."""
        return False

    def distances(self, out: View, x1: View, x2: View, p: float) -> None:
        """cdist's p-norm distances: contiguous ``out`` (B, P, R) of x1 (B, P, M) and x2
        (B, R, M), strided views of out's dtype; p = 0 counts the coordinates that differ,
        p = inf takes the largest difference (NaN propagates), p = 2 the root of the summed
        squares, any other p the sum of |d|^p to the power 1/p."""
        raise NotImplementedError

    def nll_grad(self, out: View, g: View, target: View, weight, ignore_index: int, acc) -> None:
        """nll_loss's gradient: ``out`` (outer, C, inner), contiguous, = -weight[t] * g[e] at
        element e's target class t where e counts (as in ``nll``), 0 elsewhere; ``g`` holds a
        value per element (outer * inner, any stride; stride 0: one value for every element),
        of out's dtype."""
        raise NotImplementedError
