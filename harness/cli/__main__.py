"""`python -m harness.cli`: the same as the `crashloop` command."""

from harness.cli.app import main

raise SystemExit(main())
