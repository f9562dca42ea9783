"""Stateful sandbox apps: one module per app, all on the `SandboxApp` template."""
