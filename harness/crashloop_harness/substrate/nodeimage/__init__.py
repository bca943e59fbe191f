"""Build a kind node image offline, equivalent to the official kindest/node one."""
