"""nn.attention.sdpa_kernel and torch.backends.cuda's attention switches against torch (CPU
build): which backend sets let scaled_dot_product_attention run, what the switches read inside
and after each block, on every device."""

import warnings

import numpy as np
import pytest
import torch
from torch.nn.attention import SDPBackend as TorchBackend

import clgrad
from clgrad.nn.attention import SDPBackend

SETS = [
    ["MATH"],
    ["FLASH_ATTENTION"],
    ["EFFICIENT_ATTENTION"],
    ["CUDNN_ATTENTION"],
    ["EFFICIENT_ATTENTION", "CUDNN_ATTENTION"],
    ["MATH", "EFFICIENT_ATTENTION"],
    [],
]
SWITCHES = (
    "flash_sdp_enabled",
    "mem_efficient_sdp_enabled",
    "math_sdp_enabled",
    "cudnn_sdp_enabled",
)


def _run(lib, backend_enum, names, dev, q):
    seen = []
    with lib.nn.attention.sdpa_kernel([getattr(backend_enum, n) for n in names]):
        seen.append([getattr(lib.backends.cuda, s)() for s in SWITCHES])
        try:
            out = lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
            seen.append(np.round(out.cpu().numpy(), 5).tolist())
        except RuntimeError as e:
            seen.append(str(e))
    seen.append([getattr(lib.backends.cuda, s)() for s in SWITCHES])
    return seen


@pytest.mark.parametrize("names", SETS, ids=lambda n: "+".join(n) or "none")
def test_sdpa_kernel_as_torch(device, names):
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    ours = _run(clgrad, SDPBackend, names, device, clgrad.tensor(x, device=device))
    theirs = _run(torch, TorchBackend, names, "cpu", torch.tensor(x))
    assert ours == theirs


def test_backend_numbers_and_switches_as_torch():
    assert {b.name: int(b) for b in SDPBackend} == {
        n: int(getattr(TorchBackend, n).value) for n in TorchBackend.__members__
    }
    q = clgrad.ones(1, 1, 2, 4)
    for lib, arg in ((clgrad, q), (torch, torch.ones(1, 1, 2, 4))):
        cuda = lib.backends.cuda
        cuda.enable_math_sdp(False)
        cuda.enable_flash_sdp(False)
        try:
            with pytest.raises(RuntimeError, match="No viable backend"):
                lib.nn.functional.scaled_dot_product_attention(arg, arg, arg)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                with cuda.sdp_kernel(enable_math=True):
                    assert lib.nn.functional.scaled_dot_product_attention(arg, arg, arg).shape
                    assert cuda.flash_sdp_enabled()
            assert not cuda.math_sdp_enabled() and not cuda.flash_sdp_enabled()
        finally:
            cuda.enable_math_sdp(True)
            cuda.enable_flash_sdp(True)
    with pytest.warns(FutureWarning, match="sdp_kernel"):
        with clgrad.backends.cuda.sdp_kernel():
            pass


@pytest.mark.skipif(
    bool(__import__("os").environ.get("ATEN_CPU_CAPABILITY")), reason="torch's is overridden"
)
def test_cpu_capability_as_torch():
    assert clgrad.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()
    for name in ("mkldnn", "openmp", "mkl"):
        assert getattr(clgrad.backends, name).is_available() is False


@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
def test_causal_bias_masks_as_torch(device, variant):
    # torch.nn.attention.bias's masks passed as attn_mask: a decoding step's 3 queries against
    # 5 cached keys (lower right) or the plain causal pattern (upper left)
    import torch.nn.attention.bias as torch_bias

    import clgrad.nn.attention.bias as clgrad_bias

    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 3, 4), (1, 2, 5, 4)))
    outs = []
    for lib, bias, kw in ((torch, torch_bias, {}), (clgrad, clgrad_bias, {"device": device})):
        mask = getattr(bias, variant)(3, 5)
        key = lib.tensor(k, **kw)
        out = lib.nn.functional.scaled_dot_product_attention(lib.tensor(q, **kw), key, key, mask)
        outs.append((out.cpu().numpy(), mask._materialize().cpu().numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], atol=1e-6)
    np.testing.assert_array_equal(outs[1][1], outs[0][1])
