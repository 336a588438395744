"""Views, movement ops and indexing against NumPy on every device."""

import numpy as np
import pytest
import torch
from conftest import assert_close

import clgrad


def arr(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def shares(a, b):
    return a._storage is b._storage


def test_views_share_storage(device):
    a = arr(2, 3, 4)
    x = clgrad.tensor(a, device=device)
    cases = [
        (x.view(6, 4), a.reshape(6, 4)),
        (x.reshape(-1), a.reshape(-1)),
        (x.permute(2, 0, 1), a.transpose(2, 0, 1)),
        (x.transpose(0, 2), a.swapaxes(0, 2)),
        (x.T, a.T),
        (x.mT, a.swapaxes(-1, -2)),
        (x.flatten(1), a.reshape(2, 12)),
        (x.unsqueeze(1), a[:, None]),
        (x[:, :1].squeeze(1), a[:, 0]),
        (x[:1].expand(5, 3, 4), np.broadcast_to(a[:1], (5, 3, 4))),
        (x.narrow(2, 1, 2), a[:, :, 1:3]),
        (x[..., ::2], a[..., ::2]),
        (x[1, None, -1], a[1, None, -1]),
        (x[:, 1], a[:, 1]),
        (x.select(1, -1), a[:, -1]),
        (x.movedim(0, -1), np.moveaxis(a, 0, -1)),
        (x.unflatten(2, (2, 2)), a.reshape(2, 3, 2, 2)),
        (clgrad.broadcast_to(x[0, 0], (3, 4)), np.broadcast_to(a[0, 0], (3, 4))),
    ]
    for view, ref in cases:
        assert shares(view, x)
        assert_close(view, ref)
    for part, ref in zip(x.split(1, 1), np.split(a, 3, 1)):
        assert shares(part, x)
        assert_close(part, ref)
    for part, ref in zip(x.chunk(2, 2), np.split(a, 2, 2)):
        assert_close(part, ref)
    assert [p.shape[0] for p in clgrad.arange(5, device=device).split([2, 3])] == [2, 3]
    assert len(x.unbind(1)) == 3


def test_view_error_and_reshape_copy(device):
    x = clgrad.tensor(arr(3, 4), device=device).T
    with pytest.raises(RuntimeError, match=r"view size is not compatible.*Use \.reshape"):
        x.view(12)
    y = x.reshape(12)
    assert not shares(y, x)
    assert_close(y, arr(3, 4).T.reshape(12))
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 12"):
        x.reshape(5, -1)


def test_contiguous(device):
    x = clgrad.tensor(arr(3, 4), device=device)
    assert x.contiguous() is x
    t = x.T
    assert not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.stride() == (3, 1)
    assert_close(c, arr(3, 4).T)


def test_copying_movement(device):
    a = arr(2, 3)
    x = clgrad.tensor(a, device=device)
    assert_close(clgrad.cat([x, x * 2], 0), np.concatenate([a, a * 2], 0))
    assert_close(clgrad.cat([x, x.T.contiguous().T], 1), np.concatenate([a, a], 1))
    assert_close(clgrad.stack([x, x], 1), np.stack([a, a], 1))
    assert_close(x.repeat(2, 3), np.tile(a, (2, 3)))
    assert_close(x.repeat(2, 1, 1), np.tile(a, (2, 1, 1)))
    assert_close(x.flip(0), a[::-1])
    assert_close(x.flip((0, 1)), a[::-1, ::-1])
    assert_close(x.T.flip(1), a.T[:, ::-1])
    assert_close(clgrad.cat([clgrad.tensor([], device=device), x.reshape(-1)]), a.reshape(-1))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        clgrad.cat([x, clgrad.ones(2, 2, device=device)], 0)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        clgrad.stack([x, x[:1]])


def test_cat_promotes(device):
    out = clgrad.cat(
        [clgrad.ones(2, device=device), clgrad.ones(2, dtype=clgrad.int64, device=device)]
    )
    assert out.dtype == clgrad.float32


def test_basic_indexing_errors(device):
    x = clgrad.ones(2, 3, device=device)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x[0, 3]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="out of range"):
        x.sum(5)


INDEX_CASES = [
    lambda I: (I([2, 0, 2]),),
    lambda I: (slice(None), I([[1, 0], [3, 3]])),
    lambda I: (I([0, 1]), slice(None), I([1, 1])),  # separated: advanced dims go first
    lambda I: (I([0, 1]), I([2, 0])),
    lambda I: (Ellipsis, I([-1, 0])),
    lambda I: (1, I([0, 2]), slice(1, 3)),
    lambda I: (I([]),),
]


@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_advanced_indexing(device, case):
    a = arr(3, 4, 5)
    x = clgrad.tensor(a, device=device)
    key_t = INDEX_CASES[case](lambda v: clgrad.tensor(v, dtype=clgrad.int64, device=device))
    key_n = INDEX_CASES[case](lambda v: np.array(v, dtype=np.int64))
    assert_close(x[key_t], a[key_n])
    assert_close(x.T[key_t], a.T[key_n])  # strided source


def test_mask_indexing(device):
    a = arr(3, 4) - 5
    x = clgrad.tensor(a, device=device)
    assert_close(x[x > 0], a[a > 0])
    assert_close(x[clgrad.tensor([True, False, True], device=device)], a[[True, False, True]])
    assert_close(
        x[:, clgrad.tensor([True, False, True, False], device=device)],
        a[:, [True, False, True, False]],
    )
    assert_close(x.masked_select(x < 0), a[a < 0])
    with pytest.raises(IndexError, match="shape of the mask"):
        x[clgrad.tensor([True, False], device=device)]


def test_empty_views_past_their_storage(device):
    """A view of no element may start at or past its storage's end (a column of an empty
    matrix, the indices of a mask that selects nothing from a slice): ops on it give empty
    results, as torch's (the cpu device's NumPy view of it raised ValueError)."""
    column = clgrad.zeros(0, 2, dtype=clgrad.int64, device=device)[:, 1]
    assert column.storage_offset() == 1
    for got in (column + column, column * 3, column.clone(), column.float(), column.cpu()):
        assert got.shape == (0,)
    assert column.sum().item() == 0
    x = clgrad.tensor([[-0.6, -0.8, -1.0, -0.5, 0.4]], device=device)[:, 1:4]
    assert x[x > 0.5].shape == (0,) and x.masked_select(x > 0.5).shape == (0,)
    assert_close(x[x < -0.7], np.array([-0.8, -1.0], np.float32))


def test_index_out_of_range(device):
    x = clgrad.ones(3, 4, device=device)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[clgrad.tensor([0, 3], device=device)]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, clgrad.tensor([-5], device=device)]
    with pytest.raises(RuntimeError, match="out of bounds"):  # PyTorch's class for gather
        x.gather(1, clgrad.tensor([[4]], device=device))
    with pytest.raises(IndexError):
        x.index_select(0, clgrad.tensor([7], device=device))
    with pytest.raises(IndexError):
        x[clgrad.tensor([9], device=device)] = 1.0
    assert x.sum().item() == 12  # nothing was written


def test_setitem(device):
    a = arr(3, 4)
    x = clgrad.tensor(a, device=device)
    b = a.copy()
    x[0] = 7.0
    b[0] = 7
    x[1:, ::2] = clgrad.tensor([[-1.0], [-2.0]], device=device)
    b[1:, ::2] = [[-1], [-2]]
    x[x > 8] = 0.0
    b[b > 8] = 0
    x[clgrad.tensor([2, 0], device=device), clgrad.tensor([1, 3], device=device)] = clgrad.tensor(
        [5.0, 6.0], device=device
    )
    b[[2, 0], [1, 3]] = [5, 6]
    x[..., 1] = clgrad.arange(3, dtype=clgrad.float32, device=device)
    b[..., 1] = np.arange(3)
    assert_close(x, b)
    with pytest.raises(RuntimeError):
        x[0] = clgrad.ones(5, device=device)


def test_gather_scatter_add_index_select(device):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4)).astype(np.float32)
    idx = rng.integers(0, 4, size=(3, 6))
    x = clgrad.tensor(a, device=device)
    i = clgrad.tensor(idx, device=device)
    assert_close(x.gather(1, i), np.take_along_axis(a, idx, 1))
    i0 = clgrad.tensor(rng.integers(0, 3, size=(2, 4)), device=device)
    assert_close(x.gather(0, i0), np.take_along_axis(a, i0.cpu().numpy(), 0))
    src = clgrad.ones(3, 6, device=device)
    ref = np.zeros((3, 4), np.float32)
    for r in range(3):
        for c in range(6):
            ref[r, idx[r, c]] += 1
    assert_close(clgrad.zeros(3, 4, device=device).scatter_add(1, i, src), ref)
    assert_close(x.index_select(1, clgrad.tensor([3, 0, 3], device=device)), a[:, [3, 0, 3]])
    assert_close(x.T.index_select(0, clgrad.tensor([1], device=device)), a.T[[1]])


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int32", "int64", "uint8", "int8", "int16"]
)
def test_scatter_add_dtypes_repeated(device, dtype):
    if not clgrad.device(device).supports(getattr(clgrad, dtype)):
        pytest.skip("dtype unsupported")
    dt = getattr(clgrad, dtype)
    idx = clgrad.tensor([0, 1, 0, 0, 3, 1], device=device)
    out = clgrad.zeros(5, dtype=dt, device=device).scatter_add(
        0, idx, clgrad.ones(6, dtype=dt, device=device)
    )
    assert out.tolist() == [3, 2, 0, 1, 0]


def test_masked_fill(device):
    a = arr(2, 3)
    x = clgrad.tensor(a, device=device)
    m = clgrad.tensor([[True, False, True]], device=device)
    assert_close(x.masked_fill(m, -1.0), np.where([[True, False, True]], -1, a))
    assert_close(x.masked_fill(m, clgrad.tensor(2.0)), np.where([[True, False, True]], 2, a))
    with pytest.raises(RuntimeError, match="boolean"):
        x.masked_fill(clgrad.ones(2, 3, device=device), 0.0)


def test_nonzero_where_single(device):
    a = np.array([[0, 1], [2, 0]])
    x = clgrad.tensor(a, device=device)
    assert x.nonzero().tolist() == np.argwhere(a).tolist()
    rows, cols = clgrad.where(x != 0)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]


def test_inplace_ops(device):
    a = arr(2, 3)
    x = clgrad.tensor(a, device=device)
    v = x._version
    x.add_(1).mul_(2).sub_(clgrad.ones(3, device=device)).div_(2)
    assert_close(x, ((a + 1) * 2 - 1) / 2)
    assert x._version > v
    x.clamp_(0, 3)
    assert_close(x, np.clip(((a + 1) * 2 - 1) / 2, 0, 3))
    x.zero_()
    assert x.sum().item() == 0
    x.fill_(2.5)
    x += 1
    x *= 2
    assert_close(x, np.full((2, 3), 7.0, np.float32))
    x.copy_(clgrad.tensor([1.0, 2.0, 3.0], device=device))
    assert_close(x, np.tile([1.0, 2.0, 3.0], (2, 1)).astype(np.float32))
    x.T.copy_(clgrad.tensor(a, device=device).T)  # writing through a view
    assert_close(x, a)
    with pytest.raises(RuntimeError, match="can't be cast"):
        clgrad.ones(2, dtype=clgrad.int64, device=device).add_(1.5)
    with pytest.raises(RuntimeError, match="single memory location"):
        clgrad.zeros(1, device=device).expand(3).add_(1)


# (name, write): an in-place write whose other tensor argument lies over x's memory
OVERLAPPING_WRITES = [
    ("index_add_", lambda L, x: x.index_add_(0, L.tensor([0, 1], device=x.device), x)),
    ("index_copy_", lambda L, x: x.index_copy_(0, L.tensor([1], device=x.device), x[:1])),
    ("scatter_", lambda L, x: x.scatter_(0, L.tensor([[1, 0, 1], [0, 1, 0]], device=x.device), x)),
    (
        "scatter_add_",
        lambda L, x: x.scatter_add_(0, L.tensor([[1, 0, 1], [0, 1, 0]], device=x.device), x),
    ),
    ("index_put_", lambda L, x: x.index_put_((L.tensor([1, 0], device=x.device),), x)),
    ("setitem", lambda L, x: x.__setitem__(L.tensor([1], device=x.device), x[0])),
    ("put_", lambda L, x: x.put_(L.tensor([0, 1], device=x.device), x.view(-1)[:2])),
    ("addcmul_", lambda L, x: x.addcmul_(x[0], x[1])),
    ("addcdiv_", lambda L, x: x.addcdiv_(x[0], x[1] + 1)),
]
# the same writes where PyTorch allows them: another part of x's storage, or (elementwise
# ops) the same elements in the same layout
DISJOINT_WRITES = [
    ("index_add_", lambda L, x: x[0].index_add_(0, L.tensor([2, 0], device=x.device), x[1, :2])),
    ("scatter_", lambda L, x: x[0].scatter_(0, L.tensor([1, 0], device=x.device), x[1])),
    ("put_", lambda L, x: x[0].put_(L.tensor([0, 1], device=x.device), x[1, 1:])),
    ("addcmul_", lambda L, x: x.addcmul_(x, x)),
    ("setitem", lambda L, x: x[0].__setitem__(L.tensor([2, 0], device=x.device), x[1, :2])),
]


@pytest.mark.parametrize("name,write", OVERLAPPING_WRITES, ids=[n for n, _ in OVERLAPPING_WRITES])
def test_written_tensor_as_its_own_source(device, name, write):
    """PyTorch's RuntimeError (assert_no_overlap, or assert_no_partial_overlap for the
    elementwise ones), x unchanged."""
    import torch

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        write(torch, torch.tensor(a))
    x = clgrad.tensor(a, device=device)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        write(clgrad, x)
    assert_close(x, a)


@pytest.mark.parametrize("name,write", DISJOINT_WRITES, ids=[n for n, _ in DISJOINT_WRITES])
def test_written_tensor_beside_its_source(device, name, write):
    import torch

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t, x = torch.tensor(a), clgrad.tensor(a, device=device)
    write(torch, t)
    write(clgrad, x)
    assert_close(x, t.numpy())


def test_inplace_with_overlap(device):
    """An operand over the written elements in another layout: PyTorch's RuntimeError (its
    assert_no_partial_overlap), x unchanged; the clone it asks for gives a + a.T."""
    a = arr(3, 3)
    x = clgrad.tensor(a, device=device)
    for write in (lambda: x.add_(x.T), lambda: x.copy_(x.T), lambda: clgrad.add(x, x.T, out=x)):
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            write()
        assert_close(x, a)
    x.add_(x.T.clone())
    assert_close(x, a + a.T)


def test_inplace_overlap_checked_on_every_call(device):
    """An in-place op keeps its launch per layout; an operand of that same layout that is a
    part of the written storage still gets PyTorch's RuntimeError (and writes nothing), and a
    clear one after it runs as before."""
    import torch

    a = arr(6)
    x, other = clgrad.tensor(a, device=device), clgrad.tensor(a, device=device)
    tx, tother = torch.tensor(a), torch.tensor(a)
    for _ in range(2):  # the second call finds the kept launch
        x[1:].add_(other[:5])
        tx[1:].add_(tother[:5])
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x[1:].add_(x[:5])
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        tx[1:].add_(tx[:5])
    x[1:].add_(other[:5])
    tx[1:].add_(tother[:5])
    assert_close(x, tx.numpy())


ZERO_D = {
    "flip((0,))": lambda m, x: x.flip((0,)),
    "flip(-1)": lambda m, x: x.flip(-1),
    "movedim(0, 0)": lambda m, x: x.movedim(0, 0),
    "movedim(-1, 0)": lambda m, x: m.movedim(x, -1, 0),
    "roll(1)": lambda m, x: x.roll(1),
    "roll(1, 0)": lambda m, x: x.roll(1, 0),
    "renorm": lambda m, x: x.renorm(2, 0, 1.0),
    "renorm 1-d": lambda m, x: x.reshape(1).renorm(2, 0, 1.0),
}


@pytest.mark.parametrize("name", ZERO_D)
def test_zero_d_dims(device, name):
    """A 0-d tensor takes dim 0 and -1 where torch's dim-wise ops take them (flip and movedim
    reverse or move nothing; flip raised IndexError), and refuses them where torch does (roll
    along a dim, renorm below 2 dims): its value, gradient and exception class."""
    got = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        x = m.tensor(0.5, device=dev, requires_grad=True)
        try:
            y = ZERO_D[name](m, x)
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            got.append(type(e))
            continue
        y.sum().backward()
        got.append((tuple(y.shape), y.item(), x.grad.item()))
    assert got[0] == got[1]


def test_bool_accumulation_saturates(device):
    """Adding bools into a bool tensor by index (scatter_add, index_add, index_put with
    accumulate) ORs them, as PyTorch's bool sum: the OpenCL kernel added them as bytes and
    stored a 2 that read as True but summed and compared as 2."""
    for op in (
        lambda m, z, i, v: z.scatter_add(0, i, v),
        lambda m, z, i, v: z.index_add(0, i, v),
        lambda m, z, i, v: z.index_put((i,), v, accumulate=True),
    ):
        got = []
        for m, dev in ((torch, "cpu"), (clgrad, device)):
            z = m.zeros(3, dtype=m.bool, device=dev)
            i = m.tensor([0, 0, 1, 0], device=dev)
            s = op(m, z, i, m.ones(4, dtype=m.bool, device=dev))
            got.append((s.tolist(), s.float().tolist(), (s == True).tolist(), s.sum().item()))  # noqa: E712
        assert got[1] == got[0]


def test_setitem_value_with_extra_leading_dims_differentiates(device):
    """A value with leading size-1 dims past the slice it is assigned to (PyTorch drops them)
    gets its gradient in its own shape (the backward's sum_to raised "dim appears multiple
    times")."""
    grads = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        v = m.tensor([[[1.0], [2.0]]], device=dev, requires_grad=True)
        w = m.tensor([[[[5.0]]]], device=dev, requires_grad=True)
        y, z = m.zeros(2, 2, device=dev), m.zeros(3, device=dev)
        y[:, :] = v
        z[1:] = w
        weights = m.tensor([[1.0, 2.0], [3.0, 4.0]], device=dev)
        ((y * weights).sum() + (z * m.tensor([1.0, 2.0, 3.0], device=dev)).sum()).backward()
        grads.append((v.grad.cpu().numpy(), w.grad.cpu().numpy()))
    for ours, theirs in zip(grads[1], grads[0]):
        assert_close(ours, theirs)


def test_zero_d_integer_tensor_indexes_as_an_int(device):
    """A 0-d integer tensor as an index is the int it holds, as PyTorch's: x[t] is a view
    (writing into it writes x), in a tuple key too; a 0-d bool tensor stays a mask."""
    got = []
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        x = m.tensor([0.0, 1.0, 2.0, 3.0], device=dev)
        x[m.tensor(1, device=dev)].fill_(100)
        grid = m.arange(12.0, device=dev).reshape(3, 4)
        grid[m.tensor(2, device=dev), 1:].zero_()
        column = grid[:, m.tensor(-1, dtype=m.int32, device=dev)]
        grid[m.tensor(0, device=dev)] = 7
        a = m.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
        (a[m.tensor(1, device=dev)] * 2).backward()
        with pytest.raises(IndexError):
            x[m.tensor(9, device=dev)]
        got.append(
            (
                x.tolist(),
                grid.tolist(),
                column.tolist(),
                a.grad.tolist(),
                tuple(x[m.tensor(True, device=dev)].shape),
            )
        )
    assert got[1] == got[0]


def test_index_changed_before_backward_raises(device):
    """The index tensors of x[:, i] are saved for backward, as PyTorch's: changing i in place
    before backward raises there (the gradient went to the new positions, silently)."""
    for m, dev in ((torch, "cpu"), (clgrad, device)):
        x = m.tensor([[1.0, 2.0, 3.0]], device=dev, requires_grad=True)
        i = m.tensor([0, 1], device=dev)
        y = x[:, i]
        with m.no_grad():
            i.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (y * m.tensor([[10.0, 20.0]], device=dev)).sum().backward()
