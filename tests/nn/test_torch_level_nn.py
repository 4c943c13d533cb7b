"""The torch-level forms of the functional ops (ember.softmax, ember.ctc_loss, ...) and the
Tensor methods softmax/log_softmax/hardshrink/prelu: PyTorch's ATen signatures (integer
reductions, positional `train`, `dtype` third) and values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember


def _same(ours: Any, theirs: Any) -> None:
    expected = theirs.detach().numpy()
    tolerance = 1e-6 if expected.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ours.numpy(force=True), expected, rtol=tolerance, atol=tolerance)


def test_softmax_family_with_dtype_third(rng: Any) -> None:
    import torch

    data = rng.standard_normal((3, 4)).astype(np.float32)
    x, t = ember.tensor(data), torch.tensor(data)
    out = ember.softmax(x, 1, ember.float64)
    assert out.dtype == ember.float64
    _same(out, torch.softmax(t, 1, torch.float64))
    _same(ember.log_softmax(x, 0, ember.float64), torch.log_softmax(t, 0, torch.float64))
    _same(x.softmax(-1), t.softmax(-1))
    _same(x.log_softmax(0), t.log_softmax(0))
    assert x.log_softmax(1, dtype=ember.float64).dtype == ember.float64


def test_pointwise_aliases_and_methods(rng: Any) -> None:
    import torch

    data = rng.standard_normal((2, 3, 4))
    x, t = ember.tensor(data), torch.tensor(data)
    weight = np.array([0.1, 0.2, 0.3])
    _same(ember.celu(x, 0.5), torch.celu(t, 0.5))
    _same(ember.selu(x), torch.selu(t))
    _same(ember.prelu(x, ember.tensor(weight)), torch.prelu(t, torch.tensor(weight)))
    _same(x.prelu(ember.tensor(weight)), t.prelu(torch.tensor(weight)))
    _same(ember.rrelu(x), torch.rrelu(t))
    _same(ember.threshold(x, 0.1, 5.0), torch.threshold(t, 0.1, 5.0))
    _same(ember.hardshrink(x, 0.3), torch.hardshrink(t, 0.3))
    _same(x.hardshrink(), t.hardshrink())
    for name in ("celu_", "selu_", "rrelu_"):
        y, u = ember.tensor(data), torch.tensor(data)
        assert getattr(ember, name)(y) is y
        getattr(torch, name)(u)
        _same(y, u)
    y, u = ember.tensor(data), torch.tensor(data)
    ember.threshold_(y, 0.0, -1.0)
    torch.threshold_(u, 0.0, -1.0)
    _same(y, u)


def test_dropout_aliases_take_train_positionally(rng: Any) -> None:
    x = ember.tensor(rng.standard_normal(1000))
    assert ember.dropout(x, 0.5, False) is x
    assert ember.alpha_dropout(x, 0.5, False) is x
    kept = ember.dropout(x, 0.5, True).numpy() != 0
    assert 0.4 < kept.mean() < 0.6
    assert abs(ember.alpha_dropout(x, 0.2, True).numpy().std() - x.numpy().std()) < 0.15


def test_shape_and_product_aliases(rng: Any) -> None:
    import torch

    data = rng.standard_normal((1, 8, 2, 3))
    x, t = ember.tensor(data), torch.tensor(data)
    _same(ember.pixel_shuffle(x, 2), torch.pixel_shuffle(t, 2))
    _same(ember.pixel_unshuffle(ember.tensor(data[:, :2, :, :2]), 2),
          torch.pixel_unshuffle(torch.tensor(data[:, :2, :, :2]), 2))  # fmt: skip
    _same(ember.channel_shuffle(x, 4), torch.channel_shuffle(t, 4))
    a, b, w = (
        rng.standard_normal((3, 2)),
        rng.standard_normal((3, 4)),
        rng.standard_normal((5, 2, 4)),
    )
    _same(ember.bilinear(ember.tensor(a), ember.tensor(b), ember.tensor(w)),
          torch.bilinear(torch.tensor(a), torch.tensor(b), torch.tensor(w)))  # fmt: skip
    _same(ember.cosine_similarity(x, x.flip(1)), torch.cosine_similarity(t, t.flip(1)))
    _same(ember.pairwise_distance(x, -x), torch.pairwise_distance(t, -t))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses_take_the_integer_reduction_enum(rng: Any, reduction: int) -> None:
    import torch

    a, b, c = (rng.standard_normal((4, 3)) for _ in range(3))
    signs = np.array([1.0, -1.0, 1.0, -1.0])
    probs = rng.dirichlet(np.ones(3), 4)
    log_probs = np.log(rng.dirichlet(np.ones(4), (5, 2)))
    labels = np.array([[1, 2], [3, 3]])
    cases: list[tuple[str, list[Any], list[Any]]] = [
        ("kl_div", [a, probs], []),
        ("cosine_embedding_loss", [a, b, signs], [0.1]),
        ("hinge_embedding_loss", [a, np.ones((4, 3))], [0.5]),
        ("margin_ranking_loss", [a[:, 0], b[:, 0], signs], [0.2]),
        ("triplet_margin_loss", [a, b, c], [1.0, 2, 1e-6, True]),
        ("poisson_nll_loss", [a, np.abs(b) * 2], [True, True, 1e-8]),
        ("ctc_loss", [log_probs, labels], [[5, 4], [2, 2], 0]),
    ]
    for name, arrays, options in cases:
        ours = getattr(ember, name)(*[ember.tensor(v) for v in arrays], *options, reduction)
        theirs = getattr(torch, name)(*[torch.tensor(v) for v in arrays], *options, reduction)
        _same(ours, theirs)
    targets = (b > 0).astype(np.float64)
    pos_weight = np.array([1.0, 2.0, 0.5])
    ours = ember.binary_cross_entropy_with_logits(
        ember.tensor(a), ember.tensor(targets), None, ember.tensor(pos_weight), reduction
    )
    theirs = torch.binary_cross_entropy_with_logits(
        torch.tensor(a), torch.tensor(targets), None, torch.tensor(pos_weight), reduction
    )
    _same(ours, theirs)


def test_bad_integer_reduction_is_rejected() -> None:
    with pytest.raises(ValueError, match="3 is not a valid value for reduction"):
        ember.kl_div(ember.zeros(2), ember.ones(2), 3)


def test_autocast_runs_torchs_float32_losses_in_float32(rng: Any) -> None:
    import torch

    x, y = (rng.standard_normal((4, 3)).astype(np.float16) for _ in range(2))
    signs = np.array([1.0, -1.0, 1.0, -1.0], dtype=np.float16)
    ours = {
        "kl_div": lambda F, a, b, s: F.kl_div(a, b, reduction="sum"),
        "cosine_embedding_loss": lambda F, a, b, s: F.cosine_embedding_loss(a, b, s),
        "margin_ranking_loss": lambda F, a, b, s: F.margin_ranking_loss(a[:, 0], b[:, 0], s),
        "triplet_margin_loss": lambda F, a, b, s: F.triplet_margin_loss(a, b, -a),
        "soft_margin_loss": lambda F, a, b, s: F.soft_margin_loss(a, b),
        "poisson_nll_loss": lambda F, a, b, s: F.poisson_nll_loss(a, b),
        "softsign": lambda F, a, b, s: F.softsign(a),  # not on the lists: stays float16
    }
    for name, call in ours.items():
        with torch.autocast("cpu", dtype=torch.float16):
            expected = call(torch.nn.functional, *(torch.tensor(v) for v in (x, y, signs)))
        with ember.autocast("cpu", dtype=ember.float16):
            out = call(ember.nn.functional, *(ember.tensor(v) for v in (x, y, signs)))
        assert str(out.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1], name


def test_functional_namespace_reexports_tensor() -> None:
    import torch

    assert torch.nn.functional.Tensor is torch.Tensor
    assert ember.nn.functional.Tensor is ember.Tensor
