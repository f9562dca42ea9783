"""The clock app's seeded state: the user's time zone and no reminders (the time itself is the session's)."""

from __future__ import annotations

import random
from typing import Any

from cworld.sandbox.framework import SandboxApp
from cworld.sandbox.framework.world import cast


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    return {"timezone": cast(app.session.seed)["me"]["timezone"], "reminders": {}}
