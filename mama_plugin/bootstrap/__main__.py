"""``python -m mama_plugin.bootstrap``: see :mod:`mama_plugin.bootstrap.run`."""

import sys

from .run import main

sys.exit(main())
