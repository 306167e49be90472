"""Pulls through a registry mirror (REGISTRY_MIRROR, docs/configuration.md
"Registry mirror") on the real program: the origin is Debian's docker-registry
as in every scenario, the mirror a second one in proxy mode (Distribution's
pull-through cache, with its own htpasswd login: MIRROR_USERNAME/MIRROR_TOKEN
on the credential CD-ROM), at 10.0.2.101:5000 in the guest (an http registry
the guest's dockerd is told about in daemon.json, as an operator would). The
mirror reaches the origin's storage through an anonymous loopback front
(bed/registry.py: Distribution's proxy logs in upstream only by the token flow,
the bed's origin asks for Basic); what "the origin served" counts both fronts.
The mirror serves TLS with a certificate of a test CA (bed/tls.py), and the
guest's dockerd trusts it only through /etc/docker/certs.d/10.0.2.101:5000/
ca.crt, the file `cosmicac-vmi`'s user-data writes from the profile's
registryMirrorCA (no insecure-registries entry).

One boot, four runs of the agent (the unit restarted with a changed config,
as a re-run would be):
  1. v1 through the mirror, pinned by the origin's digest: the origin serves
     the layers to the mirror only, the container runs the origin's reference
     and digest.
  2. A second pull of v1 with the guest's docker store emptied of it (the image
     and the container removed): for the origin and the mirror exactly what a
     second VM's pull is. The origin serves no layer: the digest query only
     (dockerd's /distribution answer reads the manifest and the image config).
  3. The mirror stopped, v2: ready from the origin, with a mirror-unavailable
     event naming the mirror.
  4. Another registry at the mirror's address serving a DIFFERENT image as v3:
     the pull by the origin's digest finds nothing there, mirror-unavailable,
     and what runs is the origin's v3 (its config digest is the image id).
A second VM would only add a boot (~1 min under KVM, several under TCG) to
prove what run 2 proves: the mirror cannot tell one dockerd from another."""

import json

from bed import events
from bed.catalog import scenario
from bed.iso import make_cred_iso
from bed.registry import GUEST_ADDR, MIRROR_GUEST_ADDR, REPO, Registry
from bed.tls import server_cert

UNIT = "cosmicac-bootstrap.service"
MIRROR_URL = f"https://{MIRROR_GUEST_ADDR}"
IMPOSTOR_CMD = ["/bin/busybox", "sh", "-c", "echo impostor; exec /bin/busybox sleep 2147483647"]


def mirror_notices(evs: list[dict]) -> list[str]:
    return [e.get("message", "") for e in evs if e.get("step") == "pull"
            and e.get("message", "").startswith("mirror-")]


def rerun(t, vm, config: dict, what: str) -> tuple[dict, list[dict]]:
    """The agent run again in this boot with `config`: (final event, this run's events)."""
    vm.qga.exec(["tee", "/etc/default/docker-bootstrap"], stdin=t.config(**config).encode()).check()
    since = len(vm.serial_lines)
    vm.qga.exec(["systemctl", "reset-failed", UNIT])
    vm.qga.exec(["systemctl", "restart", "--no-block", UNIT]).check()
    final = events.expect_final(t, vm, since=since, metric=None, timeout=600, what=what)
    return final, events.parse(vm.serial_lines[since:])


def image_of(t, vm, name: str = "inference") -> dict:
    info = t.docker_inspect(vm, name)
    t.expect(info is not None and info["State"]["Running"], f"container {name} is not running: {info and info['State']}")
    img = vm.qga.exec(["docker", "image", "inspect", info["Image"]], check=True).out
    return json.loads(img)[0]


def drop_image(t, vm, ref: str) -> None:
    """The container and every name of its image gone from the guest's store."""
    vm.qga.exec(["docker", "rm", "-f", "inference"], check=True)
    ids = vm.qga.exec(["docker", "images", "-q", "--no-trunc"], check=True).out.split()
    for i in sorted(set(ids)):
        vm.qga.exec(["docker", "rmi", "-f", i], check=True)
    left = vm.qga.exec(["docker", "images", "-q"], check=True).out.split()
    t.expect(left == [], f"images left after removing {ref}: {left}")


@scenario("agent-mirror", timeout=1800)
def agent_mirror(t):
    agent = t.agent
    origin = t.registry(tags=("v1", "v2", "v3"))
    upstream = Registry(t.work, name="origin-upstream", storage_of=origin)
    tls = server_cert(t.work / "mirror-tls", ips=(MIRROR_GUEST_ADDR.split(":")[0], "127.0.0.1"))
    mirror = Registry(t.work, username="cosmicac-mirror", name="mirror", proxy_of=upstream, tls=tls)
    for reg in (upstream, mirror):
        t.registries.append(reg)
        reg.start()
    fronts = (origin, upstream)

    def mark() -> list[int]:
        return [f.log_size() for f in fronts]

    def origin_served(at: list[int] | None = None) -> list[tuple[str, int]]:
        return [x for f, a in zip(fronts, at or [0, 0]) for x in f.blobs_served(a)]
    digests = {tag: origin.manifest(tag)[0] for tag in ("v1", "v2", "v3")}
    _, v1 = origin.manifest("v1")
    v1_config, v1_layers = v1["config"]["digest"], {layer["digest"] for layer in v1["layers"]}

    cred = make_cred_iso(t.work / "cred.iso", GUEST_ADDR, origin.username, origin.token,
                         extra={"MIRROR_USERNAME": mirror.username.encode(), "MIRROR_TOKEN": mirror.token.encode()})
    config = dict(IMG=t.image_ref("v1"), NAME="inference", REGISTRY_MIRROR=MIRROR_URL)
    vm = t.vm(registry=origin, mirror_port=mirror.port, cred_iso=cred, config=t.config(**config),
              agent_binary=agent, units=[t.agent_unit()],
              files={f"etc/docker/certs.d/{MIRROR_GUEST_ADDR}/ca.crt": (0o644, tls.ca.read_bytes())})

    # 1. Through the mirror, pinned.
    final = events.boot_to_final(t, vm)
    run1 = events.this_boot(vm)
    t.expect(mirror_notices(run1) == [], f"run 1: the mirror was not used: {mirror_notices(run1)}")
    t.expect(events.statuses(run1, "login") == ["skipped"], f"run 1: login {events.statuses(run1, 'login')}")
    img = image_of(t, vm)
    t.expect(t.image_ref("v1") in img["RepoTags"], f"run 1: the image is not tagged as the original: {img['RepoTags']}")
    at_mirror = f"{MIRROR_GUEST_ADDR}/{REPO}@{digests['v1']}"
    t.expect(at_mirror in img["RepoDigests"], f"run 1: not pulled as {at_mirror}: {img['RepoDigests']}")
    t.expect(final["container"]["image_digest"].endswith(digests["v1"]),
             f"run 1 reports {final['container']['image_digest']}, the origin's v1 is {digests['v1']}")
    # The guest asks the origin itself only the digest query: dockerd's
    # /distribution answer reads the manifest and, for its platform, the image
    # config (a few KiB); every layer comes through the mirror.
    direct = {d for d, _ in origin.blobs_served()}
    t.expect(direct <= {v1_config}, f"run 1: the guest pulled layers from the origin itself: {direct}")
    through = {d for d, _ in upstream.blobs_served()}
    t.expect(v1_layers <= through and v1_layers <= {d for d, _ in mirror.blobs_served()},
             f"run 1: layers {v1_layers}: the origin served the mirror {through}, the mirror served "
             f"{mirror.blobs_served()}")
    t.metric("origin_blob_bytes_first_pull", sum(n for _, n in origin_served()))
    t.metric("mirror_blob_bytes_first_pull", sum(mirror.blob_gets()))
    t.step(f"run 1: v1 through the mirror as {at_mirror[:60]}…; the origin served "
           f"{len(origin_served())} blob GETs (the config to the digest query, the rest to the mirror)")

    # 2. The same pull again: the origin serves no layer, only the digest query.
    drop_image(t, vm, t.image_ref("v1"))
    origin_at, mirror_at = mark(), mirror.log_size()
    final, run2 = rerun(t, vm, config, "run 2 (v1 again)")
    t.expect(mirror_notices(run2) == [], f"run 2: the mirror was not used: {mirror_notices(run2)}")
    t.expect(events.statuses(run2, "pull")[-1:] == ["done"], f"run 2 did not pull: {events.summary(run2)}")
    again = origin_served(origin_at)
    t.expect({d for d, _ in again} <= {v1_config}, f"run 2: the origin served layers again: {again}")
    asked = [r for f, a in zip(fronts, origin_at) for r in f.requests(a)]
    t.expect(asked and all("/manifests/" in r or r.startswith("GET /v2/ ") or f"/blobs/{v1_config} " in r
                           for r in asked),
             f"run 2: the origin was asked for more than the manifest and the config: {asked}")
    t.expect({d for d, _ in mirror.blobs_served(mirror_at)} >= v1_layers, "run 2: the mirror did not serve the layers")
    t.metric("origin_blob_bytes_second_pull", sum(n for _, n in again))
    t.step(f"run 2: v1 again, the origin answered {len(asked)} request(s) (manifest and config, "
           f"{sum(n for _, n in again)} bytes of blobs) and served no layer")

    # 3. The mirror down: from the origin, loudly.
    mirror.stop()
    config["IMG"] = t.image_ref("v2")
    final, run3 = rerun(t, vm, config, "run 3 (mirror stopped, v2)")
    notes = mirror_notices(run3)
    t.expect(len(notes) == 1 and notes[0].startswith(f"mirror-unavailable: mirror {MIRROR_URL}: ")
             and notes[0].endswith(f"pulling from the origin {GUEST_ADDR}"),
             f"run 3: expected one mirror-unavailable event naming {MIRROR_URL}: {notes}")
    img = image_of(t, vm)
    t.expect(f"{GUEST_ADDR}/{REPO}@{digests['v2']}" in img["RepoDigests"],
             f"run 3: v2 did not come from the origin: {img['RepoDigests']}")
    t.step(f"run 3: mirror stopped, ready from the origin; {notes[0]}")

    # 4. An impostor at the mirror's address, another image as v3.
    # It holds the mirror's key (a compromised mirror): TLS passes, the digest does not.
    impostor = Registry(t.work, username=mirror.username, token=mirror.token, name="impostor", port=mirror.port,
                        tls=tls)
    t.registries.append(impostor)
    impostor.start()
    impostor.push_test_images(("v3",), cmd=IMPOSTOR_CMD)
    fake_digest, fake = impostor.manifest("v3")
    _, real = origin.manifest("v3")
    t.expect(fake_digest != digests["v3"] and fake["config"]["digest"] != real["config"]["digest"],
             "the impostor's v3 is the origin's")
    config["IMG"] = t.image_ref("v3")
    final, run4 = rerun(t, vm, config, "run 4 (impostor mirror, v3)")
    notes = mirror_notices(run4)
    t.expect(len(notes) == 1 and notes[0].startswith(f"mirror-unavailable: mirror {MIRROR_URL}: "),
             f"run 4: expected one mirror-unavailable event: {notes}")
    img = image_of(t, vm)
    t.expect(img["Id"] == real["config"]["digest"],
             f"run 4 runs image {img['Id']}, the origin's v3 is {real['config']['digest']} "
             f"(the impostor's {fake['config']['digest']})")
    t.expect(impostor.blob_gets() == [], f"run 4: the impostor served blobs: {impostor.blob_gets()}")
    t.step(f"run 4: the impostor's v3 ({fake_digest[:19]}…) was not used; runs the origin's {digests['v3'][:19]}…")

    events.scan_for_secret(t, vm, mirror.token, control="/dev/sr0")  # the credential CD-ROM holds it
