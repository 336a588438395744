"""``torch.utils.tensorboard.summary``: values turned into serialized ``tensorboard.Summary``
messages (bytes here, where torch builds protobuf objects), by torch's rules: the same
histogram buckets, image layouts and scaling, hparams plugin records and text tensors.

Images are PNG-encoded with ``zlib`` (no Pillow): 8-bit grayscale, gray+alpha, RGB or RGBA.

>>> from clgrad.utils.tensorboard import _proto
>>> value = _proto.decode(_proto.decode(scalar("loss", 0.5))[1][0])
>>> value[1], _proto.as_float(value[2][0])
([b'loss'], 0.5)
"""

from __future__ import annotations

import io
import struct
import wave
import zlib

import numpy as np

from ...tensor import Tensor
from . import _proto as P

__all__ = [
    "audio",
    "convert_to_HWC",
    "encode_png",
    "figure_to_image",
    "histogram",
    "histogram_raw",
    "hparams",
    "image",
    "make_grid",
    "make_histogram",
    "make_image",
    "make_np",
    "scalar",
    "tensor_proto",
    "text",
]


def make_np(x) -> np.ndarray:
    """``x`` as a NumPy array, as torch's ``make_np``: an array as it is, a Python or NumPy
    number as a 1-element array, a clgrad tensor (any device) detached and copied to the host
    (bfloat16 as float16); NotImplementedError for anything else.

    >>> make_np(3.0), make_np(clgrad.tensor([[1, 2]]))
    (array([3.]), array([[1, 2]]))
    """
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.is_meta:
            return np.random.randn(1)
        x = x.detach().cpu()
        if x.dtype.name == "bfloat16":
            x = x.to(dtype=_float16())
        return x.numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def _float16():
    from ...dtypes import float16

    return float16


# ---- scalars, tensors, text --------------------------------------------------------------------
def scalar(name, tensor, collections=None, new_style=False, double_precision=False) -> bytes:
    """A Summary of one scalar: ``simple_value``, or with ``new_style`` a float (or with
    ``double_precision`` a double) ``TensorProto`` under the "scalars" plugin. A value of
    more than one element is torch's AssertionError.

    >>> len(scalar("x", clgrad.tensor(2.0), new_style=True)) > len(scalar("x", 2.0))
    True
    """
    arr = make_np(tensor).squeeze()
    if arr.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: {arr.size} "
            f"and {arr.ndim} dimensions."
        )
    value = float(arr)
    if new_style:
        if double_precision:
            tensor_msg = P.tensor_proto("DT_DOUBLE", double_val=[value])
        else:
            tensor_msg = P.tensor_proto("DT_FLOAT", float_val=[value])
        return P.summary(
            P.summary_value(name, tensor=tensor_msg, metadata=P.summary_metadata("scalars"))
        )
    return P.summary(P.summary_value(name, simple_value=value))


def _half_to_int(f: float) -> int:
    # torch's half_to_int: the float32 bits of the value, as a signed int
    return struct.unpack("i", struct.pack("f", f))[0]


# dtype name -> (TensorProto dtype, value field, conversion), as torch's _TENSOR_TYPE_MAP
_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", lambda a: [_half_to_int(x) for x in a.tolist()]),
    "bfloat16": ("DT_BFLOAT16", "half_val", lambda a: [_half_to_int(x) for x in a.tolist()]),
    "float32": ("DT_FLOAT", "float_val", lambda a: a.tolist()),
    "float64": ("DT_DOUBLE", "double_val", lambda a: a.tolist()),
    "int8": ("DT_INT8", "int_val", lambda a: a.tolist()),
    "uint8": ("DT_UINT8", "uint32_val", lambda a: a.tolist()),
    "int16": ("DT_INT16", "int_val", lambda a: a.tolist()),
    "int32": ("DT_INT32", "int_val", lambda a: a.tolist()),
    "int64": ("DT_INT64", "int64_val", lambda a: a.tolist()),
    "bool": ("DT_BOOL", "bool_val", lambda a: a.tolist()),
    "complex64": ("DT_COMPLEX64", "scomplex_val", lambda a: a.view(np.float32).tolist()),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", lambda a: a.view(np.float64).tolist()),
}


def tensor_proto(tag, tensor) -> bytes:
    """A Summary holding the whole tensor as a ``TensorProto`` under the "tensor" plugin, as
    torch's (ValueError for an unsupported dtype or one of 2 GB or more).

    >>> len(tensor_proto("t", clgrad.tensor([1, 2, 3]))) > 0
    True
    """
    name = tensor.dtype.name if isinstance(tensor, Tensor) else np.asarray(tensor).dtype.name
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if name not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, convert = _TENSOR_TYPES[name]
    arr = tensor.detach().cpu()
    if name == "bfloat16":
        arr = arr.float()
    arr = arr.numpy().reshape(-1)
    msg = P.tensor_proto(dtype, list(tensor.shape), **{field: convert(arr)})
    return P.summary(P.summary_value(tag, tensor=msg, metadata=P.summary_metadata("tensor")))


def text(tag, text) -> bytes:
    """A Summary of a string under the "text" plugin: a 1-element DT_STRING tensor tagged
    ``tag + "/text_summary"``, as torch's.

    >>> P.decode(P.decode(text("notes", "hi"))[1][0])[1]
    [b'notes/text_summary']
    """
    msg = P.tensor_proto("DT_STRING", [1], string_val=[text.encode("utf_8")])
    # TextPluginData(version=0) serializes to no bytes
    return P.summary(
        P.summary_value(tag + "/text_summary", tensor=msg, metadata=P.summary_metadata("text"))
    )


# ---- histograms --------------------------------------------------------------------------------
def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts) -> bytes:
    """A Summary of a histogram given by its statistics and buckets."""
    histo = P.histogram_proto(min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
    return P.summary(P.summary_value(name, histo=histo))


def histogram(name, values, bins, max_bins=None) -> bytes:
    """A Summary of the histogram of ``values`` over ``bins`` (NumPy's ``bins``: a count, a
    rule name or the edges), as torch's.

    >>> len(histogram("h", clgrad.arange(10.0), bins=3)) > 0
    True
    """
    values = make_np(values)
    return P.summary(
        P.summary_value(name, histo=make_histogram(values.astype(float), bins, max_bins))
    )


def make_histogram(values, bins, max_bins=None) -> bytes:
    """A ``HistogramProto`` as torch's ``make_histogram`` (TensorFlow's histogram.cc): the
    buckets from the first to the last non-empty one, an empty bucket before them, at most
    ``max_bins`` by merging neighbours. ValueError for no values."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        subsampling = num_bins // max_bins
        subsampling_remainder = num_bins % subsampling
        if subsampling_remainder != 0:
            counts = np.pad(
                counts,
                pad_width=[[0, subsampling - subsampling_remainder]],
                mode="constant",
                constant_values=0,
            )
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start = int(start)
    end = int(end) + 1
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return P.histogram_proto(
        values.min(),
        values.max(),
        len(values),
        values.sum(),
        values.dot(values),
        limits.tolist(),
        counts.tolist(),
    )


# ---- images ------------------------------------------------------------------------------------
def make_grid(I, ncols=8):  # noqa: E741 -- torch's name
    """N images (N1HW or N3HW) tiled into one 3HW image, ``ncols`` to a row, as torch's."""
    if not isinstance(I, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if I.shape[1] == 1:
        I = np.concatenate([I, I, I], 1)  # noqa: E741
    if I.ndim != 4 or I.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    nimg, H, W = I.shape[0], I.shape[2], I.shape[3]
    ncols = min(nimg, ncols)
    nrows = int(np.ceil(float(nimg) / ncols))
    canvas = np.zeros((3, H * nrows, W * ncols), dtype=I.dtype)
    i = 0
    for y in range(nrows):
        for x in range(ncols):
            if i >= nimg:
                break
            canvas[:, y * H : (y + 1) * H, x * W : (x + 1) * W] = I[i]
            i += 1
    return canvas


def convert_to_HWC(tensor, input_format):
    """An image array in the layout ``input_format`` names (NCHW, NHWC, CHW, HWC, HW, ...)
    as HWC with 3 channels (a batch tiled by ``make_grid``, gray repeated), as torch's.

    >>> convert_to_HWC(np.zeros((1, 4, 5)), "CHW").shape
    (4, 5, 3)
    """
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {input_format}"
        )
    if len(tensor.shape) != len(input_format):
        raise AssertionError(
            "size of input tensor and input format are different. "
            f"tensor shape: {tensor.shape}, input_format: {input_format}"
        )
    input_format = input_format.upper()
    if len(input_format) == 4:
        index = [input_format.find(c) for c in "NCHW"]
        return make_grid(tensor.transpose(index)).transpose(1, 2, 0)
    if len(input_format) == 3:
        index = [input_format.find(c) for c in "HWC"]
        tensor_HWC = tensor.transpose(index)
        if tensor_HWC.shape[2] == 1:
            tensor_HWC = np.concatenate([tensor_HWC, tensor_HWC, tensor_HWC], 2)
        return tensor_HWC
    if len(input_format) == 2:
        index = [input_format.find(c) for c in "HW"]
        tensor = tensor.transpose(index)
        return np.stack([tensor, tensor, tensor], 2)
    return tensor


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data))
        + kind
        + data
        + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def encode_png(image: np.ndarray) -> bytes:
    """An HWC (or HW) uint8 array as PNG bytes: 8 bits per sample, gray (1 channel),
    gray+alpha (2), RGB (3) or RGBA (4), rows unfiltered, deflated with zlib.

    >>> encode_png(np.zeros((2, 3, 3), np.uint8))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    if image.ndim == 2:
        image = image[:, :, None]
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (1, 2, 3, 4):
        raise ValueError(f"expected an HWC uint8 image of 1 to 4 channels, got {image.shape}")
    h, w, c = image.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    rows = np.zeros((h, 1 + w * c), np.uint8)  # each row: filter type 0, then the samples
    rows[:, 1:] = np.ascontiguousarray(image).reshape(h, w * c)
    header = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + _png_chunk(b"IEND", b"")
    )


def make_image(tensor, rescale=1, rois=None, labels=None) -> bytes:
    """A ``Summary.Image`` of an HWC uint8 array: height, width, channels, PNG bytes."""
    if rescale != 1 or rois is not None:
        raise NotImplementedError(
            "clgrad.utils.tensorboard writes images without Pillow: rescaling and boxes are "
            "not supported"
        )
    height, width, channel = tensor.shape
    return P.image_proto(height, width, channel, encode_png(tensor))


def _scale_factor(arr) -> int:
    return 1 if arr.dtype == np.uint8 else 255


def image(tag, tensor, rescale=1, dataformats="NCHW") -> bytes:
    """A Summary of one image (or a batch tiled into one), as torch's: float values in [0, 1]
    scaled by 255, uint8 taken as they are, clipped to [0, 255] and truncated to uint8.

    >>> len(image("im", clgrad.rand(3, 8, 8), dataformats="CHW")) > 0
    True
    """
    arr = convert_to_HWC(make_np(tensor), dataformats)
    scale = _scale_factor(arr)
    arr = (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return P.summary(P.summary_value(tag, image=make_image(arr, rescale=rescale)))


def figure_to_image(figures, close=True):
    """A matplotlib figure (or a list of them) rendered by Agg as a CHW (NCHW) uint8 RGB
    array, as torch's (closing the figures unless ``close=False``); needs matplotlib."""
    import matplotlib.backends.backend_agg as plt_backend_agg
    import matplotlib.pyplot as plt

    def render_to_rgb(figure):
        canvas = plt_backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        data = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        w, h = figure.canvas.get_width_height()
        image_hwc = data.reshape([h, w, 4])[:, :, 0:3]
        image_chw = np.moveaxis(image_hwc, source=2, destination=0)
        if close:
            plt.close(figure)
        return image_chw

    if isinstance(figures, list):
        return np.stack([render_to_rgb(f) for f in figures])
    return render_to_rgb(figures)


# ---- audio -------------------------------------------------------------------------------------
def audio(tag, tensor, sample_rate=44100) -> bytes:
    """A Summary of a mono sound in [-1, 1] (clipped beyond, with torch's printed warning) as
    a 16-bit WAV.

    >>> len(audio("a", clgrad.zeros(1, 100))) > 100
    True
    """
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    fio = io.BytesIO()
    with wave.open(fio, "wb") as wave_write:
        wave_write.setnchannels(1)
        wave_write.setsampwidth(2)
        wave_write.setframerate(sample_rate)
        wave_write.writeframes(array.data)
    msg = P.audio_proto(sample_rate, 1, array.shape[-1], fio.getvalue(), "audio/wav")
    return P.summary(P.summary_value(tag, audio=msg))


# ---- hparams -----------------------------------------------------------------------------------
_HP_PLUGIN = "hparams"
EXPERIMENT_TAG = "_hparams_/experiment"
SESSION_START_INFO_TAG = "_hparams_/session_start_info"
SESSION_END_INFO_TAG = "_hparams_/session_end_info"
_DATA_TYPE = {"float": 3, "str": 1, "bool": 2}  # hparams.DataType
_STATUS_SUCCESS = 1


def _struct_value(kind: str, v) -> bytes:
    # google.protobuf.Value: number_value 2, string_value 3, bool_value 4 (a oneof)
    if kind == "float":
        return P.f_double(2, v, always=True)
    if kind == "str":
        return P.f_bytes(3, v, always=True)
    return P.f_varint(4, bool(v), always=True)


def _hparam_info(name: str, kind: str, domain=None) -> bytes:
    out = P.f_bytes(1, name) + P.f_varint(4, _DATA_TYPE[kind])
    if domain is not None:
        values = P.f_repeated(1, [_struct_value(kind, d) for d in domain])  # ListValue
        out += P.f_message(5, values)
    return out


def _hparams_summary(tag: str, plugin_field: int, payload: bytes) -> bytes:
    # HParamsPluginData: version 1 (0, left out), experiment 2 / session_start_info 3 /
    # session_end_info 4
    content = P.f_message(plugin_field, payload)
    return P.summary(P.summary_value(tag, metadata=P.summary_metadata(_HP_PLUGIN, content)))


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three Summaries of the hparams plugin (Experiment, SessionStartInfo,
    SessionEndInfo), as torch's: a number (bools included: torch tests int first) is a
    FLOAT64 hparam, a string a STRING one, a tensor its first element; None is left out.

    >>> exp, ssi, sei = hparams({"lr": 0.1, "opt": "sgd"}, {"hparam/loss": 0})
    >>> all(isinstance(s, bytes) for s in (exp, ssi, sei))
    True
    """
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if (
            k not in hparam_dict
            or not isinstance(v, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in v)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                f"hparam_dict[{k}]."
            )
    infos, entries = [], []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        domain = hparam_domain_discrete.get(k)
        if isinstance(v, (int, float)):
            kind = "float"
        elif isinstance(v, str):
            kind = "str"
        elif isinstance(v, Tensor):
            v, kind, domain = float(make_np(v).reshape(-1)[0]), "float", None
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        entries.append(P.f_bytes(1, k) + P.f_message(2, _struct_value(kind, v)))  # map entry
        infos.append(_hparam_info(k, kind, domain))
    ssi = _hparams_summary(SESSION_START_INFO_TAG, 3, P.f_repeated(1, entries))
    metrics = [P.f_message(1, P.f_bytes(2, k)) for k in metric_dict]  # MetricInfo(MetricName)
    exp = _hparams_summary(EXPERIMENT_TAG, 2, P.f_repeated(4, infos) + P.f_repeated(5, metrics))
    sei = _hparams_summary(SESSION_END_INFO_TAG, 4, P.f_varint(1, _STATUS_SUCCESS))
    return exp, ssi, sei
