"""`--ember-device` and EMBER_TEST_DEVICES choose the devices the kit runs on."""

from __future__ import annotations

import pytest

from ember.testing._selection import available_devices, requested_names, select

AVAILABLE = ["cpu:0", "opencl:0", "opencl:1"]


def test_the_option_wins_over_the_variable() -> None:
    assert requested_names(["cpu"], "opencl") == ["cpu"]
    assert requested_names(None, "opencl") == ["opencl"]
    assert requested_names([], " OpenCL:1 , cpu ") == ["opencl:1", "cpu"]
    assert requested_names(None, None) == []


def test_the_option_is_repeatable_and_comma_separated() -> None:
    assert requested_names(["cpu,opencl:0", "opencl:1"], None) == ["cpu", "opencl:0", "opencl:1"]


def test_no_names_select_every_available_device() -> None:
    assert select([], AVAILABLE) == AVAILABLE


def test_a_type_selects_all_its_indices_and_a_full_name_one() -> None:
    assert select(["opencl"], AVAILABLE) == ["opencl:0", "opencl:1"]
    assert select(["opencl:1", "cpu"], AVAILABLE) == ["opencl:1", "cpu:0"]
    assert select(["opencl", "opencl:0"], AVAILABLE) == ["opencl:0", "opencl:1"]


def test_a_name_that_is_not_available_is_a_usage_error() -> None:
    with pytest.raises(pytest.UsageError, match=r"'cuda', which is not available.*cpu:0"):
        select(["cuda"], AVAILABLE)
    with pytest.raises(pytest.UsageError, match="'opencl:2'"):
        select(["opencl:2"], AVAILABLE)


def test_the_real_devices_include_cpu() -> None:
    assert "cpu" in available_devices()
