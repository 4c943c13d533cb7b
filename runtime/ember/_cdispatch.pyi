# Types of the C extension ember._cdispatch (see _cdispatch.c).
from typing import Any

class OpCall:
    """A custom op's call: the fast path in C, everything else in `fallback`."""

    fallback: Any
    use_key: int

    def __init__(
        self,
        fallback: Any,
        op: Any,
        default: Any,
        checked: dict[Any, bool],
        tensor: type,
        device: type,
        kinds: tuple[int, ...],
        fast: bool,
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...
