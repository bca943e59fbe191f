"""`python -m crashloop_harness.cli`: the same as the `crashloop` command."""

from crashloop_harness.cli.app import main

raise SystemExit(main())
