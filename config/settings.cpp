#include "config/settings.hpp"

#include "common/file_io.hpp"
#include "common/registry_host.hpp"
#include "config/config_file.hpp"
#include "config/envs.hpp"
#include "config/scalars.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <utility>

namespace cosmicac::config {
namespace {

constexpr std::size_t kMaxFileSize = 1 << 20;  // a settings file is a few hundred bytes

// A problem with a value; the caller names origin, line and key.
Status problem(std::string what) { return make_error(Reason::ConfigInvalid, std::move(what)); }

template <class T>
Status assign(Result<T> r, T& out) {
  if (!r) return r.error();
  out = std::move(*r);
  return ok();
}

bool has_control(std::string_view v) {
  for (char c : v)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return true;
  return false;
}

bool ilower_equals(std::string_view v, std::string_view lower) {
  if (v.size() != lower.size()) return false;
  for (std::size_t k = 0; k < v.size(); ++k) {
    char c = v[k];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[k]) return false;
  }
  return true;
}

using Setter = Status (*)(Settings&, std::string_view);

struct Key {
  std::string_view name;
  Setter set;                   // called only for non-empty values: an empty value keeps the default…
  bool empty_is_value = false;  // …unless empty means something (CONSOLE_DEVICE: off)
};

Status set_duration(std::chrono::seconds& out, std::string_view v) { return assign(parse_duration(v), out); }
Status set_duration(std::chrono::milliseconds& out, std::string_view v) {
  auto r = parse_duration(v);
  if (!r) return r.error();
  out = *r;
  return ok();
}

// One word of a closed set, in any case, to its value; `expected` is the message otherwise.
template <typename T>
Status set_choice(T& out, std::string_view v, std::initializer_list<std::pair<std::string_view, T>> choices,
                  char const* expected) {
  for (auto const& [word, value] : choices)
    if (ilower_equals(v, word)) {
      out = value;
      return ok();
    }
  return problem(expected);
}

// REGISTRY_MIRROR: http[s]://host[:port] and nothing else (no path, no user,
// no query). The host must read as a registry in an image reference
// (host/x keeps it as the domain): a bare word would make dockerd pull
// "word/path" from Docker Hub.
Status set_registry_mirror(Settings& s, std::string_view v) {
  std::string_view host = v;
  if (host.starts_with("https://")) host.remove_prefix(8);
  else if (host.starts_with("http://")) host.remove_prefix(7);
  else return problem("must be https://host[:port] or http://host[:port]");
  auto ref = valid_registry_host(host) ? parse_image_ref(std::string(host) + "/x")
                                       : Result<ImageRef>(make_error(Reason::ConfigInvalid, ""));
  if (!ref || ref->domain != host)
    return problem("must be https://host[:port] or http://host[:port] (a registry host with a dot or a port, no path)");
  s.registry_mirror = v;
  return ok();
}

// A device count: 0 to 64 (a VM's GPUs and InfiniBand devices are a handful).
Status set_count(std::optional<unsigned>& out, std::string_view v) {
  unsigned n = 0;
  for (char c : v) {
    if (c < '0' || c > '9' || v.size() > 2) return problem("must be a count from 0 to 64");
    n = n * 10 + static_cast<unsigned>(c - '0');
  }
  if (n > 64) return problem("must be a count from 0 to 64");
  out = n;
  return ok();
}

// An absolute path of printable ASCII without "." or ".." components: where
// the GPU check finds its tool or its sysfs (operator keys, never written by cosmicac-vmi).
Status set_absolute_path(std::string& out, std::string_view v) {
  bool printable = v.size() <= 256;
  for (char c : v) printable = printable && c > 0x20 && c < 0x7F;
  std::string const padded = std::string(v) + "/";
  if (!printable || !v.starts_with('/') || padded.find("/./") != std::string::npos ||
      padded.find("/../") != std::string::npos)
    return problem("must be an absolute path of at most 256 printable characters, without . or ..");
  out = std::string(v);
  return ok();
}

constexpr std::array<Key, 36> kKeys{{
    {"MNT", [](Settings& s, std::string_view v) { return assign(normalise_mount_point(v), s.mount_point); }},
    {"IMG", [](Settings& s, std::string_view v) { return assign(parse_image_ref(v), s.image); }},
    {"NAME",
     [](Settings& s, std::string_view v) {
       if (!valid_container_name(v))
         return problem("not a valid container name ([a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 128 characters)");
       s.container_name = v;
       return ok();
     }},
    {"JOB_TYPE",
     [](Settings& s, std::string_view v) {
       // An enum, as in the reference script (it tests only for this value):
       // anything else is a typo that would silently run without TUN.
       if (v != kJobTypeGpuContainer) return problem(fmt::format("must be {} or empty (unset)", kJobTypeGpuContainer));
       s.job_type = v;
       return ok();
     }},
    {"ENVS", [](Settings& s, std::string_view v) { return assign(parse_envs(v), s.env); }},
    {"DATA_DISK_SERIAL",
     [](Settings& s, std::string_view v) {
       if (has_control(v)) return problem("must not contain control characters");
       s.data_disk_serial = v;
       return ok();
     }},
    {"DATA_DISK_MIN_SIZE",
     [](Settings& s, std::string_view v) {
       auto r = parse_size(v);
       if (r && *r == 0) return problem("must be greater than zero");
       return assign(std::move(r), s.data_disk_min_bytes);
     }},
    {"DATA_DISK_WAIT", [](Settings& s, std::string_view v) { return set_duration(s.data_disk_wait, v); }},
    {"FSTAB_DEVICE_TIMEOUT", [](Settings& s, std::string_view v) { return set_duration(s.fstab_device_timeout, v); }},
    {"CRED_ISO_LABEL",
     [](Settings& s, std::string_view v) {
       // ISO 9660 volume identifiers are at most 32 characters.
       if (v.size() > 32 || has_control(v) || v.find('/') != std::string_view::npos)
         return problem("must be at most 32 characters, without '/' or control characters");
       s.cred_iso_label = v;
       return ok();
     }},
    {"CRED_ISO_WAIT", [](Settings& s, std::string_view v) { return set_duration(s.cred_iso_wait, v); }},
    {"DOCKER_SOCKET",
     [](Settings& s, std::string_view v) {
       if (v.front() != '/' || has_control(v)) return problem("must be an absolute path");
       s.docker_socket = v;
       return ok();
     }},
    {"INSTALL_DOCKER", [](Settings& s, std::string_view v) { return assign(parse_bool(v), s.install_docker); }},
    {"PULL_POLICY",
     [](Settings& s, std::string_view v) {
       return set_choice(s.pull_policy, v, {{"missing", PullPolicy::Missing}, {"always", PullPolicy::Always}},
                         "must be missing or always");
     }},
    {"RETRY_BUDGET", [](Settings& s, std::string_view v) { return set_duration(s.retry_budget, v); }},
    {"GPU_MODE",
     [](Settings& s, std::string_view v) {
       return set_choice(s.gpu_mode, v, {{"all", GpuMode::All}, {"none", GpuMode::None}, {"auto", GpuMode::Auto}},
                         "must be all, none or auto");
     }},
    {"GPU_WAIT", [](Settings& s, std::string_view v) { return set_duration(s.gpu_wait, v); }},
    {"SETTLE_SECONDS", [](Settings& s, std::string_view v) { return set_duration(s.settle, v); }},
    {"HEALTH_TIMEOUT", [](Settings& s, std::string_view v) { return set_duration(s.health_timeout, v); }},
    {"READY_PROBE", [](Settings& s, std::string_view v) { return parse_probe_text(v, s.readiness); }},
    {"READY_INITIAL_DELAY", [](Settings& s, std::string_view v) { return set_duration(s.readiness.initial_delay, v); }},
    {"READY_TIMEOUT",
     [](Settings& s, std::string_view v) {
       auto r = parse_duration(v);
       if (r && (r->count() == 0 || r->count() > 60)) return problem("must be from 1 to 60 seconds");
       return set_duration(s.readiness.timeout, v);
     }},
    {"READY_FAILURE_THRESHOLD",
     [](Settings& s, std::string_view v) {
       std::optional<unsigned> n;
       if (auto st = set_count(n, v); !st || *n == 0) return problem("must be a count from 1 to 64");
       s.failure_threshold = *n;
       return ok();
     }},
    {"FAILURE_LOG_LINES",
     [](Settings& s, std::string_view v) {
       // The container's output may hold secrets: copying it is the operator's choice.
       unsigned n = 0;
       for (char c : v) {
         if (c < '0' || c > '9' || v.size() > 2) return problem("must be a number of lines from 0 to 20");
         n = n * 10 + static_cast<unsigned>(c - '0');
       }
       if (n > kMaxFailureLogLines) return problem("must be a number of lines from 0 to 20");
       s.failure_log_lines = n;
       return ok();
     }},
    {"GPU_COUNT", [](Settings& s, std::string_view v) { return set_count(s.gpu_count, v); }},
    {"IB_COUNT", [](Settings& s, std::string_view v) { return set_count(s.ib_count, v); }},
    {"GPU_CHECK",
     [](Settings& s, std::string_view v) {
       if (ilower_equals(v, "on")) s.gpu_check = true;
       else if (ilower_equals(v, "off")) s.gpu_check = false;
       else return assign(parse_bool(v), s.gpu_check);
       return ok();
     }},
    {"FABRIC_WAIT", [](Settings& s, std::string_view v) { return set_duration(s.fabric_wait, v); }},
    {"FABRIC_REQUIRED",
     [](Settings& s, std::string_view v) {
       return set_choice(s.fabric_required, v,
                         {{"auto", FabricRequired::Auto}, {"on", FabricRequired::On}, {"off", FabricRequired::Off}},
                         "must be auto, on or off");
     }},
    {"GPU_CHECK_NVIDIA_SMI",
     [](Settings& s, std::string_view v) { return set_absolute_path(s.gpu_check_nvidia_smi, v); }},
    {"GPU_CHECK_SYSFS", [](Settings& s, std::string_view v) { return set_absolute_path(s.gpu_check_sysfs, v); }},
    {"READINESS_PORT",
     [](Settings& s, std::string_view v) {
       // A file name under /dev/virtio-ports.
       if (v.front() == '.' ||
           v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
               std::string_view::npos)
         return problem("must be a port name of letters, digits, '.', '_' and '-'");
       s.readiness_port = v;
       return ok();
     }},
    {"HEARTBEAT_SECONDS",
     [](Settings& s, std::string_view v) {
       auto r = parse_duration(v);
       if (r && r->count() == 0) return problem("must be at least 1 second");
       return assign(std::move(r), s.heartbeat);
     }},
    {"CONSOLE_DEVICE",
     [](Settings& s, std::string_view v) {
       // A device node: the agent opens it for writing, so nothing else.
       if (v.empty()) {
         s.console_device.clear();
         return ok();
       }
       if (v.rfind("/dev/", 0) != 0 || v.size() == 5 || has_control(v) || v.find("/../") != std::string_view::npos ||
           v.find("/./") != std::string_view::npos || v.back() == '/' || v.ends_with("/..") || v.ends_with("/."))
         return problem("must be a device path under /dev (e.g. /dev/ttyS0), or empty to disable the console mirror");
       s.console_device = v;
       return ok();
     },
     true},
    // Registry mirror (operator).
    {"REGISTRY_MIRROR", set_registry_mirror},
    // Which images IMG may name (operator).
    {"ALLOWED_IMAGES",
     [](Settings& s, std::string_view v) { return assign(parse_image_allow_list(v), s.allowed_images); }},
}};

Key const* find_key(std::string_view name) {
  for (auto const& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace

std::string_view gpu_mode_name(GpuMode m) noexcept {
  switch (m) {
    case GpuMode::All: return "all";
    case GpuMode::None: return "none";
    case GpuMode::Auto: return "auto";
  }
  return "all";
}

std::string_view pull_policy_name(PullPolicy p) noexcept {
  switch (p) {
    case PullPolicy::Missing: return "missing";
    case PullPolicy::Always: return "always";
  }
  return "missing";
}

Status check_setting(std::string_view key, std::string_view value) {
  Key const* k = find_key(key);
  if (k == nullptr) return problem(fmt::format("{} is not a configuration key", key));
  if (value.empty()) return ok();  // empty means unset: the default
  Settings scratch;
  return k->set(scratch, value);
}

Result<LoadedSettings> parse_settings(std::string_view text, std::string_view origin) {
  auto entries = parse_config_file(text, origin);
  if (!entries) return entries.error();
  LoadedSettings out;
  out.settings.image = parse_image_ref(kDefaultImage).value();
  out.settings.container_name = kDefaultContainerName;
  // Warnings stay bounded and linear in the file: one per unknown key up to
  // kMaxUnknownWarnings, one per repeated known key (with its count).
  constexpr std::size_t kMaxUnknownWarnings = 20;
  struct Use {
    int count = 0;
    int first_line = 0;
    int last_line = 0;
  };
  std::array<Use, kKeys.size()> uses{};
  std::size_t unknown = 0;
  for (auto const& e : *entries) {
    Key const* key = find_key(e.key);
    if (key == nullptr) {
      if (++unknown <= kMaxUnknownWarnings)
        out.warnings.push_back(fmt::format("{} line {}: unknown key {} (ignored)", origin, e.line, e.key));
      continue;
    }
    Use& use = uses[static_cast<std::size_t>(key - kKeys.data())];
    if (use.count++ == 0) use.first_line = e.line;
    use.last_line = e.line;
    if (e.value.empty() && !key->empty_is_value) continue;  // as the script's ${X:-default}: empty means unset
    if (auto st = key->set(out.settings, e.value); !st)
      return make_error(Reason::ConfigInvalid,
                        fmt::format("{} line {}: {}: {}", origin, e.line, e.key, st.error().message));
  }
  // After every key, in whatever order the file gives IMG and ALLOWED_IMAGES:
  // an image the operator's list does not admit is never pulled nor run.
  if (!out.settings.allowed_images.empty() && !image_allowed(out.settings.image, out.settings.allowed_images)) {
    auto line = [&](std::string_view k) {
      return uses[static_cast<std::size_t>(find_key(k) - kKeys.data())].last_line;
    };
    std::string const img = line("IMG") > 0 ? fmt::format("line {}: IMG", line("IMG")) : "IMG (unset: its default)";
    return make_error(Reason::ConfigInvalid,
                      fmt::format("{} {}: names a repository that ALLOWED_IMAGES (line {}) does not admit", origin, img,
                                  line("ALLOWED_IMAGES")));
  }
  if (unknown > kMaxUnknownWarnings)
    out.warnings.push_back(fmt::format("{}: {} more unknown keys (ignored)", origin, unknown - kMaxUnknownWarnings));
  for (std::size_t k = 0; k < kKeys.size(); ++k)
    if (uses[k].count > 1)
      out.warnings.push_back(fmt::format("{} line {}: {} is set {} times (first on line {}); the last one counts",
                                         origin, uses[k].last_line, kKeys[k].name, uses[k].count, uses[k].first_line));
  return out;
}

Result<LoadedSettings> load_settings(std::string const& path) {
  UniqueFd const fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return parse_settings("", path);  // no file: all defaults, as the script did
    return make_error(Reason::ConfigInvalid, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  std::string text;
  int const err = read_to_end(fd.get(), kMaxFileSize, text);
  if (err == EFBIG) return make_error(Reason::ConfigInvalid, fmt::format("{}: larger than 1 MiB", path));
  if (err != 0) return make_error(Reason::ConfigInvalid, fmt::format("{}: cannot read: {}", path, std::strerror(err)));
  return parse_settings(text, path);
}

}  // namespace cosmicac::config
