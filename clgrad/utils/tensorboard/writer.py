"""``torch.utils.tensorboard.writer``: ``SummaryWriter`` and ``FileWriter`` writing
TensorBoard event files with neither ``tensorboard`` nor ``protobuf`` installed.

A file is named ``events.out.tfevents.<time>.<hostname>.<pid>.<n><suffix>`` (``n`` counts the
files this process opened) and starts with the ``file_version`` event "brain.Event:2", as
TensorBoard's ``EventFileWriter`` writes them. Events wait in a queue of ``max_queue`` and
reach the file when it is full, every ``flush_secs`` (a daemon thread), on ``flush()`` and on
``close()``. The messages are serialized bytes (``_proto``), not protobuf objects.

>>> import tempfile
>>> from clgrad.utils.tensorboard import SummaryWriter
>>> with tempfile.TemporaryDirectory() as d:
...     with SummaryWriter(d) as w:
...         w.add_scalar("loss", 0.25, global_step=1)
...     [f.split(".")[:3] for f in os.listdir(d)]
[['events', 'out', 'tfevents']]
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
import warnings
import weakref

from . import _proto as P
from .summary import (
    audio,
    figure_to_image,
    histogram,
    histogram_raw,
    hparams,
    image,
    scalar,
    tensor_proto,
    text,
)

__all__ = ["EventFileWriter", "FileWriter", "RecordWriter", "SummaryWriter"]

# TensorBoard's EventFileWriter names itself in each file's first event; the same name keeps
# the files byte for byte those of torch's SummaryWriter
_SOURCE_WRITER = "tensorboard.summary.writer.event_file_writer"
_global_uid = itertools.count()


class RecordWriter:
    """Writes TFRecords (length, masked CRC-32C, data, masked CRC-32C) to a binary file
    object, as ``tensorboard.summary.writer.record_writer.RecordWriter``.

    >>> import io
    >>> buf = io.BytesIO()
    >>> RecordWriter(buf).write(b"abc")
    >>> len(buf.getvalue())
    19
    """

    def __init__(self, writer) -> None:
        self._writer = writer
        self._closed = False

    def write(self, data: bytes) -> None:
        self._writer.write(P.frame(data))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed


def _flush_periodically(ref, stop: threading.Event, secs: float) -> None:
    while not stop.wait(secs):
        writer = ref()
        if writer is None:
            return
        writer.flush()
        del writer


def _finish(stop: threading.Event, lock, queue: list, writer: RecordWriter) -> None:
    # close(), or the writer collected, or the interpreter exiting (weakref.finalize's atexit):
    # the queued events are written either way
    stop.set()
    with lock:
        if writer.closed:
            return
        for record in queue:
            writer.write(record)
        queue.clear()
        writer.close()


class EventFileWriter:
    """Writes serialized ``Event`` messages to a new event file in ``logdir`` (created if
    missing), queued as TensorBoard's: ``max_queue_size`` events, or ``flush_secs``; a writer
    never closed is flushed when collected or when Python exits."""

    def __init__(self, logdir, max_queue_size=10, flush_secs=120, filename_suffix="") -> None:
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._file_name = (
            os.path.join(
                self._logdir,
                "events.out.tfevents.%010d.%s.%s.%s"  # noqa: UP031 -- TensorBoard's format
                % (time.time(), socket.gethostname(), os.getpid(), next(_global_uid)),
            )
            + filename_suffix
        )
        self._max_queue = max(1, int(max_queue_size))
        self._queue: list[bytes] = []
        self._lock = threading.Lock()
        self._writer = RecordWriter(open(self._file_name, "wb"))  # noqa: SIM115
        self._stop = threading.Event()
        self._finalizer = weakref.finalize(
            self, _finish, self._stop, self._lock, self._queue, self._writer
        )
        self.add_event(
            P.event(time.time(), file_version="brain.Event:2", source_writer=_SOURCE_WRITER)
        )
        self.flush()
        threading.Thread(
            target=_flush_periodically,
            args=(weakref.ref(self), self._stop, float(flush_secs)),
            daemon=True,
            name="clgrad-tensorboard-flush",
        ).start()

    def get_logdir(self) -> str:
        return self._logdir

    def add_event(self, event: bytes) -> None:
        """Queue a serialized ``Event``; the queue is written once it holds max_queue."""
        if not isinstance(event, (bytes, bytearray)):
            raise TypeError(f"Expected a serialized Event (bytes), but got {type(event)}")
        with self._lock:
            if self._writer.closed:
                return
            self._queue.append(bytes(event))
            if len(self._queue) >= self._max_queue:
                self._write_queue()

    def _write_queue(self) -> None:
        for record in self._queue:
            self._writer.write(record)
        self._queue.clear()
        self._writer.flush()

    def flush(self) -> None:
        with self._lock:
            if not self._writer.closed:
                self._write_queue()

    def close(self) -> None:
        self._finalizer()


class FileWriter:
    """One event file in ``log_dir``, with torch's ``FileWriter`` methods (the events and
    summaries being serialized bytes).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     fw = FileWriter(d)
    ...     fw.add_summary(scalar("x", 1.0), global_step=3, walltime=0.0)
    ...     fw.close()
    ...     len(P.read_records(os.path.join(d, os.listdir(d)[0])))
    2
    """

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix="") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event: bytes = b"", step=None, walltime=None) -> None:
        """Add an event: ``event`` holds the serialized fields of ``Event`` past wall_time and
        step (a summary, a file_version, ...); those two are written here, the wall time
        ``time.time()`` unless given."""
        walltime = time.time() if walltime is None else walltime
        step = None if step is None else int(step)
        self.event_writer.add_event(P.event(walltime, step) + event)

    def add_summary(self, summary: bytes, global_step=None, walltime=None) -> None:
        """Add a serialized ``Summary`` as an event."""
        self.add_event(P.f_message(5, summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        """Not recorded: clgrad does not trace graphs (warns)."""
        warnings.warn("clgrad's FileWriter does not record graphs", UserWarning, stacklevel=2)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """Writes scalars, histograms, images, text and hyperparameters to TensorBoard event
    files in ``log_dir``, with the arguments, defaults and file layout of torch's
    ``SummaryWriter``: ``log_dir`` defaults to ``runs/<datetime>_<hostname><comment>``,
    ``add_scalars`` writes each tag through a writer of its own in
    ``<log_dir>/<main_tag>_<tag>``, ``add_hparams`` in ``<log_dir>/<run_name>``.

    Values may be clgrad tensors on any device, NumPy arrays or Python numbers.
    ``add_graph`` warns and records nothing; ``add_embedding``, ``add_video``, ``add_mesh``,
    ``add_pr_curve``, ``add_custom_scalars`` and ``add_image_with_boxes`` raise
    NotImplementedError.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     w = SummaryWriter(d, flush_secs=5)
    ...     for step in range(3):
    ...         w.add_scalar("train/loss", 1.0 / (step + 1), step)
    ...     w.add_histogram("weights", clgrad.randn(100), 0)
    ...     w.add_text("note", "hello", 0)
    ...     w.get_logdir() == d
    ...     w.close()
    True
    """

    def __init__(
        self,
        log_dir=None,
        comment="",
        purge_step=None,
        max_queue=10,
        flush_secs=120,
        filename_suffix="",
    ) -> None:
        if not log_dir:
            from datetime import datetime

            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        # the default histogram bins of TensorFlow's generate_testdata.py, as torch's
        v = 1e-12
        buckets, neg_buckets = [], []
        while v < 1e20:
            buckets.append(v)
            neg_buckets.append(-v)
            v *= 1.1
        self.default_bins = neg_buckets[::-1] + [0] + buckets

    def _get_file_writer(self) -> FileWriter:
        """The default FileWriter, made again after ``close()``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(P.f_bytes(3, "brain.Event:2", always=True), step)
                self.file_writer.add_event(P.f_message(7, P.f_varint(1, P.SESSION_START)), step)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory the event files are written to.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.get_logdir() == d
        True
        """
        return self.log_dir

    def add_hparams(
        self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None
    ) -> None:
        """Record a run's hyperparameters and metrics for TensorBoard's HPARAMS tab, in a
        writer of its own in ``<log_dir>/<run_name>`` (the time by default), as torch's; the
        metrics are written there as scalars too. TypeError unless both are dicts.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_hparams({"lr": 0.1, "bsize": 16}, {"hparam/loss": 0.5}, run_name="r0")
        ...     sorted(os.listdir(os.path.join(d, "r0")))[0][:20]
        'events.out.tfevents.'
        """
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            w_hp.file_writer.add_summary(exp, global_step)
            w_hp.file_writer.add_summary(ssi, global_step)
            w_hp.file_writer.add_summary(sei, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(
        self,
        tag,
        scalar_value,
        global_step=None,
        walltime=None,
        new_style=False,
        double_precision=False,
    ) -> None:
        """Record one number under ``tag`` (a Python or NumPy number, or a one-element
        tensor on any device): ``simple_value``, or a tensor with ``new_style``.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_scalar("acc", clgrad.tensor(0.9), 10)
        """
        summary = scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None) -> None:
        """Record several numbers on one chart: each tag's value goes to a writer of its
        own in ``<log_dir>/<main_tag>_<tag>`` (``/`` in main_tag as ``_``), tagged
        ``main_tag``, one wall time for all, as torch's.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_scalars("loss", {"train": 0.5, "val": 0.7}, 1)
        ...     sorted(x for x in os.listdir(d) if not x.startswith("events"))
        ['loss_train', 'loss_val']
        """
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if self.all_writers is None:
                raise AssertionError("self.all_writers is None")
            if fw_tag in self.all_writers:
                fw = self.all_writers[fw_tag]
            else:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None) -> None:
        """Record a whole tensor (its values and shape) under the "tensor" plugin."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(
        self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None
    ) -> None:
        """Record the histogram of ``values``: TensorFlow's default exponential buckets for
        ``bins="tensorflow"``, else NumPy's ``bins`` (a count, "auto", "fd", ... or edges),
        at most ``max_bins`` buckets.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_histogram("w", clgrad.randn(50), 0, bins="auto")
        """
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            histogram(tag, values, bins, max_bins=max_bins), global_step, walltime
        )

    def add_histogram_raw(
        self,
        tag,
        min,
        max,
        num,
        sum,
        sum_squares,
        bucket_limits,
        bucket_counts,
        global_step=None,
        walltime=None,
    ) -> None:
        """Record a histogram from its statistics and buckets (ValueError when the limits
        and counts differ in length)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
            global_step,
            walltime,
        )

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Record an image, PNG-encoded: (3, H, W) by default, or the layout ``dataformats``
        names (HWC, HW, ...); float values in [0, 1], uint8 in [0, 255].

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_image("img", clgrad.rand(8, 8, 3), 0, dataformats="HWC")
        """
        self._get_file_writer().add_summary(
            image(tag, img_tensor, dataformats=dataformats), global_step, walltime
        )

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Record a batch of images, tiled into one grid of 8 columns (N, 3, H, W by
        default).

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_images("batch", clgrad.rand(4, 1, 8, 8), 0)
        """
        self._get_file_writer().add_summary(
            image(tag, img_tensor, dataformats=dataformats), global_step, walltime
        )

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None) -> None:
        """Record a matplotlib figure (or a list, as one grid) as an image; needs
        matplotlib. The figure is closed unless ``close=False``."""
        if isinstance(figure, list):
            self.add_image(
                tag, figure_to_image(figure, close), global_step, walltime, dataformats="NCHW"
            )
        else:
            self.add_image(
                tag, figure_to_image(figure, close), global_step, walltime, dataformats="CHW"
            )

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Record a mono sound, (1, L) in [-1, 1], as 16-bit WAV."""
        self._get_file_writer().add_summary(
            audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime
        )

    def add_text(self, tag, text_string, global_step=None, walltime=None) -> None:
        """Record a string (markdown in TensorBoard's TEXT tab) under ``tag/text_summary``.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_text("config", "lr = 0.1", 0)
        """
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Accepted and not recorded: clgrad has no tracer to build TensorBoard's graph from,
        so this warns (UserWarning) and writes nothing.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     with warnings.catch_warnings(record=True) as caught:
        ...         warnings.simplefilter("always")
        ...         w.add_graph(clgrad.nn.Linear(2, 1), clgrad.zeros(1, 2))
        ...     "graphs are not recorded" in str(caught[0].message)
        True
        """
        warnings.warn(
            "clgrad.utils.tensorboard: graphs are not recorded (add_graph wrote nothing)",
            UserWarning,
            stacklevel=2,
        )

    def add_onnx_graph(self, prototxt) -> None:
        """Not supported (NotImplementedError): reading ONNX needs protobuf."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write ONNX graphs")

    def add_embedding(
        self,
        mat,
        metadata=None,
        label_img=None,
        global_step=None,
        tag="default",
        metadata_header=None,
    ) -> None:
        """Not supported: raises NotImplementedError (the projector's config is a protobuf
        text file clgrad does not write)."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write embeddings")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None) -> None:
        """Not supported (NotImplementedError): torch encodes GIFs with moviepy."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write videos")

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, *args, **kwargs) -> None:
        """Not supported (NotImplementedError): torch draws the boxes with Pillow."""
        raise NotImplementedError("clgrad.utils.tensorboard does not draw boxes on images")

    def add_pr_curve(self, tag, labels, predictions, *args, **kwargs) -> None:
        """Not supported (NotImplementedError)."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write PR curves")

    def add_pr_curve_raw(self, tag, *args, **kwargs) -> None:
        """Not supported (NotImplementedError)."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write PR curves")

    def add_custom_scalars(self, layout) -> None:
        """Not supported (NotImplementedError)."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write custom scalars")

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """Not supported (NotImplementedError)."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write custom scalars")

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """Not supported (NotImplementedError)."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write custom scalars")

    def add_mesh(self, tag, vertices, *args, **kwargs) -> None:
        """Not supported (NotImplementedError)."""
        raise NotImplementedError("clgrad.utils.tensorboard does not write meshes")

    def flush(self) -> None:
        """Write every queued event of every writer to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every file; a later ``add_*`` opens a new file (closing twice does
        nothing)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
