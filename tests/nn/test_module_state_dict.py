"""`state_dict` / `load_state_dict`: PyTorch's keys, errors, return value and hooks."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn

torch = pytest.importorskip("torch")


def _model(lib: Any) -> Any:
    tnn = lib.nn

    class Block(tnn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.weight = tnn.Parameter(lib.zeros(2, 3))
            self.scale = tnn.Parameter(lib.tensor(1.0))
            self.register_buffer("count", lib.zeros(1))

    model = tnn.Module()
    model.block = Block()
    model.layers = tnn.ModuleList([Block(), Block()])
    return model


def _filled(state: dict[str, Any], lib: Any) -> OrderedDict[str, Any]:
    """The same keys with distinct values, as `lib` tensors."""
    out = OrderedDict()
    for i, (key, value) in enumerate(state.items()):
        shape = tuple(value.shape)
        out[key] = lib.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + i)
    return out


def test_load_state_dict_copies_values_in_place() -> None:
    model = _model(ember)
    weight = model.block.weight
    state = _filled(model.state_dict(), ember)
    result = model.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert model.block.weight is weight and weight.requires_grad
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), state[key].numpy())


def test_round_trip_between_equivalent_models() -> None:
    source, target = _model(ember), _model(ember)
    source.load_state_dict(_filled(source.state_dict(), ember))
    target.load_state_dict(source.state_dict())
    for (k1, v1), (k2, v2) in zip(
        source.state_dict().items(), target.state_dict().items(), strict=True
    ):
        assert k1 == k2
        np.testing.assert_array_equal(v1.numpy(), v2.numpy())


def _load_error(lib: Any, edit: Any, strict: bool = True) -> str:
    model = _model(lib)
    state = _filled(model.state_dict(), lib)
    edit(state, lib)
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state, strict=strict)
    return str(info.value).replace("torch.Size", "ember.Size").replace("torch.", "ember.")


def _drop_and_add(state: dict[str, Any], lib: Any) -> None:
    del state["layers.1.count"]
    del state["block.scale"]
    state["block.extra"] = lib.zeros(1)
    state["layers.5.weight"] = lib.zeros(1)
    state["stray"] = lib.zeros(1)


def _bad_shape(state: dict[str, Any], lib: Any) -> None:
    state["layers.0.weight"] = lib.zeros(3, 2)


def _both(state: dict[str, Any], lib: Any) -> None:
    _drop_and_add(state, lib)
    _bad_shape(state, lib)


@pytest.mark.parametrize("edit", [_drop_and_add, _bad_shape, _both])
def test_strict_errors_match_torch(edit: Any) -> None:
    assert _load_error(ember, edit) == _load_error(torch, edit)


def test_error_text() -> None:
    message = _load_error(ember, _both)
    assert message == (
        "Error(s) in loading state_dict for Module:\n"
        '\tMissing key(s) in state_dict: "block.scale", "layers.1.count". \n'
        '\tUnexpected key(s) in state_dict: "stray", "block.extra", "layers.5.weight". \n'
        "\tsize mismatch for layers.0.weight: copying a param with shape "
        "ember.Size([3, 2]) from checkpoint, the shape in current model is ember.Size([2, 3])."
    )


def test_non_strict_load_reports_keys_and_still_fails_on_shape() -> None:
    model = _model(ember)
    state = _filled(model.state_dict(), ember)
    _drop_and_add(state, ember)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["block.scale", "layers.1.count"]
    assert result.unexpected_keys == ["stray", "block.extra", "layers.5.weight"]
    assert repr(result).startswith("IncompatibleKeys(missing_keys=['block.scale'")
    assert "size mismatch" in _load_error(ember, _bad_shape, strict=False)


def test_load_rejects_non_mappings_and_non_tensors() -> None:
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        _model(ember).load_state_dict([1, 2])  # type: ignore[arg-type]
    model = _model(ember)
    state = _filled(model.state_dict(), ember)
    state["block.weight"] = [1.0]
    with pytest.raises(RuntimeError, match=r'While copying the parameter named "block\.weight"'):
        model.load_state_dict(state)


def test_scalar_parameter_loads_from_a_one_element_tensor() -> None:
    model = _model(ember)
    state = _filled(model.state_dict(), ember)
    state["block.scale"] = ember.tensor([7.0])
    model.load_state_dict(state)
    assert model.block.scale.item() == 7.0


def test_assign_replaces_tensors_and_keeps_parameters() -> None:
    model = _model(ember)
    state = _filled(model.state_dict(), ember)
    model.load_state_dict(state, assign=True)
    assert isinstance(model.block.weight, nn.Parameter) and model.block.weight.requires_grad
    assert model.block.count is state["block.count"]


def test_state_dict_hooks_run_in_torch_order() -> None:
    def run(lib: Any) -> list[str]:
        log: list[str] = []
        model = _model(lib)
        for name, m in model.named_modules():
            m.register_state_dict_pre_hook(
                lambda m, prefix, keep_vars, n=name: log.append(f"pre {n!r} {prefix!r}")
            )
            m.register_state_dict_post_hook(
                lambda m, sd, prefix, meta, n=name: log.append(f"post {n!r} {len(sd)}")
            )
            m.register_load_state_dict_pre_hook(
                lambda m, sd, prefix, meta, strict, missing, unexpected, errors, n=name: log.append(
                    f"load-pre {n!r} {prefix!r} {strict}"
                )
            )
            m.register_load_state_dict_post_hook(
                lambda m, keys, n=name: log.append(f"load-post {n!r} {keys.missing_keys}")
            )
        state = model.state_dict()
        del state["block.count"]
        model.load_state_dict(state, strict=False)
        return log

    assert run(ember) == run(torch)


def test_state_dict_post_hook_edits_in_place_and_must_return_none() -> None:
    model = _model(ember)
    model.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.pop(prefix + "block.count"))
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        model.state_dict()
    model = _model(ember)
    model.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.__delitem__("block.count"))
    assert "block.count" not in model.state_dict()


def test_private_state_dict_hook_may_replace_the_result() -> None:
    model = _model(ember)
    handle = model._register_state_dict_hook(lambda m, sd, prefix, meta: {"only": 1})
    assert model.state_dict() == {"only": 1}
    handle.remove()
    assert "block.weight" in model.state_dict()


def test_load_state_dict_pre_hook_may_edit_the_incoming_state() -> None:
    model = _model(ember)
    state = _filled(model.state_dict(), ember)
    renamed = OrderedDict(("old_" + k if k == "block.weight" else k, v) for k, v in state.items())

    def rename(m: Any, sd: dict[str, Any], prefix: str, *rest: Any) -> None:
        sd[prefix + "block.weight"] = sd.pop(prefix + "old_block.weight")

    model.register_load_state_dict_pre_hook(rename)
    model.load_state_dict(renamed)
    np.testing.assert_array_equal(
        model.block.weight.detach().numpy(), state["block.weight"].numpy()
    )


def test_load_state_dict_post_hook_may_clear_keys_but_not_return() -> None:
    model = _model(ember)
    state = _filled(model.state_dict(), ember)
    del state["block.count"]
    handle = model.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
    assert model.load_state_dict(state).missing_keys == []
    handle.remove()
    model.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(AssertionError, match="are not expected to return new values"):
        model.load_state_dict(state, strict=False)


def test_extra_state_is_saved_and_restored() -> None:
    class Counter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def get_extra_state(self) -> Any:
            return {"calls": self.calls}

        def set_extra_state(self, state: Any) -> None:
            self.calls = state["calls"]

    source, target = Counter(), Counter()
    source.calls = 5
    state = source.state_dict()
    assert state == {"_extra_state": {"calls": 5}}
    target.load_state_dict(state)
    assert target.calls == 5
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        target.load_state_dict({})
