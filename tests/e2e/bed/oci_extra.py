"""Deprecated: `reg.push_big_image(tag, size)` (bed.registry.Registry). Kept so
scenarios written during issue 15 still import; the lead deletes this file once
they use the new name (removed by #15 h-habits)."""

from .registry import REPO


def push_big_image(reg, tag: str = "big", size: int = 64 << 20, repo: str = REPO) -> None:
    reg.push_big_image(tag, size, repo)
