#include "host/spec/operator_profile.hpp"

#include "common/file_io.hpp"
#include "common/terminal_text.hpp"
#include "config/image_ref.hpp"
#include "config/settings.hpp"
#include "host/base/yaml_json.hpp"
#include "host/spec/spec_fields.hpp"

#include <fcntl.h>

#include <cerrno>

namespace cosmicac::host {
namespace {

using spec_detail::check_subdomain;
using spec_detail::fail;
using spec_detail::Fields;

// A list of device-plugin resource names (the part after nvidia.com/ or mellanox.com/).
std::vector<std::string> resource_names(Fields& top, std::string const& key) {
  Json const* v = top.get(key);
  if (!v) return {};
  if (!v->is_array() || v->empty()) fail(key, "must be a non-empty list of names");
  std::vector<std::string> names;
  for (auto const& item : *v) {
    if (!item.is_string() || !spec_detail::is_resource_suffix(item.get<std::string>()))
      fail(key, "every entry must be a resource name (letters, digits, '-', '_', '.')");
    names.push_back(item.get<std::string>());
  }
  return names;
}

// allowedImages: the agent's own rule (config/image_ref.cpp), so what is rendered is what it reads.
std::vector<std::string> allowed_images(Fields& top) {
  Json const* v = top.get("allowedImages");
  if (!v) return {};
  if (!v->is_array() || v->empty()) fail("allowedImages", "must be a non-empty list of repositories");
  std::string joined;
  for (auto const& item : *v) {
    if (!item.is_string() || item.get<std::string>().find(',') != std::string::npos)
      fail("allowedImages", "every entry must be one repository, or a prefix of one ending in '/'");
    joined += (joined.empty() ? "" : ",") + item.get<std::string>();
  }
  auto list = config::parse_image_allow_list(joined);
  if (!list) fail("allowedImages", list.error().message);
  return std::move(*list);
}

// registryMirrorCA: PEM certificates and nothing else (it becomes a file the
// guest's dockerd reads), each block's body base64 in whole quanta. Written
// here rather than through a TLS library: the host links none, and this is a
// shape check only; dockerd parses the certificates when it dials the mirror.
std::string pem_certificates(std::string const& key, std::string const& text) {
  constexpr std::size_t kMaxBytes = 64 * 1024;
  constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----", kEnd = "-----END CERTIFICATE-----";
  if (text.size() > kMaxBytes) fail(key, "is over 64 KiB");
  std::string out;
  std::size_t body = 0, blocks = 0, line_no = 0;
  bool inside = false;
  auto bad = [&](std::string const& why) {
    fail(key, "must be PEM certificates only (BEGIN/END CERTIFICATE blocks of base64): line " +
                  std::to_string(line_no) + " " + why);
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t const nl = text.find('\n', pos);
    std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!inside) {
      if (line.empty()) continue;
      if (line != kBegin) bad("is not a BEGIN CERTIFICATE line");
      inside = true;
      body = 0;
    } else if (line == kEnd) {
      if (body == 0 || body % 4 != 0) bad("ends a block whose base64 is not whole");
      inside = false;
      ++blocks;
    } else {
      for (char c : line)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
              c == '='))
          bad("is not base64");
      if (line.empty()) bad("is empty inside a block");
      body += line.size();
    }
    out.append(line).push_back('\n');
  }
  if (inside) fail(key, "must be PEM certificates only: a block has no END CERTIFICATE line");
  if (blocks == 0) fail(key, "must hold at least one certificate");
  while (out.starts_with("\n")) out.erase(0, 1);
  return out;
}

// registryMirror and registryMirrorCA.
void registry_mirror(Fields& top, OperatorProfile& p) {
  if (auto v = top.str("registryMirror")) {
    // The agent's own rule (config/settings.cpp), so what is rendered is what it reads.
    if (auto st = config::check_setting("REGISTRY_MIRROR", *v); !st) fail("registryMirror", st.error().message);
    // The agent also takes http (a VM configured by hand, the VM bed); a profile
    // does not: every pull carries the mirror's login, and behind the mirror is
    // what the organisation's token can read.
    if (!v->starts_with("https://"))
      fail("registryMirror", "must be https://host[:port]: a mirror is reached over TLS");
    p.registry_mirror = *v;
  }
  if (Json const* ca = top.get("registryMirrorCA")) {
    if (!ca->is_string()) fail("registryMirrorCA", "must be a string (PEM certificates)");
    if (p.registry_mirror.empty()) fail("registryMirrorCA", "needs registryMirror (the mirror it is the CA of)");
    p.registry_mirror_ca = pem_certificates("registryMirrorCA", ca->get<std::string>());
  }
}

// workloadKind and runStrategy: what apply makes of a job.
void workload(Fields& top, OperatorProfile& p) {
  if (auto v = top.str("workloadKind")) {
    if (*v == "VirtualMachine") p.workload_kind = WorkloadKind::VirtualMachine;
    else if (*v != "VirtualMachineInstance") fail("workloadKind", "must be VirtualMachine or VirtualMachineInstance");
  }
  if (auto v = top.str("runStrategy")) {
    if (p.workload_kind != WorkloadKind::VirtualMachine)
      fail("runStrategy", "applies only to workloadKind VirtualMachine (a bare VMI is never restarted)");
    bool known = false;
    for (auto const* s : kRunStrategies) known = known || *v == s;
    if (!known)
      fail("runStrategy",
           "must be Always or RerunOnFailure (Manual, Halted and Once start no VMI that apply and "
           "wait could follow)");
    p.run_strategy = *v;
  }
}

// rootImage or goldenImage: where every root disk comes from. One source
// only: a profile naming both would leave which one boots to the reader.
void root_source(Fields& top, OperatorProfile& p) {
  auto image = top.str("rootImage");
  if (image) {
    std::string img = *image;
    if (img.rfind("docker://", 0) == 0) img.erase(0, 9);
    spec_detail::check_image("rootImage", img);
    p.root_image = img;
  }
  auto golden = top.str("goldenImage");
  if (!golden) return;
  if (image) fail("goldenImage", "and rootImage name two root disk sources: keep one");
  auto const slash = golden->find('/');
  if (slash == std::string::npos || !is_dns1123_label(golden->substr(0, slash)))
    fail("goldenImage", "must be namespace/name of a CDI DataSource");
  check_subdomain("goldenImage", golden->substr(slash + 1));
  p.golden_image = DataSourceRef{golden->substr(0, slash), golden->substr(slash + 1)};
}

OperatorProfile build(Json const& doc, std::string origin) {
  OperatorProfile p;
  p.origin = std::move(origin);
  Fields top(doc, "");
  if (auto v = top.str("namespace")) {
    if (!is_dns1123_label(*v)) fail("namespace", "'" + *v + "' is not a valid namespace name");
    p.ns = *v;
  }
  root_source(top, p);
  if (auto v = top.str("pullSecret")) {
    check_subdomain("pullSecret", *v);
    p.pull_secret = *v;
  }
  p.credential_secret = p.pull_secret;
  if (auto v = top.str("credentialSecret")) {
    check_subdomain("credentialSecret", *v);
    p.credential_secret = *v;
  }
  if (auto v = top.str("bootstrapConfigMap")) {
    check_subdomain("bootstrapConfigMap", *v);
    p.bootstrap_configmap = *v;
  }
  if (auto v = top.str("storageClass")) {
    check_subdomain("storageClass", *v);
    p.storage_class = *v;
  }
  if (auto v = top.str("overlayNetwork")) {
    // "name", or "namespace/name" naming the VMI's own namespace (checked
    // against each job's namespace when the two meet).
    auto slash = v->find('/');
    if (slash == std::string::npos) {
      check_subdomain("overlayNetwork", *v);
    } else {
      if (!is_dns1123_label(v->substr(0, slash))) fail("overlayNetwork", "the namespace part is not valid");
      check_subdomain("overlayNetwork", v->substr(slash + 1));
    }
    p.overlay_network = *v;
  }
  registry_mirror(top, p);
  p.allowed_images = allowed_images(top);
  p.gpu_types = resource_names(top, "gpuTypes");
  p.infiniband_names = resource_names(top, "infinibandNames");
  workload(top, p);
  top.no_unknown_keys();
  return p;
}

}  // namespace

const char* workload_kind_name(WorkloadKind kind) {
  return kind == WorkloadKind::VirtualMachine ? "VirtualMachine" : "VirtualMachineInstance";
}

Result<OperatorProfile> parse_operator_profile(std::string_view text, std::string_view origin) {
  auto doc = parse_yaml_or_json(text, origin);
  if (!doc) return doc.error();
  try {
    return build(*doc, std::string(origin));
  } catch (spec_detail::SpecError const& e) {
    return spec_detail::spec_error(origin, e);
  }
}

Result<OperatorProfile> load_operator_profile(std::string const& path) {
  constexpr std::size_t kMaxProfileBytes = 1u << 20;
  std::string const shown = terminal_safe(path);
  UniqueFd const fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) return host_error(Errc::Spec, "cannot open operator profile " + shown);
  std::string text;
  int const err = read_to_end(fd.get(), kMaxProfileBytes, text);
  if (err == EFBIG) return host_error(Errc::Spec, "operator profile " + shown + " is larger than 1 MiB");
  if (err != 0) return host_error(Errc::Spec, "cannot read operator profile " + shown);
  return parse_operator_profile(text, path);
}

}  // namespace cosmicac::host
