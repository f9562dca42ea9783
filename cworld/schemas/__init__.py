"""JSON Schema values and checks, shared by the registry (validation probes) and the World Engine.

A low layer: it imports nothing of cworld but `data_model`, `errors` and `seeding`, so both the registry
and the engine may use it. See `values.py` for the one value generator and its two modes.
"""
