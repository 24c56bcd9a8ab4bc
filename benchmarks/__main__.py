"""``python -m benchmarks <kind> [options]``, from the checkout's root."""

from .cli import main

raise SystemExit(main())
