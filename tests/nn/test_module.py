"""`Module` registration, attribute semantics, traversal, modes and printing (PyTorch's)."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from ember import nn

torch = pytest.importorskip("torch")


def _tree(lib: Any) -> Any:
    """The same nested model in torch or ember: shared module, shared parameter, buffers."""
    tnn = lib.nn

    class Leaf(tnn.Module):  # type: ignore[misc, name-defined]
        def __init__(self, n: int) -> None:
            super().__init__()
            self.weight = tnn.Parameter(lib.ones(n, 2))
            self.bias = tnn.Parameter(lib.zeros(n))
            self.register_buffer("running", lib.zeros(n))
            self.register_buffer("scratch", lib.zeros(n), persistent=False)
            self.register_parameter("unused", None)

    class Net(tnn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = Leaf(3)
            self.blocks = tnn.Sequential(Leaf(2), tnn.Sequential(Leaf(1)))
            self.shared = self.encoder  # the same module under a second name
            self.tied = self.encoder.weight  # the same parameter under a second name
            self.empty = None
            self.register_buffer("steps", lib.zeros(1))

    return Net()


def _names(pairs: Any) -> list[str]:
    return [name for name, _ in pairs]


@pytest.mark.parametrize("remove_duplicate", [True, False])
@pytest.mark.parametrize("recurse", [True, False])
@pytest.mark.parametrize("prefix", ["", "model"])
def test_named_members_match_torch(prefix: str, recurse: bool, remove_duplicate: bool) -> None:
    mine, theirs = _tree(ember), _tree(torch)
    for method in ("named_parameters", "named_buffers"):
        got = getattr(mine, method)(
            prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )
        want = getattr(theirs, method)(
            prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )
        assert _names(got) == _names(want), method
    got_modules = mine.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
    want_modules = theirs.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
    assert _names(got_modules) == _names(want_modules)
    assert _names(mine.named_children()) == _names(theirs.named_children())
    assert len(list(mine.parameters(recurse))) == len(list(theirs.parameters(recurse)))
    assert len(list(mine.buffers(recurse))) == len(list(theirs.buffers(recurse)))
    assert len(list(mine.modules())) == len(list(theirs.modules()))
    assert len(list(mine.children())) == len(list(theirs.children()))


def test_state_dict_keys_match_torch() -> None:
    assert list(_tree(ember).state_dict()) == list(_tree(torch).state_dict())
    assert list(_tree(ember).state_dict(prefix="m.")) == list(_tree(torch).state_dict(prefix="m."))
    metadata = _tree(ember).state_dict()._metadata  # type: ignore[attr-defined]
    assert metadata == _tree(torch).state_dict()._metadata


def test_state_dict_detaches_unless_keep_vars() -> None:
    net = _tree(ember)
    state = net.state_dict()
    assert type(state["encoder.weight"]) is ember.Tensor
    assert not state["encoder.weight"].requires_grad
    kept = net.state_dict(keep_vars=True)
    assert kept["encoder.weight"] is net.encoder.weight


def test_setattr_registers_parameters_modules_and_buffers() -> None:
    m = nn.Module()
    m.w = nn.Parameter(ember.zeros(2))
    m.child = nn.Module()
    m.register_buffer("buf", ember.zeros(1))
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["child"]
    assert list(m._buffers) == ["buf"] and m.__dict__["plain"] == 3
    m.buf = ember.ones(1)  # assigning a tensor to a buffer name replaces the buffer
    assert m._buffers["buf"].tolist() == [1.0]
    m.w = None  # a parameter slot may be None
    assert m._parameters["w"] is None and m.w is None
    m.child = nn.Parameter(ember.zeros(1))  # re-assigning moves the name to parameters
    assert "child" not in m._modules and "child" in m._parameters
    del m.child, m.buf, m.plain
    assert "child" not in m._parameters and "buf" not in m._buffers
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'buf'"):
        _ = m.buf


def test_non_persistent_buffer_is_not_saved_and_flag_survives_reassignment() -> None:
    m = nn.Module()
    m.register_buffer("scratch", ember.zeros(1), persistent=False)
    m.scratch = ember.ones(1)
    assert "scratch" not in m.state_dict()
    assert [name for name, _ in m.named_buffers()] == ["scratch"]


_ZEROS = ember.zeros(1)
REGISTRATION_ERRORS = [
    (lambda m: setattr(m, "w", _ZEROS), TypeError, "cannot assign 'ember.Tensor' as parameter"),
    (lambda m: setattr(m, "c", 3), TypeError, "cannot assign 'int' as child module 'c'"),
    (lambda m: setattr(m, "b", "x"), TypeError, "cannot assign 'str' as buffer 'b'"),
    (lambda m: m.register_buffer("a.b", _ZEROS), KeyError, 'buffer name can\'t contain "."'),
    (lambda m: m.register_buffer("", _ZEROS), KeyError, "buffer name can't be empty"),
    (lambda m: m.register_buffer("w", _ZEROS), KeyError, "attribute 'w' already exists"),
    (lambda m: m.register_buffer("z", 1), TypeError, "cannot assign 'int' object to buffer"),
    (lambda m: m.register_parameter("z", _ZEROS), TypeError, "object to parameter 'z'"),
    (lambda m: m.register_parameter(1, None), TypeError, "parameter name should be a string"),
    (lambda m: m.add_module("x", 1), TypeError, "int is not a Module subclass"),
    (lambda m: m.add_module("a.b", None), KeyError, 'module name can\'t contain "."'),
    (lambda m: m.add_module("w", nn.Module()), KeyError, "attribute 'w' already exists"),
]


@pytest.mark.parametrize(("action", "error", "message"), REGISTRATION_ERRORS)
def test_registration_errors(action: Any, error: type[Exception], message: str) -> None:
    m = nn.Module()
    m.w = nn.Parameter(ember.zeros(1))
    m.c = nn.Module()
    m.register_buffer("b", ember.zeros(1))
    with pytest.raises(error) as info:
        action(m)
    assert message in info.value.args[0]  # args[0]: KeyError's str() adds quotes


def test_non_leaf_parameter_is_rejected() -> None:
    p = nn.Parameter(ember.ones(1))
    p_view = nn.Parameter.__new__(nn.Parameter, ember.ones(1))
    p_view._autograd = (p * 2.0)._autograd  # a parameter that is the output of an op
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'"):
        nn.Module().register_parameter("p", p_view)


def test_assignment_before_init_is_an_error() -> None:
    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(ember.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module\.__init__"):
        Early()


def test_init_rejects_arguments() -> None:
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Module(1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'k'"):
        nn.Module(k=1)


def test_get_submodule_parameter_and_buffer() -> None:
    net = _tree(ember)
    assert net.get_submodule("blocks.1.0") is net.blocks[1][0]
    assert net.get_submodule("") is net
    assert net.get_parameter("blocks.0.weight") is net.blocks[0].weight
    assert net.get_buffer("encoder.running") is net.encoder.running
    with pytest.raises(AttributeError, match="Sequential has no attribute `9`"):
        net.get_submodule("blocks.9")
    with pytest.raises(AttributeError, match=r"`weight` is not an nn\.Module"):
        net.get_submodule("encoder.weight")
    with pytest.raises(AttributeError, match=r"`running` is not an nn\.Parameter"):
        net.get_parameter("encoder.running")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        net.get_buffer("encoder.weight")
    replacement = nn.Module()
    net.set_submodule("blocks.1", replacement)
    assert net.blocks[1] is replacement


def test_train_eval_and_requires_grad() -> None:
    net = _tree(ember)
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")  # type: ignore[arg-type]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad() -> None:
    m = nn.Module()
    m.w = nn.Parameter(ember.tensor([1.0, 2.0]))
    (m.w * m.w).backward(ember.tensor([1.0, 1.0]))
    m.zero_grad(set_to_none=False)
    assert m.w.grad is not None and m.w.grad.tolist() == [0.0, 0.0]
    m.zero_grad()
    assert m.w.grad is None


def test_apply_visits_children_first() -> None:
    order: list[str] = []
    net = _tree(ember)
    assert net.apply(lambda m: order.append(m._get_name())) is net
    assert order == ["Leaf", "Leaf", "Leaf", "Sequential", "Sequential", "Net"]


def test_repr_matches_torch() -> None:
    assert repr(_tree(ember)) == repr(_tree(torch))

    class Extra(nn.Module):
        def extra_repr(self) -> str:
            return "size=3"

    holder = nn.Module()
    holder.inner = Extra()
    assert repr(Extra()) == "Extra(size=3)"
    assert repr(holder) == "Module(\n  (inner): Extra(size=3)\n)"


def test_dir_lists_members_without_numeric_names() -> None:
    net = _tree(ember)
    names = dir(net)
    for name in ("encoder", "blocks", "steps", "tied", "forward", "training"):
        assert name in names
    assert "0" not in dir(net.blocks)


def test_deep_nesting_does_not_hit_the_recursion_limit() -> None:
    root = current = nn.Module()
    for _ in range(3000):
        current.child = nn.Module()
        current = current.child
    assert len(list(root.modules())) == 3001
    assert len(list(root.named_parameters())) == 0
