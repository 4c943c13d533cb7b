"""Segments, blocks and per-stream pools: the caching allocator's data structures.

A segment is one raw allocation of the large pool. It is carved into blocks that stay
linked to their neighbours, so a freed block merges with free neighbours into one. A
pool holds the free blocks of one stream: small blocks (raw allocations of their own) in
per-size lists, large ones sorted by size for best fit. Nothing here takes locks or
keeps statistics; runtime/ember/_allocator.py does both.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from typing import Any, Final

__all__ = ["ACTIVE", "FREE", "PENDING", "Block", "Pool", "Segment"]

FREE: Final = 0
ACTIVE: Final = 1
PENDING: Final = 2  # freed, waiting for events on streams that used it

_serials = itertools.count()


class Segment:
    """One raw allocation of the large pool."""

    __slots__ = ("handle", "pool", "ptr", "size")

    def __init__(self, handle: Any, ptr: int, size: int, pool: Pool) -> None:
        self.handle, self.ptr, self.size, self.pool = handle, ptr, size, pool


class Block:
    """A run of bytes of a segment; `handle` and `ptr` address it once handed out."""

    __slots__ = ("handle", "next", "offset", "prev", "ptr", "segment", "serial", "size", "state")

    def __init__(self, segment: Segment, offset: int, size: int) -> None:
        self.segment, self.offset, self.size = segment, offset, size
        self.prev: Block | None = None
        self.next: Block | None = None
        self.state = FREE
        self.handle: Any = None  # None until addressed, and again once resized
        self.ptr = 0
        self.serial = next(_serials)  # orders equal sizes in the pool's sorted keys

    @property
    def whole(self) -> bool:
        """True when the block spans its whole segment."""
        return self.prev is None and self.next is None


class Pool:
    """The free blocks of one stream."""

    __slots__ = ("blocks", "keys", "native", "small")

    def __init__(self, native: Any) -> None:
        self.native = native  # the stream's native object, kept so its id stays unique
        self.small: dict[int, list[tuple[Any, int]]] = {}  # size -> [(handle, ptr)]
        self.keys: list[tuple[int, int]] = []  # (size, serial) of the free large blocks
        self.blocks: list[Block] = []  # in the order of keys

    def insert(self, block: Block) -> None:
        key = (block.size, block.serial)
        i = bisect_left(self.keys, key)
        self.keys.insert(i, key)
        self.blocks.insert(i, block)

    def remove(self, block: Block) -> None:
        i = bisect_left(self.keys, (block.size, block.serial))
        del self.keys[i], self.blocks[i]

    def take_best_fit(self, size: int, largest: int) -> Block | None:
        """Remove and return the smallest free block of `size` bytes or more, unless even
        that one is over `largest` bytes."""
        keys = self.keys
        i = bisect_left(keys, (size, -1))
        if i == len(keys) or keys[i][0] > largest:
            return None
        del keys[i]
        return self.blocks.pop(i)

    def split(self, block: Block, size: int) -> None:
        """Cut taken `block` down to `size` bytes; the rest becomes a free block here."""
        rest = Block(block.segment, block.offset + size, block.size - size)
        rest.prev, rest.next = block, block.next
        if block.next is not None:
            block.next.prev = rest
        block.next = rest
        block.size = size
        self.insert(rest)

    def release(self, block: Block) -> Block:
        """Free `block`, merged with its free neighbours; return the merged block, which
        is in the pool."""
        block.state = FREE
        prev = block.prev
        if prev is not None and prev.state == FREE:
            self.remove(prev)
            prev.size += block.size
            prev.next = block.next
            if block.next is not None:
                block.next.prev = prev
            block = prev
            block.handle = None  # it addressed fewer bytes
        after = block.next
        if after is not None and after.state == FREE:
            self.remove(after)
            block.size += after.size
            block.next = after.next
            if after.next is not None:
                after.next.prev = block
            block.handle = None
        self.insert(block)
        return block
