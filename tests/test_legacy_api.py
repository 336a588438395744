"""Old PyTorch API that programs still use, against torch: ``autograd.Variable``,
``Tensor.storage()`` (TypedStorage), and ``save``'s check of the parent directory."""

import collections
import warnings

import numpy as np
import pytest
import torch

import clgrad


def test_variable_as_torch(device):
    def run(lib, dev):
        from_lib = lib.autograd.Variable
        x = lib.tensor([1.0, 2.0], device=dev)
        v = from_lib(x, requires_grad=True)
        (v * v).sum().backward()
        y = lib.ones(2, device=dev, requires_grad=True) * 2
        w = from_lib(y)
        p = from_lib(lib.nn.Parameter(lib.ones(1, device=dev)))
        return [
            v is x,
            v.data_ptr() == x.data_ptr(),
            v.is_leaf,
            v.grad.tolist(),
            w.grad_fn is None,
            w.requires_grad,
            isinstance(x, from_lib),
            issubclass(lib.Tensor, from_lib),
            type(p) is lib.Tensor,
            list(from_lib().shape),
        ]

    assert run(clgrad, device) == run(torch, "cpu")
    for lib in (clgrad, torch):
        with pytest.raises(TypeError):
            lib.autograd.Variable([1.0])
        with pytest.warns(UserWarning, match="volatile"):
            lib.autograd.Variable(lib.ones(1), volatile=True)


def test_typed_storage_as_torch(device):
    def run(lib, dev):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            x = lib.arange(5.0, device=dev)
            s = x[2:].storage()
            seen = [s.size(), len(s), s[4], s[-1], s.tolist(), s.element_size(), s.nbytes()]
            seen.append(s.data_ptr() == x.untyped_storage().data_ptr())
            s[1] = 7.0
            seen.append(x.tolist())
            s.fill_(2.0)
            seen.append(x.tolist())
            seen.append(list(iter(lib.tensor([1, 2], dtype=lib.int64, device=dev).storage())))
            seen.append(x.storage().type())
            for bad in (5, -6):
                try:
                    s[bad]
                except IndexError as e:
                    seen.append(str(e))
            return seen

    assert run(clgrad, device) == run(torch, "cpu")


def test_typed_storage_write_bumps_version():
    x = clgrad.zeros(3, requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        y.storage()[0] = 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 0.0, 0.0])


def test_save_into_missing_directory_as_torch(tmp_path):
    target = tmp_path / "missing" / "x.pt"
    messages = []
    for lib in (clgrad, torch):
        with pytest.raises(RuntimeError) as e:
            lib.save({"a": lib.ones(1)}, str(target))
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert not (tmp_path / "missing").exists()


def test_bfloat16_dtype_as_torch():
    b = clgrad.bfloat16
    assert str(b) == "clgrad.bfloat16" and b.itemsize == 2 and b.is_floating_point
    assert {b: "x"}[clgrad.bfloat16] == "x"  # a table of dtypes, as programs build
    ours, theirs = clgrad.finfo(b), torch.finfo(torch.bfloat16)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field
    for other in ("float16", "float32", "float64", "int64", "bool"):
        ours = clgrad.promote_types(b, getattr(clgrad, other))
        theirs = torch.promote_types(torch.bfloat16, getattr(torch, other))
        assert str(ours).split(".")[1] == str(theirs).split(".")[1], other
    assert clgrad.cuda.is_bf16_supported() is clgrad.cuda.is_available()
    layer = clgrad.nn.Linear(2, 2)
    for make in (
        lambda: clgrad.zeros(2, dtype=b),
        lambda: clgrad.tensor([1.0], dtype="bfloat16"),
        lambda: clgrad.ones(2).to(b),
        lambda: clgrad.ones(2).bfloat16(),
        lambda: clgrad.ones(2).sum(dtype=b),
        lambda: layer.bfloat16().weight,
    ):
        assert make().dtype is b
    assert layer.to(clgrad.float32).weight.dtype is clgrad.float32


Point = collections.namedtuple("Point", "x y")  # at module level: pickle finds it by name


def _saved_and_loaded(lib, device, weights_only):
    import io

    point = Point
    x = lib.arange(6.0, device=device)
    w = lib.nn.Parameter(lib.ones(2, 3, device=device))
    obj = {
        "a": x,
        "b": x[1:3],
        "grid": x.view(2, 3),
        "t": x.view(2, 3).t(),
        "size": lib.Size([2]),
        "w": w,
        "wt": w.t(),
        "bytes": b"ab",
        "bytearray": bytearray(b"c"),
    }
    if not weights_only:
        obj.update(nt=point(1, x), dd=collections.defaultdict(int, a=1))
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    o = lib.load(buf, weights_only=weights_only)
    with lib.no_grad():
        o["b"][0] = 100.0
        o["w"][0, 0] = 7.0
    seen = [
        o["a"].tolist(),
        o["grid"].tolist(),
        o["t"].stride(),
        o["t"].is_contiguous(),
        type(o["size"]).__name__,
        type(o["w"]).__name__,
        o["wt"].requires_grad,
        o["wt"].is_leaf,
        o["wt"][0, 0].item(),
        o["bytes"],
        o["bytearray"],
    ]
    if not weights_only:
        seen += [type(o["nt"]).__name__, o["nt"].y is o["a"], type(o["dd"]).__name__]
    return seen


@pytest.mark.parametrize("weights_only", [True, False])
def test_save_load_keeps_shared_storages_and_types_as_torch(device, weights_only):
    assert _saved_and_loaded(clgrad, device, weights_only) == _saved_and_loaded(
        torch, "cpu", weights_only
    )


@pytest.mark.parametrize(
    "value",
    [
        lambda: Point(1, 2),
        lambda: slice(1, 2),
        lambda: frozenset([1]),
        lambda: range(3),
        lambda: collections.defaultdict(int),
        lambda: ...,
    ],
    ids=["namedtuple", "slice", "frozenset", "range", "defaultdict", "ellipsis"],
)
def test_weights_only_refuses_what_torch_refuses(value):
    import io
    import pickle

    for lib in (clgrad, torch):
        buf = io.BytesIO()
        lib.save({"v": value()}, buf)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError):
            lib.load(buf, weights_only=True)


def test_finfo_iinfo_print_as_torchs():
    import torch

    for name in ("float16", "float32", "float64", "bfloat16"):
        assert repr(clgrad.finfo(getattr(clgrad, name))) == repr(torch.finfo(getattr(torch, name)))
        assert (
            clgrad.finfo(getattr(clgrad, name)).resolution
            == torch.finfo(getattr(torch, name)).resolution
        )
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        assert repr(clgrad.iinfo(getattr(clgrad, name))) == repr(torch.iinfo(getattr(torch, name)))
    for lib in (torch, clgrad):
        with pytest.raises(
            RuntimeError, match=r"floating point and complex dtype can require gradients$"
        ):
            lib.tensor([1, 2]).requires_grad = True


def test_numpy_ufuncs_of_a_tensor_give_a_tensor():
    for lib in (torch, clgrad):
        t = lib.tensor([1.0, 4.0])
        got = np.sqrt(t)
        assert isinstance(got, lib.Tensor) and got.tolist() == [1.0, 2.0]
        mask = np.greater(t, 2)  # a bool result comes back as uint8, torch's workaround
        assert str(mask.dtype).endswith("uint8") and mask.tolist() == [0, 1]


def test_frexp_result_type_name():
    for lib in (torch, clgrad):
        r = lib.frexp(lib.tensor([8.0]))
        assert type(r).__name__ == "frexp" and isinstance(r, lib.return_types.frexp)


@pytest.mark.parametrize(
    "data",
    [[[1, 2], [3]], [[[1, 2], [3, 4]], [[1, 2], [3]]], [[1, 2], 3], [[1], [2, 3]], [1, [2]]],
)
def test_ragged_nested_lists_raise_as_torch(data):
    errors = []
    for lib in (torch, clgrad):
        with pytest.raises((TypeError, ValueError)) as caught:
            lib.tensor(data)
        errors.append((type(caught.value), str(caught.value).split(" object ")[0]))
    assert errors[0] == errors[1]
