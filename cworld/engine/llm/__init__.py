"""The LLM engine: the model of role `engine` answers, checked against the schema, with the schema engine
as its fallback."""
