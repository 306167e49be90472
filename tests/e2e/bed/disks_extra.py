"""Deprecated: the disk builders live in bed.disks and extra disks are
`t.vm(extra_disks=[...])`. Kept so scenarios written during issue 15 still
import; the lead deletes this file once they use the new names (removed by #15 h-habits)."""

from .disks import *  # noqa: F401,F403


def multi_disk_vm(t, extra_disks=(), **kw):
    return t.vm(extra_disks=extra_disks, **kw)
