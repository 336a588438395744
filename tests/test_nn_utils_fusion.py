"""clgrad.nn.utils.fusion against torch.nn.utils.fusion on every device: fused weights, biases
and outputs of convolutions (plain and transposed) and Linears folded with eval BatchNorms."""

import numpy as np
import pytest
import torch

import clgrad

RNG = np.random.default_rng(0)


def _copy_into(ours, theirs, device):
    ours.load_state_dict(
        {k: clgrad.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    )
    return ours.to(device)


LAYERS = {
    "conv2d": (lambda lib, bias: lib.nn.Conv2d(3, 4, 3, bias=bias), (2, 3, 5, 5), False),
    "conv transpose2d": (
        lambda lib, bias: lib.nn.ConvTranspose2d(3, 4, 2, bias=bias),
        (2, 3, 4, 4),
        True,
    ),
    "conv1d": (lambda lib, bias: lib.nn.Conv1d(3, 4, 3, bias=bias), (2, 3, 7), False),
}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("name", list(LAYERS))
def test_fuse_conv_bn_as_torch(device, name, bias, affine):
    make, shape, transpose = LAYERS[name]
    torch.manual_seed(0)
    t_layer = make(torch, bias).eval()
    t_bn = getattr(torch.nn, f"BatchNorm{len(shape) - 2}d")(4, affine=affine).eval()
    with torch.no_grad():
        t_bn.running_mean.copy_(torch.randn(4))
        t_bn.running_var.copy_(torch.rand(4) + 0.5)
        if affine:
            t_bn.weight.copy_(torch.randn(4))
            t_bn.bias.copy_(torch.randn(4))
    c_layer = _copy_into(make(clgrad, bias), t_layer, device).eval()
    c_bn = _copy_into(
        getattr(clgrad.nn, f"BatchNorm{len(shape) - 2}d")(4, affine=affine), t_bn, device
    )
    c_bn.eval()
    t_fused = torch.nn.utils.fuse_conv_bn_eval(t_layer, t_bn, transpose=transpose)
    c_fused = clgrad.nn.utils.fuse_conv_bn_eval(c_layer, c_bn, transpose=transpose)
    assert c_fused is not c_layer and isinstance(c_fused.weight, clgrad.nn.Parameter)
    np.testing.assert_allclose(
        c_fused.weight.cpu().detach().numpy(), t_fused.weight.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        c_fused.bias.cpu().detach().numpy(), t_fused.bias.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    x = RNG.standard_normal(shape).astype(np.float32)
    ours = c_fused(clgrad.tensor(x, device=device)).cpu().detach().numpy()
    np.testing.assert_allclose(
        ours, t_fused(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5
    )
    # the originals are unchanged
    np.testing.assert_allclose(
        c_layer.weight.cpu().detach().numpy(), t_layer.weight.detach().numpy()
    )


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_linear_bn_as_torch(device, bias):
    torch.manual_seed(1)
    t_lin, t_bn = torch.nn.Linear(3, 4, bias=bias).eval(), torch.nn.BatchNorm1d(4).eval()
    with torch.no_grad():
        t_bn.running_mean.copy_(torch.randn(4))
        t_bn.running_var.copy_(torch.rand(4) + 0.5)
        t_bn.weight.copy_(torch.randn(4))
    c_lin = _copy_into(clgrad.nn.Linear(3, 4, bias=bias), t_lin, device).eval()
    c_bn = _copy_into(clgrad.nn.BatchNorm1d(4), t_bn, device).eval()
    t_fused = torch.nn.utils.fuse_linear_bn_eval(t_lin, t_bn)
    c_fused = clgrad.nn.utils.fuse_linear_bn_eval(c_lin, c_bn)
    for ours, theirs in ((c_fused.weight, t_fused.weight), (c_fused.bias, t_fused.bias)):
        np.testing.assert_allclose(
            ours.cpu().detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6
        )
        assert ours.requires_grad == theirs.requires_grad


def test_fusion_refuses_training_mode_as_torch():
    for lib in (clgrad, torch):
        with pytest.raises(AssertionError, match="Fusion only for eval"):
            lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(1, 1, 1), lib.nn.BatchNorm2d(1).eval())
        with pytest.raises(AssertionError, match="out_features"):
            lib.nn.utils.fuse_linear_bn_eval(
                lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(2).eval()
            )
