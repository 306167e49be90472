"""The catalog of scenarios: @scenario registers a function taking a
bed.scenario.Ctx under its name (run.py lists and runs them from here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass
class Scenario:
    name: str
    fn: Callable
    timeout: int       # seconds, the ctest TIMEOUT (and the VM hard limit is below it)
    needs_agent: bool


SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str, timeout: int = 900, needs_agent: bool = True):
    def register(fn):
        if name in SCENARIOS:
            raise ValueError(f"scenario {name} registered twice")
        SCENARIOS[name] = Scenario(name, fn, timeout, needs_agent)
        return fn
    return register
