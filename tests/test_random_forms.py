"""PyTorch's creation and random-number call forms, against torch: the shapes, dtypes, devices
and errors each form gives, generators (``generator=``, states), and the distributions' moments
(the numbers themselves differ from PyTorch's by design)."""

import numpy as np
import pytest

import clgrad

torch = pytest.importorskip("torch")

FORMS = {
    "randint(high, size)": lambda m, d: m.randint(10, (3,), device=d),
    "randint(high=, size=)": lambda m, d: m.randint(high=10, size=(3, 2), device=d),
    "randint(low, high, size, dtype)": lambda m, d: m.randint(-3, 4, (5,), dtype=m.int32, device=d),
    "randint(high, size=)": lambda m, d: m.randint(4, size=(2,), device=d),
    "randint float requires_grad": lambda m, d: m.randint(
        0, 3, (2,), dtype=m.float32, requires_grad=True, device=d
    ),
    "randint_like(x, high)": lambda m, d: m.randint_like(m.zeros(2, 3, device=d), 5),
    "randint_like(x, low, high)": lambda m, d: m.randint_like(m.zeros(4, device=d), 2, 5),
    "rand_like requires_grad": lambda m, d: m.rand_like(m.zeros(2, device=d), requires_grad=True),
    "randn_like dtype": lambda m, d: m.randn_like(m.zeros(2, device=d), dtype=m.float64),
    "normal(tensor, tensor)": lambda m, d: m.normal(
        m.zeros(3, 1, device=d), m.ones(1, 2, device=d)
    ),
    "normal(tensor, float)": lambda m, d: m.normal(m.zeros(4, device=d, dtype=m.float64), 2.0),
    "normal(float, tensor)": lambda m, d: m.normal(1.0, m.ones(2, 2, device=d)),
    "normal(float, float, size)": lambda m, d: m.normal(0.0, 1.0, (2, 5), device=d),
    "bernoulli(p)": lambda m, d: m.bernoulli(m.full((6,), 0.5, device=d)),
    "bernoulli method": lambda m, d: m.full((3,), 0.5, device=d).bernoulli(),
    "multinomial 1-d": lambda m, d: m.multinomial(m.tensor([0.1, 0.5, 0.4], device=d), 2),
    "multinomial 2-d replacement": lambda m, d: m.tensor(
        [[1.0, 2.0], [3.0, 0.0]], device=d
    ).multinomial(5, replacement=True),
    "poisson": lambda m, d: m.poisson(m.full((2, 3), 3.0, device=d)),
    "logspace": lambda m, d: m.logspace(-1, 2, 4, device=d),
    "logspace base": lambda m, d: m.logspace(0, 3, 4, base=2.0, dtype=m.float64, device=d),
    "linspace": lambda m, d: m.linspace(-1, 1, 5, device=d),
    "eye": lambda m, d: m.eye(2, 3, dtype=m.int64, device=d),
    "full_like": lambda m, d: m.full_like(m.zeros(2, device=d), 7),
    "empty_like": lambda m, d: m.empty_like(m.zeros(2, 2, dtype=m.int32, device=d)),
    "new_tensor": lambda m, d: m.zeros(1, dtype=m.float64, device=d).new_tensor([1, 2]),
    "new_zeros": lambda m, d: m.zeros(1, dtype=m.int32, device=d).new_zeros(2, 3),
    "new_ones": lambda m, d: m.zeros(1, device=d).new_ones((2,)),
    "new_full": lambda m, d: m.zeros(1, dtype=m.int64, device=d).new_full((2,), 4),
    "new_empty": lambda m, d: m.zeros(1, device=d).new_empty(3),
    "new_zeros dtype": lambda m, d: m.zeros(1, device=d).new_zeros(2, dtype=m.int64),
    "random_": lambda m, d: m.zeros(4, device=d).random_(2, 6),
    "bernoulli_": lambda m, d: m.zeros(4, device=d).bernoulli_(0.3),
    "exponential_": lambda m, d: m.zeros(4, device=d).exponential_(),
    "uniform_ generator": lambda m, d: m.zeros(3, device=d).uniform_(
        -1, 1, generator=m.Generator().manual_seed(1)
    ),
}

DETERMINISTIC = {"logspace", "logspace base", "linspace", "eye", "full_like", "new_tensor"}
DETERMINISTIC |= {"new_zeros", "new_ones", "new_full", "new_zeros dtype"}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_form_matches_torch(device, form):
    want = FORMS[form](torch, "cpu")
    if want.dtype == torch.float64 and not clgrad.device(device).supports(clgrad.float64):
        pytest.skip(f"{device} has no float64")
    got = FORMS[form](clgrad, device)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    assert got.requires_grad == want.requires_grad
    assert str(got.device) == device
    if form in DETERMINISTIC:
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-6)


ERRORS = {
    "randint int requires_grad": lambda m: m.randint(0, 3, (2,), requires_grad=True),
    "randint empty range": lambda m: m.randint(3, 3, (2,)),
    "multinomial too many": lambda m: m.multinomial(m.tensor([0.5, 0.5]), 3),
    "multinomial negative": lambda m: m.multinomial(m.tensor([-0.5, 0.5]), 1),
    "multinomial zero sum": lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1, True),
    "multinomial 3-d": lambda m: m.multinomial(m.ones(1, 1, 2), 1),
    "bernoulli p > 1": lambda m: m.bernoulli(m.tensor([1.5])),
    "normal negative std": lambda m: m.normal(0.0, -1.0, (2,)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    with pytest.raises(Exception) as want:
        ERRORS[case](torch)
    with pytest.raises(type(want.value)):
        ERRORS[case](clgrad)


def test_generators_reproduce(device):
    def draw(g):
        return [
            clgrad.rand(3, device=device, generator=g),
            clgrad.randn(2, device=device, generator=g),
            clgrad.randint(0, 100, (4,), device=device, generator=g),
            clgrad.randperm(6, device=device, generator=g),
            clgrad.zeros(3, device=device).normal_(generator=g),
            clgrad.zeros(3, device=device).uniform_(generator=g),
            clgrad.multinomial(clgrad.ones(5, device=device), 3, generator=g),
            clgrad.bernoulli(clgrad.full((5,), 0.5, device=device), generator=g),
            clgrad.normal(clgrad.zeros(2, device=device), 1.0, generator=g),
        ]

    first = draw(clgrad.Generator().manual_seed(5))
    again = draw(clgrad.Generator().manual_seed(5))
    for a, b in zip(first, again):
        assert a.equal(b)
    # a generator's stream is its own: the global one does not move
    state = clgrad.get_rng_state()
    draw(clgrad.Generator().manual_seed(5))
    assert clgrad.get_rng_state().equal(state)
    g = clgrad.Generator().manual_seed(9)
    saved = g.get_state()
    a = clgrad.rand(4, device=device, generator=g)
    assert clgrad.rand(4, device=device, generator=g.set_state(saved)).equal(a)
    clgrad.set_rng_state(state)
    b = clgrad.randn(3, device=device)
    clgrad.set_rng_state(state)
    assert clgrad.randn(3, device=device).equal(b)


def test_dataloader_shuffles_with_a_generator():
    ds = clgrad.utils.data.TensorDataset(clgrad.arange(20))

    def order(seed):
        g = clgrad.Generator().manual_seed(seed)
        loader = clgrad.utils.data.DataLoader(ds, batch_size=5, shuffle=True, generator=g)
        return [int(v) for (b,) in loader for v in b]

    assert order(1) == order(1) and sorted(order(1)) == list(range(20)) and order(1) != order(2)


def test_distributions(device):
    g = clgrad.Generator().manual_seed(0)
    probs = clgrad.tensor([0.1, 0.2, 0.7], device=device)
    draws = clgrad.multinomial(probs, 20000, replacement=True, generator=g).cpu().numpy()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 20000, [0.1, 0.2, 0.7], atol=0.02)
    # without replacement the first draw still follows the weights
    rows = clgrad.multinomial(probs.expand(6000, 3).contiguous(), 2, generator=g).cpu().numpy()
    assert (rows[:, 0] != rows[:, 1]).all()
    np.testing.assert_allclose(
        np.bincount(rows[:, 0], minlength=3) / 6000, [0.1, 0.2, 0.7], atol=0.03
    )
    b = clgrad.bernoulli(clgrad.full((20000,), 0.3, device=device), generator=g)
    assert abs(b.mean().item() - 0.3) < 0.02
    z = clgrad.normal(clgrad.full((20000,), 2.0, device=device), 0.5, generator=g)
    assert abs(z.mean().item() - 2.0) < 0.02 and abs(z.std().item() - 0.5) < 0.02
    p = clgrad.poisson(clgrad.full((20000,), 3.0, device=device), generator=g)
    assert abs(p.mean().item() - 3.0) < 0.06 and abs(p.var().item() - 3.0) < 0.15
    e = clgrad.empty(20000, device=device).exponential_(2.0, generator=g)
    assert abs(e.mean().item() - 0.5) < 0.02
