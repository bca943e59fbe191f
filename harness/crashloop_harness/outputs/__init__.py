"""Stage 7: everything written or shown: summaries, JUnit, plots, reports, evidence."""
