"""Hosted bots: submissions, the sandbox, the runner (docs/hosting.md).

Nothing is imported here: ``submissions`` is used by the light install's ``bot submit`` and must
load with the standard library alone.
"""
