"""clgrad's import layers: import-linter's contracts from pyproject.toml, and a cycle finder.

The contracts (``[tool.importlinter]`` in pyproject.toml) stack clgrad's modules in layers, the
user-facing ones (serialization, nn, optim, utils, functional) on top, then ops, autograd,
tensor, backend, storage, device, and dtypes | errors at the bottom; clgrad.backend must not
import clgrad.tensor. The second test reads every module with ``ast`` (module-level and
in-function imports alike) and lists each import cycle among clgrad's modules.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "clgrad"


def test_import_linter_contracts():
    pytest.importorskip("importlinter")
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, f"import-linter contracts broken:\n{run.stdout}\n{run.stderr}"


# ---- the cycle finder ------------------------------------------------------------------------
def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """``clgrad.x.y`` -> its file, for every module of the package (``__main__`` included)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name ``from <level dots><name>`` means inside ``module``."""
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(module: str, path: Path, modules: set[str]) -> dict[str, int]:
    """The clgrad modules ``module`` imports anywhere in its file -> the first line doing so."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: dict[str, int] = {}

    def add(target, line):
        # the deepest clgrad module the name falls in (``clgrad.ops.core.launch`` -> ops.core)
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != module:
            found.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                # ``from . import tensor`` names a module; ``from .core import launch`` does not
                full = f"{base}.{alias.name}"
                add(full if full in modules else base, node.lineno)
    return found


def import_graph() -> dict[str, dict[str, int]]:
    files = module_files()
    names = set(files)
    return {m: imports_of(m, p, names) for m, p in files.items()}


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def shortest_cycle(graph, component, start):
    """A shortest import cycle within ``component`` through ``start``: ``[start, ..., start]``."""
    members = set(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child == start:
                    return paths[node] + [start]
                if child in members and child not in paths:
                    paths[child] = paths[node] + [child]
                    nxt.append(child)
        frontier = nxt
    return [start]


def describe(graph, component):
    """The component's modules, then one shortest cycle through each (duplicates dropped)."""
    seen, lines = set(), []
    for start in component:
        path = shortest_cycle(graph, component, start)
        ring = path[:-1]
        key = min(tuple(ring[i:] + ring[:i]) for i in range(len(ring)))
        if key in seen:
            continue
        seen.add(key)
        steps = " -> ".join(f"{a} (l.{graph[a][b]})" for a, b in zip(path, path[1:]))
        lines.append(f"    {steps} -> {path[-1]}")
    return f"{len(component)} modules: {', '.join(component)}\n" + "\n".join(lines)


def test_finder_sees_module_and_function_level_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import thing\n")
    files = module_files(pkg)
    graph = {m: imports_of(m, p, set(files)) for m, p in files.items()}
    assert graph["pkg.a"] == {"pkg.sub.b": 1}
    assert graph["pkg.sub.b"] == {"pkg.a": 2}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"]]


def test_no_import_cycles():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles among clgrad's modules:\n" + "\n".join(
        "  " + describe(graph, c) for c in found
    )


def test_every_module_of_utils_is_in_a_layer():
    # the contract lists clgrad.utils module by module (its model_zoo sits above clgrad.hub, the
    # rest low), so a module left out of it would go unchecked
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    with open(ROOT / "pyproject.toml", "rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    layered = {m.strip() for layer in layers for m in layer.replace(":", "|").split("|")}
    utils = PACKAGE / "utils"
    modules = {
        f"clgrad.utils.{p.stem}"
        for p in utils.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    assert "clgrad.utils.model_zoo" in modules
    assert modules <= layered, f"not in a layer of pyproject.toml: {sorted(modules - layered)}"
