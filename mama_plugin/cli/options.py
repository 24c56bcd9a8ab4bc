"""How a ``mama`` command is declared: a name, a help line and its arguments, as decorators.

The options several commands share (``--json``, ``--project``, ``--all-projects``, ``--limit``,
``--keyword-only``, ``--no-model``) are declared once here and applied like any other argument;
a command may only word their help for itself (the model is sqlite-utils' ``output_options``,
with argparse).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Handler = Callable[[argparse.Namespace], int]
Decorator = Callable[[Handler], Handler]
Argument = tuple[tuple[str, ...], dict[str, Any]]

_ARGUMENTS = "__mama_arguments__"


@dataclass(frozen=True)
class Command:
    """One ``mama`` subcommand: its name, its help line, its handler and its arguments."""

    name: str
    help: str
    handler: Handler
    arguments: tuple[Argument, ...]

    def add_to(self, sub: Any) -> argparse.ArgumentParser:
        """Add this command to the subparsers ``sub`` (``add_subparsers``' result)."""
        parser: argparse.ArgumentParser = sub.add_parser(
            self.name, help=self.help, description=self.help
        )
        parser.set_defaults(handler=self.handler)
        for names, settings in self.arguments:
            parser.add_argument(*names, **settings)
        return parser


def command(name: str, help: str) -> Callable[[Handler], Command]:
    """Make a handler the command ``name``; put it above the handler's argument decorators."""

    def decorate(handler: Handler) -> Command:
        return Command(name, help, handler, tuple(getattr(handler, _ARGUMENTS, ())))

    return decorate


def argument(*names: str, **settings: Any) -> Decorator:
    """Declare one argument of a command, as ``ArgumentParser.add_argument`` takes it."""

    def decorate(handler: Handler) -> Handler:
        # Decorators run bottom-up: prepend, so arguments are listed in the order written.
        declared = getattr(handler, _ARGUMENTS, ())
        setattr(handler, _ARGUMENTS, ((names, settings), *declared))
        return handler

    return decorate


def flag(name: str, help: str, **settings: Any) -> Decorator:
    """A yes/no option (``store_true``): absent, False; given, True."""
    return argument(name, action="store_true", help=help, **settings)


def json_option(help: str = "print JSON") -> Decorator:
    """``--json``: print the result as JSON instead of text."""
    return flag("--json", help)


def project_option(help: str = "the project's directory (default: here)") -> Decorator:
    """``--project DIR``: the project a command works on (default: the current directory's)."""
    return argument("--project", help=help)


def all_projects_option(help: str) -> Decorator:
    """``--all-projects``: every project, not ``--project``'s (see ``shared.project_or_all``)."""
    return flag("--all-projects", help)


def limit_option(default: int, what: str) -> Decorator:
    """``--limit N``: how many ``what`` to show, ``default`` unless given."""
    return argument(
        "--limit", type=int, default=default, help=f"how many {what} (default {default})"
    )


def keyword_only_option() -> Decorator:
    """``--keyword-only``: search without the embedding model."""
    return flag("--keyword-only", "no embedding model (BM25 only)")


def no_model_option(help: str) -> Decorator:
    """``--no-model``: run without the generative model (see ``shared.optional_assistant``)."""
    return flag("--no-model", help)
