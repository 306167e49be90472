"""Deprecated name of bed.catalog (it collided with bed/registry.py, the image
registry). Kept so scenarios written during issue 15 still import; the lead
deletes this file once they use bed.catalog (removed by #15 h-habits)."""

from .catalog import SCENARIOS, Scenario, scenario  # noqa: F401
