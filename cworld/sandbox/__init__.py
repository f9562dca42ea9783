"""Our own MCP servers: stateful apps over one seeded session, stateless tool servers, and the state diff."""
