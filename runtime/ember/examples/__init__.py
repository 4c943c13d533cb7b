"""Runnable examples behind `python -m ember demo`."""
