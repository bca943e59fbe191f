"""Every container attempt, read from the runtime of each node and the API."""
