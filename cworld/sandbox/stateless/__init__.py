"""Stateless sandbox tool servers: pure functions on the `SandboxApp` template with `stateful = False`.

Every server is a package of the same shape: `__init__.py` holds the app class (its metadata, composed from
the tool mixins), `models.py` the argument types and result models (the tools' schemas), `tools.py` and
`tools_<topic>.py` one mixin of @tool methods each, and the other modules the pure logic they compute with.
There is no `state.py`: a call's answer depends only on its arguments. `shared.py` holds what all servers
share (the `StatelessApp` base, number guards, common result models).
"""
