"""The tool registry: the manifest of servers, their installation, three-stage validation, the index
and dependency graph over the validated tools, and the `search_tools` / `call_tool` service."""
