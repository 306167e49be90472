#!/usr/bin/python3
"""Entry point of the real-VM end-to-end scenarios.

  python3 tests/e2e/run.py <scenario> [--agent PATH] [--keep]
  python3 tests/e2e/run.py --prepare        build/reuse the guest image, probe KVM
  python3 tests/e2e/run.py --list           one line per scenario: name timeout needs-agent

Scenarios live in tests/e2e/scenarios/*.py, registered with @scenario. Exit 0
pass, 1 fail (work dir kept under tests/e2e/work/<scenario>, console tail
printed), 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, str(HERE))

from bed.catalog import SCENARIOS  # noqa: E402


def _load_scenarios() -> None:
    for f in sorted((HERE / "scenarios").glob("*.py")):
        if f.name != "__init__.py":
            importlib.import_module(f"scenarios.{f.stem}")


def main() -> int:
    _load_scenarios()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--agent", type=Path, default=os.environ.get("COSMICAC_E2E_AGENT") or None,
                    help="agent binary (static release build); env COSMICAC_E2E_AGENT")
    ap.add_argument("--keep", action="store_true", help="keep the work dir even on success")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--prepare", action="store_true")
    a = ap.parse_args()

    if a.list:
        for s in SCENARIOS.values():
            print(f"{s.name} {s.timeout} {int(s.needs_agent)}")
        return 0
    if os.geteuid() != 0:
        print("e2e: run as root (the image cache is /var/cache/cosmicac/e2e)", file=sys.stderr)
        return 1
    if a.prepare:
        from bed import accel, image
        t = time.monotonic()
        img = image.get_image()
        print(f"e2e: image {img.dir} ready in {time.monotonic() - t:.1f} s "
              f"(built in {img.manifest['build_seconds']} s); accelerator {accel.choose(img)}")
        return 0
    if a.scenario not in SCENARIOS:
        print(f"e2e: unknown scenario {a.scenario!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2

    from bed.scenario import Ctx
    s = SCENARIOS[a.scenario]
    error: BaseException | None = None
    ctx = None
    try:
        ctx = Ctx(s.name, agent=a.agent, keep=a.keep)
        s.fn(ctx)
    except BaseException as e:  # noqa: BLE001 - report everything, including Ctrl-C
        error = e
    if ctx is None:
        print(f"[{s.name}] FAIL before start: {error}", flush=True)
        return 1
    return ctx.finish(error)


if __name__ == "__main__":
    sys.exit(main())
