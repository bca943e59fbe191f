"""The live demo: the run shown as it happens, its keys, and the replay of a recorded one."""
