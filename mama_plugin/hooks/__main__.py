"""``python -m mama_plugin.hooks <event>``: run one hook, always exiting 0."""

import sys

from .runner import main

sys.exit(main(sys.argv[1:]))
