"""What every device's `load_inline` checks first: the names of the functions or kernels
to expose, which become attributes of the object it returns."""

from __future__ import annotations

from collections.abc import Collection, Sequence

__all__ = ["inline_names"]


def inline_names(
    names: str | Sequence[str], *, caller: str, what: str, holder: str, reserved: Collection[str]
) -> tuple[str, ...]:
    """`names` as a tuple of identifiers, none of them one of `holder`'s own attributes
    (`reserved`); a ValueError naming `caller` otherwise."""
    found = (names,) if isinstance(names, str) else tuple(names)
    if not found:
        raise ValueError(f"{caller}: name at least one {what}")
    for name in found:
        if not name.isidentifier():
            raise ValueError(f"{caller}: {name!r} is not a {what} name")
        if name in reserved:
            raise ValueError(
                f"{caller}: a {what} named {name!r} would hide {holder}.{name}; rename it"
            )
    return found
