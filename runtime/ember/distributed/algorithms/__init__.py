"""Training algorithms over the collectives (torch.distributed.algorithms' layout)."""
