"""`Sequential`, `ModuleList` and `ModuleDict` with PyTorch's semantics."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

import ember
from ember import nn


class Tag(nn.Module):
    """Appends its tag to a list input, so the call order is visible."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag

    def forward(self, items: list[str]) -> list[str]:
        return [*items, self.tag]

    def extra_repr(self) -> str:
        return self.tag


def _tags(container: Any) -> list[str]:
    return [m.tag for m in container]


def test_sequential_calls_in_order_and_names_children() -> None:
    seq = nn.Sequential(Tag("a"), Tag("b"), Tag("c"))
    assert seq([]) == ["a", "b", "c"]
    assert list(seq._modules) == ["0", "1", "2"]
    named = nn.Sequential(OrderedDict([("first", Tag("a")), ("second", Tag("b"))]))
    assert list(named._modules) == ["first", "second"] and named.first.tag == "a"
    assert nn.Sequential()(5) == 5


def test_sequential_indexing_slicing_and_editing() -> None:
    seq = nn.Sequential(Tag("a"), Tag("b"), Tag("c"), Tag("d"))
    assert len(seq) == 4 and seq[-1].tag == "d" and seq[1].tag == "b"
    part = seq[1:3]
    assert isinstance(part, nn.Sequential) and _tags(part) == ["b", "c"]
    assert list(part._modules) == ["1", "2"]  # a slice keeps the original names
    with pytest.raises(IndexError, match="index 4 is out of range"):
        seq[4]
    seq[0] = Tag("z")
    del seq[1]
    assert _tags(seq) == ["z", "c", "d"] and list(seq._modules) == ["0", "1", "2"]
    seq.append(Tag("e")).insert(0, Tag("start")).extend([Tag("f")])
    assert _tags(seq) == ["start", "z", "c", "d", "e", "f"]
    assert seq.pop(1).tag == "z"
    del seq[::2]
    assert _tags(seq) == ["c", "e"]


def test_sequential_arithmetic() -> None:
    a, b = nn.Sequential(Tag("a")), nn.Sequential(Tag("b"))
    assert _tags(a + b) == ["a", "b"]
    assert _tags(a * 3) == ["a", "a", "a"] and _tags(2 * a) == ["a", "a"]
    a += b
    assert _tags(a) == ["a", "b"]
    a *= 2
    assert _tags(a) == ["a", "b", "a", "b"]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
        a + Tag("x")  # type: ignore[operator]
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
        a * 0


def test_sequential_registers_parameters_in_order() -> None:
    class Weighted(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(ember.zeros(1))

    seq = nn.Sequential(Weighted(), nn.Sequential(Weighted()))
    assert [name for name, _ in seq.named_parameters()] == ["0.weight", "1.0.weight"]
    assert list(seq.state_dict()) == ["0.weight", "1.0.weight"]


def test_module_list() -> None:
    layers = nn.ModuleList([Tag("a"), Tag("b")])
    layers.append(Tag("c"))
    layers += [Tag("d")]
    layers.insert(1, Tag("x"))
    assert _tags(layers) == ["a", "x", "b", "c", "d"] and len(layers) == 5
    assert layers[-1].tag == "d"
    assert isinstance(layers[1:3], nn.ModuleList) and _tags(layers[1:3]) == ["x", "b"]
    layers[0] = Tag("z")
    del layers[1]
    assert _tags(layers) == ["z", "b", "c", "d"] and list(layers._modules) == ["0", "1", "2", "3"]
    assert layers.pop(0).tag == "z"
    assert _tags(layers + nn.ModuleList([Tag("e")])) == ["b", "c", "d", "e"]
    with pytest.raises(IndexError, match="index 7 is out of range"):
        layers[7]
    with pytest.raises(TypeError, match=r"ModuleList\.extend should be called with an iterable"):
        layers.extend(3)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        layers([])


def test_module_dict() -> None:
    blocks = nn.ModuleDict({"b": Tag("b"), "a": Tag("a")})
    blocks["c"] = Tag("c")
    blocks.update([("d", Tag("d"))])
    assert list(blocks) == ["b", "a", "c", "d"] and list(blocks.keys()) == list(blocks)
    assert "a" in blocks and "z" not in blocks and len(blocks) == 4
    assert [m.tag for m in blocks.values()] == ["b", "a", "c", "d"]
    assert blocks.pop("a").tag == "a"
    del blocks["b"]
    assert [k for k, _ in blocks.items()] == ["c", "d"]
    blocks.clear()
    assert len(blocks) == 0
    with pytest.raises(ValueError, match="element #0 has length 1; 2 is required"):
        blocks.update([("x",)])


def test_container_reprs_match_torch() -> None:
    torch = pytest.importorskip("torch")
    mine = nn.ModuleList([nn.Sequential(), nn.Sequential(), nn.Module(), nn.ModuleDict()])
    theirs = torch.nn.ModuleList(
        [torch.nn.Sequential(), torch.nn.Sequential(), torch.nn.Module(), torch.nn.ModuleDict()]
    )
    assert repr(mine) == repr(theirs)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    assert repr(nn.Sequential(Tag("a"))) == "Sequential(\n  (0): Tag(a)\n)"
