"""Families an eighth differential round found (linear algebra's tolerances and triangles,
the DataLoader and its datasets, reparametrized weights, packed sequences, hooks and the
engine), each checked against torch on every device."""

import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 -- (torch.nn.utils does not import it)
from test_fuzz_families import both

import clgrad


def _f64(device):
    if not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")


# ---- linear algebra --------------------------------------------------------------------------
def test_cond_of_non_square_and_singular_matrices(device):
    """cond's default and 2-norms take any matrix; the other norms give inf for a singular one
    (in a batch too), as PyTorch's inv_ex-based formula."""
    a = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    singular = [[1.0, 2.0], [2.0, 4.0]]

    def case(lib, dev):
        batch = lib.stack([lib.tensor(singular), 2 * lib.eye(2)]).to(dev)
        out = [lib.linalg.cond(lib.tensor(a, device=dev)), lib.linalg.cond(batch, 1)]
        for p in (1, -1, float("inf"), "fro"):
            out.append(lib.linalg.cond(lib.tensor(singular, device=dev), p))
        return out

    both(device, case)


def test_pinv_and_matrix_rank_tolerances(device):
    """pinv takes atol, rtol and the older rcond; matrix_rank's atol/rtol may be tensors, one
    value per matrix; hermitian reads the lower triangle."""
    _f64(device)
    m = np.random.default_rng(1).standard_normal((2, 3, 3))

    def case(lib, dev):
        x = lib.tensor(m, device=dev, requires_grad=True)
        out = [lib.linalg.pinv(x, atol=0.5), lib.linalg.pinv(x[0], rcond=0.3)]
        out.append(lib.linalg.pinv(x, atol=0.2, hermitian=True))
        out[0].sum().backward()
        out.append(x.grad)
        tol = lib.tensor([0.01, 5.0], device=dev, dtype=lib.float64)
        out.append(lib.linalg.matrix_rank(x.detach(), atol=tol))
        lower = lib.tensor([[1.0, 0.0], [2.0, 4.0]], device=dev)
        out.append(lib.linalg.matrix_rank(lower, hermitian=True))
        return out

    both(device, case)


def test_cholesky_upper_reads_the_upper_triangle(device):
    def case(lib, dev):
        a = lib.tensor([[4.0, 1.0], [-1.5, 3.0]], device=dev, requires_grad=True)
        u = lib.linalg.cholesky(a, upper=True)
        u.sum().backward()
        return [u, lib.cholesky(a.detach(), upper=True), a.grad]

    both(device, case)


def test_matrix_exp_power_and_unitriangular_edges(device):
    """matrix_exp of an inf is NaN (no scaling brings it down); matrix_power takes any integer
    (a NumPy one, a one-element tensor) but not a bool; a unit triangle's diagonal is not read,
    NaN or not."""
    nan = float("nan")

    def case(lib, dev):
        out = [lib.linalg.matrix_exp(lib.tensor([[float("inf"), 0.0], [0.0, 1.0]], device=dev))]
        two = 2 * lib.eye(2, device=dev)
        out += [lib.linalg.matrix_power(two, np.int64(2)), lib.linalg.matrix_power(two, 3)]
        t = lib.tensor([[nan, 0.0], [2.0, nan]], device=dev)
        b = lib.ones(2, 1, device=dev)
        out.append(lib.linalg.solve_triangular(t, b, upper=False, unitriangular=True))
        return out

    both(device, case)
    for lib in (torch, clgrad):
        with pytest.raises(TypeError):
            lib.linalg.matrix_power(lib.eye(2), True)


def test_einsum_sublist_labels_order_as_torch(device):
    """Sublist ints 0-25 are A-Z and 26-51 a-z: an implicit output follows their order."""
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def case(lib, dev):
        t = lib.tensor(x, device=dev)
        return [lib.einsum(t, [1, 30]), lib.einsum(t, [30, 1]), lib.einsum(t, [27, 2], t, [27, 3])]

    both(device, case)


# ---- data ------------------------------------------------------------------------------------
def test_dataloader_uses_a_tensor_dataset_subclass_getitem(device):
    """The one-gather batch of a TensorDataset is taken only where its samples are its rows:
    a subclass's own __getitem__ runs (augmentation), a random_split of a plain one gathers."""

    def case(lib, dev):
        data = lib.utils.data

        class Augmented(data.TensorDataset):
            def __getitem__(self, i):
                x, y = super().__getitem__(i)
                return x * 10 + 1, y, i

        x, y = lib.arange(8.0, device=dev).reshape(4, 2), lib.arange(4, device=dev)
        out = list(next(iter(data.DataLoader(Augmented(x, y), batch_size=2))))
        train, _ = data.random_split(data.TensorDataset(x, y), [3, 1])
        batch = next(iter(data.DataLoader(train, batch_size=3)))
        return out + [b.shape[0] for b in batch]

    both(device, case)


def test_dataloader_argument_checks_and_iterator():
    for lib in (torch, clgrad):
        data = lib.utils.data
        ds = data.TensorDataset(lib.arange(5))
        with pytest.raises(TypeError):
            data.DataLoader(ds, batchsize=2)  # (a typo: not silently batch size 1)
        with pytest.raises(ValueError, match="Fraction at index 0"):
            data.random_split(ds, [1.5, -0.5])
        with pytest.raises(ValueError, match="drop_last"):
            data.DataLoader(ds, batch_size=None, drop_last=True)
        with pytest.raises(TypeError):
            data.RandomSampler(ds, replacement=1)
        with pytest.raises(ValueError):
            data.BatchSampler(range(3), 2, drop_last=1)
        loader = data.DataLoader(ds, batch_size=2)
        with pytest.raises(ValueError, match="should not be set"):
            loader.batch_size = 3
        it = iter(loader)
        assert len(it) == 3 and next(it)[0].tolist() == [0, 1] and it._num_yielded == 1
        sub = data.Subset(ds, [4, 0])
        assert [s[0].item() for s in sub.__getitems__([0, 1])] == [4, 0]
    from torch.utils.data._utils import collate

    from clgrad.utils.data._utils.collate import (
        default_collate_err_msg_format,
        np_str_obj_array_pattern,
    )

    assert np_str_obj_array_pattern.pattern == collate.np_str_obj_array_pattern.pattern
    assert default_collate_err_msg_format == collate.default_collate_err_msg_format


# ---- reparametrized weights and packed sequences ---------------------------------------------
def test_recurrent_layers_with_reparametrized_weights(device):
    """LSTM/GRU read their weights through getattr: weight_norm, orthogonal and pruning wrap
    them outside the parameters dict."""

    def case(lib, dev):
        lib.manual_seed(0)
        nn = lib.nn
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch's weight_norm is deprecated)
            lstm = nn.utils.weight_norm(nn.LSTM(3, 2), "weight_hh_l0")
        gru = nn.utils.parametrizations.orthogonal(nn.GRU(3, 3), "weight_hh_l0")
        nn.utils.prune.l1_unstructured(gru, "weight_ih_l0", amount=0.5)
        x = lib.linspace(-1, 1, 12).reshape(4, 1, 3)
        return [lstm(x)[0].shape, gru(x)[0].shape]

    both(device, case)


def test_weight_norm_shapes_checkpoints_and_spectral_dims(device):
    """weight_norm of a vector keeps its modulus per entry; a dim out of range is IndexError;
    the older API's weight_g/weight_v state dict loads into the parametrization; spectral_norm
    of a ConvTranspose subclass normalizes over dim 1, and the older one takes a bias."""

    def case(lib, dev):
        nn = lib.nn
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            old = nn.utils.weight_norm(nn.Conv1d(2, 3, 3))
            vec = nn.utils.weight_norm(nn.Linear(3, 4), name="bias")
        new = nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 3, 3))
        new.load_state_dict(old.state_dict())
        x = lib.linspace(-1, 1, 10).reshape(1, 2, 5)

        class Up(nn.ConvTranspose2d):
            pass

        up = nn.utils.parametrizations.spectral_norm(Up(2, 3, 3))
        lin = nn.utils.spectral_norm(nn.Linear(3, 4), "bias")
        return [
            new(x) - old(x),
            vec.bias_g.shape,
            up.parametrizations.weight[0]._u.shape,
            lin.bias_u.shape,
            lin(lib.ones(1, 3)).shape,
        ]

    both(device, case)

    def out_of_range(lib, dev):
        return lib.nn.utils.weight_norm(lib.nn.Linear(3, 4), dim=2)

    both(device, out_of_range)


def test_packed_sequence_built_by_hand(device):
    """PackedSequence(data, batch_sizes, sorted_indices) works out unsorted_indices, and
    (data, batch_sizes) as one tuple is accepted, as PyTorch's __new__; pad_sequence's bad
    padding_side is RuntimeError."""

    def case(lib, dev):
        rnn = lib.nn.utils.rnn
        data = lib.arange(6.0, device=dev).reshape(6, 1)
        sizes, order = lib.tensor([3, 2, 1]), lib.tensor([2, 0, 1], device=dev)
        packed = rnn.PackedSequence(data, sizes, order)
        lib.manual_seed(0)
        gru = lib.nn.GRU(1, 1).to(dev)
        with lib.no_grad():
            for p in gru.parameters():
                p.fill_(0.5)
        again = rnn.PackedSequence((data, sizes))
        return [packed.unsorted_indices, rnn.pad_packed_sequence(packed)[0], gru(packed)[0].data,
                again.sorted_indices is None, again.batch_sizes]  # fmt: skip

    both(device, case)

    def bad_side(lib, dev):
        return lib.nn.utils.rnn.pad_sequence([lib.ones(2, device=dev)], padding_side="up")

    both(device, bad_side)


# ---- hooks and the engine --------------------------------------------------------------------
def test_engine_hooks_and_retained_grads(device):
    """backward(inputs=[m]) of a retain_grad non-leaf adds its gradient once; autograd.grad of
    a leaf passes it through the leaf's tensor hooks, as its accumulation does."""

    def case(lib, dev):
        x = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        m = x * 3
        m.retain_grad()
        (m**2).sum().backward(inputs=[m])
        y = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        y.register_hook(lambda g: g * 2)
        return [m.grad, lib.autograd.grad((y**2).sum(), y)[0]]

    both(device, case)


def test_hook_handles_are_removable_handles():
    for lib in (torch, clgrad):
        handle_type = lib.utils.hooks.RemovableHandle  # (torch.utils.hooks with torch.utils)
        x = lib.ones(2, requires_grad=True)
        h = x.register_hook(lambda g: g)
        assert isinstance(h, handle_type)
        h.remove()
        hooks, extra = OrderedDict(), OrderedDict()  # (torch's handle holds weak references)
        h = handle_type(hooks, extra_dict=extra)
        hooks[h.id] = extra[h.id] = print
        h.remove()
        assert not hooks and not extra


def test_full_backward_hook_tuples_are_laid_out_as_torch(device):
    """grad_input has an entry per argument (None for a non-tensor), grad_output one per output
    (None for one that got no gradient); hooks on a module whose output is a list do not run."""

    def case(lib, dev):
        nn = lib.nn
        log = []

        def shapes(gs):
            return [None if g is None else list(g.shape) for g in gs]

        class Attention(nn.Module):
            def forward(self, x, mask=None):
                w = (x @ x.t()).softmax(-1)
                return w @ x, w

        class Listing(nn.Module):
            def forward(self, x):
                return [x * 2]

        x = lib.ones(3, 2, device=dev, requires_grad=True)
        attention, lstm, listing = Attention(), nn.LSTM(2, 2).to(dev), Listing()
        for module in (attention, lstm, listing):
            module.register_full_backward_hook(
                lambda m, gi, go: log.append((type(m).__name__, shapes(gi), shapes(go)))
            )
            module.register_full_backward_pre_hook(lambda m, go: log.append(shapes(go)))
        out, _ = attention(x, None)
        out.sum().backward()
        y, _ = lstm(lib.ones(3, 1, 2, device=dev, requires_grad=True))
        y.sum().backward()
        listing(x)[0].sum().backward()
        return [str(log)]

    both(device, case)


# ---- mixed precision, layouts, checkpoints and functional calls ------------------------------
@pytest.mark.parametrize(
    "dtypes", [("bfloat16", "float32"), ("float32", "bfloat16"), ("float16", "bfloat16")]
)
def test_rms_norm_result_has_the_input_dtype(device, dtypes):
    """bfloat16 activations with a float32 weight (mixed precision) give bfloat16, scaled by
    the weight before the one rounding, as ATen's rms_norm."""
    x = np.random.default_rng(2).standard_normal((2, 8)).astype(np.float32)
    w = np.linspace(0.5, 2.0, 8, dtype=np.float32)

    def case(lib, dev):
        xt = lib.tensor(x, device=dev).to(getattr(lib, dtypes[0])).requires_grad_()
        wt = lib.tensor(w, device=dev).to(getattr(lib, dtypes[1])).requires_grad_()
        y = lib.nn.functional.rms_norm(xt, (8,), wt)
        y.float().sum().backward()
        return [y.dtype == xt.dtype, y.float(), xt.grad.float(), wt.grad.float()]

    both(device, case)


def test_attention_output_is_laid_out_as_its_queries(device):
    """Queries viewed from (B, L, H, E) memory give an output laid out the same way, so the
    usual ``y.transpose(1, 2).view(B, L, H * E)`` works, as in PyTorch."""

    def case(lib, dev):
        x = lib.linspace(-1, 1, 2 * 5 * 16, device=dev).reshape(2, 5, 16)
        q = x.view(2, 5, 4, 4).transpose(1, 2)
        y = lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        return [list(y.stride()), y.transpose(1, 2).view(2, 5, 16)]

    both(device, case)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "RMSprop"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_parameters_update_in_their_dtype(device, name, dtype):
    """PyTorch's default optimizer path computes a 16-bit parameter's update in its dtype (in
    float16 Adam's eps is 0: a zero gradient gives NaN), its fused=True path in float32."""

    def case(lib, dev):
        out = []
        for fused in (None, True):
            p = lib.nn.Parameter(lib.tensor([1.0, 2.0, -3.0], device=dev).to(getattr(lib, dtype)))
            extra = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
            if fused and lib is torch and name == "RMSprop":
                continue  # (torch has no fused RMSprop)
            opt = getattr(lib.optim, name)([p], lr=0.1, fused=fused, **extra)
            for g in ([0.0, 1e-4, 3.0], [1.0, -2.0, 0.5]):
                p.grad = lib.tensor(g, device=dev).to(getattr(lib, dtype))
                opt.step()
            out.append(p.detach().float())
        return out

    if device != "cpu" and dtype == "float16" or name == "RMSprop":
        # (torch's fused kernels run on cpu for these; RMSprop has no fused one)
        def default_only(lib, dev):
            return case(lib, dev)[:1]

        both(device, default_only)
    else:
        both(device, case)


def test_checkpoint_input_written_in_place_is_refused(device):
    def case(lib, dev):
        import torch.utils.checkpoint  # noqa: F401 -- (torch.utils does not import it)

        x = lib.tensor([1.0, 2.0], device=dev, requires_grad=True)
        z = x * 1
        y = lib.utils.checkpoint.checkpoint(lib.exp, z, use_reentrant=False)
        with lib.no_grad():
            z.mul_(2)
        y.sum().backward()
        return x.grad

    both(device, case)


def test_functional_call_and_vector_to_parameters_alias(device):
    """functional_call sets a parametrized tensor through its parametrization; the parameters
    vector_to_parameters gives are views of the vector."""

    def case(lib, dev):
        import torch.func  # noqa: F401

        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(2, 1, bias=False)).to(dev)
        before = m.weight.detach().clone()
        out = lib.func.functional_call(
            m, {"weight": lib.ones(1, 2, device=dev)}, (lib.ones(1, 2, device=dev),)
        )
        lin = lib.nn.Linear(3, 2).to(dev)
        vec = lib.nn.utils.parameters_to_vector(lin.parameters()).detach()
        lib.nn.utils.vector_to_parameters(vec, lin.parameters())
        vec += 1
        return [out, (m.weight - before).abs().max() < 1e-6, lin.bias - vec[-2:]]

    both(device, case)


def test_autocast_lists_for_one_kernel_ops_and_norms(device):
    """Ops that are one kernel in PyTorch and on no autocast list (average pooling,
    embedding_bag) keep their input's dtype though clgrad writes them with a (listed) sum; on
    the CUDA lists (an OpenCL device here) interpolation, rms_norm and the norms run in
    float32. The cpu lists are checked against torch's CPU autocast."""
    F = clgrad.nn.functional
    if device == "cpu":

        def case(lib, dev):
            x = lib.linspace(-1, 1, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8).bfloat16()
            weight = lib.linspace(-1, 1, 12).reshape(4, 3).bfloat16()
            with lib.autocast("cpu", dtype=lib.bfloat16):
                outs = [
                    lib.nn.functional.avg_pool2d(x, 2),
                    lib.nn.functional.embedding_bag(lib.tensor([[0, 1]]), weight),
                    lib.nn.functional.interpolate(x, scale_factor=2),
                ]
            return [str(o.dtype).split(".")[-1] for o in outs]

        both(device, case)
        return
    x = clgrad.randn(2, 3, 8, 8, device=device).half()
    weight = clgrad.randn(4, 3, device=device).half()
    with clgrad.autocast("cuda"):
        assert F.avg_pool2d(x, 2).dtype is clgrad.float16
        assert (
            F.embedding_bag(clgrad.tensor([[0, 1]], device=device), weight).dtype is clgrad.float16
        )
        assert F.interpolate(x, scale_factor=2).dtype is clgrad.float32
        assert F.rms_norm(x, (8,)).dtype is clgrad.float32
        assert clgrad.linalg.vector_norm(x).dtype is clgrad.float32
        assert x.norm().dtype is F.normalize(x.flatten(1)).dtype is clgrad.float32


def test_finfo_and_iinfo_compare_by_dtype():
    for lib in (torch, clgrad):
        assert lib.finfo(lib.float32) == lib.finfo(lib.float32) == lib.finfo()
        assert lib.finfo(lib.float32) != lib.finfo(lib.float64)
        assert lib.iinfo(lib.int8) == lib.iinfo(lib.int8) != lib.iinfo(lib.int16)
        with pytest.raises(TypeError):
            hash(lib.finfo(lib.float32))
