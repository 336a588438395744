"""Autograd behaviours that PyTorch's own autograd test suite checks, compared with torch itself:
grad-mode decorators on generators and classes, calling a ``grad_fn`` by hand, tensor hooks
that see None, the messages and warnings of ``backward``/``grad``, ``ctx.saved_variables``;
gradcheck's checks (perturbing the inputs themselves, complex parts, reentrancy, grad_output
scaling, undefined gradients, its refusals), ``autograd.functional``'s messages, forward AD's
levels and tangents.
"""

import warnings

import pytest
import torch

import clgrad

LIBS = (torch, clgrad)


def _err(fn):
    """The exception ``fn()`` raises (None when it raises nothing)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the class and text are compared with PyTorch's
        return e
    return None


def _generator_trace(lib, decorator_name, outer_name):
    """The grad mode seen inside a decorated generator and by its caller at each step, with
    send, throw and close, as a list."""
    seen = []
    decorator = getattr(lib, decorator_name)

    @decorator()
    def gen():
        try:
            for i in range(3):
                try:
                    got = yield i
                    seen.append(("in", got, lib.is_grad_enabled()))
                except ValueError:
                    seen.append(("caught", lib.is_grad_enabled()))
        except GeneratorExit:
            seen.append(("exit", lib.is_grad_enabled()))
            raise

    with getattr(lib, outer_name)():
        g = gen()
        seen.append(("first", next(g), lib.is_grad_enabled()))
        seen.append(("sent", g.send("a"), lib.is_grad_enabled()))
        seen.append(("thrown", g.throw(ValueError), lib.is_grad_enabled()))
        g.close()
        seen.append(("closed", lib.is_grad_enabled()))
    return seen


@pytest.mark.parametrize(
    "decorator_name, outer_name", [("no_grad", "enable_grad"), ("enable_grad", "no_grad")]
)
def test_grad_mode_decorator_wraps_each_step_of_a_generator(decorator_name, outer_name):
    # the decorator switched the mode only while the generator object was made: its body ran
    # in the caller's mode
    want = _generator_trace(torch, decorator_name, outer_name)
    assert _generator_trace(clgrad, decorator_name, outer_name) == want


def test_grad_mode_decorator_generator_returns_its_value():
    def run(lib):
        @lib.no_grad()
        def gen():
            yield 1
            return "done"

        g = gen()
        next(g)
        with pytest.raises(StopIteration) as stop:
            next(g)
        return stop.value.value

    assert run(clgrad) == run(torch) == "done"


def test_grad_mode_decorator_on_a_class_constructs_it_in_the_mode():
    def run(lib):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")

            @lib.no_grad()
            class Holder:
                def __init__(self):
                    self.mode = lib.is_grad_enabled()

            holder = Holder()
        return holder.mode, lib.is_grad_enabled(), [w.category for w in ws]

    assert run(clgrad) == run(torch)


def test_grad_output_shape_mismatch_message(device):
    def message(lib, dev):
        x = lib.ones(2, 2, device=dev, requires_grad=True)
        out = x * 2
        e = _err(lambda: lib.autograd.grad(out, x, lib.ones(2, device=dev)))
        return str(e), str(lib.ones(2).shape), str(out.shape)

    got, small, big = message(clgrad, device)
    want, t_small, t_big = message(torch, "cpu")
    # the message holds the shapes as the library prints them (torch.Size / clgrad.Size)
    assert got == want.replace(t_small, small).replace(t_big, big)


def test_calling_grad_fn_by_hand(device):
    def run(lib, dev):
        x = lib.tensor([3.0], device=dev, requires_grad=True)
        one = lib.tensor([1.0], device=dev)
        errors = [type(e).__name__ + str(e) for e in (
            _err(lambda: (x ** 2).grad_fn(one, one)),
            _err(lambda: (x ** 2).grad_fn()),
        )]  # fmt: skip
        single = (x**2).grad_fn(one)
        double = (x * x).grad_fn(one)
        return errors, single.tolist(), [g.tolist() for g in double]

    assert run(clgrad, device) == run(torch, "cpu")


class _TwoOut:
    """A Function of two outputs whose backward gives no gradient to its second input."""

    @staticmethod
    def make(lib):
        class TwoOut(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * 1, a * 2

            @staticmethod
            def backward(ctx, ga, gb):
                return ga, None

        return TwoOut


def test_tensor_hooks_see_none_where_no_gradient_arrives(device):
    def run(lib, dev):
        calls = []
        a = lib.ones(2, device=dev, requires_grad=True)
        b = lib.ones(2, device=dev, requires_grad=True)
        b.register_hook(lambda g: calls.append(("leaf", g is None)))
        p, q = _TwoOut.make(lib).apply(a, b)
        q.register_hook(lambda g: calls.append(("q", g is None)))
        p.register_hook(lambda g: calls.append(("p", g is None)))
        p.sum().backward()
        return sorted(calls), b.grad is None, a.grad.tolist()

    assert run(clgrad, device) == run(torch, "cpu")


@pytest.mark.parametrize("leaf", [True, False])
def test_hook_given_none_may_not_make_a_gradient(device, leaf):
    def run(lib, dev):
        a = lib.ones(2, device=dev, requires_grad=True)
        b = lib.ones(2, device=dev, requires_grad=True)
        p, q = _TwoOut.make(lib).apply(a, b)
        t = b if leaf else q
        t.register_hook(lambda g: lib.full((2,), 5.0, device=dev) if g is None else g)
        e = _err(lambda: p.sum().backward())
        return type(e).__name__, str(e)

    assert run(clgrad, device) == run(torch, "cpu")


def test_backward_create_graph_warns_and_grad_does_not(device):
    def run(lib, dev):
        prev = lib.is_warn_always_enabled()
        lib.set_warn_always(True)
        try:
            b = lib.ones(3, device=dev, requires_grad=True)
            c = b * b
            with warnings.catch_warnings(record=True) as w1:
                warnings.simplefilter("always")
                c.backward(lib.ones_like(c), create_graph=True)
            with warnings.catch_warnings(record=True) as w2:
                warnings.simplefilter("always")
                lib.autograd.grad(c, b, lib.ones_like(c), create_graph=True)
        finally:
            lib.set_warn_always(prev)
        text = "Using backward() with create_graph=True"
        return [text in str(w.message) for w in w1], [text in str(w.message) for w in w2]

    assert run(clgrad, device) == run(torch, "cpu")


def test_backward_into_a_non_leaf_input_does_not_warn(device):
    def run(lib, dev):
        x = lib.ones(2, device=dev, requires_grad=True)
        mid = x * 2
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            (mid * mid).sum().backward(inputs=[mid])
            grad = mid.grad  # read after: torch's warning for a non-leaf's .grad is not counted
        return [str(w.message) for w in ws], grad.tolist()

    assert run(clgrad, device) == run(torch, "cpu")


def test_ctx_saved_variables_is_deprecated_saved_tensors(device):
    def run(lib, dev):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_variables
                return g * x

        x = lib.full((2,), 3.0, device=dev, requires_grad=True)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            F.apply(x).sum().backward()
        flagged = any("deprecated" in str(w) and "saved_variables" in str(w) for w in ws)
        return flagged, x.grad.tolist()

    assert run(clgrad, device) == run(torch, "cpu")


def test_sinc_gradient_where_the_square_underflows(device):
    # x*x is 0 for the smallest normal double (and float): the quotient was 0/0 = nan there
    dtype = "float64" if clgrad.device(device).supports(clgrad.float64) else "float32"

    def run(lib, dev):
        tiny = lib.finfo(getattr(lib, dtype)).tiny
        x = lib.tensor([0.0, tiny, 1.0], dtype=getattr(lib, dtype), device=dev, requires_grad=True)
        lib.sinc(x).sum().backward()
        return x.grad.tolist()

    got, want = run(clgrad, device), run(torch, "cpu")
    assert got[:2] == want[:2]
    assert abs(got[2] - want[2]) < 1e-5


def test_as_strided_of_overlapping_input_has_a_differentiable_gradient(device):
    # the gradient of an expanded (overlapping) input's as_strided is divided by the count of
    # elements sharing each location; that division was left out of create_graph's graph
    def run(lib, dev):
        x = lib.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        y = x.expand(3, 3).as_strided([3, 3], [0, 1], 0)
        g = lib.arange(9.0, device=dev).reshape(3, 3).requires_grad_()
        (gx,) = lib.autograd.grad(y, x, g, create_graph=True)
        (gg,) = lib.autograd.grad(gx.sum(), g)
        return gx.requires_grad, gx.tolist(), gg.tolist()

    assert run(clgrad, device) == run(torch, "cpu")


def _real(device):
    """float64 where the device runs it (gradcheck's step is sized for it), else float32."""
    return "float64" if clgrad.device(device).supports(clgrad.float64) else "float32"


def _gradcheck_outcome(lib, fn, inputs, **kw):
    """What ``gradcheck`` does: ("ok", result) or (exception class name, first message line),
    with the warnings it gave."""
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            got = ("ok", lib.autograd.gradcheck(fn, inputs, **kw))
        except Exception as e:  # noqa: BLE001 -- the class and text are compared with PyTorch's
            got = (type(e).__name__, str(e).splitlines()[0])
    return got, sorted({str(w.message)[:40] for w in ws})


def test_gradcheck_perturbs_the_inputs_themselves(device):
    # a function that reads the input from a closure sees the perturbation, as PyTorch's
    def run(lib, dev):
        x = lib.tensor([1.0, 2.0], dtype=getattr(lib, _real(device)), device=dev)
        x.requires_grad_()
        return _gradcheck_outcome(lib, lambda t: x * t, (x,), atol=1e-2, rtol=1e-2)

    assert run(clgrad, device) == run(torch, "cpu")


@pytest.mark.parametrize("case", ["hook_adds", "nondeterministic", "undefined", "no_outputs"])
def test_gradcheck_checks_backward_as_torch_does(device, case):
    def run(lib, dev):
        x = lib.ones(2, dtype=getattr(lib, _real(device)), device=dev, requires_grad=True)

        class Jitter(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t.clone()

            @staticmethod
            def backward(ctx, g):
                return g * (1 + lib.rand_like(g) * 1e-6)

        def hooked(hook):
            def fn(t):
                y = t.clone()
                y.register_hook(hook)
                return y

            return fn

        def refuse_none(g):
            if g is None:
                raise RuntimeError("undefined")

        fn, kw = {
            "hook_adds": (hooked(lambda g: g + 1e-2), dict(atol=0.1)),
            "nondeterministic": (Jitter.apply, {}),
            "undefined": (hooked(refuse_none), {}),
            "no_outputs": (lambda t: lib.tensor(t.tolist(), device=dev), {}),
        }[case]
        return _gradcheck_outcome(lib, fn, (x,), **kw), _gradcheck_outcome(
            lib, fn, (x,), raise_exception=False, **kw
        )

    assert run(clgrad, device) == run(torch, "cpu")


def test_gradcheck_complex_parts(device):
    if not clgrad.device(device).supports(clgrad.complex128):
        pytest.skip("no complex128 on this device")

    def run(lib, dev):
        z = lib.tensor([1 + 2j, -0.5 + 1j], dtype=lib.complex128, device=dev, requires_grad=True)
        r = lib.tensor([0.5, 2.0], dtype=lib.float64, device=dev, requires_grad=True)

        def bumped(t):
            y = t * 1
            y.register_hook(lambda g: g + 1e-2)
            return y

        return [
            _gradcheck_outcome(lib, lambda a, b: (a * b).exp(), (z, r)),
            _gradcheck_outcome(lib, lambda a: (a.abs(), a.conj() * a), (z,)),
            _gradcheck_outcome(lib, bumped, (z,), raise_exception=False),
            _gradcheck_outcome(lib, lambda t: bumped(lib.complex(t, t)), (r,)),
            _gradcheck_outcome(lib, lambda a: bumped(lib.real(a)), (z,)),
        ]

    assert run(clgrad, device) == run(torch, "cpu")


@pytest.mark.parametrize("case", ["float32", "stride0", "none", "shape"])
def test_gradcheck_refuses_inputs_and_functions_as_torch_does(device, case):
    def run(lib, dev):
        dt = getattr(lib, _real(device))
        if case == "float32":
            x = lib.ones(1, device=dev, requires_grad=True)
            return _gradcheck_outcome(lib, lambda t: t, (x,), atol=0.1)
        if case == "stride0":
            x = lib.ones(1, dtype=dt, device=dev, requires_grad=True).expand(2, 2)
            return _gradcheck_outcome(lib, lambda t: t, (x,), raise_exception=False)
        if case == "none":
            return _gradcheck_outcome(lib, lambda t: t, (lib.ones(1, dtype=dt, device=dev),))
        a = lib.ones(1, dtype=dt, device=dev, requires_grad=True)
        return _gradcheck_outcome(lib, lambda t: lib.cat([t, t]) if lib.all(t >= 1) else t, (a,))

    got, want = run(clgrad, device), run(torch, "cpu")
    # the library's own name in a message (torch.Size / clgrad.Size) is the only difference
    assert got[0][0] == want[0][0]
    assert str(got[0][1]).replace("clgrad", "torch") == str(want[0][1])
    assert got[1] == want[1]


def test_gradgradcheck_sees_nondeterministic_double_backward(device):
    def run(lib, dev):
        class Jitter(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t.clone()

            @staticmethod
            def backward(ctx, g):
                return Jitter.apply(g) * (1 + lib.rand_like(g) * 1e-12)

        x = lib.ones(3, dtype=getattr(lib, _real(device)), device=dev, requires_grad=True)
        outcomes = []
        for tol in (0.0, 1e-5):
            try:
                outcomes.append(lib.autograd.gradgradcheck(Jitter.apply, (x,), nondet_tol=tol))
            except RuntimeError as e:
                outcomes.append(str(e)[:26])
        return outcomes

    assert run(clgrad, device) == run(torch, "cpu")


def _functional_error(lib, call):
    e = _err(call)
    return type(e).__name__, str(e).replace("clgrad", "torch") if e else None


@pytest.mark.parametrize(
    "case",
    ["v_single", "v_size", "v_tuple", "hess_tuple", "hess_elems", "hess_linear",
     "hess_strict_vec", "jac_strict_vec", "jac_strict_fwd", "vhp_elems", "hvp_tuple",
     "vjp_strict_graph", "vjp_strict_unused", "jvp_strict_unused"],
)  # fmt: skip
def test_functional_messages_are_torchs(device, case):
    def run(lib, dev):
        F = lib.autograd.functional
        x = lib.rand(4, device=dev)
        v = lib.ones(4, device=dev)
        narrow = lambda a: 3 * a.narrow(0, 0, 3)  # noqa: E731
        unused = lambda a: a.long().float().requires_grad_().clone()  # noqa: E731
        call = {
            "v_single": lambda: F.vjp(narrow, x, (v[:3], v[:3])),
            "v_size": lambda: F.jvp(narrow, x, v[:2]),
            "v_tuple": lambda: F.jvp(lambda a, b: a + b, (x, x), (v,)),
            "hess_tuple": lambda: F.hessian(lambda a: (a.sum(), a.sum()), x),
            "hess_elems": lambda: F.hessian(narrow, x),
            "hess_linear": lambda: F.hessian(lambda a: (3 * a).sum(), x, strict=True),
            "hess_strict_vec": lambda: F.hessian(lambda a: a.sum(), x, strict=True, vectorize=True),
            "jac_strict_vec": lambda: F.jacobian(lambda a: a, x, strict=True, vectorize=True),
            "jac_strict_fwd": lambda: F.jacobian(
                lambda a: a, x, strict=True, vectorize=True, strategy="forward-mode"
            ),
            "vhp_elems": lambda: F.vhp(narrow, x, v),
            "hvp_tuple": lambda: F.hvp(lambda a: (a.sum(),), x, v),
            "vjp_strict_graph": lambda: F.vjp(
                lambda a: a.clone(), x.clone().requires_grad_(), v, create_graph=True, strict=True
            ),
            "vjp_strict_unused": lambda: F.vjp(unused, x, v, strict=True),
            "jvp_strict_unused": lambda: F.jvp(unused, x, v, strict=True),
        }[case]
        return _functional_error(lib, call)

    assert run(clgrad, device) == run(torch, "cpu")


def test_functional_construct_standard_basis_for(device):
    def run(lib, dev):
        from importlib import import_module

        F = import_module(lib.__name__ + ".autograd.functional")
        ts = (lib.ones(2, device=dev), lib.ones((), device=dev), lib.ones(1, 2, device=dev))
        chunks = F._construct_standard_basis_for(ts, tuple(t.numel() for t in ts))
        return [(c.dtype is ts[i].dtype, c.tolist()) for i, c in enumerate(chunks)]

    assert run(clgrad, device) == run(torch, "cpu")


def test_forward_ad_levels_and_tangents(device):
    def run(lib, dev):
        from importlib import import_module

        fwAD = import_module(lib.__name__ + ".autograd.forward_ad")
        seen = [fwAD._current_level]
        p = lib.tensor([1.0, 2.0], device=dev)
        t = lib.tensor([3.0, 4.0], device=dev)
        with fwAD.dual_level():
            seen.append(fwAD._current_level)
            seen.append(type(_err(fwAD.enter_dual_level)).__name__)
            dual = fwAD.make_dual(p, t)
            seen.append(fwAD.unpack_dual(dual).tangent is t)
            # a tangent laid out unlike its primal is copied: writing it leaves the caller's
            strided = lib.tensor([5.0, 0.0, 6.0, 0.0], device=dev)[::2]
            other = fwAD.make_dual(p, strided)
            unpacked = fwAD.unpack_dual(other).tangent
            seen.append(unpacked is strided)
            unpacked *= 2
            seen.append(strided.tolist())
            seen.append(type(_err(lambda: fwAD.make_dual(p, dual))).__name__)
            # an in-place write through a view of a dual changes its tangent
            base = fwAD.make_dual(p.clone(), lib.ones(2, device=dev))
            view = base.narrow(0, 0, 1)
            view *= 2
            seen.append(fwAD.unpack_dual(base).tangent.tolist())
        seen.append(fwAD._current_level)
        return seen

    assert run(clgrad, device) == run(torch, "cpu")


def test_execution_engine_queue_callback(device):
    # Variable._execution_engine.queue_callback: a callback may queue another, and one queued
    # in a reentrant backward runs when that backward ends
    def run(lib, dev):
        order = []
        engine = lib.autograd.Variable._execution_engine

        class Inner(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                engine.queue_callback(lambda: order.append("inner done"))
                return g

        class Outer(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                engine.queue_callback(
                    lambda: (order.append("outer done"), engine.queue_callback(
                        lambda: order.append("queued by a callback")))
                )  # fmt: skip
                with lib.enable_grad():
                    t = g.detach().requires_grad_()
                    Inner.apply(t).sum().backward()
                order.append("outer backward")
                return g

        x = lib.ones(2, device=dev, requires_grad=True)
        Outer.apply(x).sum().backward()
        return order

    assert run(clgrad, device) == run(torch, "cpu")


@pytest.mark.parametrize("how", ["grad", "inputs", "backward"])
def test_reentrant_checkpoint_refuses_grad_and_inputs(device, how):
    def run(lib, dev):
        from importlib import import_module

        checkpoint = import_module(lib.__name__ + ".utils.checkpoint").checkpoint
        a = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        b = checkpoint(lib.exp, a, use_reentrant=True).sum()
        call = {
            "grad": lambda: lib.autograd.grad(b, (a,)),
            "inputs": lambda: b.backward(inputs=[a]),
            "backward": lambda: b.backward(),
        }[how]
        e = _err(call)
        return (type(e).__name__, str(e)) if e else a.grad.tolist()

    got, want = run(clgrad, device), run(torch, "cpu")
    if how == "backward":
        assert got == pytest.approx(want)
    else:
        assert got == want


def _anomaly_warnings(lib, dev, in_forward):
    """The anomaly-mode warnings of a NaN in a backward made during another backward: which
    functions they name and whether they hold the forward calls."""

    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return Inner.apply(g.expand(2) * x)

    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g / 0 * 0  # NaN

    x = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            if not in_forward:
                lib.autograd.set_detect_anomaly(False)
            out = Outer.apply(x)
            (gx,) = lib.autograd.grad(out, (x,), create_graph=True)
            lib.autograd.set_detect_anomaly(True)
            e = _err(lambda: gx.sum().backward())
    texts = [str(w.message) for w in ws][1:]  # (the first: anomaly mode's own)
    return (
        str(e),
        [t.split(".")[0] for t in texts],
        ["Inner.apply" in t for t in texts],
        ["Outer.apply" in t for t in texts],
        ["No forward pass information" in t for t in texts],
    )


@pytest.mark.parametrize("in_forward", [True, False])
def test_anomaly_mode_names_the_forward_calls(device, in_forward):
    got = _anomaly_warnings(clgrad, device, in_forward)
    assert got == _anomaly_warnings(torch, "cpu", in_forward)
    assert not clgrad.is_anomaly_enabled()


def test_anomaly_warning_made_an_error_is_printed(device, capsys):
    def run(lib, dev):
        with warnings.catch_warnings(record=True) as ws:
            with lib.autograd.detect_anomaly():
                warnings.simplefilter("error")
                a = lib.ones(3, device=dev, requires_grad=True)
                b = a + 1
                c = b**2
                b += 1
                e = _err(lambda: lib.autograd.grad(c.sum(), a))
        return "modified by an inplace operation" in str(e), len(ws), capsys.readouterr().err

    got, want = run(clgrad, device), run(torch, "cpu")
    assert got[:2] == want[:2]
    assert "Error detected in PowBackward0" in got[2]
    assert "Error detected in PowBackward0" in want[2]


def test_node_metadata_is_a_dict_freed_with_the_node(device):
    import weakref

    def run(lib, dev):
        class Thing:
            pass

        t = lib.ones(2, device=dev, requires_grad=True).exp()
        thing = Thing()
        t.grad_fn.metadata["k"] = thing
        ref = weakref.ref(thing)
        del thing
        kept = ref() is not None
        same = t.grad_fn.metadata is t.grad_fn.metadata
        del t
        return kept, same, ref() is None

    assert run(clgrad, device) == run(torch, "cpu")


@pytest.mark.parametrize("where", ["forward", "backward", "both"])
def test_saved_tensor_hooks_are_not_differentiated_through(device, where):
    # an unpacked tensor's gradient goes to the saved tensor's own history (here the leaf),
    # as PyTorch's: the pack hook's ``2 * x`` is not part of the double backward's graph
    def run(lib, dev):
        hooks = lib.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x)
        a = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        mid = (a + 0) if where == "both" else a  # a saved non-leaf too
        if where in ("forward", "both"):
            with hooks:
                s = (mid**3).sum()
        else:
            s = (mid**3).sum()
        if where in ("backward", "both"):
            with hooks:
                (g,) = lib.autograd.grad(s, (a,), create_graph=True)
                g.sum().backward()
        else:
            (g,) = lib.autograd.grad(s, (a,), create_graph=True)
            g.sum().backward()
        return g.tolist(), a.grad.tolist()

    assert run(clgrad, device) == run(torch, "cpu")


def _custom_view_outcomes(lib, dev):
    """What in-place writes into the views a user Function returns do (an input viewed or
    returned as is, a temporary's view, one of two outputs; recorded or not), and mark_dirty's
    warning and refusal."""

    class ViewOf(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g

    class TempView(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()[:1]

        @staticmethod
        def backward(ctx, g):
            return lib.cat([g, g.new_zeros(1)])

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.narrow(0, 0, 1), x + 1

        @staticmethod
        def backward(ctx, g, h):
            return h + lib.cat([g, g.new_zeros(1)])

    class DirtyNotInput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 3
            y.add_(1)
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return 3 * g

    class DirtyTwo(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x, x + 1

        @staticmethod
        def backward(ctx, g, h):
            return g + h

    def text(call):
        e = _err(call)
        return str(e).replace("clgrad", "torch") if e else None

    out = []
    w = lib.ones(1, device=dev, requires_grad=True)
    for rg in (False, True):
        x = lib.ones(2, device=dev, requires_grad=rg).clone()
        out.append(text(lambda x=x: ViewOf.apply(x).add_(w)))
        out.append(text(lambda x=x: ViewOf.apply(x).add_(1)))
        out.append(text(lambda x=x: TempView.apply(x).add_(w)))
        out.append(text(lambda x=x: Two.apply(x)[0].add_(w)))
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        DirtyNotInput.apply(lib.ones(2, device=dev, requires_grad=True))
    out.append([str(m.message)[:50] for m in ws])
    base = lib.ones(2, device=dev, requires_grad=True)
    out.append(text(lambda: DirtyTwo.apply(base.clone().view_as(base))))
    return out


def test_custom_function_views_refuse_recorded_inplace(device):
    assert _custom_view_outcomes(clgrad, device) == _custom_view_outcomes(torch, "cpu")


@pytest.mark.parametrize("primal_requires_grad", [True, False])
def test_forward_ad_tangent_is_differentiable(device, primal_requires_grad):
    # reverse over forward: a tangent depends on the primal's history, as PyTorch's
    def run(lib, dev):
        from importlib import import_module

        fwAD = import_module(lib.__name__ + ".autograd.forward_ad")
        x = lib.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=primal_requires_grad)
        v = lib.tensor([1.0, 0.5, -1.0], device=dev)
        with fwAD.dual_level():
            out = (fwAD.make_dual(x, v) ** 3).sum()
            tan = fwAD.unpack_dual(out).tangent
            seen = [tan.item(), tan.requires_grad]
            if tan.requires_grad:
                tan.backward()
                seen.append(x.grad.tolist())
            with lib.no_grad():
                seen.append(fwAD.unpack_dual(out).tangent.requires_grad)
        return seen

    assert run(clgrad, device) == run(torch, "cpu")


def test_deeply_reentrant_backward(device):
    # a backward inside each node's backward, hundreds deep: PyTorch runs it (its engine
    # moves to a new thread); here the recursion limit grows with the depth
    def run(lib, dev):
        calls = []

        class Deep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with lib.enable_grad():
                    ctx.x = x.detach().requires_grad_() - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, g):
                calls.append(1)
                if ctx.x < 0:
                    return g
                with lib.enable_grad():
                    Deep.apply(ctx.x).sum().backward()
                return g

        v = lib.tensor(300.0, device=dev, requires_grad=True)
        Deep.apply(v).sum().backward()
        return len(calls), v.grad.item()

    assert run(clgrad, device) == run(torch, "cpu")


@pytest.mark.parametrize("requires_grad", [True, False])
def test_view_made_in_inference_mode_written_in_normal_mode(device, requires_grad):
    def run(lib, dev):
        a = lib.ones(2, 3, device=dev, requires_grad=requires_grad).clone()
        with lib.inference_mode():
            view = a.view_as(a)
        e = _err(lambda: view.add_(2))
        return str(e) if e else view.tolist()

    assert run(clgrad, device) == run(torch, "cpu")


def test_gradient_edge_as_grad_input(device):
    def run(lib, dev):
        x = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        y = x * 2
        graph = lib.autograd.graph
        edge, leaf = graph.get_gradient_edge(y), graph.get_gradient_edge(x)
        y.mul_(3)  # the edge is where y's gradient arrived before the write
        seen = [type(edge).__name__, edge.output_nr]
        grads = lib.autograd.grad((y * y).sum(), [edge, leaf], retain_graph=True)
        seen.append([g.tolist() for g in grads])
        seen.append(lib.autograd.grad(y.sum(), edge, retain_graph=True)[0].tolist())
        unused = lib.autograd.graph.get_gradient_edge(x * 5)
        seen.append(lib.autograd.grad(y.sum(), [unused], allow_unused=True, retain_graph=True))
        for call in (
            lambda: lib.autograd.grad(y.sum(), [unused], allow_unused=True, materialize_grads=True),
            lambda: lib.autograd.graph.get_gradient_edge(lib.ones(1, device=dev)),
        ):
            seen.append(str(_err(call)))
        return seen

    assert run(clgrad, device) == run(torch, "cpu")
