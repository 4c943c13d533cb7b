"""ParameterList, ParameterDict, nn.Buffer, the Lazy* layers (UninitializedParameter /
UninitializedBuffer, materialised on the first forward or by load_state_dict) and the
torch-namespace layer functions, against PyTorch."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.parameter import UninitializedBuffer, UninitializedParameter

from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")


def _normalized(text: str) -> str:
    return text.replace("torch.", "").replace("ember.", "")


def _same_container_repr(ours: Any, theirs: Any, device: str) -> None:
    """Reprs agree on cpu; elsewhere each line also names the device (as PyTorch's do for
    cuda), and the tensor type is the device's."""
    if device.startswith("cpu"):
        assert _normalized(repr(ours)) == _normalized(repr(theirs))
    else:
        assert repr(ours).count("containing") == repr(theirs).count("containing")


def test_parameter_list(device: str) -> None:
    values = [ember.ones(2, 3, device=device), nn.Parameter(ember.zeros(4, device=device)), "x"]
    ours = nn.ParameterList(values)
    theirs = torch.nn.ParameterList([torch.ones(2, 3), torch.nn.Parameter(torch.zeros(4)), "x"])
    assert len(ours) == 3
    assert isinstance(ours[0], nn.Parameter) and ours[0].requires_grad
    assert ours[-1] == "x"
    assert [name for name, _ in ours.named_parameters()] == ["0", "1"]
    ours.append(ember.ones(1, device=device))
    theirs.append(torch.ones(1))
    ours[1] = ember.full((2,), 3.0, device=device)
    theirs[1] = torch.full((2,), 3.0)
    assert isinstance(ours[1], nn.Parameter)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _same_container_repr(ours, theirs, device)
    assert len(ours[1:]) == 3 and isinstance(ours[1:], nn.ParameterList)
    with pytest.raises(IndexError, match="index 9 is out of range"):
        ours[9]
    with pytest.raises(TypeError, match=r"ParameterList\.extend should be called with an iterable"):
        ours.extend(3)
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        ours()


def test_parameter_dict(device: str) -> None:
    ours = nn.ParameterDict({"b": ember.ones(2, device=device), "a": ember.zeros(3, device=device)})
    theirs = torch.nn.ParameterDict({"b": torch.ones(2), "a": torch.zeros(3)})
    assert list(ours) == list(theirs) == ["a", "b"]  # a plain dict is taken in sorted order
    ours.update(OrderedDict([("z", ember.ones(1, device=device)), ("c", 5)]))
    theirs.update(OrderedDict([("z", torch.ones(1)), ("c", 5)]))
    assert list(ours.keys()) == list(theirs.keys())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _same_container_repr(ours, theirs, device)
    assert isinstance(ours["z"], nn.Parameter) and ours["c"] == 5
    assert "a" in ours and ours.get("missing", 7) == 7
    popped = ours.pop("a")
    assert "a" not in ours and popped.shape == (3,)
    assert ours.setdefault("q", ember.ones(2, device=device)).shape == (2,)
    merged = ours | nn.ParameterDict({"w": ember.ones(1, device=device)})
    assert list(merged) == [*ours, "w"]
    with pytest.raises(TypeError, match="cannot be used as a key as it is not a string"):
        ours[3] = ember.ones(1)
    with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
        ours.update([("a", 1, 2)])
    ours.clear()
    assert len(ours) == 0 and not list(ours.parameters())


def test_buffer_registers_on_assignment(device: str) -> None:
    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.kept = nn.Buffer(ember.ones(2, device=device))
            self.scratch = nn.Buffer(ember.zeros(3, device=device), persistent=False)

    class Theirs(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.kept = torch.nn.Buffer(torch.ones(2))
            self.scratch = torch.nn.Buffer(torch.zeros(3), persistent=False)

    ours, theirs = Model(), Theirs()
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["kept"]
    assert not list(ours.parameters())
    assert not nn.Buffer(ember.ones(1, requires_grad=True)).grad_fn
    moved = ours.double()
    assert moved.kept.dtype == ember.float64


LAZY = {
    "LazyLinear": (lambda m: m.LazyLinear(3), (2, 5)),
    "LazyConv1d": (lambda m: m.LazyConv1d(4, 3, padding=1), (2, 3, 6)),
    "LazyConv2d": (lambda m: m.LazyConv2d(4, 3, groups=2, bias=False), (1, 2, 5, 5)),
    "LazyConv3d": (lambda m: m.LazyConv3d(2, 2), (1, 3, 3, 3, 3)),
    "LazyConvTranspose1d": (lambda m: m.LazyConvTranspose1d(2, 3, stride=2), (2, 3, 4)),
    "LazyConvTranspose2d": (lambda m: m.LazyConvTranspose2d(4, 2, groups=2), (1, 2, 3, 3)),
    "LazyConvTranspose3d": (lambda m: m.LazyConvTranspose3d(2, 2), (1, 3, 2, 2, 2)),
    "LazyBatchNorm1d": (lambda m: m.LazyBatchNorm1d(), (4, 3)),
    "LazyBatchNorm2d": (lambda m: m.LazyBatchNorm2d(momentum=None), (2, 3, 2, 2)),
    "LazyBatchNorm3d": (lambda m: m.LazyBatchNorm3d(affine=False), (2, 2, 2, 2, 2)),
    "LazyInstanceNorm1d": (lambda m: m.LazyInstanceNorm1d(), (2, 3, 4)),
    "LazyInstanceNorm2d": (
        lambda m: m.LazyInstanceNorm2d(affine=True, track_running_stats=True),
        (2, 3, 2, 3),
    ),
    "LazyInstanceNorm3d": (lambda m: m.LazyInstanceNorm3d(), (2, 2, 2, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_layer_materializes_like_torch(device: str, name: str, rng: Any) -> None:
    build, shape = LAZY[name]
    ours, theirs = build(nn).to(device), build(torch.nn)
    assert repr(ours) == repr(theirs)
    assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
    x, tx = pair(rng.standard_normal(shape), device, grad=True)
    out, expected = ours(x), theirs(tx)  # the first call materialises, then copy weights
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    copy_into_torch(ours, theirs)
    out, expected = ours(x), theirs(tx)
    assert_same_outputs(out, expected, atol=1e-5)
    out.sum().backward()
    expected.sum().backward()
    assert_same_outputs(x.grad, tx.grad, atol=1e-4)
    assert_same_gradients(ours, theirs, atol=1e-4)
    assert repr(ours) == repr(theirs)


def test_lazy_linear_initialises_like_linear_and_loads_state(device: str) -> None:
    ember.manual_seed(3)
    lazy = nn.LazyLinear(4).to(device)
    assert isinstance(lazy.weight, UninitializedParameter)
    assert repr(lazy.weight) == "<UninitializedParameter>"
    lazy(ember.ones(1, 6, device=device))
    bound = 1 / np.sqrt(6)
    assert lazy.weight.shape == (4, 6) and np.abs(lazy.weight.numpy(force=True)).max() <= bound
    assert type(lazy.weight) is nn.Parameter and lazy.weight.requires_grad
    fresh = nn.LazyLinear(4).to(device)
    fresh.load_state_dict(lazy.state_dict())
    assert fresh.weight.shape == (4, 6)
    assert_same_outputs(fresh.weight, lazy.weight)
    fresh(ember.ones(2, 6, device=device))
    assert type(fresh) is nn.Linear
    norm = nn.LazyBatchNorm1d()
    assert isinstance(norm.running_mean, UninitializedBuffer)
    norm(ember.randn(3, 5))
    assert type(norm.running_mean) is ember.Tensor and norm.running_mean.shape == (5,)
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input"):
        nn.LazyConv2d(2, 3)(ember.ones(2, 3, device=device))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 1, groups=2)(ember.ones(1, 3, 2, 2, device=device))


def test_torch_level_layer_functions(device: str, rng: Any) -> None:
    x, tx = pair(rng.standard_normal((2, 3, 8)), device)
    w, tw = pair(rng.standard_normal(3), device)
    b, tb = pair(rng.standard_normal(3), device)
    rm, trm = pair(np.zeros(3), device)
    rv, trv = pair(np.ones(3), device)
    k, tk = pair(rng.standard_normal((3, 2, 2)), device)
    checks = [
        (ember.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5),
         torch.batch_norm(tx, tw, tb, trm, trv, True, 0.1, 1e-5, False)),
        (rm, trm),
        (ember.instance_norm(x, w, b, None, None, True, 0.1, 1e-5),
         torch.instance_norm(tx, tw, tb, None, None, True, 0.1, 1e-5, False)),
        (ember.group_norm(x, 3, w, b), torch.group_norm(tx, 3, tw, tb)),
        (ember.layer_norm(x, (8,)), torch.layer_norm(tx, (8,))),
        (ember.rms_norm(x, (8,)), torch.rms_norm(tx, (8,))),
        (ember.max_pool1d(x, 3), torch.max_pool1d(tx, 3)),
        (ember.max_pool1d_with_indices(x, 2, 1)[0], torch.max_pool1d_with_indices(tx, 2, 1)[0]),
        (ember.avg_pool1d(x, 2, 2, 1), torch.avg_pool1d(tx, 2, 2, 1)),
        (ember.adaptive_avg_pool1d(x, 3), torch.adaptive_avg_pool1d(tx, 3)),
        (ember.adaptive_max_pool1d(x, 3)[0], torch.adaptive_max_pool1d(tx, 3)[0]),
        (ember.max_pool2d(x, 2), torch.max_pool2d(tx, 2)),
        (ember.max_pool3d(x.reshape(1, 2, 3, 8), 2), torch.max_pool3d(tx.reshape(1, 2, 3, 8), 2)),
        (ember.conv1d(x, x[:2, :, :3]), torch.conv1d(tx, tx[:2, :, :3])),
        (ember.conv_transpose1d(x, k), torch.conv_transpose1d(tx, tk)),
        (ember.conv2d(x.unsqueeze(2), x[:2, :, :3].unsqueeze(2)),
         torch.conv2d(tx.unsqueeze(2), tx[:2, :, :3].unsqueeze(2))),
    ]  # fmt: skip
    for ours, theirs in checks:
        assert_same_outputs(ours, theirs, atol=1e-5)
