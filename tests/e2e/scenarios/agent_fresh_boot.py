"""First boot of a fresh VM with the agent: blank 120 GiB data disk, credential
ISO on sr0, v1 image. The example the other agent scenarios follow."""

from bed import checks
from bed.registry_of_scenarios import scenario

ENVS = "MODEL_NAME=tiny-llm;MAX_BATCH=8"


@scenario("agent-fresh-boot", timeout=1500)
def agent_fresh_boot(t):
    agent = t.agent  # fails first, clearly, if there is no usable agent binary
    reg = t.registry()
    vm = t.vm(data_disk=t.data_disk(120), data_serial="pvc-data",
              cred_iso=t.cred_iso(reg),
              config=t.config(MNT="/data", IMG=t.image_ref("v1"), NAME="inference", ENVS=ENVS),
              agent_binary=agent, units=[t.agent_unit()])
    vm.boot()
    t.metric("boot_to_multi_user_s", round(vm.wait_booted(600), 1))
    how = t.wait_ready(vm, "inference", 900)
    t.metric("boot_to_ready_s", round(vm.elapsed(), 1))
    t.step(f"ready ({how})")
    checks.data_disk_mounted(t, vm, "/data", "pvc-data")
    checks.inference_container(t, vm, "inference", "v1", ["MODEL_NAME=tiny-llm", "MAX_BATCH=8"])
