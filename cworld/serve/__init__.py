"""`cworld serve`: cworld episodes over MCP, for any MCP client.

    service = EpisodeService(ctx, tasks, run_folder, judges=JudgeSetup(...))
    server = build_server(service, RegistryBrowse.of(workspace))
    await serve_stdio(server)          # or: await serve_http(server, port, token)

A client lists tasks, starts an episode, calls the task's tools, and submits an answer for the reward.
Every call goes through the same `EpisodeDriver` as the gym API (`cworld.make`), hence through the state
controller and the backends of `cworld run` (live, synthesized, hybrid; the fault policy); trajectories
land in a run folder of the workspace. The part sits beside the gym (it needs rollout and the judges).
"""

from cworld.serve.browse import RegistryBrowse
from cworld.serve.episodes import EpisodeDefaults, EpisodeService, SessionState
from cworld.serve.names import ToolNames
from cworld.serve.server import build_server
from cworld.serve.transport import BearerAuth, http_app, serve_http, serve_stdio

__all__ = ["BearerAuth", "EpisodeDefaults", "EpisodeService", "RegistryBrowse", "SessionState", "ToolNames",
           "build_server", "http_app", "serve_http", "serve_stdio"]
