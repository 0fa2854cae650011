"""Pure use cases and the structs they speak; no framework, no I/O."""
