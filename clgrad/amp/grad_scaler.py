"""``GradScaler``: loss scaling for float16 training, as ``torch.amp.GradScaler``."""

from __future__ import annotations

import warnings
from enum import Enum

from .. import cl
from .. import dtypes as D
from ..autograd import no_grad
from ..ops.movement import stack
from ..tensor import Tensor


class _Stage(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


_FLOAT32_MAX = 3.4028234663852886e38


class GradScaler:
    """Multiplies the loss by a scale so that float16 gradients do not underflow, divides the
    gradients by it before the optimizer steps, skips a step whose gradients hold an inf or a
    NaN and then shrinks the scale (``backoff_factor``), and grows it (``growth_factor``) after
    ``growth_interval`` steps in a row without one, as ``torch.amp.GradScaler``.

    >>> w = clgrad.nn.Parameter(clgrad.ones(2))
    >>> opt = clgrad.optim.SGD([w], lr=0.1)
    >>> scaler = clgrad.amp.GradScaler("cpu", init_scale=1024.0)
    >>> scaler.scale((w * w).sum()).backward()
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> w
    Parameter containing:
    tensor([0.8000, 0.8000], requires_grad=True)
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ):
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda" and not cl.is_available():
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:  # (PyTorch's asserts)
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict] = {}
        # PyTorch makes its scale tensor at the first scale() (or load_state_dict): before
        # it, unscale_, step and update are an AssertionError
        self._started = False

    # ---- scaling --------------------------------------------------------------------------
    def scale(self, outputs):
        """``outputs`` (a tensor, or lists and tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        self._started = True
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _check_started(self, funcname: str) -> None:
        if not self._started:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did "
                "not use scaler.scale(loss or outputs) earlier in the iteration."
            )

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(
            id(optimizer), {"stage": _Stage.READY, "found_inf": False}
        )

    def unscale_(self, optimizer) -> None:
        """Divides ``optimizer``'s gradients by the scale, in place, and notes whether any
        holds an inf or a NaN (``step`` then skips); once per optimizer between updates."""
        if not self._enabled:
            return
        self._check_started("unscale_")
        state = self._state(optimizer)
        if state["stage"] is _Stage.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = 1.0 / self._scale
        finite: dict = {}  # device -> one 0-d flag per gradient there
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype is D.float16:  # 1/scale times a float16 value underflows
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    g.mul_(inverse)
                    finite.setdefault(g.device, []).append(g.isfinite().all())
            # the flags of a device stacked and reduced there: one read per device
            found = not all(bool(stack(flags).all()) for flags in finite.values())
        state["found_inf"] = found
        state["stage"] = _Stage.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` after ``unscale_`` (where not called yet),
        skipped where a gradient held an inf or a NaN; returns what the step returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_started("step")
        state = self._state(optimizer)
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _Stage.READY:
            self.unscale_(optimizer)
        state["stage"] = _Stage.STEPPED
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """Shrinks the scale after a step skipped for an inf or a NaN, grows it after
        ``growth_interval`` clean steps, or sets ``new_scale`` (a float or a one-element
        tensor); starts the next iteration's bookkeeping."""
        if not self._enabled:
            return
        self._check_started("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a float or a 1-element tensor.")
                new_scale = new_scale.item()
            self._scale = float(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    # PyTorch's scale is a float32 tensor that grows only while it stays finite
                    grown = self._scale * self._growth_factor
                    if grown <= _FLOAT32_MAX:
                        self._scale = grown
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # ---- accessors, as PyTorch's ----------------------------------------------------------
    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._started = True
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
