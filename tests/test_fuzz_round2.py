"""Families a second differential-fuzzing round found in modules, optimizers, schedulers, data
utilities and autograd's API, each checked against torch (on every device where a device is
involved)."""

import warnings

import numpy as np
import pytest
import torch
from test_fuzz_families import both

import clgrad


def _lrs(lib, make_scheduler, steps=6, optimizer="SGD"):
    w = lib.nn.Parameter(lib.zeros(1))
    opt = getattr(lib.optim, optimizer)([w], lr=0.1)
    sched = make_scheduler(lib, opt)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(round(opt.param_groups[0]["lr"], 10))
    return out


@pytest.mark.parametrize(
    "name, make",
    [
        (
            "onecycle without momentum",
            lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
                opt, 1.0, total_steps=8, cycle_momentum=False
            ),
        ),
        (
            "multiplicative in sequential",
            lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
                opt,
                [
                    lib.optim.lr_scheduler.ConstantLR(opt, 0.5, total_iters=2),
                    lib.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.9),
                ],
                milestones=[2],
            ),
        ),
    ],
)
def test_schedulers_match_torch(name, make):
    assert _lrs(clgrad, make) == _lrs(torch, make)


def test_optimizer_groups_match_torch():
    for lib in (torch, clgrad):
        w, v = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.Adagrad([w], lr=0.1)
        opt.add_param_group({"params": [v]})
        w.grad, v.grad = lib.ones(1), lib.ones(1)
        opt.step()  # the added group's state starts lazily
        assert float(v) == pytest.approx(0.9)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            dup = lib.optim.SGD([w, w], lr=0.1)
        before = float(w)
        dup.step()  # updated once per listing, as torch
        assert float(w) == pytest.approx(before - 0.2)
        with pytest.raises(ValueError):
            lib.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
        lbfgs = lib.optim.LBFGS([w])
        lbfgs.add_param_group({"params": [v]})
        with pytest.raises(AssertionError):
            lbfgs.step(lambda w=w, v=v: (w * v).sum())


@pytest.mark.parametrize("norm_type", [float("-inf"), 0.0, 1.0, 3.0, float("inf")])
def test_clip_grad_norm_types_match_torch(device, norm_type):
    def case(lib, dev):
        a = lib.nn.Parameter(lib.zeros(3, device=dev))
        b = lib.nn.Parameter(lib.zeros(2, device=dev))
        a.grad = lib.tensor([0.5, -2.0, 0.0], device=dev)
        b.grad = lib.tensor([1.5, 3.0], device=dev)
        total = lib.nn.utils.clip_grad_norm_([a, b], 1.0, norm_type=norm_type)
        return [total, a.grad, b.grad]

    both(device, case)


def test_clip_grad_norm_promotes_mixed_dtypes():
    def case(lib, dev):
        a = lib.nn.Parameter(lib.zeros(2))
        b = lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))
        a.grad, b.grad = lib.ones(2), lib.ones(2, dtype=lib.float64)
        return [lib.nn.utils.clip_grad_norm_([a, b], 1.0)]

    both("cpu", case)


@pytest.mark.parametrize(
    "batch",
    [[1, 2.5], [True, 2], [True, False], [1, 2], [(1.0, "a"), (2.0, "b")], [("x", 1)], ["a"]],
    ids=str,
)
def test_default_collate_matches_torch(batch):
    from torch.utils.data import default_collate as torch_collate

    from clgrad.utils.data import default_collate

    def norm(x):
        if isinstance(x, (torch.Tensor, clgrad.Tensor)):
            return ("T", str(x.dtype).split(".")[-1], x.tolist())
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, [norm(v) for v in x])
        return x

    assert norm(default_collate(batch)) == norm(torch_collate(batch))


def test_containers_and_packing_match_torch(device):
    def case(lib, dev):
        params = lib.nn.ParameterDict({"w": lib.ones(1), "b": lib.zeros(1)})
        blocks = lib.nn.ModuleList(
            [lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.ReLU(), lib.nn.ReLU()]
        )
        cell = lib.nn.RNNCell(2, 3, nonlinearity="relu")
        packed = lib.nn.utils.rnn.pack_sequence(
            [lib.ones(3, 2, device=dev), lib.ones(2, 2, device=dev)]
        )
        # (a device without float64, rusticl's llvmpipe, casts to float32 instead: both libs)
        wide = packed.double() if clgrad.device(device).supports(clgrad.float64) else packed.float()
        dtypes = [str(p.data.dtype).split(".")[-1] for p in (wide, packed.half())]
        return [list(params.keys()), repr(blocks), repr(cell), dtypes, packed.cpu().data]

    both(device, case)


@pytest.mark.parametrize("size", [{"scale_factor": 0.5}, {"size": 0}])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_interpolate_to_nothing_raises_as_torch(device, size, mode):
    both(
        device,
        lambda lib, dev: lib.nn.functional.interpolate(
            lib.ones(1, 1, 1, device=dev), mode=mode, **size
        ),
    )


GRAPHS = {
    "add": lambda lib, a: (a + 1).sum(),
    "sum": lambda lib, a: a.sum(),
    "view": lambda lib, a: a.view(2, 2).sum(),
    "slice": lambda lib, a: a[1:].sum(),
    "expand": lambda lib, a: a.expand(3, 4).sum(),
    "mul (saves)": lambda lib, a: (a * a).sum(),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_second_backward_as_torch(device, name):
    """A graph whose nodes saved no tensors backpropagates again (gradients add up); one that
    saved tensors refuses, as torch."""

    def case(lib, dev):
        a = lib.ones(4, device=dev, requires_grad=True)
        y = GRAPHS[name](lib, a)
        y.backward()
        y.backward()
        return [a.grad]

    both(device, case)


def test_autograd_api_as_torch(device):
    def case(lib, dev):
        x = lib.ones(3, device=dev, requires_grad=True)
        (batched,) = lib.autograd.grad(x * 2, x, lib.eye(3, device=dev), is_grads_batched=True)

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, v):
                ctx.save_for_backward(v)
                return v**3

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                (v,) = ctx.saved_tensors
                return 3 * v * v * g

        (g,) = lib.autograd.grad(Cube.apply(x).sum(), x)

        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, v):
                ctx.save_for_backward(v, 3)
                return v

            @staticmethod
            def backward(ctx, grad):
                return grad

        try:
            Bad.apply(x)
            refused = None
        except TypeError:
            refused = "TypeError"
        return [batched, g, refused]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(device, case)


def test_once_differentiable_refuses_a_second_derivative():
    x = clgrad.ones(2, requires_grad=True)

    class Square(clgrad.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            ctx.save_for_backward(v)
            return v * v

        @staticmethod
        @clgrad.autograd.function.once_differentiable
        def backward(ctx, g):
            (v,) = ctx.saved_tensors
            return 2 * v * g

    (g,) = clgrad.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_recomputes_as_torch(device, use_reentrant):
    """Both checkpoints run the forward again in backward: a BatchNorm inside updates its
    running statistics twice, and the gradients are the plain ones, as torch's."""

    def case(lib, dev):
        lib.manual_seed(0)
        bn = lib.nn.BatchNorm1d(3).to(dev)
        lin = lib.nn.Linear(3, 3).to(dev)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.eye(3, dtype=np.float32) * 0.5, device=dev))
            lin.bias.zero_()
        x = lib.tensor(np.arange(12, dtype=np.float32).reshape(4, 3), device=dev)
        x.requires_grad_(True)

        def block(t):
            return lin(bn(t)).tanh()

        out = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=use_reentrant)
        out.square().sum().backward()
        return [out, x.grad, lin.weight.grad, bn.running_mean, int(bn.num_batches_tracked)]

    both(device, case)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_recomputes_in_its_autocast_region(device, use_reentrant):
    """A checkpoint taken inside autocast recomputes inside it too: the bfloat16 forward's
    gradients, as torch's (recomputed in float32, backward met float32 and bfloat16)."""

    def case(lib, dev):
        lin = lib.nn.Linear(4, 3).to(dev)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
            lin.bias.fill_(0.25)
        x = lib.tensor(np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4), device=dev)
        x.requires_grad_(True)
        with lib.autocast(device_type=lib.device(dev).type, dtype=lib.bfloat16):
            out = lib.utils.checkpoint.checkpoint(lin, x, use_reentrant=use_reentrant)
        out.float().square().sum().backward()
        return [out.float(), x.grad, lin.weight.grad, lin.bias.grad]

    both(device, case)


def test_validation_and_metadata_as_torch():
    import copy

    for lib in (torch, clgrad):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError):
            copy.deepcopy(x * 2)  # not a leaf
        twin = copy.deepcopy([x, x])
        assert twin[0] is twin[1] and twin[0].requires_grad  # the memo keeps one copy
        for bad in ({"prefetch_factor": 2}, {"timeout": -1}, {"persistent_workers": True}):
            with pytest.raises(ValueError):
                lib.utils.data.DataLoader([1, 2], **bad)
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        meta = model.state_dict()._metadata
        assert dict(meta) == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}
        model.load_state_dict(model.state_dict())


def test_global_module_hooks_as_torch():
    def run(lib):
        seen = []
        module_api = lib.nn.modules.module
        handles = [
            module_api.register_module_forward_pre_hook(
                lambda m, args: seen.append(("global pre", type(m).__name__))
            ),
            module_api.register_module_forward_hook(
                lambda m, args, kwargs, out: seen.append(("global post", sorted(kwargs))),
                with_kwargs=True,
            ),
        ]
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        model[0].register_forward_pre_hook(lambda m, args: seen.append(("own pre", 0)))
        model[0].register_forward_hook(lambda m, args, out: seen.append(("own post", 0)))
        model(lib.ones(1, 2))
        for handle in handles:
            handle.remove()
        model(lib.ones(1, 2))
        return seen

    assert run(clgrad) == run(torch)


def test_global_backward_and_registration_hooks_as_torch():
    def run(lib):
        api = lib.nn.modules.module
        seen = []
        handles = [
            api.register_module_full_backward_pre_hook(
                lambda m, go: seen.append(("pre", type(m).__name__))
            ),
            api.register_module_full_backward_hook(
                lambda m, gi, go: seen.append(("post", type(m).__name__, len(gi)))
            ),
            api.register_module_parameter_registration_hook(
                lambda m, n, p: seen.append(("param", type(m).__name__, n))
            ),
            api.register_module_buffer_registration_hook(
                lambda m, n, b: seen.append(("buffer", type(m).__name__, n))
            ),
            api.register_module_module_registration_hook(
                lambda m, n, c: seen.append(("module", n, type(c).__name__))
            ),
        ]
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2), lib.nn.Tanh())
        model.extra = lib.nn.ReLU()
        model.register_buffer("scale", lib.ones(1))
        x = lib.ones(3, 2, requires_grad=True)
        model(x).sum().backward()
        for h in handles:
            h.remove()
        model(x).sum().backward()
        return seen

    assert run(clgrad) == run(torch)


def test_int64_accumulating_put_past_65535_values(device):
    # a device without 64-bit atomics adds them in one work-item, in launches of fewer values
    # than llvmpipe's 65535-iteration loop limit (past it, its loops stop silently)
    n = 70001
    index = clgrad.arange(n, device=device) % 3
    total = clgrad.zeros(3, dtype=clgrad.int64, device=device)
    total.index_put_((index,), clgrad.arange(n, device=device), accumulate=True)
    expected = np.bincount(np.arange(n) % 3, weights=np.arange(n)).astype(np.int64)
    np.testing.assert_array_equal(total.cpu().numpy(), expected)
    counts = clgrad.zeros(2, dtype=clgrad.int64, device=device)
    counts.scatter_add_(
        0,
        clgrad.zeros(n, dtype=clgrad.int64, device=device),
        clgrad.ones(n, dtype=clgrad.int64, device=device),
    )
    assert counts.tolist() == [n, 0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_mean_and_var_accumulate_in_float32(device, dtype):
    """A 16-bit float's mean, var and std sum in float32 and round once, as torch's (100,000
    halves of 1 sum to inf; their mean is 1); a value past the dtype's range becomes inf
    quietly (no NumPy warning)."""

    def case(lib, dev):
        h = lib.ones(100000, dtype=getattr(lib, dtype), device=dev)
        big = h * 300
        out = [h.mean(), big.var(), big.std(), *lib.var_mean(big), *lib.std_mean(big, 0)]
        out += [h.reshape(10, 10000).mean(1), big.reshape(100, 1000).var(1), h.sum()]
        return [t.float() for t in out] + [lib.tensor([1e300], device=dev)]

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        both(device, case)
