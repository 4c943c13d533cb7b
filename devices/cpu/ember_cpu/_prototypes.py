"""`load_inline`'s declarations: the prototypes cffi needs, read from the definitions of
the functions the user names (so that nobody writes each signature twice)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

__all__ = ["declarations_of"]

_COMMENTS: Final = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_DIRECTIVES: Final = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.MULTILINE)
# What a definition may carry that a cffi declaration must not.
_SPECIFIERS: Final = re.compile(
    r"\b(?:static|inline|__inline__|__inline|extern)\b"
    r"|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)"
)


def declarations_of(source: str, functions: Sequence[str]) -> str:
    """The prototypes of `functions`, taken from their definitions in `source`."""
    code = _DIRECTIVES.sub(" ", _COMMENTS.sub(" ", source))
    prototypes = {function: _prototype(code, function) for function in functions}
    missing = [function for function, prototype in prototypes.items() if prototype is None]
    if missing:
        raise ValueError(
            f"ember_cpu.load_inline: no definition of {', '.join(missing)} in the source "
            "(looked for `<type> name(<parameters>) {`); pass cdef= to declare functions"
        )
    return "\n".join(p for p in prototypes.values() if p is not None)


def _prototype(code: str, function: str) -> str | None:
    for match in re.finditer(rf"\b{re.escape(function)}\s*\(", code):
        close = _closing_parenthesis(code, match.end() - 1)
        if close is None or not code[close + 1 :].lstrip().startswith("{"):
            continue  # a call or a declaration, not the definition
        start = max(code.rfind(c, 0, match.start()) for c in ";{}") + 1
        header = _SPECIFIERS.sub(" ", code[start : close + 1])
        return " ".join(header.split()) + ";"
    return None


def _closing_parenthesis(code: str, opening: int) -> int | None:
    depth = 0
    for i in range(opening, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return None
