"""Runnable examples: `digits` (`python -m ember demo`) and `tensor_tour` (`python -m ember tour`)."""
