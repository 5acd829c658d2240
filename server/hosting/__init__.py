"""Hosted bots: submissions, the runner, the sandbox (DESIGN decision 19; docs/hosting.md)."""
