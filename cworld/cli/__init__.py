"""The `cworld` command line: one module per command, thin (parse, call, print)."""
