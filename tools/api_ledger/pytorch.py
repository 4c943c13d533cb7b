"""PyTorch's public names per ledger section (the only module here that imports torch)."""

from __future__ import annotations

import importlib
import types

#: the PyTorch release the ledger describes
PYTORCH_VERSION = "2.13.0"


def public_names(section: str) -> list[str]:
    """The public names of `section` in the installed PyTorch, which must be PYTORCH_VERSION."""
    import torch

    if torch.__version__.split("+")[0] != PYTORCH_VERSION:
        raise RuntimeError(
            f"the ledger describes PyTorch {PYTORCH_VERSION}; torch {torch.__version__} is "
            "installed (pip install the dev extra)"
        )
    if section == "Tensor":
        return sorted(name for name in dir(torch.Tensor) if not name.startswith("_"))
    module = importlib.import_module(section)
    declared = getattr(module, "__all__", None)
    names = {name for name in declared or () if not name.startswith("_")}
    # torch.__all__ leaves out names scripts use (set_grad_enabled, unique, channels_last,
    # the layouts), so the top level also takes what it defines itself.
    if declared is None or module is torch:
        names |= {name for name in dir(module) if _defined_there(module, name)}
    return sorted(names)


def _defined_there(module: types.ModuleType, name: str) -> bool:
    """A public non-module attribute of `module` that PyTorch defines, not a typing helper,
    flag or documentation string it merely imports or holds."""
    if name.startswith("_"):
        return False
    value = getattr(module, name)
    if isinstance(value, types.ModuleType | str | bool | dict):
        return False
    defined_in = getattr(value, "__module__", None)
    return not isinstance(defined_in, str) or defined_in.startswith("torch")
