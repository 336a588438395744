"""The bytes of TensorBoard's event files, written without ``protobuf`` or ``tensorboard``.

An event file is a sequence of TFRecords, each ``length`` (uint64, little-endian), the masked
CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data; each record's data is a
serialized ``tensorboard.Event`` protocol buffer. The messages here are encoded by hand with
the field numbers of TensorBoard's ``event.proto``, ``summary.proto``, ``tensor.proto``,
``tensor_shape.proto`` and the hparams plugin's ``api.proto`` / ``plugin_data.proto``, as
proto3 serializes them (fields in number order, scalars equal to zero left out except inside a
oneof, repeated numbers packed), so a record holds the bytes protobuf would write.

``decode`` reads any message back as ``{field number: [values]}`` and ``read_records`` a
file's records, checking both CRCs; the tests use them.

>>> crc32c(b"123456789") == 0xE3069283
True
>>> rec = frame(b"hi")
>>> list(read_records_from_bytes(rec))
[b'hi']
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

# ---- CRC-32C (Castagnoli), as TFRecord's framing uses ------------------------------------------
_POLY = 0x82F63B78  # reflected 0x1EDC6F41


def _table() -> list[int]:
    out = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        out.append(c)
    return out


_TABLE = _table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """The CRC-32C of ``data`` (continuing from ``crc``).

    >>> hex(crc32c(b""))
    '0x0'
    >>> hex(crc32c(bytes(32)))
    '0x8a9136aa'
    """
    crc ^= 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC: the CRC-32C rotated right by 15 bits plus 0xA282EAD8.

    >>> hex(masked_crc32c(b"123456789"))
    '0xc78ab0e5'
    """
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """``data`` as one TFRecord: length, its masked CRC, data, the data's masked CRC."""
    header = struct.pack("<Q", len(data))
    return (
        header
        + struct.pack("<I", masked_crc32c(header))
        + data
        + struct.pack("<I", masked_crc32c(data))
    )


def read_records_from_bytes(buf: bytes) -> Iterator[bytes]:
    """The records of an event file's bytes; ValueError for a bad CRC or a truncated record."""
    pos = 0
    while pos < len(buf):
        if pos + 12 > len(buf):
            raise ValueError(f"truncated record header at byte {pos}")
        header = buf[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (crc,) = struct.unpack("<I", buf[pos + 8 : pos + 12])
        if crc != masked_crc32c(header):
            raise ValueError(f"bad length CRC at byte {pos}")
        data = buf[pos + 12 : pos + 12 + length]
        if len(data) != length or pos + 16 + length > len(buf):
            raise ValueError(f"truncated record at byte {pos}")
        (crc,) = struct.unpack("<I", buf[pos + 12 + length : pos + 16 + length])
        if crc != masked_crc32c(data):
            raise ValueError(f"bad data CRC at byte {pos}")
        yield data
        pos += 16 + length


def read_records(path) -> list[bytes]:
    """The records of the event file at ``path``, CRCs checked."""
    with open(path, "rb") as f:
        return list(read_records_from_bytes(f.read()))


# ---- protobuf wire format ----------------------------------------------------------------------
def varint(n: int) -> bytes:
    """``n`` as a base-128 varint (a negative int64 as its 10-byte two's complement).

    >>> varint(1), varint(300), len(varint(-1))
    (b'\\x01', b'\\xac\\x02', 10)
    """
    n &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return varint((field << 3) | wire)


def f_varint(field: int, value: int, always: bool = False) -> bytes:
    """An int32/int64/uint/bool/enum field (left out when 0, unless ``always``: in a oneof)."""
    value = int(value)
    if value == 0 and not always:
        return b""
    return _key(field, 0) + varint(value)


def f_double(field: int, value: float, always: bool = False) -> bytes:
    raw = struct.pack("<d", float(value))
    if raw == bytes(8) and not always:
        return b""
    return _key(field, 1) + raw


def f_float(field: int, value: float, always: bool = False) -> bytes:
    raw = struct.pack("<f", float(value))
    if raw == bytes(4) and not always:
        return b""
    return _key(field, 5) + raw


def f_bytes(field: int, value: bytes | str, always: bool = False) -> bytes:
    """A string, bytes or message field (an empty one left out unless ``always``: a oneof
    member, a set message field, or an element of a repeated field)."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    if not value and not always:
        return b""
    return _key(field, 2) + varint(len(value)) + value


def f_message(field: int, value: bytes | None) -> bytes:
    """A message field that is set (None: not set)."""
    return b"" if value is None else f_bytes(field, value, always=True)


def f_repeated(field: int, values: Iterable[bytes | str]) -> bytes:
    return b"".join(f_bytes(field, v, always=True) for v in values)


def f_packed_doubles(field: int, values) -> bytes:
    values = [float(v) for v in values]
    return f_bytes(field, struct.pack(f"<{len(values)}d", *values)) if values else b""


def f_packed_floats(field: int, values) -> bytes:
    values = [float(v) for v in values]
    return f_bytes(field, struct.pack(f"<{len(values)}f", *values)) if values else b""


def f_packed_varints(field: int, values) -> bytes:
    return f_bytes(field, b"".join(varint(int(v)) for v in values)) if len(values) else b""


def decode(buf: bytes) -> dict[int, list]:
    """A message's fields: ``{number: [value, ...]}`` with varints as ints, fixed64 and
    fixed32 as raw bytes, length-delimited fields as bytes (decode them again as needed).

    >>> decode(f_varint(2, 7) + f_bytes(3, "ab"))
    {2: [7], 3: [b'ab']}
    """
    out: dict[int, list] = {}
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            value, pos = buf[pos : pos + n], pos + n
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(buf):
            raise ValueError("truncated message")
        out.setdefault(field, []).append(value)
    return out


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def as_double(raw: bytes) -> float:
    return struct.unpack("<d", raw)[0]


def as_float(raw: bytes) -> float:
    return struct.unpack("<f", raw)[0]


def as_int64(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def unpack_doubles(raw: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(raw) // 8}d", raw))


def unpack_floats(raw: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def unpack_varints(raw: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(raw):
        n, pos = _read_varint(raw, pos)
        out.append(n)
    return out


# ---- the messages ------------------------------------------------------------------------------
# tensorboard.DataType
DT = {
    "DT_FLOAT": 1,
    "DT_DOUBLE": 2,
    "DT_INT32": 3,
    "DT_UINT8": 4,
    "DT_INT16": 5,
    "DT_INT8": 6,
    "DT_STRING": 7,
    "DT_COMPLEX64": 8,
    "DT_INT64": 9,
    "DT_BOOL": 10,
    "DT_BFLOAT16": 14,
    "DT_COMPLEX128": 18,
    "DT_HALF": 19,
}
SESSION_START = 1  # SessionLog.START


def event(
    wall_time: float,
    step: int | None = None,
    *,
    file_version: str | None = None,
    summary: bytes | None = None,
    session_log_status: int | None = None,
    source_writer: str | None = None,
) -> bytes:
    """A ``tensorboard.Event``: wall_time 1, step 2, and one of file_version 3, summary 5,
    session_log 7; source_metadata 10."""
    out = f_double(1, wall_time) + f_varint(2, step or 0)
    if file_version is not None:
        out += f_bytes(3, file_version, always=True)
    if summary is not None:
        out += f_message(5, summary)
    if session_log_status is not None:
        out += f_message(7, f_varint(1, session_log_status))
    if source_writer is not None:
        out += f_message(10, f_bytes(1, source_writer))
    return out


def summary(*values: bytes) -> bytes:
    """A ``tensorboard.Summary`` of ``Summary.Value`` messages (field 1, repeated)."""
    return f_repeated(1, values)


def summary_value(
    tag: str,
    *,
    simple_value: float | None = None,
    image: bytes | None = None,
    histo: bytes | None = None,
    audio: bytes | None = None,
    tensor: bytes | None = None,
    metadata: bytes | None = None,
) -> bytes:
    """A ``Summary.Value``: tag 1, then one of simple_value 2, image 4, histo 5, audio 6,
    tensor 8; metadata 9."""
    out = f_bytes(1, tag)
    if simple_value is not None:
        out += f_float(2, simple_value, always=True)
    out += f_message(4, image) + f_message(5, histo) + f_message(6, audio)
    out += f_message(8, tensor) + f_message(9, metadata)
    return out


def summary_metadata(plugin_name: str, content: bytes = b"") -> bytes:
    """A ``SummaryMetadata`` whose plugin_data (1) names the plugin (1) and its content (2)."""
    return f_message(1, f_bytes(1, plugin_name) + f_bytes(2, content))


def histogram_proto(min, max, num, sum, sum_squares, bucket_limit, bucket) -> bytes:
    """A ``HistogramProto``: min 1, max 2, num 3, sum 4, sum_squares 5 (doubles), packed
    bucket_limit 6 and bucket 7."""
    return (
        f_double(1, min)
        + f_double(2, max)
        + f_double(3, num)
        + f_double(4, sum)
        + f_double(5, sum_squares)
        + f_packed_doubles(6, bucket_limit)
        + f_packed_doubles(7, bucket)
    )


def image_proto(height: int, width: int, colorspace: int, encoded: bytes) -> bytes:
    """A ``Summary.Image``: height 1, width 2, colorspace 3, encoded_image_string 4."""
    return f_varint(1, height) + f_varint(2, width) + f_varint(3, colorspace) + f_bytes(4, encoded)


def audio_proto(sample_rate, num_channels, length_frames, encoded, content_type) -> bytes:
    """A ``Summary.Audio``: sample_rate 1 (float), num_channels 2, length_frames 3,
    encoded_audio_string 4, content_type 5."""
    return (
        f_float(1, sample_rate)
        + f_varint(2, num_channels)
        + f_varint(3, length_frames)
        + f_bytes(4, encoded)
        + f_bytes(5, content_type)
    )


def tensor_shape(dims: Iterable[int] | None) -> bytes | None:
    """A ``TensorShapeProto``: one ``Dim`` (size 1) per dimension, field 2."""
    if dims is None:
        return None
    return f_repeated(2, [f_varint(1, d) for d in dims])


def tensor_proto(dtype: str, shape: Iterable[int] | None = None, **vals) -> bytes:
    """A ``TensorProto``: dtype 1, tensor_shape 2, and the value fields given by name
    (float_val 5, double_val 6, int_val 7, string_val 8, scomplex_val 9, int64_val 10,
    bool_val 11, dcomplex_val 12, half_val 13, uint32_val 16), in field order."""
    fields = {
        "float_val": (5, f_packed_floats),
        "double_val": (6, f_packed_doubles),
        "int_val": (7, f_packed_varints),
        "string_val": (8, f_repeated),
        "scomplex_val": (9, f_packed_floats),
        "int64_val": (10, f_packed_varints),
        "bool_val": (11, f_packed_varints),
        "dcomplex_val": (12, f_packed_doubles),
        "half_val": (13, f_packed_varints),
        "uint32_val": (16, f_packed_varints),
    }
    out = f_varint(1, DT[dtype]) + f_message(2, tensor_shape(shape))
    for name, (number, write) in sorted(fields.items(), key=lambda kv: kv[1][0]):
        if name in vals:
            out += write(number, vals.pop(name))
    if vals:
        raise TypeError(f"unknown TensorProto fields {sorted(vals)}")
    return out
