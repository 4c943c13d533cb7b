"""Ember's CPU device: C kernels compiled through cffi at install time."""
