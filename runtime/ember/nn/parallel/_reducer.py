"""The gradient reducer of DistributedDataParallel: buckets, gradient hooks, write-back.

Parameters are grouped into flat buckets in reverse registration order (roughly the order
backward produces their gradients), one dtype and device per bucket. Each parameter has a
post-accumulate-grad hook: when its gradient is final for this backward, the hook copies
it into its slot of the bucket, and when a bucket's last slot is filled the bucket's
all-reduce is queued on the group's communication thread, which runs it while backward
goes on with earlier layers. Buckets are launched strictly in index order, so every rank
issues the same collectives in the same order whatever order its hooks fire in. An
end-of-backward callback (`ember.autograd.queue_callback`) waits for the buckets and
writes the averaged gradients back into `.grad`.

The last bucket is launched by that callback rather than by its last hook (its gradients
are the last ones backward makes, so little overlap is lost) and carries one extra
element: how many parameters this rank's backward did not reach. Its all-reduce tells
every rank whether some rank missed parameters, so without `find_unused_parameters`
all ranks raise together instead of one rank silently averaging another's zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from ember._dtype import float32
from ember._ops import ones, zeros
from ember._tensor import Tensor
from ember.autograd import queue_callback
from ember.autograd._mode import no_grad
from ember.distributed import ProcessGroup, ReduceOp, Work
from ember.distributed._grad_bucket import GradBucket
from ember.futures import Future

_MiB = 1024 * 1024
FIRST_BUCKET_BYTES = _MiB  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES

CommHook = Callable[[Any, GradBucket], Future[Any]]


def assign_buckets(params: Sequence[Tensor], limits: Sequence[int]) -> list[list[int]]:
    """Parameter indices per bucket: reverse order, one (dtype, device) per bucket, a
    bucket closed once it reaches its size limit (`limits[0]` for a key's first bucket,
    then `limits[1]`); buckets ordered by when their first gradient is expected."""
    open_buckets: dict[tuple[str, str], list[int]] = {}
    sizes: dict[tuple[str, str], int] = {}
    closed_count: dict[tuple[str, str], int] = {}
    done: list[list[int]] = []
    for index in reversed(range(len(params))):
        param = params[index]
        key = (str(param.dtype), str(param.device))
        members = open_buckets.setdefault(key, [])
        members.append(index)
        sizes[key] = sizes.get(key, 0) + param.numel() * param.element_size()
        limit = limits[min(closed_count.get(key, 0), len(limits) - 1)]
        if sizes[key] >= limit:
            done.append(members)
            open_buckets[key] = []
            sizes[key] = 0
            closed_count[key] = closed_count.get(key, 0) + 1
    done.extend(members for members in open_buckets.values() if members)
    order = {index: position for position, index in enumerate(reversed(range(len(params))))}
    done.sort(key=lambda members: order[members[0]])
    return done


class _Bucket:
    __slots__ = ("buffer", "grad_bucket", "index", "members", "pending", "result", "views")

    def __init__(self, index: int, members: list[int], params: Sequence[Tensor], flag: bool):
        self.index = index
        self.members = members
        first = params[members[0]]
        total = sum(params[i].numel() for i in members)
        # The flat storage; the last bucket has one more slot (the missed-parameter count).
        self.buffer = zeros(total + int(flag), dtype=first.dtype, device=first.device)
        self.views: list[Tensor] = []
        offset = 0
        for i in members:
            n = params[i].numel()
            self.views.append(self.buffer[offset : offset + n].view(params[i].shape))
            offset += n
        grads = self.buffer[:total] if flag else self.buffer
        self.grad_bucket = GradBucket(index, grads, self.views, [params[i] for i in members], False)
        self.pending = len(members)
        self.result: Work | Future[Any] | None = None


class Reducer:
    """Averages the gradients of `params` across `group` during each backward."""

    def __init__(
        self,
        params: Sequence[Tensor],
        names: Sequence[str],
        group: ProcessGroup,
        bucket_limits: Sequence[int],
        find_unused_parameters: bool,
        gradient_as_bucket_view: bool,
        static_graph: bool,
    ) -> None:
        self._params = list(params)
        self._names = list(names)
        self._group = group
        self._find_unused = find_unused_parameters
        # A static graph may leave parameters unused too: found in the first iteration.
        self._detect_unused = find_unused_parameters or static_graph
        self._as_view = gradient_as_bucket_view
        self._static_graph = static_graph
        self._static_unused: list[int] | None = None
        assignment = assign_buckets(self._params, bucket_limits)
        self._buckets = [
            _Bucket(b, members, self._params, flag=b == len(assignment) - 1)
            for b, members in enumerate(assignment)
        ]
        self._buckets[-1].grad_bucket._is_last = True
        self._bucket_of = [0] * len(self._params)
        self._slot_of = [0] * len(self._params)
        for bucket in self._buckets:
            for slot, i in enumerate(bucket.members):
                self._bucket_of[i] = bucket.index
                self._slot_of[i] = slot
        self._ready = [False] * len(self._params)
        self._unused: list[int] = []  # locally unused this iteration (find_unused mode)
        self._expect = False  # whether this backward's hooks reduce
        self._started = False  # a hook of this backward has run
        self._next = 0  # the next bucket to launch
        self._comm_hook: CommHook | None = None
        self._comm_state: Any = None
        for i, p in enumerate(self._params):
            p.register_post_accumulate_grad_hook(self._hook_for(i))
        if self._as_view:
            for i, p in enumerate(self._params):
                if p.grad is not None:
                    self._view(i).copy_(p.grad)
                    p.grad = self._view(i)

    # -- set-up --------------------------------------------------------------------------

    @property
    def bucket_count(self) -> int:
        return len(self._buckets)

    def register_comm_hook(self, state: Any, hook: CommHook) -> None:
        if self._comm_hook is not None:
            raise RuntimeError(
                "DistributedDataParallel.register_comm_hook: a communication hook is "
                "already registered; it can be registered only once"
            )
        self._comm_hook = hook
        self._comm_state = state

    # -- each iteration ------------------------------------------------------------------

    def prepare_for_backward(self, outputs: Any) -> None:
        """Arm the hooks for the backward of `outputs` (called by each synced forward)."""
        self._settle_abandoned()
        self._ready = [False] * len(self._params)
        for bucket in self._buckets:
            bucket.pending = len(bucket.members)
        self._next = 0
        self._started = False
        self._expect = True
        self._unused = []
        if self._static_unused is not None:
            self._unused = list(self._static_unused)
        elif self._find_unused:
            self._unused = self._unreached(outputs)

    def disarm(self) -> None:
        """This forward's backward does not reduce (no_sync, or grad disabled)."""
        self._settle_abandoned()
        self._expect = False

    def _unreached(self, outputs: Any) -> list[int]:
        """Parameters that the autograd graph of `outputs` does not lead to."""
        seen: set[int] = set()
        reached: set[int] = set()
        stack = [t.grad_fn for t in _tensors(outputs) if t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None:
                reached.add(id(variable))
            stack.extend(edge[0] for edge in node.next_functions if edge[0] is not None)
        return [i for i, p in enumerate(self._params) if id(p) not in reached]

    # -- during backward -----------------------------------------------------------------

    def _hook_for(self, index: int) -> Callable[[Tensor], None]:
        def hook(param: Tensor) -> None:
            if self._expect:
                self._mark_ready(index, param)

        return hook

    def _mark_ready(self, index: int, param: Tensor) -> None:
        if not self._started:
            self._started = True
            queue_callback(self._finalize)
            for i in self._unused:
                self._fill(i, self._params[i].grad)
        if self._ready[index]:
            raise RuntimeError(
                f"DistributedDataParallel: parameter {self._names[index]} (index {index}) "
                "received a gradient twice in one backward. Reentrant backward or a "
                "parameter shared between module calls with retain_graph=True is not "
                "supported; accumulate with no_sync() or make the graph static."
            )
        self._fill(index, param.grad)

    def _fill(self, index: int, grad: Tensor | None) -> None:
        """Copy parameter `index`'s gradient (zeros if None) into its bucket slot."""
        view = self._view(index)
        with no_grad():
            if grad is None:
                view.zero_()
            elif grad is not view:
                view.copy_(grad)
                if self._as_view:
                    self._params[index].grad = view
        self._ready[index] = True
        bucket = self._buckets[self._bucket_of[index]]
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready()

    def _launch_ready(self) -> None:
        # Every bucket but the last, in order; the last waits for _finalize (see above).
        last = len(self._buckets) - 1
        while self._next < last and self._buckets[self._next].pending == 0:
            self._launch(self._buckets[self._next])
            self._next += 1

    def _launch(self, bucket: _Bucket) -> None:
        if self._comm_hook is not None:
            bucket.result = self._comm_hook(self._comm_state, bucket.grad_bucket)
            if not isinstance(bucket.result, Future):
                raise TypeError(
                    "DistributedDataParallel: a communication hook must return an "
                    f"ember.futures.Future, got {type(bucket.result).__name__}"
                )
        else:
            bucket.result = self._group.allreduce(bucket.buffer, ReduceOp.AVG)

    # -- at the end of backward ----------------------------------------------------------

    def _finalize(self) -> None:
        self._expect = False
        missing = [i for i, ready in enumerate(self._ready) if not ready]
        for i in missing:
            self._fill(i, self._params[i].grad if self._detect_unused else None)
        last = self._buckets[-1]
        last.buffer[-1:].fill_(1.0 if missing and not self._detect_unused else 0.0)
        self._launch_ready()
        self._launch(last)
        self._next = len(self._buckets)
        self._wait_all()
        missed_somewhere = self._comm_hook is None and float(last.buffer[-1]) > 0
        if (missing and not self._detect_unused) or missed_somewhere:
            self._raise_unused(missing)
        used = None
        if self._detect_unused:
            unused_here = sorted(set(missing) | set(self._unused))
            if self._static_graph and self._static_unused is None:
                self._static_unused = unused_here
            used = self._globally_used(unused_here)
        self._write_back(used)

    def _wait_all(self) -> None:
        error: BaseException | None = None
        for bucket in self._buckets:
            result, bucket.result = bucket.result, None
            try:
                if isinstance(result, Work):
                    self._group.wait(result)
                elif result is not None:
                    value = result.wait()
                    reduced = value[0] if isinstance(value, (list, tuple)) else value
                    if reduced is not bucket.grad_bucket.buffer():
                        bucket.grad_bucket.set_buffer(reduced)
            except BaseException as exc:  # wait for every bucket before reporting
                error = error or exc
        if error is not None:
            raise error

    def _globally_used(self, unused_here: list[int]) -> list[bool]:
        """Which parameters some rank's backward reached (one small blocking all-reduce)."""
        flags = ones(len(self._params), dtype=float32)
        for i in unused_here:
            flags[i] = 0.0
        if self._group.size() > 1:
            self._group.all_reduce_work(flags, ReduceOp.SUM, check=False, blocking=True)
        return [value > 0 for value in flags.tolist()]

    def _write_back(self, used: list[bool] | None) -> None:
        with no_grad():
            for i, param in enumerate(self._params):
                if used is not None and not used[i]:
                    continue  # no rank computed it: .grad stays as it was
                view = self._view(i)
                if self._as_view:
                    param.grad = view
                elif param.grad is None:
                    param.grad = view.clone()
                else:
                    param.grad.copy_(view)

    def _raise_unused(self, missing: list[int]) -> None:
        hint = (
            "Enable unused-parameter detection with "
            "DistributedDataParallel(..., find_unused_parameters=True), or make sure every "
            "parameter takes part in computing the loss on every rank."
        )
        if missing:
            listed = ", ".join(f"{self._names[i]} (index {i})" for i in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise RuntimeError(
                f"DistributedDataParallel: on rank {self._group.rank()}, backward did not "
                f"produce gradients for {len(missing)} parameter(s): {listed}{more}. The "
                f"gradients were not averaged. {hint}"
            )
        raise RuntimeError(
            f"DistributedDataParallel: another rank's backward did not produce gradients "
            "for some parameters (that rank's error names them), so the gradients were not "
            f"averaged on rank {self._group.rank()} either. {hint}"
        )

    def _settle_abandoned(self) -> None:
        """A backward that failed half-way left launched buckets: wait for them, so the
        group's collectives stay in order, and let the next iteration start clean."""
        if any(bucket.result is not None for bucket in self._buckets):
            with suppress(BaseException):  # that backward raised already; reported there
                self._wait_all()

    def _view(self, index: int) -> Tensor:
        return self._buckets[self._bucket_of[index]].views[self._slot_of[index]]


def _tensors(value: Any) -> list[Tensor]:
    """The tensors in a forward's output (nested tuples, lists and dicts)."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []
