"""torch.signal.windows, torch.quasirandom.SobolEngine, torch.hub and torch.utils.model_zoo's
clgrad counterparts, against torch: windows on every test device, unscrambled Sobol' draws
equal, hub on file:// URLs and local directories under a temporary TORCH_HOME."""

import numpy as np
import pytest
import torch
from conftest import supports

import clgrad
import clgrad.signal.windows as W

WINDOWS = [
    ("bartlett", {}),
    ("blackman", {}),
    ("cosine", {}),
    ("exponential", {}),
    ("exponential", {"tau": 0.5}),
    ("gaussian", {}),
    ("gaussian", {"std": 2.5}),
    ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_hamming", {}),
    ("general_hamming", {"alpha": 0.6}),
    ("hamming", {}),
    ("hann", {}),
    ("kaiser", {}),
    ("kaiser", {"beta": 3.5}),
    ("nuttall", {}),
]


@pytest.mark.parametrize("name, kw", WINDOWS, ids=[f"{n}-{k}" for n, k in WINDOWS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(device, name, kw, dtype):
    if not supports(device, getattr(clgrad, dtype)):
        pytest.skip(f"{device} has no {dtype}")
    tol = 1e-5 if dtype == "float32" else 1e-12
    for M in (0, 1, 2, 5, 10, 17):
        for sym in (True, False):
            got = getattr(W, name)(M, sym=sym, dtype=getattr(clgrad, dtype), device=device, **kw)
            want = getattr(torch.signal.windows, name)(
                M, sym=sym, dtype=getattr(torch, dtype), **kw
            )
            assert got.dtype == getattr(clgrad, dtype) and got.device == clgrad.device(device)
            assert tuple(got.shape) == tuple(want.shape)
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


def test_windows_defaults_and_grad(device):
    w = W.hann(6, device=device)
    assert w.dtype == clgrad.get_default_dtype()
    np.testing.assert_allclose(w.cpu().numpy(), torch.signal.windows.hann(6).numpy(), atol=1e-6)
    exp = W.exponential(6, sym=False, center=1.0, device=device)
    want = torch.signal.windows.exponential(6, sym=False, center=1.0)
    np.testing.assert_allclose(exp.cpu().numpy(), want.numpy(), atol=1e-6)
    g = W.gaussian(5, requires_grad=True, device=device)
    tg = torch.signal.windows.gaussian(5, requires_grad=True)
    assert g.requires_grad and tg.requires_grad
    assert (g.grad_fn is None) == (tg.grad_fn is None)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.hann(-1),
        lambda m: m.hann(4, dtype=m.__dtypes__.int64),
        lambda m: m.hann(4, dtype=m.__dtypes__.float16),
        lambda m: m.exponential(4, tau=0.0),
        lambda m: m.exponential(4, center=1.0),
        lambda m: m.gaussian(4, std=-1.0),
        lambda m: m.kaiser(4, beta=-1.0),
        lambda m: m.general_cosine(4, a=[]),
        lambda m: m.general_cosine(4, a=3),
    ],
)
def test_window_errors_as_torch(call):
    class Mod:
        def __init__(self, mod, dtypes):
            self.mod, self.__dtypes__ = mod, dtypes

        def __getattr__(self, name):
            return getattr(self.mod, name)

    with pytest.raises(Exception) as want:
        call(Mod(torch.signal.windows, torch))
    with pytest.raises(want.type) as got:
        call(Mod(W, clgrad))
    assert str(got.value).replace("clgrad.", "torch.") == str(want.value)


def test_window_layout_error():
    with pytest.raises(ValueError, match="strided tensors only"):
        W.hann(4, layout=object())


# ---- torch.quasirandom.SobolEngine ----

from clgrad.quasirandom import SobolEngine  # noqa: E402


def test_sobol_state_equals_torch_all_dimensions():
    got = SobolEngine(SobolEngine.MAXDIM).sobolstate
    want = torch.quasirandom.SobolEngine(21201).sobolstate
    assert got.dtype == clgrad.int64 and tuple(got.shape) == (21201, 30)
    assert np.array_equal(got.numpy(), want.numpy())
    assert (SobolEngine.MAXBIT, SobolEngine.MAXDIM) == (30, 21201)


@pytest.mark.parametrize("dim", [1, 2, 7, 64, 1000, 21201])
def test_sobol_draws_equal_torch(dim):
    ours, theirs = SobolEngine(dim), torch.quasirandom.SobolEngine(dim)
    steps = [("draw", 1), ("draw", 6), ("ff", 5), ("draw", 33), ("ff", 1), ("draw", 1)]
    if dim < 1000:
        steps += [("draw", 700), ("ff", 3000), ("draw", 50)]
    for kind, n in steps:
        if kind == "ff":
            assert ours.fast_forward(n) is ours
            theirs.fast_forward(n)
            continue
        for dt in ("float32", "float64"):
            a = ours.draw(n, dtype=getattr(clgrad, dt) if dt == "float64" else None)
            b = theirs.draw(n, dtype=getattr(torch, dt) if dt == "float64" else None)
            assert a.dtype == getattr(clgrad, dt) and tuple(a.shape) == (n, dim)
            assert np.array_equal(a.numpy(), b.numpy())
        assert ours.num_generated == theirs.num_generated
        assert np.array_equal(ours.quasi.numpy(), theirs.quasi.numpy())


def test_sobol_base2_reset_out_repr():
    ours, theirs = SobolEngine(5), torch.quasirandom.SobolEngine(5)
    assert np.array_equal(ours.draw_base2(3).numpy(), theirs.draw_base2(3).numpy())
    assert np.array_equal(ours.draw_base2(3).numpy(), theirs.draw_base2(3).numpy())
    with pytest.raises(ValueError, match="power of 2"):
        ours.draw_base2(2)
    ours.reset()
    theirs.reset()
    assert ours.num_generated == 0 and np.array_equal(ours.quasi.numpy(), np.zeros(5))
    out = clgrad.empty(1)
    assert ours.draw(4, out=out) is out
    assert np.array_equal(out.numpy(), theirs.draw(4).numpy())
    assert repr(SobolEngine(3, scramble=True, seed=1)) == repr(
        torch.quasirandom.SobolEngine(3, scramble=True, seed=1)
    )
    for bad in (0, 21202):
        with pytest.raises(ValueError) as want:
            torch.quasirandom.SobolEngine(bad)
        with pytest.raises(ValueError) as got:
            SobolEngine(bad)
        assert str(got.value) == str(want.value)


def test_sobol_scramble_matrix_as_atens():
    # the same random bits given to both: clgrad's scramble of the direction numbers is ATen's
    from clgrad.quasirandom import _scramble_state

    state = torch.quasirandom.SobolEngine(9).sobolstate
    ltm = torch.randint(2, (9, 30, 30), generator=torch.Generator().manual_seed(0)).tril()
    want = state.clone()
    torch._sobol_engine_scramble_(want, ltm, 9)
    assert np.array_equal(_scramble_state(state.numpy(), ltm.numpy(), 30), want.numpy())


def test_sobol_scrambled_statistics():
    e = SobolEngine(6, scramble=True, seed=123)
    x = e.draw_base2(12).numpy().astype(np.float64)
    assert x.shape == (4096, 6) and (x >= 0).all() and (x < 1).all()
    # a scrambled Sobol' net: in 30-bit integers (the engine's states), every dimension has
    # exactly one point in each of 4096 bins and each pair is balanced on a 16 x 16 grid; the
    # float32 points (rounded to 24 bits, as torch's are) may move one across a bin's edge
    from clgrad.quasirandom import _walk

    shift, state = e.shift.numpy(), e.sobolstate.numpy()
    q = np.concatenate([shift[None], _walk(shift, state, 4095, 0)])
    assert np.array_equal(q[-1], e.quasi.numpy())
    np.testing.assert_array_equal(q.astype(np.float32) / np.float32(2**30), x.astype(np.float32))
    for d in range(6):
        assert (np.bincount(q[:, d] >> 18, minlength=4096) == 1).all()
        assert (np.bincount((x[:, d] * 4096).astype(int), minlength=4096) != 1).sum() <= 4
    for d in range(5):
        grid = np.zeros((16, 16), dtype=int)
        np.add.at(grid, (q[:, d] >> 26, q[:, d + 1] >> 26), 1)
        assert (grid == 16).all()
    assert np.abs(x.mean(0) - 0.5).max() < 1e-3
    # the same seed gives the same points, another seed others; the first point is not 0
    again = SobolEngine(6, scramble=True, seed=123).draw_base2(12).numpy()
    assert np.array_equal(again, x.astype(np.float32))
    other = SobolEngine(6, scramble=True, seed=124).draw(8).numpy()
    assert not np.array_equal(other, x[:8].astype(np.float32)) and (x[0] > 0).all()
    assert SobolEngine(2, scramble=True).draw(3).shape == (3, 2)


# ---- torch.hub ----

import hashlib  # noqa: E402
import os  # noqa: E402
import zipfile  # noqa: E402
from urllib.error import URLError  # noqa: E402

import clgrad.hub  # noqa: E402


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A temporary TORCH_HOME (and HOME, so nothing reaches the real one); no set_dir."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    monkeypatch.delenv("TORCH_HUB", raising=False)
    monkeypatch.delenv("TORCH_MODEL_ZOO", raising=False)
    monkeypatch.setattr(clgrad.hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)

    def offline(*args, **kwargs):
        raise URLError("network unreachable (test)")

    # file:// only: anything else would be the network
    real = clgrad.hub.urlopen
    monkeypatch.setattr(
        clgrad.hub,
        "urlopen",
        lambda req, *a, **k: (
            real(req, *a, **k)
            if (req.full_url if hasattr(req, "full_url") else req).startswith("file:")
            else offline()
        ),
    )
    return tmp_path


def test_hub_dirs_as_torch(home, monkeypatch):
    assert clgrad.hub.get_dir() == torch.hub.get_dir() == str(home / "torch_home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "xdg"))
    assert clgrad.hub.get_dir() == torch.hub.get_dir() == str(home / "xdg" / "torch" / "hub")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert clgrad.hub.get_dir() == torch.hub.get_dir() == str(home / "home/.cache/torch/hub")
    clgrad.hub.set_dir("~/elsewhere")
    torch.hub.set_dir("~/elsewhere")
    assert clgrad.hub.get_dir() == torch.hub.get_dir() == str(home / "home" / "elsewhere")
    monkeypatch.setenv("TORCH_HUB", "x")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        clgrad.hub.get_dir()


def test_download_url_to_file(home, capsys):
    src = home / "blob.bin"
    data = os.urandom(300_000)
    src.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    dst = home / "out.bin"
    clgrad.hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:10])
    assert dst.read_bytes() == data
    assert capsys.readouterr().err  # the progress bar, on stderr
    bad = home / "bad.bin"
    with pytest.raises(RuntimeError) as got:
        clgrad.hub.download_url_to_file(src.as_uri(), str(bad), "0000", progress=False)
    with pytest.raises(RuntimeError) as want:
        torch.hub.download_url_to_file(src.as_uri(), str(home / "bad2.bin"), "0000", False)
    assert str(got.value) == str(want.value)
    assert not bad.exists() and not [p for p in os.listdir(home) if p.endswith(".partial")]


def test_load_state_dict_from_url(home, capsys):
    sd = {"weight": clgrad.arange(6.0).reshape(2, 3), "bias": clgrad.ones(3)}
    src = home / "src" / "net.pt"
    src.parent.mkdir()
    clgrad.save(sd, str(src))
    got = clgrad.hub.load_state_dict_from_url(src.as_uri(), progress=False)
    cached = home / "torch_home" / "hub" / "checkpoints" / "net.pt"
    assert cached.exists()
    assert f'Downloading: "{src.as_uri()}" to {cached}' in capsys.readouterr().out
    assert list(got) == ["weight", "bias"] and got["weight"].equal(sd["weight"])
    # cached: read again without the source
    src.unlink()
    again = clgrad.hub.load_state_dict_from_url(src.as_uri(), weights_only=True, progress=False)
    assert again["bias"].equal(sd["bias"]) and capsys.readouterr().out == ""
    # model_dir, file_name, map_location, check_hash
    named = home / "src" / "net2.pt"
    clgrad.save(sd, str(named))
    digest = hashlib.sha256(named.read_bytes()).hexdigest()
    hashed = home / "src" / f"net-{digest[:8]}.pt"
    named.rename(hashed)
    out = clgrad.hub.load_state_dict_from_url(
        hashed.as_uri(),
        model_dir=str(home / "md"),
        map_location="cpu",
        check_hash=True,
        file_name="renamed.pt",
        progress=False,
    )
    assert (home / "md" / "renamed.pt").exists() and out["weight"].device == clgrad.device("cpu")
    wrong = home / "src" / "net-deadbeef.pt"
    hashed.rename(wrong)
    with pytest.raises(RuntimeError, match="invalid hash value"):
        clgrad.hub.load_state_dict_from_url(wrong.as_uri(), check_hash=True, progress=False)
    # torch's legacy hub format: the saved file zipped alone
    legacy = home / "src" / "legacy.zip"
    clgrad.save(sd, str(home / "inner.pt"))
    with zipfile.ZipFile(legacy, "w") as z:
        z.write(home / "inner.pt", "inner.pt")
    with pytest.warns(FutureWarning, match="old format"):
        old = clgrad.hub.load_state_dict_from_url(legacy.as_uri(), progress=False)
    assert old["weight"].equal(sd["weight"])
    # a scalar's clgrad archive is one member too, and is not the legacy format
    clgrad.save(3, str(home / "src" / "three.pt"))
    assert clgrad.hub.load_state_dict_from_url((home / "src" / "three.pt").as_uri()) == 3


HUBCONF = '''
dependencies = ["numpy"]
import clgrad
from helper import SCALE  # the repo's own modules import, as torch's hub allows


def linear(n_in, n_out, bias=True):
    """A clgrad Linear layer."""
    m = clgrad.nn.Linear(n_in, n_out, bias=bias)
    return m


def scaled(x):
    return x * SCALE


def _private():
    pass


CONSTANT = 3
'''


def _repo(path, deps=None):
    path.mkdir(parents=True)
    text = HUBCONF if deps is None else HUBCONF.replace('["numpy"]', repr(deps))
    (path / "hubconf.py").write_text(text)
    (path / "helper.py").write_text("SCALE = 10\n")
    return str(path)


def test_hub_local(home):
    d = _repo(home / "repo")
    assert clgrad.hub.list(d, source="local") == ["linear", "scaled"]
    assert clgrad.hub.help(d, "linear", source="local") == "A clgrad Linear layer."
    m = clgrad.hub.load(d, "linear", 3, 2, source="local", bias=False)
    assert isinstance(m, clgrad.nn.Linear) and m.bias is None and m.weight.shape == (2, 3)
    assert clgrad.hub.load(d, "scaled", 2, source="LOCAL") == 20
    with pytest.raises(RuntimeError, match="Cannot find callable CONSTANT in hubconf"):
        clgrad.hub.load(d, "CONSTANT", source="local")
    with pytest.raises(RuntimeError) as want:
        torch.hub.load(d, "nope", source="local")
    with pytest.raises(RuntimeError) as got:
        clgrad.hub.load(d, "nope", source="local")
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError) as want:
        torch.hub.load(d, "linear", source="s3")
    with pytest.raises(ValueError) as got:
        clgrad.hub.load(d, "linear", source="s3")
    assert str(got.value) == str(want.value)
    missing = _repo(home / "repo2", deps=["numpy", "no_such_module_xyz"])
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_module_xyz"):
        clgrad.hub.load(missing, "linear", 1, 1, source="local")


def test_hub_github_offline(home, capsys):
    with pytest.raises(RuntimeError, match="no internet connection"):
        clgrad.hub.load("someone/model_repo", "linear", 1, 1)
    with pytest.raises(RuntimeError, match="Could not reach GitHub.*someone/model_repo:v1"):
        clgrad.hub.list("someone/model_repo:v1", trust_repo=True)
    # a repository in the hub's cache loads without the network (the default branch found
    # there), trusted as one the hub downloaded before
    _repo(home / "torch_home" / "hub" / "someone_model_repo_main")
    assert clgrad.hub.list("someone/model_repo") == ["linear", "scaled"]
    assert "Using cache found in" in capsys.readouterr().err
    m = clgrad.hub.load("someone/model_repo:main", "linear", 2, 2, verbose=False)
    assert isinstance(m, clgrad.nn.Linear) and capsys.readouterr().err == ""
    assert clgrad.hub.help("someone/model_repo:main", "linear") == "A clgrad Linear layer."


def test_sobol_long_fast_forward_and_blocks():
    # fast_forward jumps by the Gray code; draws past one block (2^22 numbers) walk in blocks
    ours, theirs = SobolEngine(20), torch.quasirandom.SobolEngine(20)
    for n in (0, 1, 123_457, 2**20 + 3):
        ours.fast_forward(n)
        theirs.fast_forward(n)
        assert np.array_equal(ours.quasi.numpy(), theirs.quasi.numpy())
        assert np.array_equal(ours.draw(3).numpy(), theirs.draw(3).numpy())
    wide, twide = SobolEngine(3000), torch.quasirandom.SobolEngine(3000)
    assert np.array_equal(wide.draw(3000).numpy(), twide.draw(3000).numpy())
    assert np.array_equal(wide.quasi.numpy(), twide.quasi.numpy())


def test_sobol_negative_draw_errors_as_torch():
    # a new engine's draw(0) asks ATen for n - 1 = -1 points; a used one's draw(0) is empty
    for used in (0, 3):
        for n in (0, -2):
            ours, theirs = SobolEngine(4), torch.quasirandom.SobolEngine(4)
            if used:
                ours.draw(used)
                theirs.draw(used)
            try:
                want = theirs.draw(n)
            except RuntimeError as e:
                with pytest.raises(RuntimeError) as got:
                    ours.draw(n)
                assert str(got.value) == str(e) and ours.num_generated == used
                continue
            got = ours.draw(n)
            assert tuple(got.shape) == tuple(want.shape) and ours.num_generated == used


@pytest.mark.parametrize("dt", ["float16", "int64", "int32", "bool"])
def test_sobol_draw_dtypes_as_torch(dt):
    # the first point alone is cast to any dtype; ATen's draw takes float32 and float64 only
    first = SobolEngine(3).draw(1, dtype=getattr(clgrad, dt))
    want = torch.quasirandom.SobolEngine(3).draw(1, dtype=getattr(torch, dt))
    assert first.dtype == getattr(clgrad, dt) and np.array_equal(first.numpy(), want.numpy())
    with pytest.raises(NotImplementedError) as want:
        torch.quasirandom.SobolEngine(3).draw(2, dtype=getattr(torch, dt))
    with pytest.raises(NotImplementedError) as got:
        SobolEngine(3).draw(2, dtype=getattr(clgrad, dt))
    assert str(got.value) == str(want.value)


def test_model_zoo_load_url(home):
    import clgrad.utils.model_zoo as model_zoo

    assert model_zoo.load_url is clgrad.hub.load_state_dict_from_url
    assert model_zoo.tqdm is clgrad.hub.tqdm
    src = home / "zoo.pt"
    clgrad.save({"w": clgrad.ones(2)}, str(src))
    got = model_zoo.load_url(src.as_uri(), progress=False)
    assert got["w"].equal(clgrad.ones(2))
    assert (home / "torch_home" / "hub" / "checkpoints" / "zoo.pt").exists()
