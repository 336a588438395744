"""clgrad.utils.tensorboard: SummaryWriter's event files, checked without the tensorboard
and protobuf packages.

The framing's CRC-32C against the RFC 3720 test vectors; records of a fixed wall time against
the bytes torch's SummaryWriter (with tensorboard and protobuf) wrote for the same calls
(GOLDEN, made once with torch 2.13 and tensorboard 2.21); everything else read back with
clgrad's own record reader and protobuf decoder: file names, the file_version event, scalars,
add_scalars' sub-writers, histograms (numpy's buckets, as torch's make_histogram), PNG images
(decoded here with zlib), text, hparams, the queue and flushing, and torch's errors.
"""

from __future__ import annotations

import os
import socket
import struct
import time
import warnings
import zlib

import numpy as np
import pytest

import clgrad
from clgrad.utils.tensorboard import SummaryWriter
from clgrad.utils.tensorboard import _proto as P
from clgrad.utils.tensorboard import summary as S

WALL = 1700000000.25


# ---- framing -----------------------------------------------------------------------------------
def test_crc32c_test_vectors():
    assert P.crc32c(b"123456789") == 0xE3069283
    # RFC 3720 B.4
    assert P.crc32c(bytes(32)) == 0x8A9136AA
    assert P.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert P.crc32c(bytes(range(32))) == 0x46DD794E
    assert P.crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    # incremental, and TensorBoard's masking (tensorboard's own masked_crc32c gives 0xc78ab0e5)
    assert P.crc32c(b"6789", P.crc32c(b"12345")) == 0xE3069283
    assert P.masked_crc32c(b"123456789") == 0xC78AB0E5


def test_frame_and_bad_crc():
    rec = P.frame(b"payload")
    assert rec[:8] == struct.pack("<Q", 7) and rec[12:19] == b"payload"
    assert list(P.read_records_from_bytes(rec + rec)) == [b"payload", b"payload"]
    bad = bytearray(rec)
    bad[14] ^= 1
    with pytest.raises(ValueError, match="bad data CRC"):
        list(P.read_records_from_bytes(bytes(bad)))
    with pytest.raises(ValueError, match="truncated"):
        list(P.read_records_from_bytes(rec[:-2]))


def test_varints_and_decode():
    assert P.varint(0) == b"\x00" and P.varint(127) == b"\x7f" and P.varint(128) == b"\x80\x01"
    assert P.varint(-3) == bytes.fromhex("fdffffffffffffffff01")
    msg = P.f_varint(2, -3) + P.f_double(1, 2.5) + P.f_bytes(3, "x") + P.f_float(4, 0.0, True)
    d = P.decode(msg)
    assert P.as_int64(d[2][0]) == -3 and P.as_double(d[1][0]) == 2.5 and d[3] == [b"x"]
    assert P.as_float(d[4][0]) == 0.0
    assert P.f_double(1, 0.0) == b"" and P.f_double(1, -0.0) != b""  # proto3's implicit zeros


# ---- the bytes torch's SummaryWriter writes ----------------------------------------------------
# the framed records (after the file_version event) of torch 2.13's SummaryWriter for the calls
# in _golden_calls, wall time WALL
GOLDEN = [
    "1a00000000000000129bd82d0900001040fc54d94110012a0d0a0b0a046c6f7373150000c0bf5d2b91c1",
    "1800000000000000a37f4b220900001040fc54d9412a0d0a0b0a046c6f73731500000000f0bdeef9",
    "1700000000000000e7cef81e0900001040fc54d9412a0c0a0a0a03616363150000003fb950d5a1",
    "220000000000000078113dfd0900001040fc54d94110fdffffffffffffffff012a0c0a0a0a036e65671500000040d7b02608",
    "2b00000000000000861bc34b0900001040fc54d94110022a1e0a1c0a036e6577420808012a040000003f4a0b0a090a077363616c617273558de8de",
    "2f000000000000006d5d1d500900001040fc54d94110022a220a200a0364626c420c080232089a9999999999b93f4a0b0a090a077363616c617273892de830",
    "6e00000000000000c4bf33640900001040fc54d94110042a610a5f0a037261772a581100000000000014401900000000000024402100000000000034402900000000000049403218000000000000f03f000000000000004000000000000014403a180000000000000840000000000000084000000000000010401f3208ec",
    "2b0100000000000080cb53930900001040fc54d94110052a9d020a9a020a04686973742a91020900000000000000c0110000000000000840190000000000001040210000000000000840290000000000002f403270aed5a0f94de023c0a67b00a8c7b3b3bf8654c413a58743bfc2fc7e5de55bd3beb790b7a7873063be974be5168b05f3bdff2f6bd1eeda82bde621702fa45ecb3d701a0a547e9c3b3eb98dd83fe4daab3e031abd2ed7191c3fda37635f58598c3f538746136999fc3f7d2bb98e0ada6c403a700000000000000000000000000000f03f00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000040000000000000f03ffa7cfce3",
    "92000000000000002747ac500900001040fc54d94110062a84010a81010a0568697374342a78110000000000002240190000000000002440210000000000804640290000000000d0714032280000000000000000000000000000024000000000000012400000000000001b4000000000000022403a2800000000000000000000000000000840000000000000004000000000000000400000000000000840b9e96e4f",
    "40000000000000002817f4950900001040fc54d94110072a330a310a116e6f74652f746578745f73756d6d61727942120807120412020801420868656c6c6f20c3bc4a080a060a0474657874e3ad81da",
    "3c00000000000000c8b7a3520900001040fc54d94110082a2f0a2d0a027469421b080912081202080212020802520dffffffffffffffffff010203044a0a0a080a0674656e736f726b68bb46",
    "33000000000000000ca720560900001040fc54d94110082a260a240a027466421208011204120208022a080000c03f000000c04a0a0a080a0674656e736f72dadb371f",
    "60000000000000002821c6da0900001040fc54d94110092a530a510a03736e64324a0d0000fa45100118042234524946462c00000057415645666d74201000000001000100401f0000803e00000200100064617461080000000000ff3f01c0ff7f2a09617564696f2f77617670f5a302",
]


def _golden_calls(w, T):
    w.add_scalar("loss", -1.5, 1, walltime=WALL)
    w.add_scalar("loss", 0.0, 0, walltime=WALL)
    w.add_scalar("acc", 0.5, walltime=WALL)
    w.add_scalar("neg", 2.0, -3, walltime=WALL)
    w.add_scalar("new", 0.5, 2, walltime=WALL, new_style=True)
    w.add_scalar("dbl", 0.1, 2, walltime=WALL, new_style=True, double_precision=True)
    w.add_histogram_raw("raw", 0, 5, 10, 20, 50, [1, 2, 5], [3, 3, 4], 4, walltime=WALL)
    w.add_histogram("hist", np.array([0.5, 1.5, -2.0, 3.0]), 5, walltime=WALL, max_bins=30)
    w.add_histogram("hist4", np.arange(10.0), 6, bins=4, walltime=WALL)
    w.add_text("note", "hello \u00fc", 7, walltime=WALL)
    w.add_tensor("ti", T([[-1, 2], [3, 4]]), 8, walltime=WALL)
    w.add_tensor("tf", T([1.5, -2.0]), 8, walltime=WALL)
    w.add_audio("snd", T([[0.0, 0.5, -0.5, 1.0]]), 9, sample_rate=8000, walltime=WALL)


def _event_files(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("events.out"))


def _raw_records(path):
    buf = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(buf):
        (n,) = struct.unpack("<Q", buf[pos : pos + 8])
        out.append(buf[pos : pos + 16 + n])
        pos += 16 + n
    return out


def test_records_are_torchs_bytes(tmp_path, device):
    with SummaryWriter(tmp_path) as w:
        _golden_calls(w, lambda v: clgrad.tensor(v, device=device))
    (path,) = _event_files(tmp_path)
    records = _raw_records(path)
    assert [r.hex() for r in records[1:]] == GOLDEN


# ---- reading back ------------------------------------------------------------------------------
def _events(path):
    """Each record as (wall_time, step, {field: [values]})."""
    out = []
    for data in P.read_records(path):
        d = P.decode(data)
        wall = P.as_double(d.pop(1)[0]) if 1 in d else 0.0
        step = P.as_int64(d.pop(2)[0]) if 2 in d else 0
        out.append((wall, step, d))
    return out


def _values(path):
    """(step, tag, Summary.Value fields) of each summary event."""
    out = []
    for _, step, d in _events(path):
        for v in P.decode(d[5][0]).get(1, []) if 5 in d else []:
            value = P.decode(v)
            out.append((step, value[1][0].decode(), value))
    return out


def test_file_name_and_first_event(tmp_path):
    w = SummaryWriter(tmp_path, filename_suffix=".sfx")
    (path,) = _event_files(tmp_path)  # the file exists once the writer does
    name = os.path.basename(path)
    parts = name.split(".")
    assert parts[:3] == ["events", "out", "tfevents"] and len(parts[3]) == 10
    assert name.endswith(f".{socket.gethostname()}.{os.getpid()}.{parts[-2]}.sfx")
    wall, step, first = _events(path)[0]
    assert (
        first[3] == [b"brain.Event:2"] and step == 0 and abs(wall - __import__("time").time()) < 60
    )
    w.close()


def test_scalars_read_back(tmp_path, device):
    w = SummaryWriter(tmp_path)
    for step in range(5):
        w.add_scalar("loss", clgrad.tensor(1.0 / (step + 1), device=device), step)
    w.add_scalar("np", np.float64(0.25), 9)
    w.add_scalar("int", 3, 10)
    w.close()
    got = [(s, t, P.as_float(v[2][0])) for s, t, v in _values(_event_files(tmp_path)[0])]
    assert got == [(s, "loss", np.float32(1.0 / (s + 1))) for s in range(5)] + [
        (9, "np", 0.25),
        (10, "int", 3.0),
    ]


def test_add_scalars_uses_one_writer_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("run/loss", {"train": 0.5, "val": clgrad.tensor(0.75)}, 3)
        w.add_scalars("run/loss", {"train": 0.25}, 4)
        assert sorted(w.all_writers) == sorted(
            [str(tmp_path), f"{tmp_path}/run_loss_train", f"{tmp_path}/run_loss_val"]
        )
    train = _values(_event_files(tmp_path / "run_loss_train")[0])
    val = _values(_event_files(tmp_path / "run_loss_val")[0])
    assert [(s, t, P.as_float(v[2][0])) for s, t, v in train] == [
        (3, "run/loss", 0.5),
        (4, "run/loss", 0.25),
    ]
    assert [(s, t) for s, t, _ in val] == [(3, "run/loss")]
    assert _values(_event_files(tmp_path)[0]) == []


def _histogram(value):
    h = P.decode(value[5][0])
    get = lambda f: P.as_double(h[f][0]) if f in h else 0.0  # noqa: E731
    return {
        "min": get(1),
        "max": get(2),
        "num": get(3),
        "sum": get(4),
        "sum_squares": get(5),
        "limits": P.unpack_doubles(h[6][0]),
        "counts": P.unpack_doubles(h[7][0]),
    }


def test_histogram_buckets_as_torch(tmp_path, device):
    data = np.random.default_rng(1).standard_normal(200).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", clgrad.tensor(data, device=device), 0)
        w.add_histogram("w10", data, 1, bins=10)
        w.add_histogram("few", data, 2, bins=64, max_bins=5)
        bins = w.default_bins
    vals = {t: _histogram(v) for _, t, v in _values(_event_files(tmp_path)[0])}
    x = data.astype(float)
    h = vals["w10"]
    counts, limits = np.histogram(x, bins=10)
    # the first bucket is not empty: an empty one before it, all the edges as limits
    assert h["limits"] == limits.tolist() and h["counts"] == [0.0] + counts.tolist()
    assert (h["min"], h["max"], h["num"]) == (x.min(), x.max(), 200)
    assert h["sum"] == x.sum() and h["sum_squares"] == x.dot(x)
    # tensorflow's default buckets: from the first non-empty one, with an empty one before
    counts, limits = np.histogram(x, bins=bins)
    nz = np.nonzero(counts)[0]
    assert vals["w"]["counts"] == [0.0] + counts[nz[0] : nz[-1] + 1].tolist()
    assert vals["w"]["limits"] == limits[nz[0] : nz[-1] + 2].tolist()
    # 64 buckets merged by 12 (padded to 72): 6, and the empty one before
    assert len(vals["few"]["counts"]) == 7 and sum(vals["few"]["counts"]) == 200
    with pytest.raises(ValueError, match="The input has no element"):
        SummaryWriter(tmp_path / "e").add_histogram("e", np.array([]), 0)


def _png_pixels(png: bytes) -> np.ndarray:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", png[pos + 8 + n : pos + 12 + n])
        assert crc == zlib.crc32(kind + data)
        chunks[kind] = chunks.get(kind, b"") + data
        pos += 12 + n
    w, h, depth, ctype = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    c = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(h, 1 + w * c)
    assert depth == 8 and (rows[:, 0] == 0).all() and b"IEND" in chunks
    return rows[:, 1:].reshape(h, w, c)


def _image(value):
    im = P.decode(value[4][0])
    return im[1][0], im[2][0], im[3][0], _png_pixels(im[4][0])


def test_images_as_torch_converts_them(tmp_path, device):
    rng = np.random.default_rng(2)
    chw = rng.random((3, 5, 7)).astype(np.float32)
    hwc = (rng.random((4, 6, 3)) * 255).astype(np.uint8)
    gray = rng.random((1, 3, 4)).astype(np.float32)
    batch = rng.random((10, 3, 2, 3)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", clgrad.tensor(chw, device=device), 0)
        w.add_image("hwc", hwc, 0, dataformats="HWC")
        w.add_image("gray", gray, 0)
        w.add_image("hw", chw[0] * 2 - 0.5, 0, dataformats="HW")
        w.add_images("batch", clgrad.tensor(batch, device=device), 0)
    ims = {t: _image(v) for _, t, v in _values(_event_files(tmp_path)[0])}
    to8 = lambda a: (a.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)  # noqa: E731
    assert ims["chw"][:3] == (5, 7, 3) and (ims["chw"][3] == to8(chw.transpose(1, 2, 0))).all()
    assert (ims["hwc"][3] == hwc).all()
    assert (ims["gray"][3] == to8(np.repeat(gray, 3, 0).transpose(1, 2, 0))).all()
    hw = to8(chw[0] * 2 - 0.5)
    assert (ims["hw"][3] == np.stack([hw] * 3, 2)).all()  # clipped to [0, 255]
    # 10 images in rows of 8: a 2 x 8 grid, the missing ones black
    h, wd, c, px = ims["batch"]
    assert (h, wd, c) == (4, 24, 3)
    assert (px[:2, :3] == to8(batch[0].transpose(1, 2, 0))).all()
    assert (px[2:, 3:6] == to8(batch[9].transpose(1, 2, 0))).all() and (px[2:, 6:] == 0).all()
    with pytest.raises(AssertionError, match="size of input tensor and input format"):
        SummaryWriter(tmp_path / "x").add_image("bad", chw, 0, dataformats="HW")


def test_figure(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(tmp_path) as w:
        w.add_figure("fig", fig, 0)
    ((_, tag, value),) = _values(_event_files(tmp_path)[0])
    h, wd, c, px = _image(value)
    assert (tag, h, wd, c) == ("fig", 50, 100, 3) and px.shape == (50, 100, 3)
    assert not plt.fignum_exists(fig.number)  # closed, as torch's close=True


def test_text_and_hparams(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "**lr** = 0.1", 2)
        w.add_hparams(
            {"lr": 0.1, "opt": "adam", "bn": True, "skip": None},
            {"hparam/acc": 0.9},
            hparam_domain_discrete={"opt": ["adam", "sgd"]},
            run_name="trial",
        )
    ((step, tag, value),) = _values(_event_files(tmp_path)[0])
    tensor = P.decode(value[8][0])
    assert (step, tag, tensor[8]) == (2, "notes/text_summary", [b"**lr** = 0.1"])
    assert P.decode(P.decode(value[9][0])[1][0])[1] == [b"text"]
    vals = _values(_event_files(tmp_path / "trial")[0])
    assert [t for _, t, _ in vals] == [
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
        "hparam/acc",
    ]
    plugin = P.decode(P.decode(vals[1][2][9][0])[1][0])
    assert plugin[1] == [b"hparams"]
    ssi = P.decode(P.decode(plugin[2][0])[3][0])
    entries = [P.decode(e) for e in ssi[1]]
    hp = {e[1][0].decode(): P.decode(e[2][0]) for e in entries}
    assert P.as_double(hp["lr"][2][0]) == 0.1 and hp["opt"][3] == [b"adam"]
    assert P.as_double(hp["bn"][2][0]) == 1.0  # a bool is a number, as torch tests int first
    assert "skip" not in hp
    exp = P.decode(P.decode(P.decode(P.decode(vals[0][2][9][0])[1][0])[2][0])[2][0])
    infos = [P.decode(i) for i in exp[4]]
    assert [(i[1][0], i[4][0]) for i in infos] == [(b"lr", 3), (b"opt", 1), (b"bn", 3)]
    assert 5 in infos[1]  # the discrete domain of opt
    assert P.decode(P.decode(exp[5][0])[1][0])[2] == [b"hparam/acc"]
    with pytest.raises(TypeError, match="should be dictionary"):
        SummaryWriter(tmp_path / "y").add_hparams([("lr", 0.1)], {})


def test_queue_flush_close_and_reopen(tmp_path):
    w = SummaryWriter(tmp_path, max_queue=3)
    (path,) = _event_files(tmp_path)
    w.add_scalar("a", 1.0, 0)
    w.add_scalar("a", 2.0, 1)
    assert len(P.read_records(path)) == 1  # queued
    w.add_scalar("a", 3.0, 2)
    assert len(P.read_records(path)) == 4  # the queue was full
    w.add_scalar("a", 4.0, 3)
    w.flush()
    assert len(P.read_records(path)) == 5
    w.close()
    w.close()  # twice is fine
    w.add_scalar("a", 5.0, 4)  # a new file, as torch
    w.close()
    assert len(_event_files(tmp_path)) == 2


def test_flush_secs_thread(tmp_path):
    w = SummaryWriter(tmp_path, flush_secs=0.05)
    w.add_scalar("a", 1.0, 0)
    (path,) = _event_files(tmp_path)
    for _ in range(100):
        if len(P.read_records(path)) == 2:
            break
        time.sleep(0.02)
    assert len(P.read_records(path)) == 2
    w.close()


def test_default_log_dir_and_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        d = w.get_logdir()
    parent, name = os.path.split(d)
    assert parent == "runs" and name.endswith("_" + socket.gethostname() + "_lr0.1")
    assert len(_event_files(d)) == 1


def test_purge_step(tmp_path):
    with SummaryWriter(tmp_path, purge_step=7) as w:
        w.add_scalar("a", 1.0, 8)
    events = _events(_event_files(tmp_path)[0])
    assert events[1][1] == 7 and events[1][2][3] == [b"brain.Event:2"]
    assert events[2][1] == 7 and P.decode(events[2][2][7][0]) == {1: [1]}  # SessionLog START


def test_graph_warns_embedding_raises_and_bad_values(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.warns(UserWarning, match="graphs are not recorded"):
            w.add_graph(clgrad.nn.Linear(2, 1), clgrad.zeros(1, 2))
        with pytest.raises(NotImplementedError):
            w.add_embedding(clgrad.zeros(3, 2))
        with pytest.raises(AssertionError, match="Tensor should contain one element"):
            w.add_scalar("two", clgrad.zeros(2), 0)
        with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
            w.add_scalar("list", [1.0], 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(_values(_event_files(tmp_path)[0])) == 0


def test_summary_make_np():
    assert S.make_np(2).tolist() == [2]
    assert S.make_np(clgrad.tensor([1.0, 2.0], dtype=clgrad.bfloat16)).dtype == np.float16
    x = clgrad.ones(2, requires_grad=True)
    assert S.make_np(x * 2).tolist() == [2.0, 2.0]


def test_unclosed_writer_is_flushed_at_exit(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from clgrad.utils.tensorboard import SummaryWriter; "
        "w = SummaryWriter(sys.argv[1]); w.add_scalar('a', 1.0, 0); w.add_scalar('a', 2.0, 1)"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, timeout=120)
    assert len(P.read_records(_event_files(tmp_path)[0])) == 3
