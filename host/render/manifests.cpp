#include "host/render/manifests.hpp"

#include "host/render/job_objects.hpp"
#include "host/render/readiness_probe.hpp"
#include "host/render/revision.hpp"
#include "host/render/userdata.hpp"
#include "host/render/vmi_resources.hpp"
#include "host/spec/guest_layout.hpp"
#include "host/spec/spec_fields.hpp"

#include <string>

namespace cosmicac::host {
namespace {

// What every object of the job starts with, from its row of kJobParts:
// apiVersion, kind, and metadata with its name, namespace and labels.
Json job_object(JobSpec const& spec, JobObject which) {
  JobPart const& part = job_part(which);
  return Json{{"apiVersion", api_version(*part.resource)},
              {"kind", std::string(part.resource->kind)},
              {"metadata", Json{{"name", rendered_object_name(spec, which)},
                                {"namespace", spec.ns},
                                {"labels", job_labels(spec.name)}}}};
}

// The user-data (ENVS included: API keys) lives only here. Inline in the VMI,
// anyone allowed to `get` VMIs could read it. `apply` adds an ownerReference
// to the VMI (its uid exists only once the VMI is created), so deleting the
// VMI collects the Secret. Its name ends in the digest of the user-data
// (userdata_secret_name): another user-data is another Secret, never this
// one replaced (a running VMI keeps the one it booted with).
Json userdata_secret(JobSpec const& spec) {
  Json secret = job_object(spec, JobObject::UserData);
  secret["type"] = "Opaque";
  // KubeVirt reads the key "userdata" (or "userData").
  secret["stringData"] = Json{{"userdata", render_userdata(spec)}};
  return secret;
}

// The revision on the VM and on its template (revision.hpp): computed over
// every object as rendered, then written into the VM.
void annotate_revision(std::vector<Json>& objects) {
  std::string const revision = job_revision(objects);
  for (auto& o : objects) {
    JobPart const* part = job_part_of(o);
    if (!part || part->object != JobObject::Vm) continue;
    o["metadata"]["annotations"][kRevisionAnnotation] = revision;
    o["spec"]["template"]["metadata"]["annotations"] = Json{{kRevisionAnnotation, revision}};
  }
}

// The root disk's spec: a bare VMI's DataVolume, or a VirtualMachine's
// dataVolumeTemplates entry. Its source: the registry import of rootImage,
// or with a golden image a clone of the volume the DataSource pointed at
// when apply resolved it (source.pvc or source.snapshot), never `sourceRef`
// to the DataSource itself: CDI resolves a sourceRef on each reconcile until
// its clone source exists, so DataVolumes made around a cron import would
// clone different images and a rollout's batches would split the fleet's OS
// (docs/host-tool.md, "Root disk source"). Only unresolved — an offline
// `render` — does it name the DataSource. Either way `spec.storage`: CDI
// picks the clone strategy (snapshot, CSI clone, host-assisted copy) from
// the StorageProfile.
Json root_datavolume_spec(JobSpec const& spec) {
  Json source;
  if (spec.golden_image.empty())
    source = Json{{"source", Json{{"registry", Json{{"url", "docker://" + spec.root_image},
                                                    // CDI reads accessKeyId/secretKey from it.
                                                    {"secretRef", spec.pull_secret}}}}}};
  else if (spec.golden_source)
    source = Json{{"source", Json{{spec.golden_source->kind,
                                   Json{{"namespace", spec.golden_source->ns}, {"name", spec.golden_source->name}}}}}};
  else
    source =
        Json{{"sourceRef",
              Json{{"kind", "DataSource"}, {"namespace", spec.golden_image.ns}, {"name", spec.golden_image.name}}}};
  source["storage"] = Json{// local-path has no StorageProfile access modes: CDI needs them spelled out.
                           {"accessModes", Json::array({"ReadWriteOnce"})},
                           {"storageClassName", spec.storage_class},
                           {"resources", Json{{"requests", Json{{"storage", spec.root_size}}}}}};
  return source;
}

// The root disk's metadata: the job's, and what it is made from
// (kRootSourceAnnotation).
Json root_datavolume(JobSpec const& spec) {
  Json dv = job_object(spec, JobObject::RootDisk);
  dv["metadata"]["annotations"] = Json{{kRootSourceAnnotation, root_source_text(spec)}};
  dv["spec"] = root_datavolume_spec(spec);
  return dv;
}

Json data_pvc(JobSpec const& spec) {
  Json pvc = job_object(spec, JobObject::DataDisk);
  pvc["spec"] = Json{{"accessModes", Json::array({"ReadWriteOnce"})},
                     {"storageClassName", spec.storage_class},
                     {"volumeMode", "Filesystem"},
                     {"resources", Json{{"requests", Json{{"storage", spec.data_disk->size}}}}}};
  return pvc;
}

// The VMI's disks and the volumes behind them, index for index.
struct DisksAndVolumes {
  Json disks = Json::array();
  Json volumes = Json::array();
};

DisksAndVolumes vmi_storage(JobSpec const& spec) {
  DisksAndVolumes s;
  s.disks.push_back(Json{{"name", "rootdisk"}, {"bootOrder", 1}, {"disk", Json{{"bus", "virtio"}}}});
  s.volumes.push_back(Json{{"name", "rootdisk"}, {"dataVolume", Json{{"name", root_disk_name(spec)}}}});

  if (spec.data_disk) {
    // The serial is how the agent finds this disk (/dev/disk/by-id/virtio-<serial>).
    s.disks.push_back(
        Json{{"name", "datadisk"}, {"serial", spec.data_disk->serial}, {"disk", Json{{"bus", "virtio"}}}});
    s.volumes.push_back(
        Json{{"name", "datadisk"},
             {"persistentVolumeClaim", Json{{"claimName", job_object_name(spec, JobObject::DataDisk)}}}});
  }

  // CD-ROMs: bus sata (a cdrom cannot be virtio); no serial (applies to disks
  // only); each found in the guest by its distinct volume label.
  s.disks.push_back(Json{{"name", "credentials"}, {"cdrom", Json{{"bus", "sata"}, {"readonly", true}}}});
  s.volumes.push_back(
      Json{{"name", "credentials"},
           {"secret", Json{{"secretName", spec.credential_secret}, {"volumeLabel", kCredVolumeLabel}}}});
  s.disks.push_back(Json{{"name", "bootstrap"}, {"cdrom", Json{{"bus", "sata"}, {"readonly", true}}}});
  s.volumes.push_back(Json{{"name", "bootstrap"},
                           {"configMap", Json{{"name", spec.bootstrap_configmap}, {"volumeLabel", kBootVolumeLabel}}}});

  s.disks.push_back(Json{{"name", "cloudinit"}, {"disk", Json{{"bus", "virtio"}}}});
  s.volumes.push_back(Json{{"name", "cloudinit"},
                           {"cloudInitNoCloud", Json{{"secretRef", Json{{"name", userdata_secret_name(spec)}}}}}});
  return s;
}

// `count` device entries named <prefix>0, <prefix>1, … for one device-plugin resource.
Json device_list(DeviceRequest const& d, std::string const& prefix) {
  Json list = Json::array();
  for (int i = 0; i < d.count; ++i)
    list.push_back(Json{{"name", prefix + std::to_string(i)}, {"deviceName", d.resource}});
  return list;
}

struct Networking {
  Json interfaces;
  Json networks;
};

Networking vmi_networking(JobSpec const& spec) {
  Networking n{Json::array({Json{{"name", "default"}, {"masquerade", Json::object()}}}),
               Json::array({Json{{"name", "default"}, {"pod", Json::object()}}})};
  if (!spec.overlay_network.empty()) {
    n.interfaces.push_back(Json{{"name", "overlay"}, {"bridge", Json::object()}});
    n.networks.push_back(Json{{"name", "overlay"}, {"multus", Json{{"networkName", spec.overlay_network}}}});
  }
  return n;
}

Json vmi_devices(JobSpec const& spec, Json disks, Json interfaces) {
  Json devices = Json::object();
  devices["disks"] = std::move(disks);
  if (spec.gpu) devices["gpus"] = device_list(*spec.gpu, "gpu");
  if (spec.infiniband) devices["hostDevices"] = device_list(*spec.infiniband, "ib");
  devices["interfaces"] = std::move(interfaces);
  // The agent mirrors its readiness events to ttyS0; KubeVirt streams that
  // console as the launcher pod's `guest-console-log` container, which is how
  // `cosmicac-vmi wait` learns why the agent failed. Both explicit, so a
  // cluster-wide default does not decide.
  devices["autoattachSerialConsole"] = true;
  devices["logSerialConsole"] = true;
  return devices;
}

Json vmi_domain(JobSpec const& spec, Json disks, Json interfaces) {
  Json cpu{{"cores", spec.cpu_cores}};
  if (spec.dedicated_cpu) cpu["dedicatedCpuPlacement"] = true;
  Json domain{{"cpu", cpu}, {"resources", vmi_resources(spec)}};
  if (!spec.hugepage_size.empty()) domain["memory"] = Json{{"hugepages", Json{{"pageSize", spec.hugepage_size}}}};
  domain["devices"] = vmi_devices(spec, std::move(disks), std::move(interfaces));
  return domain;
}

Json vmi_spec(JobSpec const& spec) {
  DisksAndVolumes storage = vmi_storage(spec);
  Networking net = vmi_networking(spec);
  return Json{{"domain", vmi_domain(spec, std::move(storage.disks), std::move(net.interfaces))},
              // Passthrough GPUs cannot live-migrate: with a cluster default of
              // LiveMigrate the VMI would block every drain of its node.
              {"evictionStrategy", "None"},
              {"terminationGracePeriodSeconds", spec.termination_grace_seconds},
              {"networks", std::move(net.networks)},
              {"volumes", std::move(storage.volumes)},
              {"readinessProbe", readiness_probe(spec)}};
}

Json vmi(JobSpec const& spec) {
  Json object = job_object(spec, JobObject::Vmi);
  object["spec"] = vmi_spec(spec);
  return object;
}

// A VirtualMachine: its template is the bare VMI's spec, and the VMIs KubeVirt
// makes from it carry the job's labels (list, wait -l). The root disk is a
// dataVolumeTemplates entry: KubeVirt creates the DataVolume, owned by the
// VM, so it lives across the VM's restarts (a second boot of the same disk,
// no new import) and goes with the VM.
Json vm(JobSpec const& spec) {
  Json object = job_object(spec, JobObject::Vm);
  object["metadata"]["annotations"] = Json{{kRootSourceAnnotation, root_source_text(spec)}};
  Json root = root_datavolume(spec);
  root["metadata"].erase("namespace");  // the VM's, where KubeVirt creates it
  object["spec"] =
      Json{{"runStrategy", spec.run_strategy},
           {"dataVolumeTemplates", Json::array({std::move(root)})},
           {"template", Json{{"metadata", Json{{"labels", job_labels(spec.name)}}}, {"spec", vmi_spec(spec)}}}};
  return object;
}

Json render_part(JobSpec const& spec, JobObject which) {
  switch (which) {
    case JobObject::RootDisk: return root_datavolume(spec);
    case JobObject::DataDisk: return data_pvc(spec);
    case JobObject::Vmi: return vmi(spec);
    case JobObject::Vm: return vm(spec);
    case JobObject::UserData: return userdata_secret(spec);
  }
  return Json::object();  // not reached: every JobObject has its renderer
}

}  // namespace

std::vector<Json> render_manifests(JobSpec const& spec) {
  std::vector<Json> out;
  for (auto const& part : kJobParts)
    if (job_has(spec, part)) out.push_back(render_part(spec, part.object));
  annotate_revision(out);
  return out;
}

std::string root_source_text(JobSpec const& spec) {
  if (spec.golden_image.empty()) return "docker://" + spec.root_image;
  std::string const ds = "DataSource " + spec.golden_image.text();
  return spec.golden_source ? ds + ": " + spec.golden_source->text() : ds + " (resolved when applied)";
}

std::string root_disk_name(JobSpec const& spec) {
  return job_object_name(spec, JobObject::RootDisk) + "-" +
         content_digest(root_datavolume_spec(spec).dump()).substr(0, kRootDigestHexLength);
}

std::string rendered_object_name(JobSpec const& spec, JobObject object) {
  if (object == JobObject::UserData) return userdata_secret_name(spec);
  if (object == JobObject::RootDisk) return root_disk_name(spec);
  return job_object_name(spec, object);
}

std::string userdata_secret_name(JobSpec const& spec) {
  return job_object_name(spec, JobObject::UserData) + "-" + content_digest(render_userdata(spec));
}

std::size_t userdata_secret_data_bytes(JobSpec const& spec) { return render_userdata(spec).size(); }

std::optional<SpecLimitError> check_object_limits(JobSpec const& spec) {
  std::size_t const bytes = userdata_secret_data_bytes(spec);
  if (bytes <= kMaxSecretDataBytes) return std::nullopt;
  // The guest config's values are what a spec can make large; name the field
  // behind the largest one.
  static constexpr std::pair<const char*, const char*> kFieldOf[] = {{"ENVS", "container.env"},
                                                                     {"IMG", "container.image"},
                                                                     {"NAME", "container.name"},
                                                                     {"MNT", "dataDisk.mountPoint"},
                                                                     {"DATA_DISK_SERIAL", "dataDisk.serial"},
                                                                     {"JOB_TYPE", "container.jobType"}};
  std::string field = "container.env";
  std::size_t largest = 0;
  for (auto const& [key, value] : guest_config_entries(spec))
    for (auto const& [k, f] : kFieldOf)
      if (key == k && value.size() > largest) {
        largest = value.size();
        field = f;
      }
  return SpecLimitError{field, "makes the user-data Secret's data " + std::to_string(bytes) +
                                   " bytes; Kubernetes refuses a Secret whose data is over " +
                                   std::to_string(kMaxSecretDataBytes) + " bytes (1 MiB): this field is " +
                                   std::to_string(largest) + " bytes of it, shrink it"};
}

Json as_list(std::vector<Json> const& objects) {
  return Json{{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", Json::object()}, {"items", objects}};
}

namespace {

Result<JobSpec> within_object_limits(Result<JobSpec> spec, std::string_view origin) {
  if (!spec) return spec;
  if (auto too_big = check_object_limits(*spec))
    return spec_detail::spec_error(origin, spec_detail::SpecError{too_big->field, too_big->message});
  return spec;
}

}  // namespace

Result<JobSpec> parse_renderable_spec(std::string_view text, std::string_view origin, OperatorProfile const& profile) {
  return within_object_limits(parse_job_spec(text, origin, profile), origin);
}

Result<JobSpec> load_renderable_spec(std::string const& path, OperatorProfile const& profile) {
  return within_object_limits(load_job_spec(path, profile), path == "-" ? "<stdin>" : path);
}

}  // namespace cosmicac::host
