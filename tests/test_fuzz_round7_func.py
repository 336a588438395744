"""Families a seventh differential round found in distributions, ``torch.func`` and autograd:
``MixtureSameFamily.expand``, the argument checks of ``cdf`` and ``log_prob`` (support, shape,
type), torch's constraint classes, mixed-dtype parameters, ``vmap``'s ``out_dims=None`` on a
batched output, and the APIs that were missing (``func.functionalize``,
``func.replace_all_batch_norm_modules_``, ``autograd.graph.allow_mutation_on_saved_tensors``,
``autograd.set_multithreading_enabled``); each checked against torch on every device."""

import pytest
import torch
from test_fuzz_families import both

import clgrad


@pytest.fixture(autouse=True)
def _validation_on():
    """Distribution argument validation on in both libraries (PyTorch's default, which torch's
    dynamo turns off for the whole process once any test has used torch.compile)."""
    before = [lib.distributions.Distribution._validate_args for lib in (torch, clgrad)]
    for lib in (torch, clgrad):
        lib.distributions.Distribution.set_default_validate_args(True)
    yield
    for lib, value in zip((torch, clgrad), before):
        lib.distributions.Distribution.set_default_validate_args(value)


def _t(lib, dev, values):
    return lib.tensor(values, dtype=lib.float32, device=dev)


# ---- distributions -------------------------------------------------------------------------
@pytest.mark.parametrize("event", [False, True])
def test_mixture_same_family_expands(device, event):
    """``expand`` expands the mixture to the new batch shape and the components to it plus the
    component dim; the expanded mixture's shapes, moments and densities are torch's."""

    def case(lib, dev):
        D = lib.distributions
        logits = _t(lib, dev, [0.1, -0.4, 0.3])
        if event:  # components with an event dim (a mixture of diagonal Gaussians)
            loc = _t(lib, dev, [[0.0, 1.0], [-1.0, 0.5], [2.0, -2.0]])
            comp = D.Independent(D.Normal(loc, _t(lib, dev, [1.0, 2.0])), 1)
            value = _t(lib, dev, [[[0.5, -0.5]] * 2] * 4)
        else:
            comp = D.Normal(_t(lib, dev, [-1.0, 0.0, 2.0]), _t(lib, dev, [1.0, 0.5, 2.0]))
            value = _t(lib, dev, [[0.25, -1.0]] * 4)
        d = D.MixtureSameFamily(D.Categorical(logits=logits), comp).expand((4, 2))
        return [
            list(d.batch_shape),
            list(d.event_shape),
            list(d.mixture_distribution.batch_shape),
            list(d.component_distribution.batch_shape),
            list(d.sample((3,)).shape),
            d.log_prob(value),
            d.mean,
            d.variance,
        ]

    both(device, case)


def _nan(t):
    return t([float("nan")])


CDF_CASES = {  # a value outside the support (or not a tensor); values inside, and icdf
    "Normal": (
        [
            lambda D, t: D.Normal(t([0.0]), 1.0).cdf(_nan(t)),
            lambda D, t: D.Normal(t([0.0]), 1.0).cdf(0.5),
        ],
        lambda D, t: [
            D.Normal(t([0.0]), 2.0).cdf(t([0.5, -1.0])),
            D.Normal(t([0.0]), 1.0).icdf(t([0.25, 2.0])),  # torch checks no icdf
        ],
    ),
    "Exponential": (
        [lambda D, t: D.Exponential(t([1.0])).cdf(t([-1.0]))],
        lambda D, t: [
            D.Exponential(t([2.0])).cdf(t([0.0, 1.5])),
            D.Exponential(t([1.0]), validate_args=False).cdf(t([-1.0])),
        ],
    ),
    "Laplace": (
        [lambda D, t: D.Laplace(t([0.0]), 1.0).cdf(_nan(t))],
        lambda D, t: D.Laplace(t([0.0]), 1.0).cdf(t([-0.5, 0.5])),
    ),
    "Uniform": (
        [lambda D, t: D.Uniform(t([0.0]), 1.0).cdf(t([2.0]))],
        lambda D, t: [
            D.Uniform(t([0.0]), 1.0).cdf(t([1.0, 0.25])),  # high is in the support
            D.Uniform(t([0.0]), 1.0).icdf(t([2.0])),
        ],
    ),
    "Cauchy": (
        [lambda D, t: D.Cauchy(t([0.0]), 1.0).cdf(_nan(t))],
        lambda D, t: D.Cauchy(t([0.0]), 1.0).cdf(t([1.0])),
    ),
    "HalfNormal": (
        [lambda D, t: D.HalfNormal(t([1.0])).cdf(t([-1.0]))],
        lambda D, t: D.HalfNormal(t([1.0])).cdf(t([0.0, 1.0])),
    ),
}


@pytest.mark.parametrize("name", list(CDF_CASES))
def test_cdf_checks_its_argument(device, name):
    """With validation on (torch's default) ``cdf`` raises ValueError for a NaN or a value
    outside the support, or a Python number, as ``log_prob`` does; ``icdf`` is not checked."""
    bad, good = CDF_CASES[name]
    for fn in [*bad, good]:
        both(device, lambda lib, dev, fn=fn: fn(lib.distributions, lambda v: _t(lib, dev, v)))


VALUE_CASES = {  # values that raise, then (after a None) values that do not
    "Normal": [
        lambda D, t: D.Normal(t([0.0, 0.0]), 1.0).log_prob(t([0.0] * 3)),
        lambda D, t: D.Normal(t([0.0]), 1.0).log_prob(0.5),
        lambda D, t: D.Normal(t([0.0]), 1.0).cdf(t([[0.0, 1.0]] * 3)),
        None,
        lambda D, t: D.Normal(t([[0.0], [1.0]]), 1.0).log_prob(t([0.0] * 3)),
        lambda D, t: D.Normal(t([0.0]), 1.0, validate_args=False).log_prob(0.5),
    ],
    "Categorical": [
        lambda D, t: D.Categorical(logits=t([[0.0] * 3] * 2)).log_prob(t([0.0, 1.0, 2.0])),
        lambda D, t: D.Categorical(logits=t([0.0] * 3)).log_prob(1),
        None,
        lambda D, t: D.Categorical(logits=t([[0.0] * 3] * 2)).log_prob(t([[0.0], [2.0]])),
    ],
    "MultivariateNormal": [
        lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 0.0], [0.0, 1.0]])).log_prob(
            t([0.0] * 3)
        ),
        lambda D, t: D.MultivariateNormal(
            t([[0.0, 0.0]] * 2), t([[1.0, 0.0], [0.0, 1.0]])
        ).log_prob(t([[0.0, 0.0]] * 3)),
        None,
        lambda D, t: D.MultivariateNormal(
            t([[0.0, 0.0]] * 2), t([[1.0, 0.0], [0.0, 1.0]])
        ).log_prob(t([[[0.5, 0.0]]] * 3)),
    ],
    "others": [
        lambda D, t: D.Bernoulli(t([0.3])).log_prob(1.0),
        lambda D, t: D.LogNormal(t([0.0]), 1.0).log_prob(1.0),
        lambda D, t: D.Dirichlet(t([1.0] * 3)).log_prob(t([0.5, 0.5])),
        lambda D, t: D.Independent(D.Normal(t([[0.0] * 3] * 2), 1.0), 1).log_prob(
            t([[0.0] * 3] * 3)
        ),
        lambda D, t: D.MixtureSameFamily(
            D.Categorical(logits=t([[0.0] * 3] * 2)), D.Normal(t([[0.0] * 3] * 2), 1.0)
        ).log_prob(t([0.0] * 3)),
    ],
}


@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_log_prob_checks_the_value_shape_and_type(device, name):
    """With validation on, a value that does not broadcast with ``batch_shape +
    event_shape``, whose rightmost dims are not ``event_shape``, or that is not a tensor
    raises ValueError (not the broadcast's RuntimeError), as torch's ``_validate_sample``;
    values that broadcast (or any, unchecked) are scored."""
    for fn in VALUE_CASES[name]:
        if fn is not None:
            both(device, lambda lib, dev, fn=fn: fn(lib.distributions, lambda v: _t(lib, dev, v)))


def test_uniform_support_is_a_closed_interval(device):
    """``Uniform.support`` is ``constraints.interval`` (``high`` in it), as torch's; its
    log_prob at ``high`` is -inf, above it ValueError; Gumbel's cdf checks the same way."""

    def case(lib, dev):
        D = lib.distributions
        d = D.Uniform(_t(lib, dev, [0.0, -1.0]), _t(lib, dev, [1.0, 3.0]))
        support = d.support
        return [
            type(support).__name__,
            isinstance(support, D.constraints.interval),
            support.check(_t(lib, dev, [1.0, 3.0])),
            support.check(_t(lib, dev, [0.0, 3.5])),
            d.log_prob(_t(lib, dev, [1.0, 0.0])),
            D.Gumbel(_t(lib, dev, [0.0]), 1.0).cdf(_t(lib, dev, [0.5])),
        ]

    def above(lib, dev):
        d = lib.distributions.Uniform(_t(lib, dev, [0.0]), _t(lib, dev, [1.0]))
        return d.log_prob(_t(lib, dev, [1.5]))

    both(device, case)
    both(device, above)


def test_independent_constraint_has_torchs_class_name(device):
    """``constraints._IndependentConstraint`` is the class of ``independent(...)``,
    ``real_vector`` and the supports of MVN and Independent; a transform registered for it
    is found for them."""

    def case(lib, dev):
        D = lib.distributions
        C = D.constraints
        mvn = D.MultivariateNormal(_t(lib, dev, [0.0, 0.0]), _t(lib, dev, [[1.0, 0], [0, 1.0]]))
        ind = D.Independent(D.Normal(_t(lib, dev, [0.0, 1.0]), 1.0), 1)
        registry = D.constraint_registry.ConstraintRegistry()
        registry.register(C._IndependentConstraint, lambda c: D.transforms.ExpTransform())
        # the global registry takes the class too (registered again with its own factory)
        D.biject_to.register(C._IndependentConstraint, D.biject_to._registry[C.independent])
        return [
            isinstance(mvn.support, C._IndependentConstraint),
            isinstance(ind.support, C._IndependentConstraint),
            isinstance(C.real_vector, C._IndependentConstraint),
            C.independent is C._IndependentConstraint,
            registry(ind.support)(_t(lib, dev, [0.0, 1.0])),
            D.biject_to(ind.support)(_t(lib, dev, [0.5, 1.0])),
        ]

    both(device, case)


def test_mixed_dtype_parameters_keep_each_dtype(device):
    """``broadcast_all`` does not promote: ``Normal(float32 loc, float64 scale)`` keeps each,
    and ``sample`` draws in loc's dtype (torch's ``normal`` draws in the mean's), ``rsample``
    and ``log_prob`` promote as their arithmetic does."""
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")

    def case(lib, dev):
        D = lib.distributions
        loc = lib.zeros(2, device=dev)
        scale = lib.ones(2, dtype=lib.float64, device=dev)
        out = []
        for d in (D.Normal(loc, scale), D.LogNormal(loc, scale), D.Normal(scale, loc + 1)):
            for v in (d.sample(), d.rsample(), d.log_prob(d.sample()), d.mean, d.variance):
                out.append([str(v.dtype).split(".")[-1], list(v.shape)])
        return out

    both(device, case)


# ---- torch.func ----------------------------------------------------------------------------
VMAP_BATCHED = {
    "batched": (lambda L, x, y: x * 2, None),
    "batched times zero": (lambda L, x, y: x * 0, None),
    "the slice itself": (lambda L, x, y: x, None),
    "argmax": (lambda L, x, y: x.argmax(), None),
    "detached": (lambda L, x, y: x.detach(), None),
    "through a function": (lambda L, x, y: L.nn.functional.linear(y, x.unsqueeze(0)), None),
    "stacked with unbatched": (lambda L, x, y: L.stack([y, x]), None),
    "in a dict": (lambda L, x, y: {"a": x + 1, "b": y}, None),
    "batched of a tuple": (lambda L, x, y: (x * 2, y + 1), (None, 0)),
}
VMAP_UNBATCHED = [
    (lambda L, x, y: (x * 2, y + 1), (0, None)),
    (lambda L, x, y: L.ones(2, device=y.device), None),
    (lambda L, x, y: y, None),
    (lambda L, x, y: y * 3 + 1, None),
    (lambda L, x, y: 3, None),
]


def _vmapped(fn, out_dims):
    def case(lib, dev):
        x = _t(lib, dev, [[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]])
        y = _t(lib, dev, [0.5, -1.0])
        return lib.func.vmap(lambda a, b: fn(lib, a, b), in_dims=(0, None), out_dims=out_dims)(x, y)

    return case


@pytest.mark.parametrize("name", list(VMAP_BATCHED))
def test_vmap_out_dims_none_refuses_a_batched_output(device, name):
    """An output under ``out_dims=None`` that derives from the mapped inputs raises ValueError
    (torch's would be a BatchedTensor), not the first sample's value; one that does not
    (made inside, or from unmapped inputs only) is returned as it is."""
    both(device, _vmapped(*VMAP_BATCHED[name]))
    for fn, out_dims in VMAP_UNBATCHED:
        both(device, _vmapped(fn, out_dims))


def test_vmap_out_dims_none_of_an_empty_batch_and_nested(device):
    def empty(lib, dev):
        return lib.func.vmap(lambda a: a * 2, out_dims=None)(lib.zeros(0, 2, device=dev))

    def nested(lib, dev):
        x = _t(lib, dev, [[[1.0, 1.0], [2.0, 2.0]], [[3.0, 3.0], [4.0, 4.0]]])
        y = _t(lib, dev, [0.5, 2.0])
        inner = lib.func.vmap(lambda v: v * y, out_dims=None)
        return lib.func.vmap(inner)(x)

    both(device, empty)
    both(device, nested)


def test_functionalize_runs_the_function(device):
    """``functionalize(f)`` has f's results and effects: intermediate in-place ops, inputs
    written in place, and outputs aliasing the inputs as torch's do (a copy where an input was
    written, or under remove="mutations_and_views" where an output is a view)."""

    def intermediate(a):
        b = a + 1
        b.view(-1).add_(1)
        return b

    def writes(a):
        a.add_(1)
        return a.view(-1), a, a[1:], a * 2

    def reads(a):
        return a.view(-1), a, a[1:]

    def case(lib, dev):
        F = lib.func.functionalize
        out = [F(intermediate)(_t(lib, dev, [0.0, 1.0]))]
        for remove in ("mutations", "mutations_and_views"):
            x = _t(lib, dev, [0.0, 1.0, 2.0, 3.0])
            got = F(writes, remove=remove)(x)
            out += [*got, x, [o is x or o._base is x for o in got]]
            x = _t(lib, dev, [0.0, 1.0, 2.0, 3.0])
            got = F(reads, remove=remove)(x)
            out += [*got, [(o is x, o._base is x) for o in got]]
        a = _t(lib, dev, [1.0, 2.0]).requires_grad_()
        y = F(lambda v: (v * v).view(-1), remove="mutations_and_views")(a)
        out += list(lib.autograd.grad(y.sum(), a))
        out.append(lib.func.vmap(F(lambda v: v.sin()))(_t(lib, dev, [[0.0, 1.0], [2.0, 3.0]])))
        return out

    def bad(lib, dev):
        return lib.func.functionalize(intermediate, remove="views")

    both(device, case)
    both(device, bad)


def test_replace_all_batch_norm_modules_(device):
    """Every batch norm (nested ones too) loses its running statistics in place and
    normalizes with its batch's, in training and eval; the module is returned. A vmapped
    ensemble of such a net then runs."""

    def case(lib, dev):
        lib.manual_seed(0)
        nn = lib.nn
        net = nn.Sequential(
            nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Sequential(nn.BatchNorm1d(3, affine=False))
        ).to(dev)
        with lib.no_grad():
            net[0].weight.copy_(_t(lib, dev, [[1.0, 2.0], [-1.0, 0.5], [0.0, 3.0]]))
            net[0].bias.copy_(_t(lib, dev, [0.1, 0.2, 0.3]))
        returned = lib.func.replace_all_batch_norm_modules_(net)
        x = _t(lib, dev, [[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
        train = net(x)
        net.eval()
        evaluated = net(x)
        params = {k: v.detach() for k, v in net.named_parameters()}
        batched = {k: v.expand(2, *v.shape) for k, v in params.items()}
        ensemble = lib.func.vmap(
            lambda p, xs: lib.func.functional_call(net, p, (xs,)), in_dims=(0, None)
        )(batched, x)
        return [
            returned is net,
            [(m.running_mean, m.running_var, m.num_batches_tracked) for m in (net[1], net[2][0])]
            == [(None, None, None)] * 2,
            [net[1].track_running_stats, net[2][0].track_running_stats],
            sorted(k for k, _ in net.named_buffers()),
            train,
            evaluated,
            ensemble,
        ]

    both(device, case)


# ---- autograd ------------------------------------------------------------------------------
def _saved_then_written(lib, dev, write, context=True):
    a = _t(lib, dev, [[0.5, 1.0, 2.0], [3.0, -1.0, 0.25]]).requires_grad_()

    def run():
        b = a.clone()
        out = (b**3).sum()
        write(lib, b)
        out.backward()
        return [a.grad, b.detach()]

    if not context:
        return run()
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        return run()


def _setitem(lib, b):
    b[0] = 5.0


WRITES = {
    "sin_": lambda lib, b: b.sin_(),
    "setitem": _setitem,
    "twice": lambda lib, b: (b.add_(1), b.mul_(3)),
    "relu inplace=True": lambda lib, b: lib.nn.functional.relu(b, inplace=True),
    "relu positional inplace": lambda lib, b: lib.nn.functional.relu(b, True),
    "relu_": lambda lib, b: lib.relu_(b),
    "+=": lambda lib, b: b.__iadd__(1),
    "copy_": lambda lib, b: b.copy_(lib.zeros(2, 3, device=b.device)),
    "through detach": lambda lib, b: b.detach().zero_(),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_allow_mutation_on_saved_tensors(device, name):
    """Inside the block a tensor saved for backward may be written in place: backward uses its
    value from before (a copy made before the write), as torch's."""

    def case(lib, dev):
        return _saved_then_written(lib, dev, WRITES[name])

    both(device, case)


def test_allow_mutation_on_saved_tensors_edges(device):
    """Outside the block the write fails backward; backward outside the block that recorded
    the graph is an AssertionError; blocks do not nest; a leaf written under no_grad, a saved
    output, double backward, retain_graph and the yielded context's class, as torch's."""

    def outside(lib, dev):
        return _saved_then_written(lib, dev, WRITES["sin_"], context=False)

    def late(lib, dev):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = _t(lib, dev, [1.0, 2.0]).requires_grad_()
            out = (a.clone() ** 2).sum()
        out.backward()

    def nested(lib, dev):
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                pass

    def various(lib, dev):
        G = lib.autograd.graph
        with G.allow_mutation_on_saved_tensors() as ctx:
            a = _t(lib, dev, [1.0, 2.0]).requires_grad_()
            out = (a * a).sum()
            with lib.no_grad():
                a.mul_(2)
            out.backward()
            leaf = a.grad

            a = _t(lib, dev, [1.0, 2.0]).requires_grad_()
            y = a.sigmoid()  # saves its output
            out = (y * 1).sum() + a.exp().sum()
            y.add_(1)
            out.backward()
            saved_output = a.grad

            a = _t(lib, dev, [1.0, 2.0]).requires_grad_()
            b = a * 1
            out = (b**3).sum()
            b.sin_()
            (g,) = lib.autograd.grad(out, a, create_graph=True)
            g.sum().backward()
            double = [g, a.grad]

            a = _t(lib, dev, [1.0, 2.0]).requires_grad_()
            b = a.clone()
            out = (b * b).sum()
            out.backward(retain_graph=True)
            b.add_(10)
            out.backward()
            retained = a.grad
        return [leaf, saved_output, *double, retained, type(ctx).__name__]

    for case in (outside, late, nested, various):
        both(device, case)


def test_allow_mutation_on_saved_tensors_through_an_offset_view(device):
    """A write through a view at an offset into a saved tensor's memory is seen too, and
    backward has the values from before it. (torch keys saved tensors by ``data_ptr``, which
    such a view does not share, and backward silently reads the new values there; the
    reference here is the gradient without the write.)"""

    def case(lib, dev):
        if lib is torch:
            return _saved_then_written(lib, dev, lambda L, b: None)[0]
        return _saved_then_written(lib, dev, lambda L, b: b[1:].add_(1))[0]

    both(device, case)


def test_set_multithreading_enabled(device):
    """A context manager, function and decorator, as torch's; backward runs the same."""

    def case(lib, dev):
        x = _t(lib, dev, [1.0, 2.0]).requires_grad_()
        with lib.autograd.set_multithreading_enabled(False):
            (x * 2).sum().backward()
        lib.autograd.set_multithreading_enabled(False)
        lib.autograd.set_multithreading_enabled(True)

        @lib.autograd.set_multithreading_enabled(False)
        def f(v):
            return (v * 3).sum()

        return [x.grad, f(x.detach())]

    both(device, case)


def test_materialize_grads_refuses_allow_unused_false(device):
    def case(lib, dev):
        x = lib.ones(2, device=dev, requires_grad=True)
        y = lib.ones(2, device=dev, requires_grad=True)
        return lib.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True, allow_unused=False)

    both(device, case)
