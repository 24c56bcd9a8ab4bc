"""``python -m mama_plugin.cli``: the ``mama`` command (bin/mama-server runs ``serve`` so)."""

import sys

from . import main

sys.exit(main())
