"""``torch.utils.benchmark``: ``Timer`` (times a statement, its clock waiting for clgrad's
devices so the time includes their work), ``Measurement`` (the times, with median, mean,
IQR and torch's summary), ``Compare`` (a table of many measurements).

>>> from clgrad.utils.benchmark import Timer
>>> t = Timer("x * 2", setup="x = torch.ones(8)", label="double")
>>> m = t.timeit(100)
>>> m.number_per_run, len(m.times), m.median > 0
(100, 1, True)
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import itertools
import math
import operator
import sys
import textwrap
import timeit as _timeit
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..device import synchronize

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def timer() -> float:
    """The Timer's default clock: ``timeit.default_timer()`` once every clgrad device has done
    the work queued on it (OpenCL kernels run after the call that enqueued them returns), as
    torch's synchronizes its accelerators.

    >>> timer() > 0
    True
    """
    synchronize()
    return _timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs and how it is labelled (everything but its globals).

    >>> TaskSpec("x + 1", "pass", label="add", sub_label="float").title
    'add: float'
    """

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the statement) and the sub label."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (
            f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
            f"{textwrap.indent(self.stmt, '  ')}"
        )

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task's part of a Measurement's repr."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one statement: ``raw_times`` (seconds per block of ``number_per_run``
    runs), ``times`` (seconds per run), ``median``, ``mean``, ``iqr`` (of ``times``), and the
    Timer's labels (``title``, ``label``, ``stmt``, ...), as torch's.

    >>> m = Measurement(2, [4e-6, 6e-6, 8e-6, 10e-6], TaskSpec("f(x)", "pass"))
    >>> m.times
    [2e-06, 3e-06, 4e-06, 5e-06]
    >>> round(m.median * 1e6, 3), round(m.iqr * 1e6, 3), m.title
    (3.5, 1.5, 'f(x)')
    >>> print(m)  # doctest: +ELLIPSIS
    <clgrad.utils.benchmark.Measurement object at 0x...>
    f(x)
      Median: 3.50 us
      IQR:    1.50 us (2.75 to 4.25)
      4 measurements, 2 runs per measurement, 1 thread
      WARNING: Interquartile range is 42.9% of the median measurement.
               This suggests significant environmental influence.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # for the user's own data

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        # the task's fields read as the measurement's own (m.label, m.stmt, ...)
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the middle half of the times
        supports (1 to 4), as torch estimates it for ``Compare``."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4 : math.ceil(3 * n / 4)]
        std = float(np.std(middle))
        interval = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            times = np.array(self._sorted_times, dtype=np.float64)
            # linear interpolation between the closest ranks, as torch.quantile
            self._median = float(np.quantile(times, 0.5))
            self._mean = float(times.mean())
            self._p25 = float(np.quantile(times, 0.25))
            self._p75 = float(np.quantile(times, 0.75))

            def add_warning(msg: str) -> None:
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (
                    f"  WARNING: Interquartile range is {rel_iqr:.1f}% "
                    f"of the median measurement.\n           {msg}",
                )

            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the IQR is under ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        skip_line, newline = "MEASUREMENT_REPR_SKIP_LINE", "\n"
        n = len(self._sorted_times)
        time_unit, time_scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip_line
        runs = "per measurement," if n > 1 else ","
        repr_str = f"""
{super().__repr__()}
{self.task_spec.summarize()}
  {"Median: " if n > 1 else ""}{self._median / time_scale:.2f} {time_unit}
  {iqr_filter}IQR:    {self.iqr / time_scale:.2f} {time_unit} ({self._p25 / time_scale:.2f} to {self._p75 / time_scale:.2f})
  {n} measurement{"s" if n > 1 else ""}, {self.number_per_run} runs {runs} {self.num_threads} thread{"s" if self.num_threads > 1 else ""}
{newline.join(self._warnings)}""".strip()  # noqa: E501 -- torch's template, one line per line
        return "\n".join(line for line in repr_str.splitlines() if skip_line not in line)

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Replicates of one task (equal ``task_spec``) joined into one Measurement of
        ``number_per_run=1`` (no metadata carried over).

        >>> spec = TaskSpec("f()", "pass")
        >>> merged = Measurement.merge([Measurement(2, [4.0], spec), Measurement(1, [3.0], spec)])
        >>> len(merged), merged[0].times
        (1, [2.0, 3.0])
        """
        grouped: collections.defaultdict[TaskSpec, list[Measurement]] = collections.defaultdict(
            list
        )
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [
            Measurement(1, [t for m in group for t in m.times], spec, None)
            for spec, group in grouped.items()
        ]


def select_unit(t: float) -> tuple[str, float]:
    """The unit that puts ``t`` seconds at 1 to 999, and its scale.

    >>> select_unit(2.5e-6)
    ('us', 1e-06)
    """
    time_unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return time_unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[time_unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures.

    >>> trim_sigfig(3.14159, 2)
    3.1
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = math.ceil(math.log10(abs(x)))
    scale = 10 ** (magnitude - n)
    return float(np.round(x / scale) * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


class Timer:
    """Times ``stmt`` (Python source, run after ``setup`` in a namespace holding ``globals``
    and ``torch``: clgrad, as torch's Timer provides torch), as
    ``torch.utils.benchmark.Timer``. Its default clock (``timer``) waits for clgrad's devices,
    so a block's time includes the kernels it enqueued. ``num_threads`` is recorded (and set
    with ``clgrad.set_num_threads`` while timing, which the host's NumPy and the OpenCL driver
    do not follow); ``label``, ``sub_label``, ``description`` and ``env`` label the results.

    >>> t = Timer("x.sum()", setup="x = torch.ones(16)", description="sum")
    >>> m = t.blocked_autorange(min_run_time=0.01)
    >>> m.number_per_run >= 1 and len(m.times) >= 1 and m.mean > 0
    True
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`: clgrad times Python statements.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                "simply be moved to `setup`."
            )
        # a copy, so that what the statement defines stays out of the caller's dict
        self._globals = dict(globals or {})
        # the package, loaded before any of its modules: looked up, not imported, as this
        # module sits below the package's top
        self._globals.setdefault("torch", sys.modules[__name__.partition(".")[0]])
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        # a floor, so that a ratio of times never divides by zero
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs (after a warm-up of ``number // 100`` runs, at least
        2), as ``timeit.Timer.timeit``.

        >>> Timer("1 + 1").timeit(1000).number_per_run
        1000
        """
        with _threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return Measurement(number, [self._timeit(number=number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> Measurement:
        """Refused, as torch's Timer refuses it: ``blocked_autorange`` times blocks of runs.

        >>> Timer("1 + 1").repeat()
        Traceback (most recent call last):
        NotImplementedError: See `Timer.blocked_autorange.`
        """
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(
        self, number, time_hook, stop_hook, min_run_time, max_run_time=None, callback=None
    ) -> list[float]:
        total_time = 0.0
        can_stop = False
        times: list[float] = []
        with _threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                time_spent = time_hook()
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block: the fewest powers of ten whose block takes at least a thousandth of
        ``min_run_time`` and 10000 times the timer's own overhead (or ``min_run_time``)."""
        with _threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                time_taken = self._timeit(number)
                relative_overhead = overhead / time_taken
                if relative_overhead <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time:
                    break
                if number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of an estimated size (see ``_estimate_block_size``), timed until at least
        ``min_run_time`` seconds have been measured, as torch's; ``callback(number, time)``
        is called after each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(
            number,
            lambda: self._timeit(number),
            lambda times: True,
            min_run_time=min_run_time,
            callback=callback,
        )
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback=None,
    ) -> Measurement:
        """Blocks timed until their IQR is under ``threshold`` times their median (and at
        least ``min_run_time`` seconds, over 3 blocks), or ``max_run_time`` seconds have been
        spent, as torch's.

        >>> m = Timer("x + 1", setup="x = 1").adaptive_autorange(max_run_time=0.2)
        >>> len(m.times) >= 1
        True
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list[float]) -> bool:
            if len(times) > 3:
                return Measurement(number, times, self._task_spec).meets_confidence(threshold)
            return False

        times = self._threaded_measurement_loop(
            number,
            lambda: self._timeit(number),
            stop_hook,
            min_run_time,
            max_run_time,
            callback=callback,
        )
        return Measurement(number, times, self._task_spec)


class _threads:
    """``clgrad.set_num_threads(n)`` while timing, the previous value after."""

    def __init__(self, n: int):
        self.n = n

    def __enter__(self):
        torch = sys.modules[__name__.partition(".")[0]]
        self.prior = torch.get_num_threads()
        torch.set_num_threads(self.n)

    def __exit__(self, *exc):
        sys.modules[__name__.partition(".")[0]].set_num_threads(self.prior)


# ---- Compare -----------------------------------------------------------------------------------
_BEST = "\033[92m"
_GOOD = "\033[34m"
_BAD = "\033[2m\033[91m"
_VERY_BAD = "\033[31m"
_BOLD = "\033[1m"
_TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


class _Column:
    def __init__(self, grouped_results, time_scale, time_unit, trim_significant_figures, warn):
        self._grouped_results = grouped_results
        self._flat_results = list(itertools.chain.from_iterable(grouped_results))
        self._time_scale = time_scale
        self._time_unit = time_unit
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = warn and any(r.has_warnings for r in self._flat_results if r)
        leading_digits = [
            math.ceil(math.log10(r.median / self._time_scale)) if r else None
            for r in self._flat_results
        ]
        unit_digits = max(d for d in leading_digits if d is not None)
        decimal_digits = (
            min(
                max(m.significant_figures - digits, 0)
                for digits, m in zip(leading_digits, self._flat_results)
                if m is not None and digits is not None
            )
            if self._trim_significant_figures
            else 1
        )
        length = unit_digits + decimal_digits + (1 if decimal_digits else 0)
        width = 7 if self._highlight_warnings else 0
        self._template = f"{{:>{length}.{decimal_digits}f}}{{:>{width}}}"

    def get_results_for(self, group):
        return self._grouped_results[group]

    def num_to_str(self, value, estimated_sigfigs, spread) -> str:
        if value is None:
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim_significant_figures:
            value = trim_sigfig(value, estimated_sigfigs)
        return self._template.format(
            value,
            f" (! {spread * 100:.0f}%)" if self._highlight_warnings and spread is not None else "",
        )


class _Row:
    def __init__(
        self, results, row_group, render_env, env_str_len, time_scale, colorize, num_threads=None
    ):
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._columns: tuple[_Column, ...] = ()
        self._num_threads = num_threads

    def register_columns(self, columns) -> None:
        self._columns = columns

    def as_column_strings(self) -> list[str]:
        concrete = [r for r in self._results if r is not None]
        env = f"({concrete[0].env})" if self._render_env else ""
        env = env.ljust(self._env_str_len + 4)
        output = ["  " + env + concrete[0].as_row_name]
        for m, col in zip(self._results, self._columns):
            if m is None:
                output.append(col.num_to_str(None, 1, None))
            else:
                output.append(
                    col.num_to_str(
                        m.median / self._time_scale,
                        m.significant_figures,
                        m.iqr / m.median if m.has_warnings else None,
                    )
                )
        return output

    @staticmethod
    def color_segment(segment, value, best_value) -> str:
        if value <= best_value * 1.01 or value <= best_value + 100e-9:
            return _BEST + _BOLD + segment + _TERMINATE * 2
        if value <= best_value * 1.1:
            return _GOOD + _BOLD + segment + _TERMINATE * 2
        if value >= best_value * 5:
            return _VERY_BAD + _BOLD + segment + _TERMINATE * 2
        if value >= best_value * 2:
            return _BAD + segment + _TERMINATE * 2
        return segment

    def row_separator(self, overall_width) -> list[str]:
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def finalize_column_strings(self, column_strings, col_widths) -> list[str]:
        best_values = [-1 for _ in column_strings]
        if self._colorize == Colorize.ROWWISE:
            row_min = min(r.median for r in self._results if r is not None)
            best_values = [row_min for _ in column_strings]
        elif self._colorize == Colorize.COLUMNWISE:
            best_values = []
            for column in self._columns:
                medians = [r.median for r in column.get_results_for(self._row_group) if r]
                best_values.append(min(medians) if medians else None)
        row_contents = [column_strings[0].ljust(col_widths[0])]
        for col_str, width, result, best_value in zip(
            column_strings[1:], col_widths[1:], self._results, best_values
        ):
            col_str = col_str.center(width)
            if self._colorize != Colorize.NONE and result is not None and best_value is not None:
                col_str = self.color_segment(col_str, result.median, best_value)
            row_contents.append(col_str)
        return row_contents


class _Table:
    def __init__(self, results, colorize, trim_significant_figures, highlight_warnings):
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = select_unit(min(r.median for r in results))
        self.row_keys = ordered_unique([self.row_fn(r) for r in results])
        self.row_keys.sort(key=operator.itemgetter(slice(2)))  # keeps the statements' order
        self.column_keys = ordered_unique([self.col_fn(r) for r in results])
        self.rows, self.columns = self.populate_rows_and_columns()

    @staticmethod
    def row_fn(m: Measurement) -> tuple:
        return m.num_threads, m.env, m.as_row_name

    @staticmethod
    def col_fn(m: Measurement) -> str | None:
        return m.description

    def populate_rows_and_columns(self):
        rows: list[_Row] = []
        columns: list[_Column] = []
        ordered = [[None for _ in self.column_keys] for _ in self.row_keys]
        row_position = {key: i for i, key in enumerate(self.row_keys)}
        col_position = {key: i for i, key in enumerate(self.column_keys)}
        for r in self.results:
            ordered[row_position[self.row_fn(r)]][col_position[self.col_fn(r)]] = r
        unique_envs = {r.env for r in self.results}
        render_env = len(unique_envs) > 1
        env_str_len = max(len(str(e)) for e in unique_envs) if render_env else 0
        prior_num_threads, prior_env, row_group = -1, "", -1
        rows_by_group: list[list] = []
        for (num_threads, env, _), row in zip(self.row_keys, ordered):
            thread_transition = num_threads != prior_num_threads
            if thread_transition:
                prior_num_threads, prior_env = num_threads, ""
                row_group += 1
                rows_by_group.append([])
            rows.append(
                _Row(
                    results=row,
                    row_group=row_group,
                    render_env=render_env and env != prior_env,
                    env_str_len=env_str_len,
                    time_scale=self.time_scale,
                    colorize=self._colorize,
                    num_threads=num_threads if thread_transition else None,
                )
            )
            rows_by_group[-1].append(row)
            prior_env = env
        for i in range(len(self.column_keys)):
            grouped = [tuple(row[i] for row in group) for group in rows_by_group]
            columns.append(
                _Column(
                    grouped,
                    self.time_scale,
                    self.time_unit,
                    self._trim_significant_figures,
                    self._highlight_warnings,
                )
            )
        for row in rows:
            row.register_columns(tuple(columns))
        return tuple(rows), tuple(columns)

    def render(self) -> str:
        string_rows = [[""] + self.column_keys]
        string_rows.extend(r.as_column_strings() for r in self.rows)
        num_cols = max(len(i) for i in string_rows)
        for sr in string_rows:
            sr.extend("" for _ in range(num_cols - len(sr)))
        col_widths = [max(len(j) for j in i) for i in zip(*string_rows)]
        finalized = ["  |  ".join(i.center(w) for i, w in zip(string_rows[0], col_widths))]
        overall_width = len(finalized[0])
        for string_row, row in zip(string_rows[1:], self.rows):
            finalized.extend(row.row_separator(overall_width))
            finalized.append("  |  ".join(row.finalize_column_strings(string_row, col_widths)))
        newline = "\n"
        has_warnings = self._highlight_warnings and any(r.has_warnings for r in self.results)
        warning = (
            "(! XX%) Measurement has high variance, where XX is the IQR / median * 100." + newline
            if has_warnings
            else ""
        )
        return f"""
[{(" " + (self.label or "") + " ").center(overall_width - 2, "-")}]
{newline.join(finalized)}

Times are in {unit_to_english(self.time_unit)}s ({self.time_unit}).
{warning}"""[1:]


class Compare:
    """A table of Measurements, as torch's: one table per ``label``, a row per ``sub_label``
    (or statement) and thread count, a column per ``description``, the medians in one unit
    (replicates of a task merged). ``print()`` or ``str()`` renders it.

    >>> spec = lambda d: TaskSpec("f(x)", "pass", label="f", sub_label="x", description=d)
    >>> print(Compare([Measurement(1, [1e-6, 1.2e-6], spec("small")),
    ...                Measurement(1, [2e-6, 2.2e-6], spec("large"))]))
    [----------- f -----------]
             |  small  |  large
    1 threads: ----------------
          x  |   1.1   |   2.1
    <BLANKLINE>
    Times are in microseconds (us).
    <BLANKLINE>
    """

    def __init__(self, results: list[Measurement]):
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Adds Measurements to the table."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Rounds each time to the figures its spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colors each time by how it compares to the best of its column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Marks the times whose IQR is large next to their median."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        grouped: collections.defaultdict = collections.defaultdict(list)
        for r in Measurement.merge(self._results):
            grouped[r.label].append(r)
        return [
            _Table(
                group, self._colorize, self._trim_significant_figures, self._highlight_warnings
            ).render()
            for group in grouped.values()
        ]
