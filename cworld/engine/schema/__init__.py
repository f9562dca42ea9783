"""The schema engine: the offline, deterministic World Engine and the pieces it shapes answers with."""
