"""The API-coverage ledger: PyTorch's public names against Ember's, each implemented, planned
or out of scope with a reason (docs/api-coverage.md).

`python -m tools.api_ledger generate` rewrites docs/api-ledger.toml from PyTorch (needs torch);
`summary` and `check` read only the ledger and Ember.
"""
