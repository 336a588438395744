"""Custom ``autograd.Function``s against PyTorch's, on PyTorch's own test Functions.

torch ships them in ``torch.testing._internal.autograd_function_db`` (NumpyCube, NumpyMul,
NumpyExp_, NumpySort, NumpyTake, the GenVmap ones, ...): the module's source is run twice, as
it is against torch and with ``import clgrad as torch``, so the same classes subclass each
library's ``autograd.Function``; every result here is compared with torch's. (The source is
read as text: importing the module would import torch's OpInfo machinery, which needs
expecttest.) The inputs follow the module's sample functions, in float32.
"""

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad


def _load(lib_name):
    source = (Path(torch.__file__).parent / "testing/_internal/autograd_function_db.py").read_text()
    source = source.split("autograd_function_db = [")[0]  # the OpInfo list needs OpInfo
    source = source.replace(
        "from torch.testing._internal.opinfo.core import (\n    OpInfo,\n    SampleInput,\n)\n", ""
    )
    source = re.sub(r"^from torch\.testing.*$", "", source, flags=re.M)
    source = re.sub(r"^import torch$", f"import {lib_name} as torch", source, flags=re.M)
    namespace = {"__name__": f"autograd_function_db_{lib_name}"}
    exec(compile(source, f"autograd_function_db[{lib_name}]", "exec"), namespace)
    return namespace


TORCH_DB = _load("torch")
CLGRAD_DB = _load("clgrad")


def _samples(kind, rng):
    """The numbers of the module's sample inputs: (tensors, other arguments)."""
    if kind == "cube":
        return [rng.uniform(0.8, 2, (1,))], []
    if kind == "mul":
        return [rng.uniform(0.9, 2, (4,)), rng.uniform(0.9, 2, (3, 4))], []
    if kind == "select":
        return [rng.uniform(-9, 9, (3, 5))], [2]
    if kind == "default":
        return [rng.uniform(-9, 9, (3, 5))], []
    if kind == "sort":
        return [rng.permutation(15).reshape(3, 5) - 7.0], [1]
    x = rng.permutation(15).reshape(3, 5) - 7.0  # "take": indices from NumpySort
    ind = np.argsort(x, axis=1)
    return [x, ind, np.argsort(ind, axis=1)], [1]


# name: (the op as the db's OpInfo calls it, its samples)
OPS = {
    "NumpyCube": (lambda m: m["NumpyCube"].apply, "cube"),
    "NumpyExp_": (lambda m: lambda x: m["NumpyExp_"].apply(x.clone()), "cube"),
    "NumpyMul": (lambda m: m["NumpyMul"].apply, "mul"),
    "NumpyCubeNotComposable": (lambda m: lambda x: m["NumpyCubeNotComposable"].apply(x)[0], "cube"),
    "NumpySort": (lambda m: m["NumpySort"].apply, "sort"),
    "NumpyTake": (lambda m: m["NumpyTake"].apply, "take"),
    "Select": (lambda m: m["Select"].apply, "select"),
    "CubeGenVmap": (lambda m: m["CubeGenVmap"].apply, "cube"),
    "MulGenVmap": (lambda m: m["MulGenVmap"].apply, "mul"),
    "SortGenVmap": (lambda m: m["SortGenVmap"].apply, "sort"),
    "SelectGenVmap": (lambda m: m["SelectGenVmap"].apply, "select"),
    "ScaleGradGenVmap": (lambda m: m["ScaleGradGenVmap"].apply, "cube"),
    "ZeroGradientsGenVmap": (lambda m: m["ZeroGradientsGenVmap"].apply, "mul"),
    "ForwardHasDefaultArgs": (lambda m: m["ForwardHasDefaultArgs"].apply, "default"),
}

# the Functions whose setup_context saves with ctx.save_for_forward (clgrad's ctx had none)
SAVE_FOR_FORWARD = ["NumpyCube", "NumpyExp_", "NumpyMul", "NumpySort", "NumpyTake",
                    "CubeGenVmap", "MulGenVmap", "SortGenVmap"]  # fmt: skip


def _case(name, lib, device=None, requires_grad=True, dtype=np.float32):
    """(op, arguments) of ``name`` for ``lib`` (torch or clgrad)."""
    if name == "NumpyExp_" and device not in (None, "cpu"):
        # its forward writes exp into x.cpu().numpy(): that is x itself only on the CPU (on
        # torch's CUDA too it would write into a copy)
        pytest.skip("NumpyExp_ changes its input through NumPy: a CPU tensor's memory only")
    make, kind = OPS[name]
    tensors, rest = _samples(kind, np.random.default_rng(0))
    args = []
    for a in tensors:
        if a.dtype.kind == "f":
            t = lib.tensor(a.astype(dtype), device=device)
            args.append(t.requires_grad_(requires_grad))
        else:
            args.append(lib.tensor(a, device=device))
    return make(TORCH_DB if lib is torch else CLGRAD_DB), args + rest


def _same(expected, got, what=""):
    """``got`` (clgrad's) is ``expected`` (torch's): structure, dtype, requires_grad, values."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), (what, got)
        for k, (e, g) in enumerate(zip(expected, got)):
            _same(e, g, f"{what}[{k}]")
        return
    if not isinstance(expected, torch.Tensor):
        assert got == expected, (what, got, expected)
        return
    assert isinstance(got, clgrad.Tensor), (what, type(got))
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "clgrad."), what
    assert got.requires_grad == expected.requires_grad, (what, "requires_grad")
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-4, err_msg=what
    )


def _differentiable(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if o.requires_grad]


def _grads(lib, op, args):
    """forward, first and second derivatives (autograd.grad with create_graph, backward)."""
    out = op(*args)
    outs = _differentiable(out)
    inputs = [a for a in args if isinstance(a, lib.Tensor) and a.requires_grad]
    cots = [(lib.ones_like(o) * 0.5).requires_grad_(True) for o in outs]
    first = lib.autograd.grad(outs, inputs, cots, create_graph=True, allow_unused=True)
    live = [g for g in first if g is not None and g.requires_grad]
    second = None
    if live:
        total = sum((g * g).sum() for g in live)
        second = lib.autograd.grad(total, inputs + cots, allow_unused=True)
    sum((o * o).sum() for o in _differentiable(op(*args))).backward()
    return out, first, second, [a.grad for a in inputs]


@pytest.mark.parametrize("name", SAVE_FOR_FORWARD)
def test_reverse_mode_and_vmap_match_torch(device, name):
    """Forward values, gradients, double backward, ``.backward()``, and func.vmap / func.grad
    over the Function, on the Functions that save with ``ctx.save_for_forward`` (clgrad's ctx
    had no such method: every one of them raised AttributeError)."""
    t_op, t_args = _case(name, torch)
    c_op, c_args = _case(name, clgrad, device)
    _same(_grads(torch, t_op, t_args), _grads(clgrad, c_op, c_args), name)

    def batched(lib, op, args):
        x = args[0].detach()
        batch = lib.stack([x, x * 1.5]) if x.is_floating_point() else lib.stack([x, x])
        mapped = lib.func.vmap(lambda x: op(x, *args[1:]))(batch)
        if not x.is_floating_point():
            return mapped

        def loss(x):
            outs = op(x, *[a.detach() if isinstance(a, lib.Tensor) else a for a in args[1:]])
            outs = outs if isinstance(outs, tuple) else (outs,)
            return sum((o * o).sum() for o in outs if o.is_floating_point())

        return mapped, lib.func.vmap(lib.func.grad(loss))(batch)

    _same(batched(torch, t_op, t_args), batched(clgrad, c_op, c_args), f"{name} vmap")


def _forward_mode(lib, op, args):
    """The output tangents by forward_ad.make_dual / unpack_dual and by func.jvp."""
    fw = lib.autograd.forward_ad
    floats = [i for i, a in enumerate(args) if isinstance(a, lib.Tensor) and a.is_floating_point()]
    tangents = [lib.ones_like(args[i]) * (0.7 + i) for i in floats]
    with fw.dual_level():
        dual = list(args)
        for i, t in zip(floats, tangents):
            dual[i] = fw.make_dual(args[i].detach(), t)
        out = op(*dual)
        outs = out if isinstance(out, tuple) else (out,)
        by_dual = [fw.unpack_dual(o).tangent for o in outs]

    def of_floats(*xs):
        full = list(args)
        for i, x in zip(floats, xs):
            full[i] = x
        return op(*full)

    primals = tuple(args[i].detach() for i in floats)
    return by_dual, lib.func.jvp(of_floats, primals, tuple(tangents))


@pytest.mark.parametrize("name", [*SAVE_FOR_FORWARD, "ZeroGradientsGenVmap"])
def test_forward_mode_uses_the_functions_jvp(device, name):
    """Forward-mode AD through a custom Function runs its ``jvp`` (reading what forward kept
    with ``save_for_forward``), as PyTorch's: clgrad read tangents from ``backward`` twice,
    which gave CubeGenVmap's deliberately different backward, failed on ZeroGradientsGenVmap
    (a backward that ignores its grad_output) and on an integer output (NumpySort's
    indices: their tangents are integer zeros)."""
    t_op, t_args = _case(name, torch, requires_grad=False)
    c_op, c_args = _case(name, clgrad, device, requires_grad=False)
    _same(_forward_mode(torch, t_op, t_args), _forward_mode(clgrad, c_op, c_args), name)


def test_a_function_without_jvp_refuses_forward_mode(device):
    """NumpyCubeNotComposable has no jvp: forward AD through it raises PyTorch's
    NotImplementedError (clgrad differentiated its once_differentiable backward instead)."""
    for lib, dev in ((torch, None), (clgrad, device)):
        op, args = _case("NumpyCubeNotComposable", lib, dev, requires_grad=False)
        fw = lib.autograd.forward_ad
        with fw.dual_level(), pytest.raises(NotImplementedError, match="implement the jvp"):
            op(fw.make_dual(args[0], lib.ones_like(args[0])))
        with pytest.raises(NotImplementedError, match="implement the jvp"):
            lib.func.jvp(op, (args[0],), (lib.ones_like(args[0]),))


def test_once_differentiable_gradients_record_an_error_node(device):
    """Under create_graph a once_differentiable backward's gradient requires grad through
    PyTorch's Error node: a backward through it raises, autograd.grad to the inputs finds no
    path (clgrad's gradient required no grad, so the second derivative silently vanished)."""
    results = []
    for lib, dev in ((torch, None), (clgrad, device)):
        op, (x,) = _case("NumpyCubeNotComposable", lib, dev)
        cot = lib.ones_like(x).requires_grad_(True)
        (g,) = lib.autograd.grad(op(x), x, cot, create_graph=True)
        results.append(
            (g, g.grad_fn.name(), lib.autograd.grad(g.sum(), [x, cot], allow_unused=True))
        )
        with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
            g.sum().backward()
    _same(results[0], results[1])


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev"])
def test_func_transforms_keep_a_closed_over_tensors_graph(device, transform):
    """func.grad / vjp / jacrev of NumpyMul(x, y) in x, y a tensor that requires grad: the
    results depend on y and require grad, as torch.func's (clgrad detached them)."""
    results = []
    for lib, dev in ((torch, None), (clgrad, device)):
        op, (x, y) = _case("MulGenVmap" if transform == "jacrev" else "NumpyMul", lib, dev)
        x = x.detach()
        if transform == "grad":
            res = lib.func.grad(lambda x, op=op, y=y: (op(x, y) ** 2).sum())(x)
        elif transform == "vjp":
            out, fn = lib.func.vjp(lambda x, op=op, y=y: op(x, y), x)
            res = (out, fn(lib.ones_like(out)))
        else:
            res = lib.func.jacrev(lambda x, op=op, y=y: op(x, y[0]))(x)
        total = sum(r.sum() for r in _leaves(res))
        results.append((res, lib.autograd.grad(total, y)))
    _same(results[0], results[1])


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def test_vjp_refuses_integer_outputs(device):
    """func.vjp of NumpySort (values, integer indices) raises torch.func's RuntimeError."""
    for lib, dev in ((torch, None), (clgrad, device)):
        op, (x, dim) = _case("NumpySort", lib, dev, requires_grad=False)
        with pytest.raises(RuntimeError, match="must be floating-point or complex"):
            lib.func.vjp(lambda x, op=op, dim=dim: op(x, dim), x)


def test_ctx_api_matches_torch(device):
    """What PyTorch's grad_fn of a custom Function is (its ctx: forward's attributes,
    saved_tensors, needs_input_grad), a backward that reads no saved tensors running twice,
    save_for_forward's refusal of a non-tensor, and calling a Function instance."""

    def probe(lib, dev):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                ctx.save_for_backward(x)
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        y = Scale.apply(x, 3.0)
        node = y.grad_fn
        seen = [node.k, node.saved_tensors[0] is x, node.needs_input_grad]
        y.sum().backward()
        y.sum().backward()  # backward reads no saved tensor: it runs again
        seen.append(x.grad)

        class SavesNumber(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x, 3)
                return x * 2

        with pytest.raises(AssertionError, match="save_for_forward expects all arguments"):
            SavesNumber.apply(x)
        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            instance = Scale()
        with pytest.raises(RuntimeError, match="Legacy autograd function"):
            instance(x, 2.0)
        return seen

    _same(probe(torch, None), probe(clgrad, device))


def _old_style(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


TRANSFORMS = {
    "grad": lambda lib, f, x: lib.func.grad(lambda x: f(x).sum())(x),
    "vjp": lambda lib, f, x: lib.func.vjp(f, x),
    "jvp": lambda lib, f, x: lib.func.jvp(f, (x,), (x,)),
    "jacrev": lambda lib, f, x: lib.func.jacrev(f)(x),
    "vmap": lambda lib, f, x: lib.func.vmap(f)(x),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_transforms_refuse_a_function_without_setup_context(device, transform):
    """A Function in the ``forward(ctx, ...)`` form under a torch.func transform raises
    PyTorch's RuntimeError (clgrad ran it); outside transforms it runs as before."""
    for lib, dev in ((torch, None), (clgrad, device)):
        double, x = _old_style(lib), lib.ones(2, 2, device=dev)
        with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
            TRANSFORMS[transform](lib, double.apply, x)
    assert _old_style(clgrad).apply(x).tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_vmap_refuses_a_function_without_vmap_rule(device):
    """Under vmap a Function needs a ``vmap`` staticmethod or ``generate_vmap_rule = True``
    (not both), as in PyTorch, even on an input that is not batched (clgrad ran any)."""
    for lib, dev in ((torch, None), (clgrad, device)):
        op, (x,) = _case("NumpyCubeNotComposable", lib, dev, requires_grad=False)
        batch = lib.stack([x, x])
        with pytest.raises(RuntimeError, match="does not have vmap support"):
            lib.func.vmap(op)(batch)
        with pytest.raises(RuntimeError, match="does not have vmap support"):
            lib.func.vmap(lambda b, op=op, x=x: b + op(x))(batch)

        class Both(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def vmap(info, in_dims, x):
                return x * 2, in_dims[0]

        with pytest.raises(RuntimeError, match="both generate_vmap_rule=True and an overridden"):
            lib.func.vmap(Both.apply)(batch)


@pytest.mark.parametrize("transform", ["jacfwd", "hessian"])
def test_jacfwd_and_hessian_need_a_vmap_rule(device, transform):
    """PyTorch's jacfwd (and hessian, jacfwd of jacrev) runs func under vmap: a Function with
    no vmap rule (NumpyCubeNotComposable) raises there as under vmap (clgrad ran it)."""
    for lib, dev in ((torch, None), (clgrad, device)):
        op, (x,) = _case("NumpyCubeNotComposable", lib, dev, requires_grad=False)
        f = (lambda x, op=op: op(x).sum()) if transform == "hessian" else op
        with pytest.raises(RuntimeError, match="does not have vmap support"):
            getattr(lib.func, transform)(f)(x)


def _pair_function(lib, jvp_result):
    """forward(x, y) -> (x * y, x + 1 marked non-differentiable), with a chosen jvp."""

    class Pair(lib.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y, x + 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])
            ctx.save_for_forward(inputs[1])

        @staticmethod
        def backward(ctx, g, _):
            return g, None

        @staticmethod
        def jvp(ctx, tx, ty):
            (y,) = ctx.saved_tensors
            return jvp_result(tx * y)

    return Pair


@pytest.mark.parametrize(
    "jvp_result, message",
    [
        (lambda t: t, r"invalid number of forward gradients \(expected 2 but got 1\)"),
        (lambda t: (t, t), "gradient at position 1, but  the corresponding forward output"),
    ],
)
def test_jvp_results_are_checked(device, jvp_result, message):
    """A jvp that returns a tangent per output, None for a non-differentiable one, as
    PyTorch checks it (clgrad's message differed, and it dropped the extra tangent)."""
    for lib, dev in ((torch, None), (clgrad, device)):
        fw = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0], device=dev)
        with fw.dual_level(), pytest.raises(RuntimeError, match=message):
            _pair_function(lib, jvp_result).apply(fw.make_dual(x, lib.ones_like(x)), x)


def test_function_module_names_match_torch(device):
    """torch.autograd.function's BackwardCFunction (a custom Function's grad_fn is one, an op's
    is not), FunctionMeta and InplaceFunction exist and answer as PyTorch's (clgrad had none)."""
    seen = []
    for lib, dev in ((torch, None), (clgrad, device)):
        module = lib.autograd.function

        class Neg(module.InplaceFunction):
            @staticmethod
            def forward(ctx, x):
                return -x

            @staticmethod
            def backward(ctx, g):
                return -g

        x = lib.ones(2, device=dev, requires_grad=True)
        y = Neg.apply(x)
        seen.append(
            [
                isinstance(y.grad_fn, module.BackwardCFunction),
                isinstance((x * 2).grad_fn, module.BackwardCFunction),
                isinstance(Neg, module.FunctionMeta),
                y,
            ]
        )
    _same(seen[0], seen[1])


@pytest.mark.parametrize("name", ["CubeGenVmap", "jvp off"])
def test_gradcheck_checks_forward_mode(device, name):
    """gradcheck(check_forward_ad=True, check_backward_ad=False) checks the Jacobian forward AD
    computes (the Function's jvp) against finite differences, as PyTorch's: CubeGenVmap's
    backward is wrong but its jvp right, and a jvp that is off fails (clgrad ignored both
    keywords and checked backward)."""
    if not supports(device, clgrad.float64):
        pytest.skip("gradcheck's step is sized for float64")
    results = []
    for lib, dev in ((torch, None), (clgrad, device)):
        if name == "jvp off":
            x = lib.tensor([1.0, 2.0], dtype=lib.float64, device=dev, requires_grad=True)
            op, args = _cube_with_jvp_off(lib), [x]
        else:
            op, args = _case(name, lib, dev, dtype=np.float64)
        results.append(
            lib.autograd.gradcheck(
                lambda *a, op=op: op(*a)[0] if name == "CubeGenVmap" else op(*a),
                args,
                check_forward_ad=True,
                check_backward_ad=False,
                raise_exception=False,
            )
        )
    assert results[0] is (name != "jvp off")
    assert results[1] is results[0]


def _cube_with_jvp_off(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x**2 * t  # should be 3 x^2 t

    return Cube.apply


def test_forward_mode_keeps_the_functions_node(device):
    """Under forward AD a custom Function's output still has its Function's node as grad_fn
    (with the ctx behind it), and backward through it still reaches the primal's leaf."""
    seen = []
    for lib, dev in ((torch, None), (clgrad, device)):
        fw = lib.autograd.forward_ad
        op, (x, y) = _case("NumpyMul", lib, dev)
        with fw.dual_level():
            out = op(fw.make_dual(x, lib.ones_like(x)), y)
            node = out.grad_fn
            # (the tangent's values: clgrad's tangents never require grad, see forward_ad)
            tangent = fw.unpack_dual(out)[1].detach()
            seen.append([type(node).__name__, len(node.saved_tensors), tangent])
            seen.append(lib.autograd.grad(out.sum(), [x, y]))
    _same(seen[0], seen[2])
    _same(seen[1], seen[3])


def test_needs_input_grad_is_readable_in_forward_without_grad():
    # torch's ctx has needs_input_grad in forward even when nothing records (all False); a
    # forward reading it raised AttributeError here
    seen = []
    for lib in (torch, clgrad):

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                seen.append(ctx.needs_input_grad)
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, None

        Scale.apply(lib.ones(2), 2.0)
    assert seen == [(False, False), (False, False)]
