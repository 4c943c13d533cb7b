"""Runnable examples: `digits` (`python -m ember demo`), `tensor_tour` (`... tour`)."""
