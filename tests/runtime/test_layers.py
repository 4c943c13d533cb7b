"""The runtime's layering, read from the source with `ast` (nothing is imported).

Each module of runtime/ember belongs to one layer (LAYERS, lowest first; the same table
is in docs/architecture.md, "Layers"). At module level a module imports only its own
layer or lower ones, and the module-level import graph has no cycle. The op and backward
path (ops, autograd, the tensor, dispatch) imports nothing inside functions; elsewhere a
function-level import is allowed only where COLD_IMPORTS lists it with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "runtime"

# (layer, module names or package prefixes ending in "."), lowest first.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # Contracts that depend on nothing: errors, dtypes, the device backend base class, the
    # op table and kernel registry (filled by plugins at load time), the hook registry,
    # and the slots through which the layers below ops reach it (`_upper`, bound by ops).
    (
        "contracts",
        (
            "ember._errors", "ember._dtype", "ember._backend", "ember._dispatch",
            "ember._upper", "ember._plan", "ember._cdispatch", "ember.utils", "ember.utils.hooks",
            "ember._precision", "ember._dtype_info", "ember._layout",
            "ember._collective", "ember.futures",
        ),
    ),
    # Devices and memory: plugin discovery, device objects, the caching allocator,
    # streams and events, storage.
    (
        "devices",
        (
            "ember.plugins", "ember.plugins.", "ember._device", "ember._allocator",
            "ember._blocks", "ember._stream", "ember._storage", "ember._cstorage",
            "ember._threads", "ember.memory",
        ),
    ),
    # The tensor, and the device SDK that re-exports it with the layers below (nothing in
    # the runtime imports the SDK: it is the face plugins see).
    (
        "tensor",
        (
            "ember._tensor", "ember._tensor_", "ember._format", "ember.plugins.sdk",
            "ember._autocast", "ember._format_layout", "ember._printoptions",
        ),
    ),
    ("autograd", ("ember.autograd", "ember.autograd.")),
    ("ops", ("ember._ops", "ember._ops.")),
    (
        "api",
        (
            "ember.nn", "ember.nn.", "ember.optim", "ember.optim.", "ember.utils.data",
            "ember.utils.data.", "ember.serialization", "ember.serialization.", "ember.library",
            "ember.library.", "ember.linalg", "ember.accelerator", "ember.amp", "ember.amp.",
            "ember.backends", "ember.backends.", "ember.cpu", "ember.cpu.", "ember.cuda",
            "ember.cuda.", "ember._device_modules", "ember.utils.tensorboard",
            "ember.utils.tensorboard.", "ember._legacy_types", "ember._torch_misc",
            "ember.onnx", "ember.onnx.",
            "ember.distributions", "ember.distributions.", "ember.special",
            "ember._torch_longtail", "ember.utils.dlpack",
            "ember.distributed", "ember.distributed.",
        ),
    ),
    # The public package and what is written against it (`import ember`): the CLI and the
    # examples.
    ("package", ("ember", "ember.__main__", "ember.examples", "ember.examples.")),
    # The conformance kit: tests written against the package (and a few internals).
    ("testing", ("ember.testing", "ember.testing.")),
]  # fmt: skip

# The op and backward path: no import inside any function here, no exceptions.
HOT = ("ember._ops", "ember._ops.", "ember.autograd", "ember.autograd.", "ember._tensor",
       "ember._tensor_", "ember._dispatch")  # fmt: skip

# (module, imported module) -> why it is imported inside a function.
COLD_IMPORTS: dict[tuple[str, str], str] = {
    ("ember.__main__", "ember.examples.digits"): "`python -m ember demo` only",
    ("ember.__main__", "ember.examples.tensor_tour"): "`python -m ember tour` only",
    ("ember.examples.digits", "sklearn.datasets"): "optional dependency of the demo",
    ("ember.examples.digits", "sklearn.model_selection"): "optional dependency of the demo",
    ("ember.examples.digits", "matplotlib"): "optional dependency of the demo",
    ("ember.examples.digits", "matplotlib.pyplot"): "optional dependency of the demo",
    ("ember._allocator", "ember._stream"): "once per allocator, and after record_stream; "
    "_stream imports _device, which imports the allocator",
    ("ember._dtype", "ember._tensor"): "once per process (cached): result_type's Tensor type, "
    "from the layer above",
    ("ember.nn.modules._state_dict", "ember.nn.modules.module"): "state-dict hooks only; "
    "module.py imports this module",
    ("ember.utils.data._worker", "ember._ops.random"): "once per worker process",
    ("ember.utils.data._worker", "ember._threads"): "once per worker process",
    ("ember.utils.data.dataloader", "ember.utils.data._multiprocess"): "only with workers",
    ("ember.utils.tensorboard.summary", "PIL"): "Pillow encodes images: add_image(s) only",
    ("ember.distributed._mpi", "mpi4py"): "initialises MPI: only when a process group is made",
    ("ember.utils.data.distributed", "ember.distributed"): "only when DistributedSampler "
    "must ask the process group for num_replicas or rank: keeps it out of `import ember`",
}


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    # A compiled module is known by its stub (`_cstorage.pyi`).
    stubs = [p for p in (ROOT / "ember").rglob("*.pyi") if not p.with_suffix(".py").exists()]
    for path in sorted([*(ROOT / "ember").rglob("*.py"), *stubs]):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names (`from ember import x` names ember.x when x
    is a module); relative imports resolved."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    names = []
    for alias in node.names:
        full = f"{base}.{alias.name}"
        names.append(full if full in MODULES else base)
    return names


def _owner(name: str) -> str | None:
    """The runtime module that an imported name lives in (None outside ember)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _scan(module: str) -> tuple[set[str], list[tuple[int, str]]]:
    """(runtime modules imported at module level, (line, module) of function-level imports)."""
    path, is_package = MODULES[module]
    top: set[str] = set()
    nested: list[tuple[int, str]] = []
    if path.suffix == ".pyi":
        return top, nested  # a compiled module: its stub's imports are annotations only

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue  # annotations only: never executed
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for name in _imported(module, is_package, child):
                    if in_function:
                        nested.append((child.lineno, name))
                    else:
                        owner = _owner(name)
                        if owner is not None and owner != module:
                            top.add(owner)
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            visit(child, inner)

    visit(ast.parse(path.read_text(), str(path)), False)
    return top, nested


SCANS = {module: _scan(module) for module in MODULES}


def _matches(module: str, patterns: tuple[str, ...]) -> bool:
    return any(module.startswith(p) if p.endswith((".", "_")) else module == p for p in patterns)


def layer_of(module: str) -> int:
    """The index in LAYERS of the most specific pattern that matches `module`."""
    best, best_length = -1, -1
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            if _matches(module, (pattern,)) and len(pattern) > best_length:
                best, best_length = index, len(pattern)
    return best


def _parents(module: str) -> list[str]:
    """Packages that importing `module` runs first (below the top-level package)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in MODULES if layer_of(m) < 0]
    assert not unplaced, f"add these modules to LAYERS (and docs/architecture.md): {unplaced}"


def test_no_module_imports_a_higher_layer() -> None:
    violations = []
    for module, (imports, _) in SCANS.items():
        mine = layer_of(module)
        for target in sorted(imports):
            # Importing a.b.c runs the __init__ of a.b first: that counts as an import too.
            for dependency in [*_parents(target), target]:
                if dependency != module and layer_of(dependency) > mine:
                    violations.append(
                        f"{module} ({LAYERS[mine][0]}) imports {dependency} "
                        f"({LAYERS[layer_of(dependency)][0]})"
                    )
    assert not violations, "\n".join(violations)


def test_module_level_imports_have_no_cycle() -> None:
    graph = {module: sorted(imports) for module, (imports, _) in SCANS.items()}
    # Iterative DFS with colours: a grey node reached again closes a cycle.
    colour: dict[str, int] = {}
    for start in graph:
        if start in colour:
            continue
        colour[start] = 1
        path, stack = [start], [iter(graph[start])]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                colour[path.pop()] = 2
                stack.pop()
            elif colour.get(child) == 1:
                cycle = [*path[path.index(child) :], child]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            elif child not in colour:
                colour[child] = 1
                path.append(child)
                stack.append(iter(graph[child]))


def test_no_function_level_imports_on_the_op_and_backward_path() -> None:
    found = [
        f"{module}:{line} imports {name}"
        for module, (_, nested) in SCANS.items()
        if _matches(module, HOT)
        for line, name in nested
    ]
    assert not found, "\n".join(found)


def test_function_level_imports_elsewhere_are_listed_cold_paths() -> None:
    unlisted = [
        f"{module}:{line} imports {name}"
        for module, (_, nested) in SCANS.items()
        for line, name in nested
        if (module, name) not in COLD_IMPORTS and (module, _owner(name) or name) not in COLD_IMPORTS
    ]
    assert not unlisted, "add to COLD_IMPORTS with a reason, or import at module level:\n" + (
        "\n".join(unlisted)
    )
    stale = [key for key in COLD_IMPORTS if not any(
        (m, n) == key or (m, _owner(n) or n) == key
        for m, (_, nested) in SCANS.items() for _, n in nested
    )]  # fmt: skip
    assert not stale, f"COLD_IMPORTS lists imports that are gone: {stale}"


def test_the_layering_test_sees_a_violation() -> None:
    # The scanner itself: a relative import inside a function, and `from ember import x`.
    tree = ast.parse("def f():\n    from .. import _ops\n")
    node = tree.body[0].body[0]  # type: ignore[attr-defined]
    assert _imported("ember.autograd._graph", False, node) == ["ember._ops"]
    assert layer_of("ember._ops") > layer_of("ember.autograd._graph")
    assert layer_of("ember._tensor_math") == layer_of("ember._tensor")
    assert layer_of("ember.utils.data.dataloader") > layer_of("ember.utils.hooks")
