"""InstanceNorm*, RMSNorm, LocalResponseNorm, CrossMapLRN2d, SyncBatchNorm, EmbeddingBag and
Embedding's options against PyTorch with the same weights (outputs, gradients, running
statistics, reprs); float64 finite-difference gradients; constructor and argument errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import functional as F

from ._helpers import check_gradients
from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")

LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "InstanceNorm1d": (lambda m: m.InstanceNorm1d(3), (2, 3, 7)),
    "InstanceNorm1d-unbatched-affine": (lambda m: m.InstanceNorm1d(3, affine=True), (3, 7)),
    "InstanceNorm2d-tracked": (
        lambda m: m.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.3),
        (2, 3, 4, 5),
    ),
    "InstanceNorm3d": (lambda m: m.InstanceNorm3d(2, eps=1e-3), (2, 2, 3, 4, 3)),
    "RMSNorm": (lambda m: m.RMSNorm(6), (2, 3, 6)),
    "RMSNorm-2d-eps": (lambda m: m.RMSNorm((3, 6), eps=1e-3), (2, 3, 6)),
    "RMSNorm-plain": (lambda m: m.RMSNorm(6, elementwise_affine=False), (4, 6)),
    "LocalResponseNorm": (lambda m: m.LocalResponseNorm(3, 1e-2, 0.7, 2.0), (2, 5, 4, 4)),
    "LocalResponseNorm-3d": (lambda m: m.LocalResponseNorm(2), (2, 5, 6)),
    "LocalResponseNorm-5d": (lambda m: m.LocalResponseNorm(4, 0.1), (1, 6, 2, 3, 2)),
    "CrossMapLRN2d": (lambda m: m.CrossMapLRN2d(3, 1e-1, 0.75, 2), (2, 7, 3, 3)),
    "CrossMapLRN2d-wide": (lambda m: m.CrossMapLRN2d(5, 1e-1, 0.6, 1), (1, 4, 2, 3)),
    "SyncBatchNorm": (lambda m: m.SyncBatchNorm(3), (4, 3, 5)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(device: str, name: str, rng: Any) -> None:
    build, shape = LAYERS[name]
    ours, theirs = build(nn).to(device), build(torch.nn)
    copy_into_torch(ours, theirs)
    for step in range(2):  # the second step sees updated running statistics
        x, tx = pair(rng.standard_normal(shape), device, grad=True)
        out, expected = ours(x), theirs(tx)
        assert_same_outputs(out, expected, atol=1e-5)
        g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
        out.backward(ember.tensor(g, device=device))
        expected.backward(torch.tensor(g))
        assert_same_outputs(x.grad, tx.grad, atol=1e-4)
        assert_same_gradients(ours, theirs, atol=1e-4)
        for key, value in theirs.state_dict().items():
            assert_same_outputs(ours.state_dict()[key], value, atol=1e-5)
        if step == 0:
            ours.eval()
            theirs.eval()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_instance_norm_functional_running_stats(device: str, rng: Any) -> None:
    x, tx = pair(rng.standard_normal((3, 4, 5, 2)), device)
    mean, tmean = pair(rng.standard_normal(4), device)
    var, tvar = pair(rng.random(4) + 0.5, device)
    weight, tweight = pair(rng.standard_normal(4), device)
    out = F.instance_norm(x, mean, var, weight, None, momentum=0.2)
    expected = torch.nn.functional.instance_norm(tx, tmean, tvar, tweight, None, momentum=0.2)
    assert_same_outputs(out, expected)
    assert_same_outputs(mean, tmean)
    assert_same_outputs(var, tvar)
    frozen = F.instance_norm(x, mean, var, use_input_stats=False)
    reference = torch.nn.functional.instance_norm(tx, tmean, tvar, use_input_stats=False)
    assert_same_outputs(frozen, reference)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(ember.zeros((2, 3, 1), device=device))


def test_norm_errors_as_torch(device: str) -> None:
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.InstanceNorm1d(3)(ember.zeros((1, 3, 2, 2), device=device))
    with pytest.raises(ValueError, match="expected input's size at dim=1 to match num_features"):
        nn.InstanceNorm2d(3, affine=True)(ember.zeros((1, 4, 2, 2), device=device))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm2d(3)(ember.ones((1, 4, 2, 2), device=device))
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input"):
        F.rms_norm(ember.zeros((2, 4), device=device), (5,))
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(ember.zeros((2, 4), device=device), 2)
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D"):
        nn.CrossMapLRN2d(3)(ember.zeros((2, 4, 3), device=device))
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        nn.SyncBatchNorm(3)(ember.zeros(3, device=device))


def test_rms_norm_default_eps_is_dtype_eps(device: str) -> None:
    tiny = np.full((1, 4), 1e-5)
    for dt, tdt in ((ember.float32, torch.float32), (ember.float64, torch.float64)):
        out = F.rms_norm(ember.tensor(tiny, dtype=dt, device=device), (4,))
        expected = torch.nn.functional.rms_norm(torch.tensor(tiny, dtype=tdt), (4,))
        np.testing.assert_allclose(out.numpy(force=True), expected.numpy(), rtol=1e-5)


def test_convert_sync_batchnorm_shares_state(device: str, rng: Any) -> None:
    model = nn.Sequential(nn.Conv1d(2, 3, 1), nn.BatchNorm1d(3), nn.Sequential(nn.BatchNorm2d(3)))
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm)
    assert isinstance(converted[2][0], nn.SyncBatchNorm)
    assert converted[1].weight is model[1].weight
    assert converted[1].running_mean is model[1].running_mean
    x = ember.tensor(rng.standard_normal((4, 2, 5)), dtype=ember.float32, device=device)
    reference = nn.BatchNorm1d(3).to(device)
    reference.load_state_dict(model[1].state_dict())
    converted.to(device)
    assert_same_outputs(converted[1](converted[0](x)), reference(converted[0](x)))


def test_norm_gradients_by_finite_differences(device: str, rng: Any) -> None:
    x = rng.standard_normal((2, 3, 4))
    w = rng.standard_normal(3)
    check_gradients(lambda a, b: F.instance_norm(a, weight=b), [x, w], device)
    check_gradients(lambda a, b: F.rms_norm(a, (4,), b[:1].expand(4)), [x, w], device)
    check_gradients(lambda a: F.local_response_norm(a, 2, 0.5, 0.75, 1.0), [x], device)


# -- embeddings -----------------------------------------------------------------------------------

BAGS = [
    {"mode": "sum"},
    {"mode": "mean", "padding_idx": 2},
    {"mode": "max"},
    {"mode": "sum", "include_last_offset": True, "padding_idx": -1},
    {"mode": "mean", "include_last_offset": True},
]


@pytest.mark.parametrize("options", BAGS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_embedding_bag_matches_torch(device: str, options: dict[str, Any], rng: Any) -> None:
    ours, theirs = (
        nn.EmbeddingBag(10, 4, **options).to(device),
        torch.nn.EmbeddingBag(10, 4, **options),
    )
    copy_into_torch(ours, theirs)
    indices = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 9])
    # With include_last_offset the offsets end with len(indices), as PyTorch documents (its
    # kernels disagree with each other on what a shorter last offset means).
    offsets = np.array([0, 4, 4, 7, 10] if options.get("include_last_offset") else [0, 4, 4, 7])
    out = ours(ember.tensor(indices, device=device), ember.tensor(offsets, device=device))
    expected = theirs(torch.tensor(indices), torch.tensor(offsets))
    assert_same_outputs(out, expected)
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_same_gradients(ours, theirs)
    assert repr(ours) == repr(theirs)
    fixed = indices.reshape(2, 5)
    assert_same_outputs(ours(ember.tensor(fixed, device=device)), theirs(torch.tensor(fixed)))


def test_embedding_bag_per_sample_weights_and_max_norm(device: str, rng: Any) -> None:
    weight = rng.standard_normal((6, 3)) * 3
    ours, theirs = pair(weight, device, grad=True)
    indices, offsets = np.array([0, 5, 5, 1, 3]), np.array([0, 2])
    psw, tpsw = pair(rng.standard_normal(5), device, grad=True)
    args = (ember.tensor(indices, device=device), ours, ember.tensor(offsets, device=device))
    out = F.embedding_bag(*args, mode="sum", per_sample_weights=psw)
    expected = torch.nn.functional.embedding_bag(
        torch.tensor(indices), theirs, torch.tensor(offsets), mode="sum", per_sample_weights=tpsw
    )
    assert_same_outputs(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_same_outputs(ours.grad, theirs.grad)
    assert_same_outputs(psw.grad, tpsw.grad)
    with ember.no_grad():
        F.embedding_bag(*args, max_norm=1.0)
    with torch.no_grad():
        torch.nn.functional.embedding_bag(
            torch.tensor(indices), theirs, torch.tensor(offsets), max_norm=1.0
        )
    assert_same_outputs(ours, theirs)  # the referenced rows were renormalised in place


def test_embedding_bag_errors(device: str) -> None:
    weight = ember.zeros((5, 2), device=device)
    indices = ember.tensor([0, 1, 2], device=device)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(indices, weight)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(indices.reshape(1, 3), weight, ember.tensor([0], device=device))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(indices, weight, ember.tensor([0], device=device),
                        per_sample_weights=ember.ones(3, device=device))  # fmt: skip
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient"):
        F.embedding_bag(indices, weight, ember.tensor([0], device=device), mode="max",
                        scale_grad_by_freq=True)  # fmt: skip
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(indices, weight, ember.tensor([0], device=device), mode="min")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(indices, weight, ember.tensor([1], device=device))
    with pytest.raises(NotImplementedError, match="sparse gradients are not supported"):
        F.embedding_bag(indices, weight, ember.tensor([0], device=device), sparse=True)
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(5, 2, padding_idx=5)


def test_embedding_bag_from_pretrained_and_torch_level(device: str, rng: Any) -> None:
    weight = rng.standard_normal((6, 3))
    bag = nn.EmbeddingBag.from_pretrained(ember.tensor(weight, device=device), mode="max")
    assert not bag.weight.requires_grad
    unfrozen = nn.EmbeddingBag.from_pretrained(ember.tensor(weight, device=device), freeze=False)
    assert unfrozen.weight.requires_grad
    indices, offsets = [1, 2, 5, 0], [0, 3]
    out = bag(ember.tensor(indices, device=device), ember.tensor(offsets, device=device))
    expected = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(weight), mode="max")(
        torch.tensor(indices), torch.tensor(offsets)
    )
    assert_same_outputs(out, expected)
    ours = ember.embedding_bag(
        ember.tensor(weight, device=device), ember.tensor(indices, device=device),
        ember.tensor(offsets, device=device), False, 2,
    )  # fmt: skip
    theirs = torch.embedding_bag(torch.tensor(weight), torch.tensor(indices),
                                 torch.tensor(offsets), False, 2)  # fmt: skip
    assert_same_outputs(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1].numpy(force=True), theirs[1].numpy())
    np.testing.assert_array_equal(ours[3].numpy(force=True), theirs[3].numpy())


def test_embedding_options_match_torch(device: str, rng: Any) -> None:
    weight = rng.standard_normal((8, 3)) * 2
    indices = np.array([[1, 2, 2], [7, 0, 2]])
    cases: list[dict[str, Any]] = [
        {"padding_idx": 2},
        {"max_norm": 1.5, "norm_type": 1.0},
        {"scale_grad_by_freq": True},
        {"padding_idx": -1, "max_norm": 1.0},
    ]
    for options in cases:
        data = ember.tensor(weight, dtype=ember.float32, device=device)
        ours = nn.Embedding.from_pretrained(data, freeze=False, **options)
        theirs = torch.nn.Embedding.from_pretrained(torch.tensor(weight, dtype=torch.float32),
                                                    freeze=False, **options)  # fmt: skip
        out = ours(ember.tensor(indices, device=device))
        expected = theirs(torch.tensor(indices))
        assert_same_outputs(out, expected)
        g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
        out.backward(ember.tensor(g, device=device))
        expected.backward(torch.tensor(g))
        assert_same_gradients(ours, theirs)
        assert_same_outputs(ours.weight, theirs.weight)  # max_norm renormalised in place
        assert repr(ours) == repr(theirs)
    assert not nn.Embedding.from_pretrained(ember.zeros((2, 2), device=device)).weight.requires_grad
    with pytest.raises(NotImplementedError, match="sparse gradients are not supported"):
        nn.Embedding(4, 2, sparse=True)(ember.tensor([0]))
    out = ember.embedding(ember.tensor(weight, device=device), ember.tensor(indices, device=device))
    assert_same_outputs(out, torch.embedding(torch.tensor(weight), torch.tensor(indices)))
