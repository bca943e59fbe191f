"""What makes kind possible offline: the engine, kind, the node and workload images."""
