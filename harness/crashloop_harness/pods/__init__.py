"""Pure: every pod the harness deploys, and the same pods as YAML for workloads/."""
