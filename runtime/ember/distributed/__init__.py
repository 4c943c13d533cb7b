"""ember.distributed: PyTorch's collective API over pluggable communication engines."""
