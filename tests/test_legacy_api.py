"""Old PyTorch API that programs still use, against torch: ``autograd.Variable``,
``Tensor.storage()`` (TypedStorage), and ``save``'s check of the parent directory."""

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


def test_bfloat16_is_a_name_as_torch_and_refused_for_tensors():
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
    assert clgrad.cuda.is_bf16_supported() is False
    layer = clgrad.nn.Linear(2, 2)
    for make in (
        lambda: clgrad.zeros(2, dtype=b),
        lambda: clgrad.tensor([1.0], dtype="bfloat16"),
        lambda: clgrad.ones(2).to(b),
        lambda: clgrad.ones(2).bfloat16(),
        lambda: clgrad.ones(2).sum(dtype=b),
        lambda: layer.bfloat16(),
        lambda: layer.to(b),
        lambda: clgrad.set_default_dtype(b),
    ):
        with pytest.raises(TypeError, match="bfloat16"):
            make()
    assert layer.weight.dtype is clgrad.float32 and clgrad.get_default_dtype() is clgrad.float32
