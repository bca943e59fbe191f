"""Everything written or shown: summaries, JUnit, plots, reports, tables, a failure explained."""
