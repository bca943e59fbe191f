"""Tools every stage uses; imports nothing else of the harness."""
