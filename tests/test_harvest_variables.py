"""The variables a harvested package expects (its code and docs) and what an exited server's stderr asks for."""

from __future__ import annotations

from pathlib import Path

from cworld.registry.harvest.entries import placeholder
from cworld.registry.harvest.recover import next_start
from cworld.registry.harvest.variables import in_code, in_docs, wanted


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_javascript_forms_beyond_process_env_dot_are_found(tmp_path):
    files = [
        _write(tmp_path, "a.js", "const { ACME_API_KEY, ACME_BASE_URL: base, ACME_TIMEOUT = 5 } = process.env;"),
        _write(tmp_path, "b.js", "const t = process.env['ACME_ACCESS_TOKEN'];"),
        _write(tmp_path, "c.js", "username: pick(env, ['ACME_USERNAME']) ?? '',"),
    ]
    found = in_code(files, javascript=True)
    assert found == ["ACME_API_KEY", "ACME_BASE_URL", "ACME_ACCESS_TOKEN", "ACME_USERNAME"]


def test_a_python_name_kept_in_a_constant_is_found_when_the_package_reads_the_environment(tmp_path):
    const = _write(tmp_path, "pkg/const.py", 'ENV_KEY = "ACME_API_KEY"\nENV_HOST = "ACME_API_HOST"\n')
    server = _write(tmp_path, "pkg/server.py", "import os\nkey = os.getenv(ENV_KEY)\n")
    assert in_code([const, server], javascript=False) == ["ACME_API_KEY", "ACME_API_HOST"]
    assert in_code([const], javascript=False) == [], "a package that never reads the environment"


def test_documented_variables_come_from_env_examples_and_the_readme(tmp_path):
    _write(tmp_path, ".env.example", "ACME_CLIENT_ID=\nexport ACME_CLIENT_SECRET=xyz\nACME_LOG_LEVEL=info\n")
    readme = '```json\n{"env": {"ACME_WORKSPACE": "your-workspace", "ACME_MAX_RESULTS": "10"}}\n```\nSet ACME_PAT=...'
    found = in_docs(tmp_path, readme)
    assert found == ["ACME_CLIENT_ID", "ACME_CLIENT_SECRET", "ACME_WORKSPACE", "ACME_PAT"]


def test_names_are_judged_by_their_end_not_their_prefix():
    assert wanted("BITBUCKET_APP_PASSWORD") and wanted("MCP_EMAIL_ADDRESS") and wanted("MINIMAX_API_HOST")
    assert not wanted("BITBUCKET_TOOL_GROUPS") and not wanted("MCP_EMAIL_HOOK_PRESET")
    assert not wanted("OAUTH_REGISTER_RATE_LIMIT_PER_HOUR") and not wanted("SENTRY_DSN")
    assert not wanted("ERR_INVALID_HTTP_TOKEN"), "an error code, not a variable"
    assert wanted("ALLOWED_DIR") and placeholder("ALLOWED_DIR") == "."


def test_stderr_that_names_a_variable_gives_it_a_placeholder():
    start = next_start("Error: Z_AI_API_KEY environment variable is required\n", {}, [])
    assert list(start.env) == ["Z_AI_API_KEY"] and start.args == []
    assert start.env["Z_AI_API_KEY"].startswith("cworld-placeholder-") and "api" not in start.env["Z_AI_API_KEY"]
    assert not next_start("Error: Z_AI_API_KEY environment variable is required\n", start.env, [])


def test_stderr_that_asks_for_a_flag_or_a_subcommand_gives_them():
    monday = ("Error: The following required arguments are missing:\n  - token: Monday API token\n"
              "     --token or -t command line argument\n")
    assert next_start(monday, {}, []).args == ["--token", placeholder("TOKEN")]
    folders = "Usage: mcp-server-filesystem --allowed-directories <allowed-directories>"
    assert next_start(folders, {}, []).args == ["--allowed-directories", "."]
    argparse = "usage: dcc-mcp-core [-h] [--version] {info,serve} ...\nerror: the following arguments are required"
    assert next_start(argparse, {}, []).args == ["serve"]
    told = "Run 'xcodebuildmcp mcp' to start the MCP server.\nRun 'xcodebuildmcp tools' to see all tools."
    assert next_start(told, {}, []).args == ["mcp"]
    assert not next_start(argparse, {}, ["serve"]), "a subcommand already given is not given again"


def test_a_url_flag_points_at_the_closed_local_port():
    start = next_start("error: required option '--base-url <url>' not specified", {}, [])
    assert start.args == ["--base-url", "http://127.0.0.1:9"]


def test_optional_flags_of_a_usage_line_are_not_given():
    usage = "usage: acme-mcp [-h] [--api-key API_KEY] [--region REGION] --project-root DIR"
    assert next_start(usage, {}, []).args == ["--project-root", "."]


def test_a_help_text_that_lists_every_option_asks_for_none():
    help_text = ("Usage:\n  kubernetes-mcp-server [flags]\nFlags:\n"
                 "      --tls-cert string   Path to TLS certificate file. Must be used together with --tls-key.\n"
                 "      --log-file string   Where to log (required with --log-level)\n")
    assert not next_start(help_text, {}, [])


def test_a_variable_the_server_insists_on_is_given_whatever_its_name():
    stderr = 'raise ValueError("ACCELO_DEPLOYMENT environment variable is required")\n'
    assert list(next_start(stderr, {}, []).env) == ["ACCELO_DEPLOYMENT"]
    assert not next_start("uses stdio by default; required: nothing\n", {}, []), "stdio outside a usage line"
