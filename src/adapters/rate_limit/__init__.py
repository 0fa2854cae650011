"""Rate-limit stores: in this process's memory, or in Redis (shared by every process)."""
