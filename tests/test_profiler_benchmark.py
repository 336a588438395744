"""clgrad.profiler (and clgrad.autograd.profiler), clgrad.utils.benchmark, clgrad.compiler and
clgrad._dynamo against torch's: the same schedules and profiler state machine, the same event
names and counts, real timings, valid traces, torch's Measurement statistics and Compare
tables, and the compile switches PyTorch programs touch."""

import gzip
import json
import os
import random
import sys
import time
import warnings

import pytest
import torch
import torch._dynamo
import torch.compiler
import torch.profiler
import torch.utils.benchmark as tbench

import clgrad
import clgrad._dynamo
import clgrad.compiler
import clgrad.nn.functional as F
import clgrad.profiler as cprof
import clgrad.utils.benchmark as cbench
from clgrad.autograd import profiler as autograd_profiler
from clgrad.compile import CompiledFunction

SCHEDULES = [
    dict(wait=1, warmup=1, active=2),
    dict(wait=1, warmup=1, active=2, repeat=2),
    dict(wait=0, warmup=2, active=1, repeat=3, skip_first=2),
    dict(wait=3, warmup=1, active=3, repeat=1, skip_first=5, skip_first_wait=1),
    dict(wait=2, warmup=0, active=1, repeat=0, skip_first=1),
    dict(wait=0, warmup=0, active=1),
]


# ---- clgrad.profiler ---------------------------------------------------------------------------
@pytest.mark.parametrize("params", SCHEDULES)
def test_schedule_actions_match_torch(params):
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        mine = cprof.schedule(**params)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        ref = torch.profiler.schedule(**params)
    assert [mine(s).name for s in range(40)] == [ref(s).name for s in range(40)]
    # both warn (only) where there is no warmup
    assert len(ours) == len(theirs) == (params["warmup"] == 0)


def test_schedule_rejects_what_torch_rejects():
    for bad in (dict(wait=-1, warmup=1, active=1), dict(wait=0, warmup=1, active=0)):
        with pytest.raises(AssertionError):
            torch.profiler.schedule(**bad)
        with pytest.raises(AssertionError):
            cprof.schedule(**bad)


def _scheduled_run(T, prof_mod, params, steps, acc_events=False):
    """Runs ``steps`` profiler steps with torch's or clgrad's namespaces: what each
    on_trace_ready saw (the step, and the counts of the keys both libraries name alike)."""
    seen = []
    keys = {"ProfilerStep*", "blk", "aten::add", "aten::mm"}

    def ready(p):
        counts = {e.key: e.count for e in p.key_averages() if e.key in keys}
        seen.append((p.step_num, counts))

    x, w = T.ones(3, 4), T.ones(4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = prof_mod.schedule(**params)
        with prof_mod.profile(
            activities=[prof_mod.ProfilerActivity.CPU],
            schedule=sched,
            on_trace_ready=ready,
            acc_events=acc_events,
        ) as p:
            for _ in range(steps):
                with prof_mod.record_function("blk"):
                    T.mm(x, w)
                    x + x
                p.step()
    return seen


@pytest.mark.parametrize("params", SCHEDULES[:4])
def test_scheduled_profile_matches_torch(params):
    theirs = _scheduled_run(torch, torch.profiler, params, 13)
    ours = _scheduled_run(clgrad, cprof, params, 13)
    assert ours == theirs
    assert len(ours) >= 1


def test_acc_events_keep_earlier_cycles_as_torch():
    params = dict(wait=1, warmup=1, active=1, repeat=2)
    theirs = _scheduled_run(torch, torch.profiler, params, 7, acc_events=True)
    ours = _scheduled_run(clgrad, cprof, params, 7, acc_events=True)
    assert ours == theirs
    assert ours[-1][1]["blk"] == 2  # the second trace holds both cycles


def _inference(T, prof_mod, F_mod):
    x, w = T.ones(4, 5), T.ones(5, 3)
    bias = T.zeros(3)
    with prof_mod.profile(record_shapes=True) as prof:
        with prof_mod.record_function("model_inference"):
            for _ in range(2):
                y = T.mm(x, w)
            z = y + 1
            z = z + y
            with prof_mod.record_function("head"):
                out = F_mod.linear(x, w.t(), bias).relu()
            out.sum()
    return prof


def test_key_averages_names_and_counts_match_torch():
    ref = _inference(torch, torch.profiler, torch.nn.functional)
    theirs = {e.key: e.count for e in ref.key_averages()}
    ours = {e.key: e.count for e in _inference(clgrad, cprof, F).key_averages()}
    for key in ("model_inference", "head", "aten::mm", "aten::add", "aten::linear"):
        assert ours[key] == theirs[key], key
    for key in ("aten::relu", "aten::sum", "aten::t"):
        assert ours[key] == theirs[key], key
    assert ours["aten::mm"] == 2 and ours["aten::add"] == 2


def test_input_shapes_match_torch():
    def shapes(prof):
        grouped = prof.key_averages(group_by_input_shape=True)
        return {e.key: e.input_shapes for e in grouped if e.key in ("aten::mm", "aten::linear")}

    ours = shapes(_inference(clgrad, cprof, F))
    theirs = shapes(_inference(torch, torch.profiler, torch.nn.functional))
    assert ours == theirs == {"aten::mm": [[4, 5], [5, 3]], "aten::linear": [[4, 5], [3, 5], [3]]}


def test_event_tree_and_times_are_measured():
    x = clgrad.ones(8, 8)
    with cprof.profile() as prof:
        with cprof.record_function("outer"):
            time.sleep(0.02)
            with cprof.record_function("inner"):
                time.sleep(0.01)
                x.mm(x)
    avg = {e.key: e for e in prof.key_averages()}
    outer, inner, mm = avg["outer"], avg["inner"], avg["aten::mm"]
    assert outer.cpu_time_total >= 30000  # microseconds, as torch's
    assert 10000 <= inner.cpu_time_total < outer.cpu_time_total
    assert 20000 <= outer.self_cpu_time_total <= outer.cpu_time_total - inner.cpu_time_total + 1e-6
    assert 0 < mm.cpu_time_total <= inner.cpu_time_total
    assert outer.cpu_time == outer.cpu_time_total / outer.count
    events = {e.name: e for e in prof.events()}
    assert events["aten::mm"].cpu_parent is events["inner"]
    assert events["inner"].cpu_parent is events["outer"]
    assert [c.name for c in events["outer"].cpu_children] == ["inner"]
    s, e = events["inner"].time_range.start, events["inner"].time_range.end
    assert events["outer"].time_range.start <= s <= events["aten::mm"].time_range.start
    assert events["aten::mm"].time_range.end <= e
    assert prof.key_averages().self_cpu_time_total == pytest.approx(outer.cpu_time_total)


def test_table_lists_the_events_as_torch_lays_it_out():
    ours = _inference(clgrad, cprof, F).key_averages().table(sort_by="cpu_time_total", row_limit=3)
    theirs = (
        _inference(torch, torch.profiler, torch.nn.functional)
        .key_averages()
        .table(sort_by="cpu_time_total", row_limit=3)
    )
    lines, ref = ours.splitlines(), theirs.splitlines()
    assert lines[1].split() == ref[1].split()  # the same headers
    assert len(lines) == len(ref) == 8  # 3 rows between the rules, and the total
    assert lines[3].split()[0] == ref[3].split()[0] == "model_inference"
    assert lines[-1].startswith("Self CPU time total: ")
    mem = _run_memory(clgrad, cprof).key_averages().table()
    assert "CPU Mem" in mem.splitlines()[1] and "Self CPU Mem" in mem.splitlines()[1]


def _run_memory(T, prof_mod):
    with prof_mod.profile(profile_memory=True) as prof:
        T.zeros(1000)
        T.ones(10, 10) @ T.ones(10, 10)
    return prof


def test_profile_memory_counts_what_ops_allocate_as_torch():
    def usage(prof):
        return {e.key: e.cpu_memory_usage for e in prof.key_averages()}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = usage(_run_memory(torch, torch.profiler))
    ours = usage(_run_memory(clgrad, cprof))
    for key in ("aten::zeros", "aten::matmul"):
        assert ours[key] == theirs[key], key
    assert ours["aten::zeros"] == 4000


def test_chrome_trace_is_valid_json_with_the_events(tmp_path):
    prof = _inference(clgrad, cprof, F)
    prof.add_metadata("run", "baseline")
    path = str(tmp_path / "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    assert trace["run"] == "baseline" and trace["record_shapes"] == 1
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = [e["name"] for e in ops]
    assert names.count("aten::mm") == 2 and "model_inference" in names and "head" in names
    cats = {e["name"]: e["cat"] for e in ops}
    assert cats["model_inference"] == "user_annotation" and cats["aten::mm"] == "cpu_op"
    outer = next(e for e in ops if e["name"] == "model_inference")
    for e in ops:
        assert e["dur"] >= 0 and e["pid"] == os.getpid()
        assert outer["ts"] <= e["ts"] and e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] + 1e-3
    mm = next(e for e in ops if e["name"] == "aten::mm")
    assert mm["args"]["Input Dims"] == [[4, 5], [5, 3]]
    # as torch's trace: seconds since the epoch, in microseconds
    assert abs(outer["ts"] / 1e6 - time.time()) < 600
    prof.export_chrome_trace(path + ".gz")
    with gzip.open(path + ".gz", "rt") as f:
        assert [e["name"] for e in json.load(f)["traceEvents"] if e["ph"] == "X"] == names


def test_tensorboard_trace_handler_writes_a_trace_per_cycle_as_torch(tmp_path):
    params = dict(wait=1, warmup=1, active=2, repeat=2)
    for T, prof_mod, sub in ((torch, torch.profiler, "torch"), (clgrad, cprof, "clgrad")):
        logdir = tmp_path / sub
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with prof_mod.profile(
                schedule=prof_mod.schedule(**params),
                on_trace_ready=prof_mod.tensorboard_trace_handler(str(logdir)),
            ) as p:
                for _ in range(10):
                    T.ones(2) * 2
                    p.step()
    ours, theirs = sorted(os.listdir(tmp_path / "clgrad")), os.listdir(tmp_path / "torch")
    assert len(ours) == len(theirs) == 2
    assert all(name.endswith(".pt.trace.json") for name in ours)
    steps = []
    for name in ours:
        with open(tmp_path / "clgrad" / name) as f:
            trace = json.load(f)
        steps.append(
            sorted(e["name"] for e in trace["traceEvents"] if e["name"].startswith("ProfilerStep"))
        )
    assert steps == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]


def test_wrappers_only_while_profiling():
    add, method, linear, mm = clgrad.add, clgrad.Tensor.__add__, F.linear, clgrad.mm
    assert not autograd_profiler.collecting()
    with cprof.profile():
        assert clgrad.add is not add and clgrad.Tensor.__add__ is not method
        assert F.linear is not linear and F.linear.__wrapped__ is linear
        with cprof.profile():  # nested: the wrappers stay until the last one stops
            pass
        assert clgrad.Tensor.__add__ is not method
    assert clgrad.add is add and clgrad.Tensor.__add__ is method and F.linear is linear
    assert not autograd_profiler.collecting()
    # and after a failing op inside
    with pytest.raises(RuntimeError):
        with cprof.profile() as prof:
            clgrad.mm(clgrad.ones(2, 3), clgrad.ones(2, 3))
    assert clgrad.mm is mm
    assert [e.key for e in prof.key_averages()] == ["aten::ones", "aten::mm"]


def test_record_function_as_decorator_and_outside_profiling():
    @cprof.record_function("my_fn")
    def my_fn(x):
        return x * 2

    my_fn(clgrad.ones(2))  # no profiler: nothing recorded, nothing raised
    with cprof.profile() as prof:
        for _ in range(3):
            my_fn(clgrad.ones(2))
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["my_fn"] == 3 and counts["aten::mul"] == 3
    assert all(e.cpu_parent.name == "my_fn" for e in prof.events() if e.name == "aten::mul")


def test_legacy_autograd_profiler():
    def run(T, ap):
        with ap.profile(record_shapes=True) as prof:
            with ap.record_function("legacy"):
                T.ones(2, 2).mm(T.ones(2, 2))
        return {e.key: e.count for e in prof.key_averages()}, prof

    ours, prof = run(clgrad, clgrad.autograd.profiler)
    theirs, _ = run(torch, torch.autograd.profiler)
    for key in ("legacy", "aten::mm", "aten::ones"):
        assert ours[key] == theirs[key]
    assert prof.self_cpu_time_total > 0 and "legacy" in prof.table()
    assert prof.total_average().count == len(prof.function_events)
    with pytest.raises(RuntimeError, match="not reentrant"):
        with prof:
            pass


def test_optimizer_steps_are_named_as_torch():
    def run(T, prof_mod):
        model = T.nn.Linear(3, 2)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        with prof_mod.profile() as prof:
            opt.zero_grad()
            model(T.ones(1, 3)).sum().backward()
            opt.step()
        return {e.key for e in prof.key_averages() if e.key.startswith("Optimizer.")}

    assert (
        run(clgrad, cprof)
        == run(torch, torch.profiler)
        == {
            "Optimizer.zero_grad#SGD.zero_grad",
            "Optimizer.step#SGD.step",
        }
    )


def test_with_stack_records_the_callers(tmp_path):
    with cprof.profile(with_stack=True) as prof:
        clgrad.ones(3).exp()
    exp = next(e for e in prof.events() if e.name == "aten::exp")
    assert exp.stack and __file__ in exp.stack[0] and "test_with_stack" in exp.stack[0]
    assert not any("profiler.py" in entry for entry in exp.stack)
    grouped = prof.key_averages(group_by_stack_n=1)
    assert any(e.stack == exp.stack[:1] for e in grouped)
    path = str(tmp_path / "stacks.txt")
    prof.export_stacks(path)
    assert os.path.getsize(path) >= 0


def test_indexing_names_follow_torch():
    def run(T, prof_mod):
        x = T.ones(4, 5)
        with prof_mod.profile() as prof:
            x[0]
            x[:, 1:]
            x[T.tensor([0, 1])]
        wanted = ("aten::select", "aten::slice", "aten::index")
        return [e.key for e in prof.key_averages() if e.key in wanted]

    assert run(clgrad, cprof) == run(torch, torch.profiler)


def test_activities_and_profiler_names():
    assert cprof.ProfilerActivity.CPU in cprof.supported_activities()
    assert cprof.kineto_available() is True
    assert [a.name for a in cprof.ProfilerAction] == [
        a.name for a in torch.profiler.ProfilerAction if a.name != "DEVICE_STOPPED"
    ]
    assert {a.name: a.value for a in cprof.ProfilerActivity} == {
        name: a.value for name, a in torch.profiler.ProfilerActivity.__members__.items()
    }
    with cprof.profile(activities=[cprof.ProfilerActivity.CPU, cprof.ProfilerActivity.CUDA]) as p:
        clgrad.ones(1)
    assert [e.key for e in p.key_averages()] == ["aten::ones"]
    assert clgrad.profiler is cprof and clgrad.autograd.profiler is autograd_profiler


# ---- clgrad.utils.benchmark ---------------------------------------------------------------------
def _spec(mod, **kw):
    return mod.TaskSpec(kw.pop("stmt", "f(x)"), "pass", **kw)


def test_measurement_statistics_match_torch():
    rng = random.Random(0)
    for n in (1, 3, 4, 7, 20):
        raw = [rng.uniform(1e-4, 3e-4) for _ in range(n)]
        mine = cbench.Measurement(10, raw, _spec(cbench, label="L", sub_label="s"))
        ref = tbench.Measurement(10, raw, _spec(tbench, label="L", sub_label="s"))
        assert mine.times == ref.times
        for attr in ("median", "mean", "iqr"):
            assert getattr(mine, attr) == pytest.approx(getattr(ref, attr), rel=1e-12)
        assert mine.significant_figures == ref.significant_figures
        assert mine.has_warnings == ref.has_warnings
        assert mine.title == ref.title == "L: s"
        assert repr(mine).splitlines()[1:] == repr(ref).splitlines()[1:]
        assert mine.meets_confidence(0.5) == ref.meets_confidence(0.5)


def test_compare_renders_as_torch():
    rng = random.Random(1)
    rows = []
    for label in ("add", "mul"):
        for threads in (1, 4):
            for sub in ("float", "int"):
                for size in ("n=1", "n=100"):
                    raw = [rng.uniform(1e-6, 5e-6) * (1 + (size == "n=100")) for _ in range(5)]
                    kw = dict(label=label, sub_label=sub, description=size, num_threads=threads)
                    rows.append((raw, kw))

    def table(mod, how):
        c = mod.Compare([mod.Measurement(100, raw, _spec(mod, **kw)) for raw, kw in rows])
        if "trim" in how:
            c.trim_significant_figures()
        if "color" in how:
            c.colorize(rowwise="row" in how)
        if "warn" in how:
            c.highlight_warnings()
        return str(c)

    for how in ("", "trim", "color", "color-row", "trim-warn"):
        assert table(cbench, how) == table(tbench, how), how


def test_timer_measures_and_synchronizes(monkeypatch):
    calls = []
    real = cbench.synchronize
    monkeypatch.setattr(cbench, "synchronize", lambda: calls.append(1) or real())
    m = cbench.Timer("time.sleep(0.002)", setup="import time").timeit(5)
    assert calls  # the clock waited for the devices
    assert m.number_per_run == 5 and len(m.raw_times) == 1
    assert 0.002 <= m.median < 0.05 and m.raw_times[0] == pytest.approx(5 * m.mean)


class _Clock:
    """A deterministic clock: each reading advances it by ``tick``; the statement advances it
    by its own cost."""

    def __init__(self, tick):
        self.t, self.tick = 0.0, tick

    def __call__(self):
        self.t += self.tick
        return self.t


@pytest.mark.parametrize("tick, cost", [(0.0, 0.003), (1e-6, 1e-5), (2e-7, 3e-8), (1e-4, 0.2)])
def test_timer_autoranges_choose_as_torch(tick, cost):
    def run(mod, how):
        clock = _Clock(tick)
        t = mod.Timer("clock.t += cost", globals={"clock": clock, "cost": cost}, timer=clock)
        if how == "blocked":
            return t.blocked_autorange(min_run_time=0.05)
        if how == "adaptive":
            return t.adaptive_autorange(threshold=0.1, max_run_time=2.0)
        return t.timeit(number=1000)

    for how in ("blocked", "adaptive", "timeit"):
        mine, ref = run(cbench, how), run(tbench, how)
        assert mine.number_per_run == ref.number_per_run, how
        assert mine.raw_times == pytest.approx(ref.raw_times, rel=1e-9), how
        assert mine.median == pytest.approx(ref.median, rel=1e-9), how


def test_timer_blocked_autorange_measures():
    m = cbench.Timer("time.sleep(0.003)", setup="import time").blocked_autorange(min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05 and all(t >= 0.003 for t in m.times)
    fast = cbench.Timer("x + 1", setup="x = 1").blocked_autorange(min_run_time=0.02)
    assert fast.number_per_run >= 100 and 0 < fast.median < 1e-4


def test_timer_globals_and_torch_namespace():
    x = clgrad.ones(3)
    threads_before = clgrad.get_num_threads()
    labels = dict(label="add", sub_label="3", description="ones", num_threads=2)
    t = cbench.Timer("torch.add(x, y)", globals={"x": x, "y": x}, **labels)
    m = t.timeit(10)
    assert m.title == "add: 3" and m.description == "ones" and m.num_threads == 2
    assert "2 threads" in repr(m)
    assert clgrad.get_num_threads() == threads_before  # restored after timing
    with pytest.raises(ValueError):
        cbench.Timer(lambda: None)
    with pytest.raises(ValueError):
        tbench.Timer(lambda: None)
    with pytest.raises(NotImplementedError):
        cbench.Timer().autorange()
    for bench in (cbench, tbench):
        with pytest.raises(NotImplementedError, match="blocked_autorange"):
            bench.Timer("x * 2", globals={"x": x}).repeat(repeat=3, number=20)
    a = cbench.Timer("x * 2", globals={"x": x}).adaptive_autorange(max_run_time=0.5)
    assert a.times and a.median > 0


def test_timer_on_device_includes_kernel_time(cl_device):
    x = clgrad.ones(256, 256, device=cl_device)
    m = cbench.Timer("x @ x", globals={"x": x}).blocked_autorange(min_run_time=0.05)
    assert m.median > 0
    # the clock waits for the device: nothing is left queued once a timing returns
    cbench.timer()
    assert clgrad.ones(1, device=cl_device).item() == 1.0


# ---- clgrad.compiler and clgrad._dynamo --------------------------------------------------------
def _compile_switches(T):
    """What PyTorch programs do with torch.compiler and torch._dynamo; the results as data."""
    out = []
    T._dynamo.config.suppress_errors = True
    out.append(T._dynamo.config.suppress_errors)
    T._dynamo.config.suppress_errors = False
    old = T._dynamo.config.cache_size_limit
    T._dynamo.config.cache_size_limit = 16
    out.append(T._dynamo.config.cache_size_limit)
    out.append(T._dynamo.config.recompile_limit)
    T._dynamo.config.cache_size_limit = old
    out.append(T._dynamo.config.verbose)
    with T._dynamo.config.patch(verbose=True):
        out.append(T._dynamo.config.verbose)
    out.append(T._dynamo.config.verbose)
    try:
        T._dynamo.config.no_such_setting = 1
    except AttributeError:
        out.append("no such setting")
    T._dynamo.reset()
    T.compiler.reset()
    out.append(T.compiler.is_compiling())
    out.append(T.compiler.is_dynamo_compiling())
    out.append(T._dynamo.is_compiling())
    out.append(T.compiler.is_exporting())
    T.compiler.cudagraph_mark_step_begin()

    @T.compiler.disable
    def plain(x):
        return x + 1

    @T.compiler.disable(recursive=False)
    def plain2(x):
        return x * 2

    @T._dynamo.disable
    def plain3(x):
        return x - 1

    x = T.ones(3)
    out.append((plain(x) + plain2(x) + plain3(x)).tolist())
    T._dynamo.mark_dynamic(x, 0)
    T._dynamo.mark_static(x)
    out.append(T.compiler.allow_in_graph(len) is len)
    out.append(T.compiler.assume_constant_result(plain)(x).tolist())
    f = T.compile(lambda t: t * 3)
    out.append(f(x).tolist())
    # how libraries tell a compiled module and reach the one under it (Hugging Face's
    # is_compiled_module)
    model = T.compile(T.nn.Linear(3, 1))
    out.append(isinstance(model, T._dynamo.eval_frame.OptimizedModule))
    out.append(isinstance(model._orig_mod, T._dynamo.eval_frame.OptimizedModule))
    return out


def test_compile_switches_run_as_torch():
    theirs = _compile_switches(torch)
    ours = _compile_switches(clgrad)
    assert ours == theirs
    assert ours[1:3] == [16, 16] and "no such setting" in ours


def test_cache_size_limit_is_clgrad_compile_cache():
    module = sys.modules[CompiledFunction.__module__]
    old = module.CACHE_LIMIT
    try:
        clgrad._dynamo.config.cache_size_limit = 3
        assert module.CACHE_LIMIT == 3 and clgrad._dynamo.config.recompile_limit == 3
        f = clgrad.compile(lambda t: t + 1)
        for n in range(1, 6):
            f(clgrad.ones(n))
        assert len(f.entries) == 3
        clgrad.compiler.reset()
        assert len(f.entries) == 0
    finally:
        clgrad._dynamo.config.cache_size_limit = old
    assert module.CACHE_LIMIT == old


def test_is_compiling_inside_a_capture(cl_device):
    seen = []

    def step(x):
        seen.append(clgrad.compiler.is_compiling())
        return x * 2 + 1

    f = clgrad.compile(step)
    x = clgrad.ones(4, device=cl_device)
    for _ in range(4):
        assert f(x).tolist() == [3.0] * 4
    # warm-up (eager), capture, then replays that run no Python
    assert seen == [False, True]
    assert f.counts["replay"] == 2
    clgrad.compiler.reset()
    f(x)
    assert seen == [False, True, False]  # warming up again


def test_disable_keeps_a_function_out_of_captures(cl_device):
    seen = []

    @clgrad.compiler.disable
    def log(x):
        seen.append(clgrad.compiler.is_compiling())
        return x

    def step(x):
        return log(x * 2)

    f = clgrad.compile(step)
    x = clgrad.ones(2, device=cl_device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):
            assert f(x).tolist() == [2.0, 2.0]
    assert seen == [False] * 4  # it ran at every call, never as captured code
    assert f.counts["replay"] == 0
    assert any("clgrad.compiler.disable" in str(w.message) for w in caught)
    g = clgrad.compile(step, fullgraph=True)
    g(x)
    with pytest.raises(RuntimeError, match="disable"):
        g(x)
