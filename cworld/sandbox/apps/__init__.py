"""Stateful sandbox apps: one package per app, all on the `SandboxApp` template (see `framework/app.py`)."""
