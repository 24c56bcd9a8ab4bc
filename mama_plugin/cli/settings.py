"""``mama config`` and ``mama commands``: the user's settings and slash-command aliases."""

from __future__ import annotations

import argparse
import os

from ..config import Config
from ..settings import KEYS
from .options import argument, command, json_option, project_option
from .shared import print_json, project_of


@command("config", "show or change configuration ($MAMA_HOME/config.json)")
@argument(
    "action",
    choices=("get", "set", "unset", "list", "disable", "enable"),
    help="get KEY, set KEY VALUE, unset KEY, list; disable/enable: MAMA's hooks in a project",
)
@argument("key", nargs="?", choices=sorted(KEYS), metavar="KEY", help="a config key")
@argument("value", nargs="?", help="the new value (for set)")
@project_option("disable/enable: the project's directory (default: here)")
@json_option()
def cmd_config(args: argparse.Namespace) -> int:
    """Get, set, unset or list configuration keys; switch the hooks off or on in a project."""
    config: Config = args.config
    if args.action in ("disable", "enable"):
        project = project_of(args)
        off = [p for p in config.get("disabled_projects") if p != project]
        if args.action == "disable":
            off.append(project)
        config.set("disabled_projects", os.pathsep.join(off))
        state = "off" if args.action == "disable" else "on"
        print(f"MAMA's hooks are {state} for {project}  (saved in {config.path})")
    elif args.action == "unset":
        config.unset(args.key)
        print(f"{args.key} is back to its default, {config.get(args.key)!r}")
    elif args.action == "get":
        value = config.get(args.key)
        print_json(value) if args.json else print(value)
    elif args.action == "set":
        value = config.set(args.key, args.value)
        print(f"{args.key} = {value!r}  (saved in {config.path})")
    else:
        values = config.as_dict()
        if args.json:
            print_json(values)
        else:
            for name, key in KEYS.items():
                print(f"{name:<22} {values[name]!r:<24} {key.help}")
    return 0


def check_config_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with a usage error (code 2) when ``config`` lacks the KEY or VALUE its action needs."""
    if args.action in {"get", "set", "unset"} and not args.key:
        parser.error(f"config {args.action} needs a KEY (one of {', '.join(sorted(KEYS))})")
    if args.action == "set" and args.value is None:
        parser.error("config set needs a VALUE")


@command("commands", "the /mama-resume, /mama-save, /mama-configure aliases")
@argument("action", choices=("install", "remove", "show"), help="write, delete or list them")
def cmd_commands(args: argparse.Namespace) -> int:
    """Install, remove or list the slash-command aliases in Claude Code's commands folder."""
    from ..hooks import aliases

    if args.action == "install":
        done = aliases.install_aliases()
        verb = "wrote"
    elif args.action == "remove":
        done = aliases.remove_aliases()
        verb = "removed"
    else:
        done, verb = [], ""
        for alias in aliases.ALIASES:
            path = aliases.commands_dir() / f"{alias}.md"
            mark = "MAMA's" if aliases.is_managed(path) else "yours" if path.exists() else "absent"
            print(f"/{alias:<16} {mark:<7} {path}")
    for path in done:
        print(f"{verb} {path}")
    if verb and not done:
        print(f"nothing to do: the aliases in {aliases.commands_dir()} are already as asked")
    return 0
