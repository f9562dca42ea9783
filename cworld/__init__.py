"""cworld: create environments for LLM tool-using agents and run agents in them."""

__version__ = "0.1.0"
