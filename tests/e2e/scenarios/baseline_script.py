"""The ORIGINAL docker-bootstrap.sh (apt-get line neutralised) in the bed: proves
the bed itself, and is the reference the agent's benchmarks compare against."""

from bed import checks
from bed.catalog import scenario
from bed.vm import REFERENCE_DIR

ENVS = "MODEL_NAME=tiny-llm;MAX_BATCH=8"


@scenario("baseline-script", timeout=1500, needs_agent=False)
def baseline_script(t):
    reg = t.registry()
    vm = t.vm(data_disk=t.data_disk(120), data_serial="pvc-data",
              cred_iso=t.cred_iso(reg),
              config=t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference", ENVS=ENVS),
              baseline_script=REFERENCE_DIR / "docker-bootstrap.sh")
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    state = checks.wait_unit_done(t, vm, "docker-bootstrap.service", 900)
    t.metric("boot_to_bootstrap_done_s", round(vm.elapsed(), 1))
    if state != "active":
        print(vm.qga.exec(["journalctl", "-b", "-u", "docker-bootstrap", "--no-pager"]).out[-4000:])
    t.expect(state == "active", f"docker-bootstrap.service ended {state}")
    checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    checks.inference_container(t, vm, "inference", "v1", ["MODEL_NAME=tiny-llm", "MAX_BATCH=8"])
    t.step("slowest units:\n" + vm.qga.exec(["systemd-analyze", "blame"]).out[:600])
    t.step("baseline script: data disk mounted, container running with --gpus (hook called)")
