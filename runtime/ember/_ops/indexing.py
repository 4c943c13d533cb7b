"""Placeholder: being written."""

from __future__ import annotations

__all__: list[str] = []


def getitem(*a):
    raise NotImplementedError


def setitem(*a):
    raise NotImplementedError
