"""The seeded explorer the benchmarks drive apps with; it lives in `cworld.engine.learn.explorer`, where
`cworld world learn` drives a service with it too (one explorer, so the benchmarks measure what learning sees)."""

from cworld.engine.learn.explorer import (  # noqa: F401
    ALIASES,
    CREDENTIALS,
    REFERENCE,
    Call,
    Explorer,
    Rates,
    briefing,
    is_reference,
)
