"""The NCCL engine without a GPU: it is offered through the plugin hook and says why it
cannot run; its datatype and reduction tables follow nccl.h. benchmarks/gpu/run.sh runs it
on a GPU (tests/distributed/scripts/collectives.py on cuda)."""

from __future__ import annotations

import pytest

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

collectives = pytest.importorskip("ember_cuda.collectives")


def test_the_cuda_plugin_offers_nccl_and_reports_why_it_is_unavailable() -> None:
    engines = dist.distributed_c10d._engines()
    assert isinstance(engines["nccl"], collectives.NCCLBackend)
    if ember.is_available("cuda"):
        pytest.skip("a GPU is present: the GPU script checks NCCL for real")
    reason = engines["nccl"].unavailable_reason()
    assert reason is not None and reason.startswith("no cuda device")
    assert not dist.is_nccl_available()
    with pytest.raises(RuntimeError, match="backend 'nccl' is unavailable: no cuda device"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()


def test_backend_none_picks_mpi_for_host_tensors_without_a_gpu() -> None:
    pytest.importorskip("mpi4py")
    if ember.is_available("cuda"):
        pytest.skip("a GPU is present")
    dist.init_process_group()
    try:
        assert dist.get_backend() == "mpi"
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(
    ("dtype", "code"),
    [("int8", 0), ("uint8", 1), ("int32", 2), ("int64", 4), ("float16", 6), ("float32", 7),
     ("float64", 8), ("bfloat16", 9), ("bool", 1)],
)  # fmt: skip
def test_dtypes_map_to_nccl_h(dtype: str, code: int) -> None:
    assert collectives.nccl_dtype(ember.zeros(1, dtype=getattr(ember, dtype))) == code


def test_reductions_map_to_nccl_h_and_bitwise_ops_are_refused() -> None:
    floats, flags = ember.zeros(1), ember.zeros(1, dtype=ember.bool)
    assert [collectives.nccl_op(op, floats) for op in ReduceOp if op.name in {
        "SUM", "PRODUCT", "MAX", "MIN", "AVG"}] == [0, 4, 1, 3, 2]  # fmt: skip
    # bool travels as uint8: "any" is MAX, "all" is MIN.
    assert collectives.nccl_op(ReduceOp.SUM, flags) == 2
    assert collectives.nccl_op(ReduceOp.PRODUCT, flags) == 3
    with pytest.raises(ValueError, match="not an NCCL reduction"):
        collectives.nccl_op(ReduceOp.BXOR, ember.zeros(1, dtype=ember.int64))
