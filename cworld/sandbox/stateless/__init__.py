"""Stateless sandbox tool servers: pure functions on the `SandboxApp` template with `stateful = False`."""
