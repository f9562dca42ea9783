"""Operation rules: tools as operations with preconditions and effects on a seed's world."""

from cworld.engine.rules.engine import RulesEngine

__all__ = ["RulesEngine"]
