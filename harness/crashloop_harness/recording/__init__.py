"""Stage 5: every container attempt, read from the runtime of each node and the API."""
