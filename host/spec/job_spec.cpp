#include "host/spec/job_spec.hpp"

#include "common/file_io.hpp"
#include "common/terminal_text.hpp"
#include "config/image_ref.hpp"
#include "config/scalars.hpp"
#include "config/settings.hpp"
#include "host/base/quantity.hpp"
#include "host/base/yaml_json.hpp"
#include "host/spec/guest_layout.hpp"
#include "host/spec/spec_fields.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace cosmicac::host {
namespace {

using spec_detail::check_image;
using spec_detail::fail;
using spec_detail::Fields;
using spec_detail::is_resource_suffix;
using spec_detail::SpecError;

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'); }

bool is_env_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!alnum(c) && c != '_') return false;
  return true;
}

bool is_tenant_field(std::string const& path) {
  for (auto const& f : kSpecFields)
    if (f.owner == FieldOwner::Tenant && path == f.path) return true;
  return false;
}

// The job spec may not name the operator's objects: each such field is
// refused, present at all (even null), saying where the operator sets it.
void refuse_operator_fields(Json const& doc) {
  for (auto const& f : kSpecFields) {
    if (f.owner != FieldOwner::Operator) continue;
    std::string_view path = f.path;
    Json const* at = &doc;
    while (at) {
      auto const dot = path.find('.');
      std::string const key(path.substr(0, dot));
      auto it = at->is_object() ? at->find(key) : at->end();
      at = it == at->end() ? nullptr : &*it;
      if (dot == std::string_view::npos) break;
      path.remove_prefix(dot + 1);
    }
    if (at)
      fail(f.path, std::string("is set by the operator, not the job spec (operator profile key ") + f.profile_key +
                       ", given with cosmicac-vmi --profile FILE)");
  }
}

// `allowed` (the operator's list for this device; empty: any name) narrows
// which device-plugin resource the tenant may ask for.
std::optional<DeviceRequest> device(Fields& top, std::string const& key, std::string const& name_key,
                                    std::string const& vendor, std::vector<std::string> const& allowed,
                                    char const* profile_key) {
  auto f = top.object(key);
  if (!f) return std::nullopt;
  std::string suffix = f->required_str(name_key);
  if (!is_resource_suffix(suffix))
    fail(f->path(name_key), "must be the resource name after '" + vendor + "/' (letters, digits, '-', '_', '.')");
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), suffix) == allowed.end()) {
    std::string list;
    for (auto const& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(f->path(name_key),
         "'" + suffix + "' is not one the operator allows (operator profile " + profile_key + ": " + list + ")");
  }
  DeviceRequest d{vendor + "/" + suffix, static_cast<int>(f->integer("count", 1, 16).value_or(1))};
  f->no_unknown_keys();
  return d;
}

// The agent's own rule for the config key this field becomes (config/settings):
// what the host accepts, the agent accepts at boot.
void agent_rule(std::string const& field, std::string_view key, std::string const& value) {
  if (auto st = config::check_setting(key, value); !st) fail(field, st.error().message);
}

// The job's identity: its name (the VMI's, and the guest's hostname).
void read_identity(Fields& top, JobSpec& spec) {
  spec.name = top.required_str("name");
  if (!is_dns1123_label(spec.name, kMaxJobNameLength))
    fail("name", "'" + spec.name + "' must be a DNS label of at most " + std::to_string(kMaxJobNameLength) +
                     " characters (lowercase letters, digits, '-')");
}

// The namespace is the operator's (the profile's, or -n): the Secrets,
// ConfigMap, network and kept data disk the job uses resolve in it, so a
// tenant who chose it would mount another namespace's Secrets. A spec may
// repeat it; naming another is refused, naming both. Without an operator
// namespace (library callers rendering offline) the spec's is taken: the
// command line never parses a spec without one (host/cli: FileFlags::load_spec).
void read_namespace(Fields& top, OperatorProfile const& profile, JobSpec& spec) {
  auto named = profile.ns.empty() ? std::optional(top.required_str("namespace")) : top.str("namespace");
  if (named && !is_dns1123_label(*named)) fail("namespace", "'" + *named + "' is not a valid namespace name");
  if (named && !profile.ns.empty() && *named != profile.ns)
    fail("namespace", "'" + *named + "' is not the operator's namespace '" + profile.ns +
                          "' (-n or operator profile key namespace): a job spec may repeat the namespace, never "
                          "choose it");
  spec.ns = profile.ns.empty() ? *named : profile.ns;
}

// What the VMI asks of its node: CPU, memory and passthrough devices.
void read_resources(Fields& top, OperatorProfile const& profile, JobSpec& spec) {
  auto cpu = top.integer("cpu", 1, 1024);
  if (!cpu) fail("cpu", "is required (number of virtual CPU cores)");
  spec.cpu_cores = static_cast<int>(*cpu);
  if (Json const* v = top.get("dedicatedCpuPlacement")) {
    if (!v->is_boolean()) fail("dedicatedCpuPlacement", "must be true or false");
    spec.dedicated_cpu = v->get<bool>();
  }
  auto memory = top.quantity("memory");
  if (!memory) fail("memory", "is required (for example 64Gi)");
  spec.memory = *memory;

  // KubeVirt's webhook refuses guest memory that is not a whole number of
  // pages (vmi-create-admitter, validateHugepagesMemoryRequests); say so here,
  // naming the spec's fields, instead of after other objects were created.
  if (auto page = top.str("hugepageSize")) {
    if (*page != "2Mi" && *page != "1Gi") fail("hugepageSize", "must be 2Mi or 1Gi (got '" + *page + "')");
    long double const page_bytes = parse_quantity(*page).value();
    long double const mem = parse_quantity(spec.memory).value();
    if (mem < page_bytes || std::fmod(mem, page_bytes) != 0)
      fail("memory", "'" + spec.memory + "' must be a whole multiple of hugepageSize " + *page);
    spec.hugepage_size = *page;
  }
  if (auto grace = top.integer("terminationGracePeriodSeconds", 0, 3600))
    spec.termination_grace_seconds = static_cast<int>(*grace);

  spec.gpu = device(top, "gpu", "type", "nvidia.com", profile.gpu_types, "gpuTypes");
  spec.infiniband = device(top, "infiniband", "name", "mellanox.com", profile.infiniband_names, "infinibandNames");
}

void read_root_disk(Fields& top, JobSpec& spec) {
  auto root = top.object("rootDisk");
  if (!root) return;
  if (auto size = root->quantity("size")) spec.root_size = *size;
  root->no_unknown_keys();
}

void read_data_disk(Fields& top, JobSpec& spec) {
  auto data = top.object("dataDisk");
  if (!data) return;
  DataDisk d;
  auto size = data->quantity("size");
  if (!size) fail(data->path("size"), "is required (at least 100Gi)");
  if (parse_quantity(*size).value() < 100 * kGiB)
    fail(data->path("size"),
         "must be at least 100Gi (the agent only takes a data disk of 100 GiB or more), got " + *size);
  d.size = *size;
  std::string const mnt = data->required_str("mountPoint");
  auto normal = config::normalise_mount_point(mnt);  // the agent's MNT rule, and its normal form
  if (!normal) fail(data->path("mountPoint"), normal.error().message);
  d.mount_point = *normal;
  d.serial = data->str("serial").value_or(kDefaultDataDiskSerial);
  if (d.serial.size() > kMaxSerialLength)
    fail(data->path("serial"), "must be at most 20 characters (virtio-blk limit)");
  for (char c : d.serial)
    if (!alnum(c) && c != '-' && c != '_' && c != '.')
      fail(data->path("serial"), "may contain only letters, digits, '-', '_', '.'");
  agent_rule(data->path("serial"), "DATA_DISK_SERIAL", d.serial);
  data->no_unknown_keys();
  spec.data_disk = d;
}

// Names of cluster objects the job uses but does not create: the operator's.
// A NetworkAttachmentDefinition of another namespace is refused: the VMI
// would join a network its namespace's owner did not choose.
void take_operator_fields(OperatorProfile const& profile, JobSpec& spec) {
  spec.root_image = profile.root_image;
  spec.golden_image = profile.golden_image;
  spec.pull_secret = profile.pull_secret;
  spec.credential_secret = profile.credential_secret;
  spec.bootstrap_configmap = profile.bootstrap_configmap;
  spec.storage_class = profile.storage_class;
  spec.overlay_network = profile.overlay_network;
  spec.registry_mirror = profile.registry_mirror;
  spec.registry_mirror_ca = profile.registry_mirror_ca;
  spec.allowed_images = profile.allowed_images;
  spec.workload_kind = profile.workload_kind;
  spec.run_strategy = profile.run_strategy;
  if (auto slash = spec.overlay_network.find('/'); slash != std::string::npos) {
    std::string const nad_ns = spec.overlay_network.substr(0, slash);
    if (nad_ns != spec.ns)
      throw SpecError{"overlayNetwork", "'" + spec.overlay_network + "' is in namespace " + nad_ns +
                                            ", not the VMI's (" + spec.ns +
                                            "): a VMI joins only networks of its own namespace"};
  }
}

// container.env: becomes ENVS, kept in the order written.
void read_env(Fields& container, JobSpec& spec) {
  Json const* env = container.get("env");
  if (!env) return;
  if (!env->is_object()) fail(container.path("env"), "must be a mapping of NAME: value");
  for (auto it = env->begin(); it != env->end(); ++it) {
    std::string field = container.path("env") + "." + it.key();
    if (!is_env_name(it.key())) fail(field, "is not a valid environment variable name");
    Json const& v = it.value();
    if (v.is_object() || v.is_array()) {
      spec.env.emplace_back(it.key(), nlohmann::json::parse(v.dump()));
    } else if (v.is_string()) {
      spec.env.emplace_back(it.key(), v.get<std::string>());
    } else if (v.is_number() || v.is_boolean()) {
      spec.env.emplace_back(it.key(), v.dump());  // 8080 → "8080", true → "true"
    } else {
      fail(field, "must be a string, number, boolean, mapping or list (write \"\" for an empty value)");
    }
  }
  // The encoder is the authority on what ENVS can carry: ask it now so that
  // rendering cannot fail later.
  auto encoded = config::encode_envs(spec.env);
  if (!encoded) fail(container.path("env"), encoded.error().message);
  agent_rule(container.path("env"), "ENVS", *encoded);
}

// The inference container the agent runs in the guest.
void read_container(Fields& top, JobSpec& spec) {
  spec.container_image = config::kDefaultImage;
  spec.container_name = config::kDefaultContainerName;
  auto c = top.object("container");
  if (!c) return;
  if (auto img = c->str("image")) {
    check_image(c->path("image"), *img);
    agent_rule(c->path("image"), "IMG", *img);
    spec.container_image = *img;
  }
  if (auto n = c->str("name")) {
    agent_rule(c->path("name"), "NAME", *n);
    spec.container_name = *n;
  }
  if (auto jt = c->str("jobType")) {
    if (*jt != config::kJobTypeGpuContainer)
      fail(c->path("jobType"), std::string("must be ") + config::kJobTypeGpuContainer + " or omitted");
    agent_rule(c->path("jobType"), "JOB_TYPE", *jt);
    spec.job_type = *jt;
  }
  read_env(*c, spec);
  c->no_unknown_keys();
}

// A probe's port: a number. Kubernetes also takes a port's name, which it
// looks up in the pod's container ports; the guest's container has no named
// ports, so a name could never be probed.
int probe_port(Fields& handler) {
  std::string const field = handler.path("port");
  Json const* v = handler.get("port");
  if (!v) fail(field, "is required (the container's port, 1-65535)");
  if (v->is_string())
    fail(field, "'" + v->get<std::string>() +
                    "' is a named port: the agent probes the container inside the guest, where ports have no "
                    "names; give its number (1-65535)");
  return static_cast<int>(handler.integer("port", 1, 65535).value());
}

// An HTTP probe's path: absolute, RFC 3986 path and query characters only
// (a '%' starts a %XX escape), so it goes into the request line as written.
std::string probe_path(Fields& handler) {
  std::string const field = handler.path("path");
  std::string path = handler.str("path").value_or("/");
  if (path.front() != '/') fail(field, "'" + path + "' must be an absolute path (starting with '/')");
  if (path.size() > kMaxProbePathLength)
    fail(field, "must be at most " + std::to_string(kMaxProbePathLength) + " characters");
  auto const hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (kProbePathCharacters.find(path[i]) == std::string_view::npos)
      fail(field, "'" + path + "' is not a URL path: character " + std::to_string(i + 1) +
                      " is outside RFC 3986's path and query characters (percent-encode it)");
    if (path[i] == '%' && (i + 2 >= path.size() || !hex(path[i + 1]) || !hex(path[i + 2])))
      fail(field, "'" + path + "' is not a URL path: '%' at character " + std::to_string(i + 1) +
                      " does not start a %XX escape");
  }
  return path;
}

// readiness: exactly one handler, the timings; then every guest config key it
// becomes, through the agent's own rule.
void read_readiness(Fields& top, JobSpec& spec) {
  auto r = top.object("readiness");
  if (!r) return;
  ReadinessSpec out;
  auto http = r->object("httpGet");
  auto tcp = r->object("tcpSocket");
  auto bounded = [&](char const* key, long long lo, long long hi, int fallback) {
    return static_cast<int>(r->integer(key, lo, hi).value_or(fallback));
  };
  int const initial_delay = bounded("initialDelaySeconds", 0, 3600, 0);
  out.probe.initial_delay = std::chrono::seconds(initial_delay);
  out.period_seconds = bounded("periodSeconds", 1, 300, out.period_seconds);
  out.probe.timeout = std::chrono::seconds(bounded("timeoutSeconds", 1, 60, 1));
  out.failure_threshold = bounded("failureThreshold", 1, 64, out.failure_threshold);
  out.startup_timeout_seconds = bounded("startupTimeoutSeconds", 1, 86400, out.startup_timeout_seconds);
  r->no_unknown_keys();  // exec, grpc, successThreshold: named as what they are, unknown here
  if (http && tcp) fail("readiness", "has both httpGet and tcpSocket: a readiness probe has exactly one");
  if (!http && !tcp) fail("readiness", "needs httpGet {port, path} or tcpSocket {port}");
  Fields& handler = http ? *http : *tcp;
  out.probe.kind = http ? ReadyProbe::Kind::Http : ReadyProbe::Kind::Tcp;
  out.probe.port = static_cast<unsigned>(probe_port(handler));
  if (http) out.probe.path = probe_path(handler);
  handler.no_unknown_keys();
  if (out.startup_timeout_seconds <= initial_delay)
    fail(r->path("startupTimeoutSeconds"), "must be longer than initialDelaySeconds (" + std::to_string(initial_delay) +
                                               "): the first probe would come after it");
  for (auto const& [key, value] : readiness_settings(out)) agent_rule("readiness", key, value);
  spec.readiness = out;
}

JobSpec build(Json const& doc, OperatorProfile const& profile) {
  JobSpec spec;
  Fields top(doc, "", is_tenant_field);
  refuse_operator_fields(doc);
  read_identity(top, spec);
  read_namespace(top, profile, spec);
  read_resources(top, profile, spec);
  read_root_disk(top, spec);
  read_data_disk(top, spec);
  read_container(top, spec);
  read_readiness(top, spec);
  top.no_unknown_keys();
  return spec;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> readiness_settings(ReadinessSpec const& r) {
  auto seconds = [](std::chrono::milliseconds d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  };
  return {{"READY_PROBE", probe_text(r.probe)},
          {"READY_INITIAL_DELAY", seconds(r.probe.initial_delay)},
          {"READY_TIMEOUT", seconds(r.probe.timeout)},
          {"READY_FAILURE_THRESHOLD", std::to_string(r.failure_threshold)},
          {"HEALTH_TIMEOUT", std::to_string(r.startup_timeout_seconds)}};
}

Result<JobSpec> parse_job_spec(std::string_view text, std::string_view origin, OperatorProfile const& profile) {
  auto doc = parse_yaml_or_json(text, origin);
  if (!doc) return doc.error();
  JobSpec spec;
  try {
    spec = build(*doc, profile);
  } catch (SpecError const& e) {
    return spec_detail::spec_error(origin, e);
  }
  try {
    take_operator_fields(profile, spec);
  } catch (SpecError const& e) {
    return spec_detail::spec_error(profile.origin, e);
  }
  // The tenant's image, against the operator's list (the agent holds IMG to
  // ALLOWED_IMAGES again before it pulls).
  if (auto img = config::parse_image_ref(spec.container_image);
      !spec.allowed_images.empty() && (!img || !config::image_allowed(*img, spec.allowed_images)))
    return spec_detail::spec_error(origin, SpecError{"container.image",
                                                     "'" + spec.container_image +
                                                         "' is not an image the operator allows (operator profile key "
                                                         "allowedImages, " +
                                                         profile.origin + ")"});
  return spec;
}

Result<JobSpec> load_job_spec(std::string const& path, OperatorProfile const& profile) {
  constexpr std::size_t kMaxSpecBytes = 1u << 20;
  UniqueFd owned;
  if (path != "-") {
    owned = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!owned.valid()) return host_error(Errc::Spec, "cannot open job spec " + terminal_safe(path));
  }
  std::string text;
  int const err = read_to_end(path == "-" ? STDIN_FILENO : owned.get(), kMaxSpecBytes, text);
  if (err == EFBIG) return host_error(Errc::Spec, "job spec " + terminal_safe(path) + " is larger than 1 MiB");
  if (err != 0) return host_error(Errc::Spec, "cannot read job spec " + terminal_safe(path));
  return parse_job_spec(text, path == "-" ? "<stdin>" : path, profile);
}

}  // namespace cosmicac::host
