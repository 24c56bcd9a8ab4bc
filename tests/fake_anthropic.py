"""The scripted Messages API the real-CLI tests drive Claude Code with (see the module's docs).

It lives in the package (``mama_plugin/bench/fake_anthropic.py``) so ``mama bench warm`` can
run real Claude Code too; the tests import it from here, as before.
"""

from mama_plugin.bench.fake_anthropic import (
    DONE_TEXT,
    HELPER_TEXT,
    FakeAnthropic,
    Logged,
    claude_env,
    text,
    tool_use,
)

__all__ = ["DONE_TEXT", "HELPER_TEXT", "FakeAnthropic", "Logged", "claude_env", "text", "tool_use"]
