"""`python -m harness.cli`: the same as the `crashloop` command."""

from harness.cli.dispatch import main

raise SystemExit(main())
