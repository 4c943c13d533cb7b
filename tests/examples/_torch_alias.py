"""`import torch` resolving to Ember by names alone: each torch module name points at the
Ember module of the same path, with no code of its own (what porting by changing the
import means)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import pathlib
import sys
from collections.abc import Iterator
from types import ModuleType

#: torch's module paths the gallery imports, and the Ember module each one names.
ALIASES = {
    "torch": "ember",
    "torch.distributions": "ember.distributions",
    "torch.nn": "ember.nn",
    "torch.nn.functional": "ember.nn.functional",
    "torch.nn.utils": "ember.nn.utils",
    "torch.optim": "ember.optim",
    "torch.optim.lr_scheduler": "ember.optim.lr_scheduler",
    "torch.utils": "ember.utils",
    "torch.utils.data": "ember.utils.data",
}


@contextlib.contextmanager
def torch_is_ember() -> Iterator[None]:
    """Within the block, `import torch...` gives Ember's modules."""
    saved = {name: sys.modules.get(name) for name in ALIASES}
    try:
        for name, target in ALIASES.items():
            sys.modules[name] = importlib.import_module(target)
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def load_script(path: pathlib.Path, tag: str) -> ModuleType:
    """Import the script at `path` as a fresh module (its own globals per framework)."""
    spec = importlib.util.spec_from_file_location(f"gallery_{path.stem}_{tag}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
