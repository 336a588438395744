"""``torch.utils.tensorboard``: ``SummaryWriter`` writing TensorBoard event files, with
neither the ``tensorboard`` nor the ``protobuf`` package needed (torch's needs both).

``from clgrad.utils.tensorboard import SummaryWriter`` and then ``tensorboard --logdir runs``
where TensorBoard is installed. What is written: scalars (``add_scalar``, ``add_scalars``),
histograms, images (PNG, without Pillow), matplotlib figures, text, audio, tensors and
hyperparameters; graphs are not (``add_graph`` warns).

>>> import tempfile
>>> from clgrad.utils.tensorboard import SummaryWriter
>>> with tempfile.TemporaryDirectory() as d:
...     with SummaryWriter(d) as writer:
...         writer.add_scalar("loss", 1.5, 0)
"""

from .writer import FileWriter, RecordWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
