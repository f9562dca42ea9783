"""The World Engine: category cards, the schema engine and the LLM engine (synthesized mode)."""
