"""``clgrad.save`` never damages the previous checkpoint; ``clgrad.load`` says what a file it
cannot read is, refuses arrays larger than their file (or a zip bomb) before allocating, and
raises ``CheckpointError`` (a RuntimeError) for every damaged file."""

from __future__ import annotations

import errno
import io
import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npformat

import clgrad
from clgrad import serialization
from clgrad.serialization import CheckpointError

OLD = {"w": clgrad.arange(6, dtype=clgrad.float32).reshape(2, 3), "step": 1}


def _same_as_old(path):
    back = clgrad.load(path, map_location="cpu")
    assert back["step"] == 1
    np.testing.assert_array_equal(back["w"].numpy(), OLD["w"].numpy())


def _leftovers(directory, keep):
    return sorted(p.name for p in directory.iterdir() if p.name != keep)


# ---- saving ------------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_during_save_keeps_previous_checkpoint(tmp_path):
    path = tmp_path / "ckpt.npz"
    clgrad.save(OLD, path)
    child = textwrap.dedent(
        """
        import sys, time
        from numpy.lib import format as npformat
        import clgrad

        write_array = npformat.write_array

        def slow_write_array(*args, **kwargs):  # the save is under way once one array is out
            write_array(*args, **kwargs)
            print("wrote an array", flush=True)
            time.sleep(0.5)

        npformat.write_array = slow_write_array
        state = {f"layer{i}": clgrad.full((512, 1024), float(i), device="cpu") for i in range(16)}
        clgrad.save(state, sys.argv[1])
        print("saved", flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", child, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "wrote an array", f"child said {line!r}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    _same_as_old(path)


@pytest.mark.parametrize(
    "error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt]
)
def test_save_that_fails_midway_keeps_previous_file_and_no_temp(tmp_path, monkeypatch, error):
    path = tmp_path / "ckpt.npz"
    clgrad.save(OLD, path)
    write_array = npformat.write_array
    calls = []

    def failing_write_array(fp, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # one array already written: the file is half done
            fp.write(b"\0" * 1000)
            raise error
        return write_array(fp, *args, **kwargs)

    monkeypatch.setattr(npformat, "write_array", failing_write_array)
    new = {"a": clgrad.ones(1000), "b": clgrad.zeros(1000), "c": clgrad.ones(3)}
    with pytest.raises(type(error) if isinstance(error, BaseException) else error):
        clgrad.save(new, path)
    monkeypatch.undo()
    _same_as_old(path)
    assert _leftovers(tmp_path, "ckpt.npz") == []


def test_save_of_unsupported_value_keeps_previous_file_and_no_temp(tmp_path):
    path = tmp_path / "ckpt.npz"
    clgrad.save(OLD, path)
    with pytest.raises(TypeError, match="cannot save an object of type function"):
        clgrad.save({"w": clgrad.ones(2), "bad": lambda: 0}, path)
    with pytest.raises(TypeError, match="cannot save an object of type generator"):
        clgrad.save([clgrad.ones(2), (i for i in range(2))], path)
    _same_as_old(path)
    assert _leftovers(tmp_path, "ckpt.npz") == []


def test_save_replaces_the_file_and_keeps_its_permissions(tmp_path):
    path = tmp_path / "ckpt.npz"
    clgrad.save({"step": 0}, path)
    os.chmod(path, 0o640)
    clgrad.save(OLD, str(path))
    _same_as_old(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert _leftovers(tmp_path, "ckpt.npz") == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_save_through_a_symlink_writes_the_linked_file(tmp_path):
    real = tmp_path / "real.npz"
    clgrad.save({"step": 0}, real)
    link = tmp_path / "latest.npz"
    link.symlink_to(real.name)
    clgrad.save(OLD, link)
    assert link.is_symlink()
    _same_as_old(real)


def test_save_to_file_objects_still_works():
    buf = io.BytesIO()
    clgrad.save(OLD, buf)
    buf.seek(0)
    back = clgrad.load(buf)
    assert back["step"] == 1 and back["w"].tolist() == OLD["w"].tolist()


# ---- loading: what the file is -------------------------------------------------------------------
def test_text_file_is_named_as_such_without_pickle_advice(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("epoch,loss\n1,0.25\n")
    with pytest.raises(CheckpointError) as info:
        clgrad.load(path)
    msg = str(info.value)
    assert "not a clgrad checkpoint" in msg and "text file" in msg and str(path) in msg
    assert "pickle" not in msg
    assert isinstance(info.value, RuntimeError)


@pytest.mark.parametrize(
    "content, what",
    [
        (b"", "an empty file"),
        (pickle.dumps({"w": [1.0, 2.0]}), "Python pickle"),
        (b"\x00\x01\x02\xff\xfe" * 20, "unknown format"),
        (b"\x1f\x8b\x08\x00" + b"\x00" * 20, "gzip"),
    ],
)
def test_other_files_are_described(tmp_path, content, what):
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=what) as info:
        clgrad.load(path)
    assert "allow_pickle" not in str(info.value) and str(path) in str(info.value)


def test_npy_and_foreign_zip_files_are_described(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(3))
    with pytest.raises(CheckpointError, match=r"NumPy array \(\.npy\)"):
        clgrad.load(tmp_path / "a.npy")
    # PyTorch's own format loads (tests/test_torch_checkpoints.py): an empty dict here
    with zipfile.ZipFile(tmp_path / "torch.pt", "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    assert clgrad.load(tmp_path / "torch.pt") == {}
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("readme.txt", b"hello")
    with pytest.raises(CheckpointError, match="not a clgrad file.*readme.txt"):
        clgrad.load(tmp_path / "other.zip")


# ---- loading: sizes are checked before allocating -----------------------------------------------
def _structure(*keys, dtype="float32"):
    items = [
        [
            {"type": "str", "value": k},
            {
                "type": "tensor",
                "key": k,
                "dtype": dtype,
                "requires_grad": False,
                "device": "cpu",
                "parameter": False,
            },
        ]
        for k in keys
    ]
    meta = {"format": "clgrad.npz", "version": 1, "object": {"type": "dict", "items": items}}
    return np.array(json.dumps(meta))


def test_compressed_bomb_is_refused_before_inflating(tmp_path):
    path = tmp_path / "bomb.npz"
    n = 128 * 2**20  # bytes of zeros: they deflate about 1000:1
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        header = {"descr": "<f4", "fortran_order": False, "shape": (n // 4,)}
        info = zipfile.ZipInfo("t0.npy")
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as m:
            buf = io.BytesIO()
            npformat.write_array_header_1_0(buf, header)
            m.write(buf.getvalue())
            chunk = bytes(2**20)
            for _ in range(n // len(chunk)):
                m.write(chunk)
        with zf.open("__structure__.npy", "w") as m:
            npformat.write_array(m, _structure("t0"))
    assert path.stat().st_size < n // 100
    with pytest.raises(CheckpointError, match="zip bomb") as info:
        clgrad.load(path)
    assert "t0" in str(info.value)


def test_declared_shape_larger_than_the_member_is_refused(tmp_path):
    path = tmp_path / "liar.npz"
    with zipfile.ZipFile(path, "w") as zf:
        with zf.open("t0.npy", "w") as m:
            buf = io.BytesIO()
            npformat.write_array_header_1_0(
                buf, {"descr": "<f4", "fortran_order": False, "shape": (2**40,)}
            )
            m.write(buf.getvalue() + bytes(64))
        with zf.open("__structure__.npy", "w") as m:
            npformat.write_array(m, _structure("t0"))
    with pytest.raises(CheckpointError, match="declares 4398046511104 bytes"):
        clgrad.load(path)


def test_more_data_than_free_memory_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    clgrad.save({"w": clgrad.zeros(1000)}, path)
    monkeypatch.setattr(serialization, "_available_memory", lambda: 1000)
    with pytest.raises(CheckpointError, match="4000 bytes of tensor data, more than"):
        clgrad.load(path)


# ---- loading: damaged files ----------------------------------------------------------------
def test_truncated_file_raises_checkpoint_error(tmp_path):
    path = tmp_path / "ckpt.npz"
    clgrad.save({"w": clgrad.ones(10000)}, path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 10, 100):
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match="damaged or truncated"):
            clgrad.load(path)


def test_corrupted_array_bytes_raise_checkpoint_error(tmp_path):
    path = tmp_path / "ckpt.npz"
    clgrad.save({"w": clgrad.ones(10000)}, path)
    data = bytearray(path.read_bytes())
    data[2000] ^= 0xFF  # inside t0's data: the CRC no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged: entry 't0' cannot be read"):
        clgrad.load(path)


def test_missing_or_wrong_members_raise_checkpoint_error(tmp_path):
    missing = tmp_path / "missing.npz"
    np.savez(missing, t0=np.zeros(3, np.float32), __structure__=_structure("t0", "t1"))
    with pytest.raises(CheckpointError, match="entry 't1' is missing"):
        clgrad.load(missing)
    wrong_dtype = tmp_path / "dtype.npz"
    np.savez(wrong_dtype, t0=np.zeros(3, np.int32), __structure__=_structure("t0"))
    with pytest.raises(CheckpointError, match="holds int32 data, its description says float32"):
        clgrad.load(wrong_dtype)
    bad_json = tmp_path / "json.npz"
    np.savez(bad_json, t0=np.zeros(3, np.float32), __structure__=np.array("{not json"))
    with pytest.raises(CheckpointError, match="not JSON"):
        clgrad.load(bad_json)
    malformed = tmp_path / "malformed.npz"
    meta = {"format": "clgrad.npz", "version": 1, "object": {"type": "tensor", "key": "t0"}}
    np.savez(malformed, t0=np.zeros(3, np.float32), __structure__=np.array(json.dumps(meta)))
    with pytest.raises(CheckpointError, match="malformed entry"):
        clgrad.load(malformed)
    strings = tmp_path / "strings.npz"
    np.savez(strings, t0=np.array(["a", "b"]), __structure__=_structure("t0"))
    with pytest.raises(CheckpointError, match="holds <U1 data, which clgrad never writes"):
        clgrad.load(strings)


# ---- what loaded before still loads --------------------------------------------------------------
def test_files_in_the_documented_format_still_load(tmp_path):
    """A file laid out as the module docstring documents (as clgrad has always written it), and
    the same data written compressed or big-endian by another NumPy program."""
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    for name, writer, arr in [
        ("plain.npz", np.savez, w),
        ("compressed.npz", np.savez_compressed, w),
        ("bigendian.npz", np.savez, w.astype(">f4")),
        ("fortran.npz", np.savez, np.asfortranarray(w)),
    ]:
        writer(tmp_path / name, t0=arr, __structure__=_structure("t0"))
        back = clgrad.load(tmp_path / name)
        assert back["t0"].dtype == clgrad.float32
        np.testing.assert_array_equal(back["t0"].numpy(), w)
