"""Tokens and logins: codes fixed by (seed, purpose), one live token per account that expires on the
virtual clock, and the `login` answer finance and shop share."""

from __future__ import annotations

import hashlib
from typing import Any, TypeVar

from pydantic import BaseModel

from cworld.sandbox.apps._shared.values import later, parse_iso
from cworld.sandbox.framework import AppError, SandboxApp


def secret(app: SandboxApp, purpose: str, length: int = 20) -> str:
    """A token or code that looks random but is fixed by (seed, purpose): same seed, same responses."""
    digest = hashlib.sha256(f"{app.session.seed}\x1f{app.name}\x1f{purpose}".encode()).hexdigest()
    return digest[:length]


def issue_token(app: SandboxApp, auth: dict[str, Any], prefix: str, minutes: int) -> dict[str, str]:
    """Start a login session in `auth` (one live token at a time, as a browser session would have)."""
    token = f"{prefix}_{secret(app, app.new_id(prefix + '_login'))}"
    auth["token"] = {"value": token, "expires_at": later(app.now, minutes=minutes)}
    return auth["token"]


def require_token(app: SandboxApp, auth: dict[str, Any], token: str, login_tool: str) -> None:
    """Raise an `auth` error naming the login tool unless `token` is the live, unexpired one."""
    live = auth.get("token")
    if not live or live["value"] != token:
        raise AppError("auth", f"token is not valid for this account; call {login_tool} to get a fresh token")
    if parse_iso(live["expires_at"]) <= app.now:
        raise AppError("auth", f"token expired at {live['expires_at']}; call {login_tool} again for a new one")


class LoginBase(BaseModel):
    # finance and shop publish it as `LoginResult`, a subclass that words `token` and `expires_at`
    token: str
    expires_at: str
    customer_name: str


L = TypeVar("L", bound=LoginBase)


def log_in(app: SandboxApp, prefix: str, minutes: int, customer_name: str, result: type[L]) -> L:
    """Start a login session in the app's `auth` state and answer with the token (finance and shop)."""
    token = issue_token(app, app.state["auth"], prefix, minutes)
    return result(token=token["value"], expires_at=token["expires_at"], customer_name=customer_name)
