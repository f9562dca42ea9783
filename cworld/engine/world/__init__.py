"""The simulated world of a session: its collections and records, the task it is grounded in, and the
helpers that keep records plausible (filters, fresh values, id formats)."""
