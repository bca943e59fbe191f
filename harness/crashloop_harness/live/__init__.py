"""The live demo: the run shown as it happens (each scenario's cells among it), its keys, and
the replay of a recorded one."""
