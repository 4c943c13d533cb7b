"""Device names, inventory and the default device (`ember.device`, `devices`, EMBER_DEVICE)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import ember


@pytest.fixture
def default_device_restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("EMBER_DEVICE", raising=False)
    ember.set_default_device(None)
    yield
    ember.set_default_device(None)


# -- parsing and canonicalisation (in process: only the cpu plugin is needed) ---------------


@pytest.mark.parametrize("spec", ["cpu", "CPU", " Cpu "])
def test_spellings_of_cpu_are_one_interned_device_without_an_index(spec):
    # PyTorch: torch.device("cpu") has index None and prints as "cpu".
    dev = ember.device(spec)
    assert dev is ember.device("cpu")
    assert (dev.type, dev.index) == ("cpu", None)
    assert str(dev) == "cpu"
    assert repr(dev) == "device(type='cpu')"


@pytest.mark.parametrize("spec", ["cpu:0", " Cpu:0 ", "cpu:00"])
def test_cpu_with_an_index_keeps_it_as_torch_does(spec):
    dev = ember.device(spec)
    assert dev is ember.device("cpu", 0)
    assert (dev.type, dev.index) == ("cpu", 0)
    assert str(dev) == "cpu:0"
    assert repr(dev) == "device(type='cpu', index=0)"
    # torch.device("cpu") != torch.device("cpu:0"), yet both make tensors on "cpu".
    assert dev != ember.device("cpu")
    assert dev.placement is ember.device("cpu")
    assert ember.zeros(2, device=dev).device is ember.device("cpu")
    assert ember.zeros(2).to(dev).device is ember.device("cpu")


def test_device_from_type_and_index():
    assert ember.device("cpu", 0) is ember.device("cpu:0")
    assert ember.device(ember.device("cpu")) is ember.device("cpu")
    assert ember.device("cpu") == "cpu"
    assert ember.device("cpu") != "cpu:0"
    assert ember.device("cpu") != "nosuch"
    assert hash(ember.device("cpu:0")) == hash(ember.device("CPU:0"))
    assert ember.zeros(1).get_device() == -1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("opencl:x", "invalid device index in 'opencl:x'"),
        ("cpu:-1", "invalid device index"),
        ("cpu:0:1", "invalid device index"),
        ("cpu:", "invalid device index"),
        ("", "invalid device string"),
        (":0", "invalid device string"),
        ("cp u", "invalid device string"),
    ],
)
def test_malformed_device_strings_are_rejected(spec, message):
    with pytest.raises(RuntimeError, match=message):
        ember.device(spec)


def test_non_string_device_is_a_type_error():
    with pytest.raises(TypeError, match="expected a string"):
        ember.device(0)  # type: ignore[arg-type]


def test_index_given_twice_is_rejected():
    with pytest.raises(ValueError, match="already names index 0"):
        ember.device("cpu:0", 1)
    with pytest.raises(ValueError, match="already has an index"):
        ember.device(ember.device("cpu:0"), 1)


def test_unknown_type_lists_what_is_available():
    with pytest.raises(RuntimeError, match="unknown device type 'nosuch'") as info:
        ember.device("nosuch:0")
    available = str(info.value).split("Available device types: ")[1].rstrip(".").split(", ")
    assert "cpu" in available


def test_index_out_of_range_fails_at_allocation():
    dev = ember.device("cpu:1")  # naming it is fine, as in PyTorch
    assert dev.index == 1
    with pytest.raises(RuntimeError, match=r"device cpu:1 does not exist: cpu has 1 device\(s\)"):
        ember.empty(2, device="cpu:1")


def test_inventory_functions():
    assert "cpu" in ember.devices()
    assert ember.device_count("cpu") == 1
    assert ember.is_available("cpu")
    assert ember.device_count("nosuch") == 0
    assert not ember.is_available("nosuch")


def test_default_device_is_cpu_and_settable(default_device_restored):
    assert ember.get_default_device() is ember.device("cpu")
    ember.set_default_device("CPU:0")
    assert ember.get_default_device() is ember.device("cpu")
    assert ember.empty(2).device is ember.device("cpu")
    with pytest.raises(RuntimeError, match="does not exist"):
        ember.set_default_device("cpu:3")
    assert ember.get_default_device() is ember.device("cpu")


# -- with the throwaway plugins (subprocesses) -------------------------------------------------


INVENTORY = """
import json
import ember

def error_of(call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None

print(json.dumps({
    "devices": ember.devices(),
    "counts": {t: ember.device_count(t) for t in ("cpu", "toydev", "toyoff", "nosuch")},
    "unknown": error_of(ember.device, "nosuch"),
    "toyoff_named": str(ember.device("toyoff")),
    "toyoff_alloc": error_of(ember.empty, 2, device="toyoff"),
    "toydev_1": str(ember.empty(1, device="toydev:1").device),
    "toydev_2": error_of(ember.empty, 2, device="toydev:2"),
    "set_toyoff": error_of(ember.set_default_device, "toyoff"),
}))
"""


def test_inventory_with_plugins(check_code, full_site):
    data = json.loads(check_code(INVENTORY, full_site).stdout)
    assert set(data["devices"]) == {"cpu", "toydev"}
    assert data["counts"] == {"cpu": 1, "toydev": 2, "toyoff": 0, "nosuch": 0}
    unknown = data["unknown"]
    assert unknown.startswith("RuntimeError: unknown device type 'nosuch'.")
    assert "Available device types: " in unknown
    assert "toydev" in unknown.split("Available device types: ")[1].split(".")[0]
    assert "Unavailable: toyoff (no toy hardware attached)." in unknown
    assert "plugin broken_import failed: ImportError: libtoy.so" in unknown
    assert data["toyoff_named"] == "toyoff"
    assert data["toyoff_alloc"].startswith(
        "RuntimeError: device toyoff is unavailable: no toy hardware attached."
    )
    assert data["toydev_1"] == "toydev:1"
    assert data["toydev_2"].startswith(
        "RuntimeError: device toydev:2 does not exist: toydev has 2 device(s)."
    )
    assert "no toy hardware attached" in data["set_toyoff"]


DEFAULT_DEVICE = """
import json
import ember

try:
    default = str(ember.get_default_device())
    made = str(ember.empty(2).device)
    ember.set_default_device("toydev:0")
    switched = str(ember.zeros(2).device)
    ember.set_default_device(None)
    restored = str(ember.get_default_device())
    print(json.dumps([default, made, switched, restored]))
except RuntimeError as exc:
    print(json.dumps(f"RuntimeError: {exc}"))
"""


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ("", ["cpu", "cpu", "toydev:0", "cpu"]),
        ("toydev:1", ["toydev:1", "toydev:1", "toydev:0", "toydev:1"]),
        (" TOYDEV ", ["toydev:0", "toydev:0", "toydev:0", "toydev:0"]),
    ],
)
def test_ember_device_environment_variable(check_code, good_site, env, expected):
    result = check_code(DEFAULT_DEVICE, good_site, EMBER_DEVICE=env)
    assert json.loads(result.stdout) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ("nosuch", "unknown device type 'nosuch'"),
        ("toyoff", "device toyoff is unavailable: no toy hardware attached"),
        ("toydev:7", "device toydev:7 does not exist"),
        ("toydev:x", "invalid device index"),
    ],
)
def test_bad_ember_device_raises_when_the_default_is_needed(check_code, good_site, env, message):
    error = json.loads(check_code(DEFAULT_DEVICE, good_site, EMBER_DEVICE=env).stdout)
    assert error.startswith("RuntimeError: ")
    assert message in error


def test_a_type_without_an_index_places_tensors_on_its_current_device():
    # PyTorch: torch.device("cuda") has index None and prints "cuda"; its tensors report
    # device(type='cuda', index=0). Any indexed device type behaves the same way here.
    if not ember.is_available("opencl"):
        pytest.skip("needs an indexed device type (opencl)")
    dev = ember.device("opencl")
    assert (dev.index, str(dev), repr(dev)) == (None, "opencl", "device(type='opencl')")
    assert dev != ember.device("opencl:0")
    t = ember.zeros(2, device=dev)
    assert t.device is ember.device("opencl:0") and t.get_device() == 0
    assert t.to("opencl") is t and t.to(dev) is t
