"""ember.set_printoptions against torch.set_printoptions: str(tensor) must match torch's for
the same values and options."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

import ember

_VALUES = {
    "fixed": np.array([1.123456789, -2.5, 3.0, 100.25]),
    "integral": np.array([1.0, -2.0, 30.0, 4.0]),
    "wide": np.array([1e-5, 2.0, 3e3]),
    "matrix": np.arange(24.0).reshape(4, 6) / 7.0,
    "long": np.arange(40.0) * 1.5,
    "big": np.arange(2000.0).reshape(40, 50) / 3.0,
    "ints": np.arange(30, dtype=np.int64),
    "nonfinite": np.array([np.nan, 1.5, -np.inf, 2.25]),
}

_OPTIONS: dict[str, dict[str, Any]] = {
    "precision2": {"precision": 2},
    "precision6": {"precision": 6},
    "threshold5": {"threshold": 5},
    "threshold5-edge1": {"threshold": 5, "edgeitems": 1},
    "linewidth40": {"linewidth": 40},
    "sci": {"sci_mode": True},
    "no-sci": {"sci_mode": False},
    "short": {"profile": "short"},
    "full": {"profile": "full"},
    "short-precision5": {"profile": "short", "precision": 5},
}


@pytest.fixture
def restore() -> Iterator[None]:
    yield
    ember.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize("values", sorted(_VALUES))
@pytest.mark.parametrize("options", sorted(_OPTIONS))
def test_str_matches_torch(values: str, options: str, restore: None) -> None:
    data = _VALUES[values]
    ember.set_printoptions(**_OPTIONS[options])
    torch.set_printoptions(**_OPTIONS[options])
    dtype = ember.float32 if data.dtype.kind == "f" else ember.int64
    got = str(ember.tensor(data, dtype=dtype))
    want = str(torch.tensor(data, dtype=torch.float32 if data.dtype.kind == "f" else torch.int64))
    assert got == want


def test_profile_default_restores(restore: None) -> None:
    x = ember.tensor([1.123456])
    ember.set_printoptions(precision=1)
    assert str(x) == "tensor([1.1])"
    ember.set_printoptions(profile="default")
    assert str(x) == "tensor([1.1235])"
    ember.set_printoptions(threshold=5)
    assert (
        str(ember.arange(10))
        == "tensor([0, 1, 2,  ..., 7, 8, 9])"
        == str((torch.set_printoptions(threshold=5), torch.arange(10))[1])
    )
