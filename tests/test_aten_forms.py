"""torch's top-level native forms (``torch.conv2d``, ``torch.dropout``, ``torch.embedding``,
``torch.batch_norm``, losses with an int reduction, ...) and constants, each against torch on
every device: values, gradients, and errors."""

import math

import numpy as np
import pytest
import torch

import clgrad

RNG = np.random.default_rng(11)


def _a(*shape, positive=False):
    x = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(x) + 0.1 if positive else x


X4 = _a(2, 3, 6, 6)
X3 = _a(2, 3, 8)
W = _a(4, 3, 3, 3)
V = _a(5, 4)
T = np.sign(_a(5)).astype(np.float32)
IDX = np.array([[0, 2], [4, 1]], np.int64)

# name -> (arguments: arrays are tensors (floats need grad), anything else as is)
CASES = {
    "conv2d": (X4, W, _a(4), 1, 1),
    "conv1d": (X3, _a(2, 3, 3), None, 2),
    "conv_transpose2d": (X4, _a(3, 2, 2, 2), None, 2),
    "max_pool1d": (X3, 2),
    "max_pool2d": (X4, [3, 3], [], 1),
    "max_pool3d": (_a(1, 2, 4, 4, 4), 2, (), 0, 1, True),
    "avg_pool1d": (X3, 3, 2),
    "adaptive_avg_pool1d": (X3, 3),
    "cosine_similarity": (V, _a(5, 4)),
    "pairwise_distance": (V, _a(5, 4)),
    "pixel_shuffle": (_a(1, 8, 2, 2), 2),
    "pixel_unshuffle": (X4, 2),
    "channel_shuffle": (_a(1, 4, 2, 2), 2),
    "bilinear": (V, _a(5, 3), _a(2, 4, 3), _a(2)),
    "dropout": (V, 0.3, False),
    "alpha_dropout": (V, 0.3, False),
    "embedding": (V, IDX),
    "embedding-padding": (V, IDX, 2),
    "layer_norm": (X4, [6, 6], _a(6, 6), _a(6, 6), 1e-3),
    "group_norm": (X4, 3, _a(3), _a(3)),
    "rms_norm": (X4, [6], _a(6)),
    "batch_norm": (X4, _a(3), _a(3), None, None, True, 0.1, 1e-5, True),
    "instance_norm": (X4, _a(3), _a(3), None, None, True, 0.1, 1e-5, True),
    "threshold": (V, 0.1, -2.0),
    "rrelu": (V,),
    "constant_pad_nd": (X3, [1, 2], 0.5),
    "binary_cross_entropy_with_logits": (V, _a(5, 4, positive=True) / 4, None, None, 2),
    "cosine_embedding_loss": (V, _a(5, 4), T, 0.1, 0),
    "hinge_embedding_loss": (V, np.sign(_a(5, 4)).astype(np.float32), 0.5, 1),
    "margin_ranking_loss": (_a(5), _a(5), T, 0.2, 2),
    "kl_div": (np.log(_a(5, 4, positive=True)), _a(5, 4, positive=True), 1),
    "kl_div-log_target": (V, _a(5, 4), 2),
    "poisson_nll_loss": (V, _a(5, 4, positive=True), True, True, 1e-8, 1),
    "triplet_margin_loss": (V, _a(5, 4), _a(5, 4), 1.0, 2.0, 1e-6, True, 0),
    "detach": (V,),
    "adjoint": (V,),
    "real": (V,),
    "fill": (V, 2.5),
    "kl_div-unknown_reduction": (V, _a(5, 4), 7),  # ATen: any code but 1 and 2 is none
}


def _run(lib, device, name, args):
    fn = getattr(lib, name.split("-")[0])
    leaves, call = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            t = lib.tensor(a, device=device)
            if a.dtype == np.float32:
                t.requires_grad_(True)
                leaves.append(t)
            call.append(t)
        else:
            call.append(a)
    kw = {"log_target": True} if name == "kl_div-log_target" else {}
    out = fn(*call, **kw)
    outs = out if isinstance(out, tuple) else (out,)
    if outs[0].requires_grad:
        sum((o * o).sum() for o in outs if o.dtype.is_floating_point).backward()
    grads = [None if t.grad is None else t.grad.cpu().numpy() for t in leaves]
    return [o.detach().cpu().numpy() for o in outs], grads


@pytest.mark.parametrize("name", list(CASES))
def test_native_form_matches_torch(device, name):
    want, want_grads = _run(torch, "cpu", name, CASES[name])
    got, got_grads = _run(clgrad, device, name, CASES[name])
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_with_indices_forms_match_torch(device):
    for name, args in (("adaptive_max_pool1d", (X3, 3)), ("max_pool1d_with_indices", (X3, 3))):
        (tv, ti), (cv, ci) = (
            getattr(lib, name)(lib.tensor(args[0], device=dev), *args[1:])
            for lib, dev in ((torch, "cpu"), (clgrad, device))
        )
        np.testing.assert_allclose(cv.cpu().numpy(), tv.numpy(), rtol=1e-6)
        np.testing.assert_array_equal(ci.cpu().numpy(), ti.numpy())


def test_inplace_forms_match_torch(device):
    for name, args in (("selu_", ()), ("celu_", (0.5,)), ("threshold_", (0.0, 9.0))):
        t = torch.tensor(V)
        c = clgrad.tensor(V, device=device)
        assert getattr(torch, name)(t, *args) is t
        assert getattr(clgrad, name)(c, *args) is c
        np.testing.assert_allclose(c.cpu().numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    for name in ("dropout_", "alpha_dropout_"):
        c = clgrad.tensor(V, device=device)
        assert getattr(clgrad, name)(c, 0.5, False) is c
        np.testing.assert_array_equal(c.cpu().numpy(), V)  # eval: unchanged


def test_training_dropout_scales_the_kept(device):
    y = clgrad.dropout(clgrad.ones(1000, device=device), 0.5, True).cpu().numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 300 < (y == 0).sum() < 700


def test_constants_and_helpers_match_torch():
    for name in ("pi", "e", "inf"):
        assert getattr(clgrad, name) == getattr(torch, name)
    assert math.isnan(clgrad.nan) and clgrad.newaxis is torch.newaxis is None
    assert clgrad.zeros(2)[clgrad.newaxis].shape == (1, 2)
    x = clgrad.zeros(2)
    assert clgrad.get_device(x) == torch.get_device(torch.zeros(2)) == -1
    assert clgrad.is_storage(x.untyped_storage()) and not clgrad.is_storage(x)
    assert clgrad.typename(1.0) == torch.typename(1.0) == "float"
    assert clgrad.typename(clgrad.nn.Linear).endswith("nn.modules.linear.Linear")
    assert clgrad.is_inference(x) == torch.is_inference(torch.zeros(2)) is False


@pytest.mark.parametrize(
    "name, args",
    [
        ("kl_div", (V, _a(4, 5), 1)),  # shapes that don't broadcast
        ("embedding", (V, np.array([5]))),  # an index past the table
        ("conv2d", (X3, W)),  # a 3-D input, 4-D weight of another channel count
        ("layer_norm", (V, [3])),  # a shape that is not the input's last dims
    ],
)
def test_bad_arguments_raise_as_torch(device, name, args):
    errors = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        call = [lib.tensor(a, device=dev) if isinstance(a, np.ndarray) else a for a in args]
        with pytest.raises(Exception) as info:
            getattr(lib, name)(*call)
        errors.append(info.type)
    assert errors[1] is errors[0] or issubclass(errors[1], errors[0])


def _block(lib):
    """A module written for TorchScript: annotate, is_scripting, an ignored method."""

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0

        def forward(self, v):
            out = lib.jit.annotate(list[lib.Tensor], [])
            out.append(v * self.scale)
            if not lib.jit.is_scripting():
                out.append(self.helper(v))
            return out[0] + out[-1]

        @lib.jit.ignore
        def helper(self, v):
            return v + 1

    return Block()


def _twice(v):
    return v * 2


def test_jit_entry_points_run_eagerly_as_torch_computes(device):
    """A program written for TorchScript runs unchanged: script / trace give the same results
    as torch's scripted ones, the decorators and annotations change nothing, and archives are
    refused."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    results = []
    for lib, dev in ((torch, "cpu"), (clgrad, device)):
        t = lib.tensor(x, device=dev)
        scripted = lib.jit.script(_twice)
        traced = lib.jit.trace(_twice, (t,))
        # (torch's scripted block takes its is_scripting() branch; clgrad runs the eager one,
        # as torch's unscripted block does)
        block = _block(lib) if lib is torch else lib.jit.script(_block(lib))
        fut = lib.jit.fork(_twice, t)
        results.append(
            [r.cpu().numpy() for r in (scripted(t), traced(t), block(t), lib.jit.wait(fut))]
            + [lib.jit.is_tracing()]
        )
        frozen = lib.jit.freeze(lib.jit.script(lib.nn.Linear(2, 2).to(dev).eval()))
        assert frozen(lib.ones(1, 2, device=dev)).shape == (1, 2)
    for g, w in zip(results[1], results[0]):
        np.testing.assert_allclose(g, w)
    with pytest.raises(NotImplementedError):
        clgrad.jit.save(clgrad.jit.script(clgrad.nn.Linear(1, 1)), "model.pt")
    with pytest.raises(RuntimeError):
        clgrad.jit.freeze(clgrad.nn.Linear(1, 1))  # training mode, as torch refuses


def test_global_switches_match_torch():
    for lib in (torch, clgrad):
        lib.set_deterministic_debug_mode("warn")
        state = [
            lib.get_deterministic_debug_mode(),
            lib.are_deterministic_algorithms_enabled(),
            lib.is_deterministic_algorithms_warn_only_enabled(),
        ]
        lib.set_deterministic_debug_mode("default")
        assert state == [1, True, True] and lib.get_deterministic_debug_mode() == 0
        with pytest.raises(RuntimeError):
            lib.set_deterministic_debug_mode(5)
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled()
        lib.set_warn_always(False)
        assert isinstance(lib.set_flush_denormal(False), bool)
        assert lib.get_num_interop_threads() >= 1


@pytest.mark.parametrize("name", ["dropout", "dropout_", "alpha_dropout", "alpha_dropout_"])
def test_dropout_p_out_of_range_is_a_runtime_error(device, name):
    """ATen's forms check p with RuntimeError (nn.functional's with ValueError)."""
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        getattr(torch, name)(torch.ones(3), 1.5, True)
    x = clgrad.ones(3, device=device)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        getattr(clgrad, name)(x, 1.5, True)
    assert x.tolist() == [1.0, 1.0, 1.0]
