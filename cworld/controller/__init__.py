"""The state controller: middleware between agent and backend that injects faults."""
