#include "host/manifests.hpp"

#include "host/guest_layout.hpp"
#include "host/userdata.hpp"

#include <string>

namespace cosmicac::host {
namespace {

Json metadata(JobSpec const& spec, std::string const& name) {
  return Json{{"name", name},
              {"namespace", spec.ns},
              {"labels", Json{{"app.kubernetes.io/managed-by", "cosmicac-vmi"}, {"cosmicac.io/job", spec.name}}}};
}

// The user-data (ENVS included: API keys) lives only here. Inline in the VMI,
// anyone allowed to `get` VMIs could read it. `apply` adds an ownerReference
// to the VMI (its uid exists only once the VMI is created), so deleting the
// VMI collects the Secret.
Json userdata_secret(JobSpec const& spec, std::string const& userdata) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", metadata(spec, userdata_secret_name(spec))},
              {"type", "Opaque"},
              // KubeVirt reads the key "userdata" (or "userData").
              {"stringData", Json{{"userdata", userdata}}}};
}

Json root_datavolume(JobSpec const& spec) {
  return Json{
      {"apiVersion", "cdi.kubevirt.io/v1beta1"},
      {"kind", "DataVolume"},
      {"metadata", metadata(spec, root_datavolume_name(spec))},
      {"spec",
       Json{{"source", Json{{"registry", Json{{"url", "docker://" + spec.root_image},
                                              // CDI reads accessKeyId/secretKey from it.
                                              {"secretRef", spec.pull_secret}}}}},
            {"storage", Json{// local-path has no StorageProfile access modes: CDI needs them spelled out.
                             {"accessModes", Json::array({"ReadWriteOnce"})},
                             {"storageClassName", spec.storage_class},
                             {"resources", Json{{"requests", Json{{"storage", spec.root_size}}}}}}}}}};
}

Json data_pvc(JobSpec const& spec) {
  return Json{{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", metadata(spec, data_pvc_name(spec))},
              {"spec", Json{{"accessModes", Json::array({"ReadWriteOnce"})},
                            {"storageClassName", spec.storage_class},
                            {"volumeMode", "Filesystem"},
                            {"resources", Json{{"requests", Json{{"storage", spec.data_disk->size}}}}}}}};
}

Json vmi(JobSpec const& spec) {
  Json disks = Json::array();
  Json volumes = Json::array();

  disks.push_back(Json{{"name", "rootdisk"}, {"bootOrder", 1}, {"disk", Json{{"bus", "virtio"}}}});
  volumes.push_back(Json{{"name", "rootdisk"}, {"dataVolume", Json{{"name", root_datavolume_name(spec)}}}});

  if (spec.data_disk) {
    // The serial is how the agent finds this disk (/dev/disk/by-id/virtio-<serial>).
    disks.push_back(Json{{"name", "datadisk"}, {"serial", spec.data_disk->serial}, {"disk", Json{{"bus", "virtio"}}}});
    volumes.push_back(Json{{"name", "datadisk"}, {"persistentVolumeClaim", Json{{"claimName", data_pvc_name(spec)}}}});
  }

  // CD-ROMs: bus sata (a cdrom cannot be virtio); no serial (applies to disks
  // only); each found in the guest by its distinct volume label.
  disks.push_back(Json{{"name", "credentials"}, {"cdrom", Json{{"bus", "sata"}, {"readonly", true}}}});
  volumes.push_back(Json{{"name", "credentials"},
                         {"secret", Json{{"secretName", spec.credential_secret}, {"volumeLabel", kCredVolumeLabel}}}});
  disks.push_back(Json{{"name", "bootstrap"}, {"cdrom", Json{{"bus", "sata"}, {"readonly", true}}}});
  volumes.push_back(Json{{"name", "bootstrap"},
                         {"configMap", Json{{"name", spec.bootstrap_configmap}, {"volumeLabel", kBootVolumeLabel}}}});

  disks.push_back(Json{{"name", "cloudinit"}, {"disk", Json{{"bus", "virtio"}}}});
  volumes.push_back(Json{{"name", "cloudinit"},
                         {"cloudInitNoCloud", Json{{"secretRef", Json{{"name", userdata_secret_name(spec)}}}}}});

  Json devices = Json::object();
  devices["disks"] = disks;
  if (spec.gpu) {
    Json gpus = Json::array();
    for (int i = 0; i < spec.gpu->count; ++i)
      gpus.push_back(Json{{"name", "gpu" + std::to_string(i)}, {"deviceName", spec.gpu->resource}});
    devices["gpus"] = gpus;
  }
  if (spec.infiniband) {
    Json hostdevs = Json::array();
    for (int i = 0; i < spec.infiniband->count; ++i)
      hostdevs.push_back(Json{{"name", "ib" + std::to_string(i)}, {"deviceName", spec.infiniband->resource}});
    devices["hostDevices"] = hostdevs;
  }
  Json interfaces = Json::array({Json{{"name", "default"}, {"masquerade", Json::object()}}});
  Json networks = Json::array({Json{{"name", "default"}, {"pod", Json::object()}}});
  if (!spec.overlay_network.empty()) {
    interfaces.push_back(Json{{"name", "overlay"}, {"bridge", Json::object()}});
    networks.push_back(Json{{"name", "overlay"}, {"multus", Json{{"networkName", spec.overlay_network}}}});
  }
  devices["interfaces"] = interfaces;
  // The agent mirrors its readiness events to ttyS0; KubeVirt streams that
  // console as the launcher pod's `guest-console-log` container, which is how
  // `cosmicac-vmi wait` learns why the agent failed. Both explicit, so a
  // cluster-wide default does not decide.
  devices["autoattachSerialConsole"] = true;
  devices["logSerialConsole"] = true;

  // Readiness comes from the agent through the guest agent (KubeVirt cannot
  // attach a custom virtio-serial port to a VMI). `status` exits 0 once the
  // container runs. Until then the VMI is simply not Ready, however long the
  // pull takes: failureThreshold only governs Ready → not Ready, and 6 × 10 s
  // rides out a guest-agent hiccup without flapping.
  Json probe{{"exec", Json{{"command", Json::array({kAgentCommand, "status"})}}},
             {"initialDelaySeconds", kProbeInitialDelaySeconds},
             {"periodSeconds", kProbePeriodSeconds},
             {"timeoutSeconds", kProbeTimeoutSeconds},
             {"failureThreshold", kProbeFailureThreshold}};

  return Json{{"apiVersion", "kubevirt.io/v1"},
              {"kind", "VirtualMachineInstance"},
              {"metadata", metadata(spec, spec.name)},
              {"spec", Json{{"domain", Json{{"cpu", Json{{"cores", spec.cpu_cores}}},
                                            {"resources", Json{{"requests", Json{{"memory", spec.memory}}}}},
                                            {"devices", devices}}},
                            {"networks", networks},
                            {"volumes", volumes},
                            {"readinessProbe", probe}}}};
}

}  // namespace

std::vector<Json> render_manifests(JobSpec const& spec) {
  std::vector<Json> out;
  out.push_back(root_datavolume(spec));
  if (spec.data_disk) out.push_back(data_pvc(spec));
  out.push_back(vmi(spec));
  // After the VMI: its ownerReference needs the VMI's uid. Until the Secret
  // exists, the kubelet retries mounting it into the launcher pod.
  out.push_back(userdata_secret(spec, render_userdata(spec)));
  return out;
}

Json as_list(std::vector<Json> const& objects) {
  return Json{{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", Json::object()}, {"items", objects}};
}

}  // namespace cosmicac::host
