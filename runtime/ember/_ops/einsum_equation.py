"""einsum: Einstein summation as diagonals, sums and one batched matmul per operand pair.

Each operand's repeated labels become a diagonal view; labels no later operand and not the
output need are summed out first; then two operands contract by permuting each to
(batch, free, contracted) / (batch, contracted, free), reshaping to three dims and calling
bmm, so the work is that of matrix products, never a broadcast elementwise product of all
labels at once. Ellipsis dims broadcast like elementwise ops (size 1 expands)."""

from __future__ import annotations

import math
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import linalg, reduction
from ember._ops import shape as shape_ops
from ember._ops.triangle import diagonal
from ember._tensor import Tensor

__all__ = ["einsum"]

Label = int  # a letter's code point; ellipsis dims are -1 (last), -2, ...
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_term(term: str, ndim: int, index: int) -> list[Label]:
    """One operand's labels, its ellipsis expanded to the dims it stands for."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise RuntimeError(f"einsum(): invalid ellipsis in subscript {term!r}")
    head, _, tail = term.partition("...")
    for c in head + tail:
        if c not in _LETTERS:
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {index} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
    letters = len(head) + len(tail)
    if "..." in term:
        if letters > ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({letters}) is more than "
                f"the number of dimensions ({ndim}) for operand {index}"
            )
        middle = list(range(-(ndim - letters), 0))
        return [ord(c) for c in head] + middle + [ord(c) for c in tail]
    if letters != ndim:
        raise RuntimeError(
            f"einsum(): the number of subscripts in the equation ({letters}) does not match "
            f"the number of dimensions ({ndim}) for operand {index} and no ellipsis was given"
        )
    return [ord(c) for c in head]


def _sublists(args: tuple[Any, ...]) -> tuple[str, list[Tensor]]:
    """einsum(op1, [0, 1], op2, [1, 2], [0, 2]) as an equation string."""

    def term(sub: Any) -> str:
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)

    pairs = list(args)
    output = pairs.pop() if len(pairs) % 2 else None
    operands = pairs[0::2]
    equation = ",".join(term(s) for s in pairs[1::2])
    if output is not None:
        equation += "->" + term(output)
    return equation, operands


def _diagonals(t: Tensor, labels: list[Label]) -> tuple[Tensor, list[Label]]:
    """Repeated labels of one operand taken as diagonals (each moves to the last dim)."""
    while len(set(labels)) != len(labels):
        label = next(x for x in labels if labels.count(x) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        if t._shape[first] != t._shape[second]:
            raise RuntimeError(
                f"einsum(): subscript {chr(label)} is repeated for operand but the sizes don't "
                f"match, {t._shape[first]} != {t._shape[second]}"
            )
        t = diagonal(t, 0, first, second)
        labels = [x for i, x in enumerate(labels) if i not in (first, second)] + [label]
    return t, labels


def _sum_out(t: Tensor, labels: list[Label], keep: set[Label]) -> tuple[Tensor, list[Label]]:
    drop = [i for i, x in enumerate(labels) if x not in keep]
    if not drop:
        return t, labels
    return reduction.sum(t, drop), [x for x in labels if x in keep]


def _contract(
    a: Tensor, la: list[Label], b: Tensor, lb: list[Label], keep: set[Label]
) -> tuple[Tensor, list[Label]]:
    """a and b multiplied, summing the labels they share that `keep` does not hold."""
    size = {x: n for x, n in zip(la, a._shape, strict=True)}
    for x, n in zip(lb, b._shape, strict=True):
        if x in size and size[x] != n and 1 not in (size[x], n):
            raise RuntimeError(
                f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                f"{list(a._shape)} and {list(b._shape)}"
            )
        size[x] = n if x not in size or size[x] == 1 else size[x]
    batch = [x for x in la if x in lb and x in keep]
    summed = [x for x in la if x in lb and x not in keep]
    left = [x for x in la if x not in lb]
    right = [x for x in lb if x not in la]
    a = shape_ops.permute(a, [la.index(x) for x in batch + left + summed])
    b = shape_ops.permute(b, [lb.index(x) for x in batch + summed + right])
    a = shape_ops.expand(
        a,
        *[size[x] for x in batch],
        *a._shape[len(batch) : len(batch) + len(left)],
        *[size[x] for x in summed],
    )
    b = shape_ops.expand(
        b, *[size[x] for x in batch + summed], *b._shape[len(batch) + len(summed) :]
    )

    def count(xs: list[Label]) -> int:
        return math.prod(size[x] for x in xs)

    a3 = shape_ops.reshape(a, count(batch), count(left), count(summed))
    b3 = shape_ops.reshape(b, count(batch), count(summed), count(right))
    product = linalg.bmm(a3, b3)
    out = shape_ops.reshape(product, *[size[x] for x in batch + left + right])
    return out, batch + left + right


def einsum(*args: Any) -> Tensor:
    """Einstein summation over the operands as the equation says (implicit or explicit output,
    repeated labels as diagonals, ellipsis broadcast); also the sublist form."""
    if not args:
        raise RuntimeError("einsum(): must specify the equation string and at least one operand")
    if isinstance(args[0], str):
        equation = args[0]
        operands = (
            list(args[1]) if len(args) == 2 and not isinstance(args[1], Tensor) else list(args[1:])
        )
    else:
        equation, operands = _sublists(args)
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError(
            f"einsum(): {len(terms)} operands were given by the equation but {len(operands)} "
            "were given as tensors"
        )
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    labels = [
        _parse_term(term, len(t._shape), i)
        for i, (term, t) in enumerate(zip(terms, operands, strict=True))
    ]
    if arrow:
        widest = max((-min((x for x in ls if x < 0), default=0) for ls in labels), default=0)
        output = _output_labels(rhs, widest, labels)
    else:
        counts: dict[Label, int] = {}
        for ls in labels:
            for x in ls:
                counts[x] = counts.get(x, 0) + 1
        broadcast = sorted({x for x in counts if x < 0})
        output = broadcast + sorted((x for x, c in counts.items() if x >= 0 and c == 1), key=chr)
    dtype = _dtype.result_type(*operands)
    tensors = [conv.to(t, dtype) for t in operands]
    pairs = [_diagonals(t, ls) for t, ls in zip(tensors, labels, strict=True)]
    current, current_labels = pairs[0]
    for i in range(len(pairs)):
        later = {x for _, ls in pairs[i + 1 :] for x in ls} | set(output)
        if i == 0:
            current, current_labels = _sum_out(current, current_labels, later)
            continue
        other, other_labels = pairs[i]
        other, other_labels = _sum_out(other, other_labels, later | set(current_labels))
        current, current_labels = _sum_out(current, current_labels, later | set(other_labels))
        current, current_labels = _contract(current, current_labels, other, other_labels, later)
    return shape_ops.permute(current, [current_labels.index(x) for x in output])


def _output_labels(rhs: str, ellipsis: int, inputs: list[list[Label]]) -> list[Label]:
    present = {x for ls in inputs for x in ls}
    head, dots, tail = rhs.partition("...")
    out = (
        [ord(c) for c in head]
        + (list(range(-ellipsis, 0)) if dots else [])
        + [ord(c) for c in tail]
    )
    for c in head + tail:
        if c not in _LETTERS:
            raise RuntimeError(
                "einsum(): invalid subscript given in the output, subscripts must be in [a-zA-Z]"
            )
        if ord(c) not in present:
            raise RuntimeError(
                f"einsum(): output subscript {c} does not appear in the equation for any input "
                "operand"
            )
    if len(set(out)) != len(out):
        raise RuntimeError("einsum(): output subscript appears more than once in the output")
    return out
