"""`cworld registry harvest`: real MCP server packages from npm and PyPI, listed without credentials.

`entries` reads `registry/harvest.yaml`; `package` installs one and finds how to start it and where it
came from; `variables` reads which variables it expects from its code and docs; `jail` starts it with
placeholder credentials, a scratch home, an unprivileged uid and resource limits; `run` lists its tools,
starts it again with what its stderr asks for (`recover`), classifies failures and resumes; `catalog`
writes and reads `registry/catalogs/harvested/`.
"""
