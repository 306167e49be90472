#include "host/job_spec.hpp"

#include "common/file_io.hpp"
#include "config/image_ref.hpp"
#include "config/scalars.hpp"
#include "config/settings.hpp"
#include "host/guest_layout.hpp"
#include "host/manifests.hpp"
#include "host/quantity.hpp"
#include "host/yaml_json.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <set>

namespace cosmicac::host {
namespace {

constexpr std::size_t kMaxJobName = 63 - 9;  // the longest suffix, "-userdata", must still fit a DNS label

struct SpecError {
  std::string field;
  std::string message;
};

[[noreturn]] void fail(std::string field, std::string message) { throw SpecError{std::move(field), std::move(message)}; }

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// RFC 1123 label: what Kubernetes requires of namespaces and what we require
// of the job name (it becomes the VM's hostname).
bool is_dns_label(std::string_view s, std::size_t max = 63) {
  if (s.empty() || s.size() > max || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  for (char c : s)
    if (!lower_alnum(c) && c != '-') return false;
  return true;
}

// RFC 1123 subdomain: names of Secrets, ConfigMaps, StorageClasses, NADs.
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253 || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  for (char c : s)
    if (!lower_alnum(c) && c != '-' && c != '.') return false;
  return true;
}

// The name part of a qualified resource name (nvidia.com/<this>).
bool is_resource_suffix(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool is_env_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!alnum(c) && c != '_') return false;
  return true;
}

// Reads one JSON object, remembering which keys were used so that unknown
// keys (typos) are reported instead of silently ignored.
class Fields {
 public:
  Fields(Json const& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {
    if (!obj_.is_object()) fail(prefix_.empty() ? "(top level)" : prefix_, "must be a mapping");
  }

  std::string path(std::string const& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }

  Json const* get(std::string const& key) {
    used_.insert(key);
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  std::optional<std::string> str(std::string const& key) {
    Json const* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(path(key), "must be a string");
    std::string s = v->get<std::string>();
    if (s.empty()) fail(path(key), "must not be empty");
    if (s.find_first_of(std::string("\n\r\0", 3)) != std::string::npos) fail(path(key), "must be a single line");
    return s;
  }

  std::string required_str(std::string const& key) {
    auto s = str(key);
    if (!s) fail(path(key), "is required");
    return *s;
  }

  std::optional<long long> integer(std::string const& key, long long lo, long long hi) {
    Json const* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) fail(path(key), "must be an integer");
    long long n = v->get<long long>();
    if (n < lo || n > hi)
      fail(path(key), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " +
                          std::to_string(n) + ")");
    return n;
  }

  // A quantity: written as a string ("100Gi") or a bare number of bytes.
  std::optional<std::string> quantity(std::string const& key) {
    Json const* v = get(key);
    if (!v) return std::nullopt;
    std::string s;
    if (v->is_string()) s = v->get<std::string>();
    else if (v->is_number_integer()) s = v->dump();
    else fail(path(key), "must be a quantity such as 100Gi");
    auto q = parse_quantity(s);
    if (!q) fail(path(key), q.error().message);
    if (*q <= 0) fail(path(key), "must be positive");
    if (*q != std::floor(*q)) fail(path(key), "must be a whole number of bytes");
    return s;
  }

  std::optional<Fields> object(std::string const& key) {
    Json const* v = get(key);
    if (!v) return std::nullopt;
    return Fields(*v, path(key));
  }

  void no_unknown_keys() const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!used_.count(it.key())) fail(path(it.key()), "unknown field");
  }

 private:
  Json const& obj_;
  std::string prefix_;
  std::set<std::string> used_;
};

std::optional<DeviceRequest> device(Fields& top, std::string const& key, std::string const& name_key,
                                    std::string const& vendor) {
  auto f = top.object(key);
  if (!f) return std::nullopt;
  std::string suffix = f->required_str(name_key);
  if (!is_resource_suffix(suffix))
    fail(f->path(name_key), "must be the resource name after '" + vendor + "/' (letters, digits, '-', '_', '.')");
  DeviceRequest d{vendor + "/" + suffix, static_cast<int>(f->integer("count", 1, 16).value_or(1))};
  f->no_unknown_keys();
  return d;
}

void check_image(std::string const& field, std::string const& image) {
  auto ref = config::parse_image_ref(image);
  if (!ref) fail(field, ref.error().message);
}

void check_subdomain(std::string const& field, std::string const& value) {
  if (!is_dns_subdomain(value)) fail(field, "'" + value + "' is not a valid Kubernetes object name (RFC 1123 subdomain)");
}

// The agent's own rule for the config key this field becomes (config/settings):
// what the host accepts, the agent accepts at boot.
void agent_rule(std::string const& field, std::string_view key, std::string const& value) {
  if (auto st = config::check_setting(key, value); !st) fail(field, st.error().message);
}

// The job's identity: its name (the VMI's, and the guest's hostname) and namespace.
void read_identity(Fields& top, JobSpec& spec) {
  spec.name = top.required_str("name");
  if (!is_dns_label(spec.name, kMaxJobName))
    fail("name", "'" + spec.name + "' must be a DNS label of at most " + std::to_string(kMaxJobName) +
                     " characters (lowercase letters, digits, '-')");
  spec.ns = top.required_str("namespace");
  if (!is_dns_label(spec.ns)) fail("namespace", "'" + spec.ns + "' is not a valid namespace name");
}

// What the VMI asks of its node: CPU, memory and passthrough devices.
void read_resources(Fields& top, JobSpec& spec) {
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

  spec.gpu = device(top, "gpu", "type", "nvidia.com");
  spec.infiniband = device(top, "infiniband", "name", "mellanox.com");
}

void read_root_disk(Fields& top, JobSpec& spec) {
  auto root = top.object("rootDisk");
  if (!root) return;
  if (auto image = root->str("image")) {
    std::string img = *image;
    if (img.rfind("docker://", 0) == 0) img.erase(0, 9);
    check_image(root->path("image"), img);
    spec.root_image = img;
  }
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
    fail(data->path("size"), "must be at least 100Gi (the agent only takes a data disk of 100 GiB or more), got " + *size);
  d.size = *size;
  std::string const mnt = data->required_str("mountPoint");
  auto normal = config::normalise_mount_point(mnt);  // the agent's MNT rule, and its normal form
  if (!normal) fail(data->path("mountPoint"), normal.error().message);
  d.mount_point = *normal;
  d.serial = data->str("serial").value_or(kDefaultDataDiskSerial);
  if (d.serial.size() > kMaxSerialLength) fail(data->path("serial"), "must be at most 20 characters (virtio-blk limit)");
  for (char c : d.serial)
    if (!alnum(c) && c != '-' && c != '_' && c != '.')
      fail(data->path("serial"), "may contain only letters, digits, '-', '_', '.'");
  agent_rule(data->path("serial"), "DATA_DISK_SERIAL", d.serial);
  data->no_unknown_keys();
  spec.data_disk = d;
}

// Names of cluster objects the job uses but does not create.
void read_references(Fields& top, JobSpec& spec) {
  if (auto v = top.str("storageClass")) { check_subdomain("storageClass", *v); spec.storage_class = *v; }
  if (auto v = top.str("pullSecret")) { check_subdomain("pullSecret", *v); spec.pull_secret = *v; }
  spec.credential_secret = spec.pull_secret;
  if (auto v = top.str("credentialSecret")) { check_subdomain("credentialSecret", *v); spec.credential_secret = *v; }
  if (auto v = top.str("bootstrapConfigMap")) { check_subdomain("bootstrapConfigMap", *v); spec.bootstrap_configmap = *v; }

  if (auto v = top.str("overlayNetwork")) {
    std::string nad = *v;
    auto slash = nad.find('/');
    if (slash == std::string::npos) check_subdomain("overlayNetwork", nad);
    else {
      if (!is_dns_label(nad.substr(0, slash))) fail("overlayNetwork", "namespace part of '" + nad + "' is not valid");
      check_subdomain("overlayNetwork", nad.substr(slash + 1));
    }
    spec.overlay_network = nad;
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

JobSpec build(Json const& doc) {
  JobSpec spec;
  Fields top(doc, "");
  read_identity(top, spec);
  read_resources(top, spec);
  read_root_disk(top, spec);
  read_data_disk(top, spec);
  read_references(top, spec);
  read_container(top, spec);
  top.no_unknown_keys();
  return spec;
}

}  // namespace

Result<JobSpec> parse_job_spec(std::string_view text, std::string_view origin) {
  auto doc = parse_yaml_or_json(text, origin);
  if (!doc) return doc.error();
  try {
    JobSpec spec = build(*doc);
    // A spec whose objects the API server would refuse is a spec error, found
    // before any object is created.
    if (auto too_big = check_object_limits(spec)) fail(too_big->field, too_big->message);
    return spec;
  } catch (SpecError const& e) {
    return make_error(Reason::ConfigInvalid, std::string(origin) + ": " + e.field + ": " + e.message);
  }
}

Result<JobSpec> load_job_spec(std::string const& path) {
  constexpr std::size_t kMaxSpecBytes = 1u << 20;
  UniqueFd owned;
  if (path != "-") {
    owned = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!owned.valid()) return make_error(Reason::ConfigInvalid, "cannot open job spec " + path);
  }
  std::string text;
  int const err = read_to_end(path == "-" ? STDIN_FILENO : owned.get(), kMaxSpecBytes, text);
  if (err == EFBIG) return make_error(Reason::ConfigInvalid, "job spec " + path + " is larger than 1 MiB");
  if (err != 0) return make_error(Reason::ConfigInvalid, "cannot read job spec " + path);
  return parse_job_spec(text, path == "-" ? "<stdin>" : path);
}

std::string root_datavolume_name(JobSpec const& spec) { return spec.name + "-root"; }
std::string data_pvc_name(JobSpec const& spec) { return spec.name + "-data"; }
std::string userdata_secret_name(JobSpec const& spec) { return spec.name + "-userdata"; }

}  // namespace cosmicac::host
