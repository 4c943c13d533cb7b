"""The namespaces the ledger covers and how each is looked up on the Ember side."""

from __future__ import annotations

import importlib

#: ledger section -> the Ember object whose attributes answer it; the PyTorch side is the
#: section's own dotted name ("Tensor" is torch.Tensor)
SECTIONS: dict[str, str] = {
    "torch": "ember",
    "Tensor": "ember.Tensor",
    "torch.nn": "ember.nn",
    "torch.nn.functional": "ember.nn.functional",
    "torch.nn.init": "ember.nn.init",
    "torch.optim": "ember.optim",
    "torch.optim.lr_scheduler": "ember.optim.lr_scheduler",
    "torch.utils.data": "ember.utils.data",
    "torch.distributions": "ember.distributions",
    "torch.linalg": "ember.linalg",
    "torch.special": "ember.special",
}


def ember_object(section: str) -> object | None:
    """Ember's module (or class) for `section`, or None when Ember has no such namespace."""
    path = SECTIONS[section]
    module_path, _, attribute = path.rpartition(".") if path == "ember.Tensor" else (path, "", "")
    try:
        module = importlib.import_module(module_path)
    except ModuleNotFoundError as error:
        if error.name is not None and path.startswith(error.name):
            return None
        raise
    return getattr(module, attribute) if attribute else module
