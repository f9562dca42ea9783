"""Entry point. Commands are loaded lazily so `cworld --help` never imports litellm or torch."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from cworld import __version__
from cworld.errors import CworldError

#: command name -> module under cworld.cli that defines `command` (a click command or group).
COMMANDS: dict[str, str] = {
    "init": "init",
    "doctor": "doctor",
    "sandbox": "sandbox",
    "servers": "servers",
    "registry": "registry",
    "search": "search",
    "serve": "serve",
    "openenv": "openenv",
    "export-sft": "export_sft",
    "demo-summary": "demo_summary",
    "fidelity": "fidelity",
    "judge": "judge",
    "report": "report",
    "run": "run",
    "synth": "synth",
    "engine": "engine",
    "world": "world",
    "forge": "forge",
    "llm": "llm_local",
}


#: How wide rich draws when output is not a terminal (a pipe, a log file, CI). Rich's own width there is 80,
#: which cuts the wider tables: headers ("succe…"), whole columns (a run summary's fallbacks and state).
PIPED_COLUMNS = 100


def fit_piped_output(ctx: click.Context) -> None:
    """Give every table of the command `PIPED_COLUMNS` when stdout is not a terminal and COLUMNS is unset.

    Rich reads COLUMNS whenever a Console is made, so setting it here, once, sizes every console any
    command or library part makes; it is taken back when the command ends (tests run many in one process)."""
    if "COLUMNS" in os.environ or (sys.stdout is not None and sys.stdout.isatty()):
        return
    os.environ["COLUMNS"] = str(PIPED_COLUMNS)
    ctx.call_on_close(lambda: os.environ.pop("COLUMNS", None))


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        return importlib.import_module(f"cworld.cli.{module}").command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cworld")
@click.option("--env", "env_dir", envvar="CWORLD_ENV", type=click.Path(), help="Environment folder (default: packaged).")
@click.option("--workspace", envvar="CWORLD_WORKSPACE", type=click.Path(), help="Workspace folder (default: .cworld).")
@click.pass_context
def cli(ctx: click.Context, env_dir: str | None, workspace: str | None) -> None:
    """cworld: create environments for LLM tool-using agents and run agents in them."""
    ctx.ensure_object(dict)
    fit_piped_output(ctx)
    ctx.obj["env_dir"] = env_dir
    ctx.obj["workspace"] = workspace


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; a CworldError becomes one line on stderr and its exit code, never a traceback."""
    try:
        return cli.main(args=argv, standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except CworldError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted; finished work is kept", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug in cworld: one line, the traceback only on request
        if os.environ.get("CWORLD_DEBUG"):
            raise
        click.echo(f"internal error: {type(exc).__name__}: {exc} (set CWORLD_DEBUG=1 for the traceback)", err=True)
        sys.exit(70)
