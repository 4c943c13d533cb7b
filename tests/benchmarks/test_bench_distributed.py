"""The distributed benchmark suite: its bucket layout against PyTorch's own, its verdicts and
table from the measured numbers, and one real 2-rank quick run of the bandwidth job."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

# benchmarks/ is a top-level folder of the repository, not an installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import bench_distributed
from benchmarks.distributed_report import (
    distributed_as_json,
    distributed_failures,
    format_distributed,
)

_MLP: list[tuple[int, ...]] = [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)]
_CNN: list[tuple[int, ...]] = [(16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (10, 800), (10,)]


@pytest.mark.parametrize("shapes", [_MLP, _CNN, [(300_000,), (10,), (70_000,), (9,)]])
@pytest.mark.parametrize("cap_mb", [25.0, 0.25, 0.05])
def test_bucket_sizes_match_torch_ddp_assignment(
    shapes: list[tuple[int, ...]], cap_mb: float
) -> None:
    pytest.importorskip("mpi4py")
    torch = pytest.importorskip("torch")
    from benchmarks.distributed_training import bucket_sizes

    tensors = [torch.empty(shape) for shape in shapes][::-1]  # DDP's reverse order
    cap = int(cap_mb * (1 << 20))
    limits = [1 << 20, cap] if cap_mb == 25.0 else [cap]  # DDP's first bucket: 1 MiB
    groups, _ = torch.distributed._compute_bucket_assignment_by_size(tensors, limits)
    expected = [sum(tensors[i].numel() for i in group) for group in groups]
    assert bucket_sizes([t.numel() for t in reversed(tensors)], cap_mb) == expected


def _side(seconds: float, nbytes: int, error: str | None = None) -> dict[str, Any]:
    busbw = nbytes / seconds / 1e9  # two ranks: 2(n-1)/n = 1
    return {"error": error, "median_s": seconds, "busbw_gbs": busbw, "busbw_gbs_from_min": busbw}


def _suite(
    ember_s: float, raw_s: float, error: str | None = None
) -> bench_distributed.DistributedSuite:
    nbytes = 1 << 20
    entry = {
        "bytes": nbytes,
        "ranks": 2,
        "ember": _side(ember_s, nbytes, error),
        "raw": _side(raw_s, nbytes),
    }
    return bench_distributed.DistributedSuite(None, bandwidth=[entry])


@pytest.mark.parametrize(
    ("ember_s", "raw_s", "verdict"),
    [(1.0e-3, 1.0e-3, "PASS"), (1.1e-3, 1.0e-3, "PASS"), (1.2e-3, 1.0e-3, "MISS")],
)
def test_bandwidth_verdict_is_the_ratio_against_the_target(
    ember_s: float, raw_s: float, verdict: str
) -> None:
    suite = _suite(ember_s, raw_s)
    document = distributed_as_json(suite)
    assert document["bandwidth"][0]["ratio"] == pytest.approx(raw_s / ember_s)
    assert document["bandwidth"][0]["verdict"] == verdict
    assert distributed_failures(suite) is (verdict != "PASS")
    assert verdict in format_distributed(suite)


def test_wrong_result_is_an_error_not_a_timing() -> None:
    suite = _suite(1e-3, 1e-3, error="3 wrong elements across the ranks")
    assert distributed_as_json(suite)["bandwidth"][0]["verdict"] == "ERROR"
    assert "3 wrong elements" in format_distributed(suite)
    assert distributed_failures(suite)


def test_real_two_rank_bandwidth_job() -> None:
    """The quick suite launches the worker under mpiexec and reads its JSON back."""
    reason = bench_distributed.distributed_unavailable()
    if reason is not None:
        pytest.skip(reason)
    suite = bench_distributed.run_distributed_suite(quick=True, only={"allreduce_bandwidth"})
    assert suite.errors == []
    (entry,) = suite.bandwidth
    assert entry["bytes"] == 1 << 20 and entry["ranks"] == 2
    for side in ("ember", "raw"):
        assert entry[side]["error"] is None  # both sums were checked on every rank
        assert entry[side]["busbw_gbs"] > 0
        assert entry[side]["repetitions"] == 3
    assert suite.profile is not None and suite.profile["median_us"]["raw_allreduce"] > 0
    document = json.loads(json.dumps(distributed_as_json(suite)))
    assert document["bandwidth"][0]["verdict"] in ("PASS", "MISS")
    assert "1 MiB" in format_distributed(suite)
