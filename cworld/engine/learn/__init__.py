"""Learning a service's per-tool rules from its traffic (`cworld world learn`): docs/world-engine.md,
"Learning rules". Learning sees a service only through its tool schemas, its answers and its state."""
