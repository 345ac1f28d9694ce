"""Acting on node IDs: locating the live element, real CDP input, self-healing of stale IDs."""
