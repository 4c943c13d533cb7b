"""ember.cuda / ember.backends / ember.accelerator / ember.cpu against torch 2.13 on this
machine, where the cuda plugin is installed but no GPU exists (torch here is CPU-only).

Where both lack a device the answers and exception classes must agree; the messages differ
on purpose: Ember names the plugin's reason."""

from __future__ import annotations

from typing import Any

import pytest

import ember

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(
    ember.cuda.is_available() or torch.cuda.is_available(), reason="checks the no-GPU answers"
)


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        result = fn(*args)
    except (AssertionError, RuntimeError, AttributeError) as error:
        return type(error)
    return result


@pytest.mark.parametrize(
    "name",
    ["current_device", "synchronize", "init", "get_device_name", "get_device_properties",
     "get_device_capability", "mem_get_info", "current_stream", "default_stream",
     "initial_seed", "get_rng_state"],
)  # fmt: skip
def test_cuda_functions_that_need_a_device_raise_like_torch(name: str) -> None:
    assert _outcome(getattr(torch.cuda, name)) is AssertionError
    with pytest.raises(AssertionError, match="no CUDA device is available"):
        getattr(ember.cuda, name)()


@pytest.mark.parametrize(
    "name", ["is_available", "device_count", "is_initialized", "is_bf16_supported",
             "memory_allocated", "max_memory_allocated", "memory_reserved",
             "max_memory_reserved", "empty_cache", "seed", "seed_all"],
)  # fmt: skip
def test_cuda_answers_match_torch(name: str) -> None:
    assert getattr(ember.cuda, name)() == getattr(torch.cuda, name)()


def test_cuda_memory_stats_and_seeding_without_a_device() -> None:
    assert ember.cuda.memory_stats() == dict(torch.cuda.memory_stats()) == {}
    assert ember.cuda.manual_seed(3) is None and ember.cuda.manual_seed_all(3) is None
    ember.cuda.reset_peak_memory_stats()  # nothing to reset: must not raise


def test_cuda_reason_is_the_plugins() -> None:
    reason = ember.cuda.unavailable_reason()
    assert reason is not None and "cuda" in reason
    info = ember.plugins._manager.MANAGER.device_types.get("cuda")
    if info is not None and info.reason:
        assert info.reason in reason


def test_cuda_device_context_and_stream_raise_runtime_error() -> None:
    with pytest.raises(RuntimeError), torch.cuda.device(0):
        pass
    with pytest.raises(RuntimeError, match="no CUDA device"), ember.cuda.device(0):
        pass
    for make in (torch.cuda.Stream, ember.cuda.Stream):
        with pytest.raises(RuntimeError):
            make()
    assert issubclass(ember.cuda.Stream, ember.Stream)
    assert issubclass(ember.cuda.Event, ember.Event)


def test_backends_flags() -> None:
    tb, eb = torch.backends, ember.backends
    assert eb.cuda.matmul.allow_tf32 == tb.cuda.matmul.allow_tf32
    assert (
        eb.cuda.matmul.allow_fp16_reduced_precision_reduction
        == tb.cuda.matmul.allow_fp16_reduced_precision_reduction
    )
    assert eb.cudnn.enabled == tb.cudnn.enabled
    assert eb.cudnn.benchmark == tb.cudnn.benchmark
    assert eb.cudnn.deterministic == tb.cudnn.deterministic
    assert eb.cudnn.is_available() is False and eb.cudnn.version() is None
    assert eb.mps.is_available() == tb.mps.is_available() and eb.mps.is_built() is False
    assert eb.opt_einsum.is_available() is False
    assert eb.mkldnn.is_available() is False
    assert eb.openmp.is_available() is ember.has_openmp is True  # the cpu kernels' OpenMP
    assert eb.cuda.is_built() == ("cuda" in ember.plugins._manager.MANAGER.device_types)


def test_allow_tf32_mirrors_float32_matmul_precision_as_in_torch() -> None:
    try:
        for lib in (torch, ember):
            lib.backends.cuda.matmul.allow_tf32 = True
        assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        for lib in (torch, ember):
            lib.set_float32_matmul_precision("highest")
        assert ember.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32
        assert ember.backends.cuda.matmul.allow_tf32 is False
    finally:
        torch.set_float32_matmul_precision("highest")
        ember.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError):
        ember.set_float32_matmul_precision("fast")


def test_deterministic_switch() -> None:
    assert ember.are_deterministic_algorithms_enabled() is False
    try:
        ember.use_deterministic_algorithms(True, warn_only=True)
        assert ember.are_deterministic_algorithms_enabled()
        assert ember.is_deterministic_algorithms_warn_only_enabled()
    finally:
        ember.use_deterministic_algorithms(False)
    assert not ember.are_deterministic_algorithms_enabled()


def test_accelerator_without_one() -> None:
    # This machine's OpenCL is PoCL on the host's cores: not an accelerator, as torch's cpu.
    assert ember.accelerator.is_available() == torch.accelerator.is_available() is False
    assert ember.accelerator.current_accelerator() is None
    assert ember.accelerator.device_count() == torch.accelerator.device_count() == 0
    for name in ("current_device_index", "synchronize", "memory_allocated", "empty_cache"):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            getattr(ember.accelerator, name)()
    with ember.accelerator.device_index(None):
        pass


def test_cpu_namespace() -> None:
    assert ember.cpu.is_available() is torch.cpu.is_available()
    assert ember.cpu.device_count() == torch.cpu.device_count()
    assert ember.cpu.current_device() == torch.cpu.current_device()
    ember.cpu.synchronize()


def test_deterministic_debug_mode_matches_torch() -> None:
    try:
        for mode in ("warn", 2, "default", 1, 0):
            torch.set_deterministic_debug_mode(mode)
            ember.set_deterministic_debug_mode(mode)
            assert ember.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert (
                ember.are_deterministic_algorithms_enabled()
                == torch.are_deterministic_algorithms_enabled()
            )
    finally:
        torch.set_deterministic_debug_mode(0)
        ember.set_deterministic_debug_mode(0)
    with pytest.raises(RuntimeError):
        ember.set_deterministic_debug_mode("loud")


def test_warn_always_switch() -> None:
    assert ember.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()
    ember.set_warn_always(False)


def test_get_device_module() -> None:
    assert ember.get_device_module("cpu") is ember.cpu
    assert ember.get_device_module(ember.device("cpu")) is ember.cpu
    assert ember.get_device_module("cuda:0") is ember.cuda
    assert ember.get_device_module() is ember.cpu  # no accelerator here, as torch
    with pytest.raises(RuntimeError, match="does not have a corresponding module"):
        ember.get_device_module("numpy")
