#!/usr/bin/python3
"""Entry point of the real-VM end-to-end scenarios.

  python3 tests/e2e/run.py <scenario> [--agent PATH] [--keep]
  python3 tests/e2e/run.py --prepare        build/reuse the guest image, probe KVM
  python3 tests/e2e/run.py --list           one line per scenario: name timeout needs-agent lane cost

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


DURATIONS = HERE / "durations.tsv"
# Left out of tests/run (ctest label `bed`): they take no lane time there.
BED_ONLY = {"bed-selftest", "baseline-script"}


def lanes(names: list[str], timeouts: dict[str, int]) -> dict[str, tuple[int, float]]:
    """Each scenario's (lane, cost): the two VM lanes of ctest (RESOURCE_LOCK) filled
    longest first, each scenario to the lane that is free first (LPT scheduling), so
    the lanes end together; cost is the measured seconds (durations.tsv), which ctest
    uses (COST) to start the longest first. A scenario not yet measured counts a third
    of its timeout."""
    measured = {}
    for line in DURATIONS.read_text().splitlines():
        if line and not line.startswith("#"):
            name, seconds = line.split("\t")[:2]
            measured[name] = float(seconds)
    cost = {n: measured.get(n, timeouts[n] / 3) for n in names}
    load, out = [0.0, 0.0], {}
    for n in sorted(names, key=lambda n: (-cost[n], n)):
        lane = 0 if n in BED_ONLY else min((0, 1), key=lambda k: load[k])
        if n not in BED_ONLY:
            load[lane] += cost[n]
        out[n] = (lane, cost[n])
    return out


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
        plan = lanes(list(SCENARIOS), {s.name: s.timeout for s in SCENARIOS.values()})
        for s in SCENARIOS.values():
            lane, cost = plan[s.name]
            print(f"{s.name} {s.timeout} {int(s.needs_agent)} {lane} {cost:.0f}")
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
