"""``torch._dynamo.eval_frame``: the class of what ``torch.compile(module)`` returns, which
libraries test for (``isinstance(model, torch._dynamo.eval_frame.OptimizedModule)``, as Hugging
Face's ``is_compiled_module`` does) to reach the module under ``_orig_mod``.

>>> model = clgrad.compile(clgrad.nn.Linear(2, 2))
>>> isinstance(model, clgrad._dynamo.eval_frame.OptimizedModule), type(model._orig_mod).__name__
(True, 'Linear')
"""

from __future__ import annotations

from ..compile import CompiledModule as OptimizedModule

__all__ = ["OptimizedModule"]
