"""One lifecycle for every measured run: prepare, deploy, observe, judge, write, clean up."""
