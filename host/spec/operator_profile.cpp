#include "host/spec/operator_profile.hpp"

#include "common/file_io.hpp"
#include "config/image_ref.hpp"
#include "config/settings.hpp"
#include "host/base/yaml_json.hpp"
#include "host/spec/spec_fields.hpp"
#include "readiness/terminal_text.hpp"

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

OperatorProfile build(Json const& doc, std::string origin) {
  OperatorProfile p;
  p.origin = std::move(origin);
  Fields top(doc, "");
  if (auto v = top.str("namespace")) {
    if (!spec_detail::is_dns_label(*v)) fail("namespace", "'" + *v + "' is not a valid namespace name");
    p.ns = *v;
  }
  if (auto image = top.str("rootImage")) {
    std::string img = *image;
    if (img.rfind("docker://", 0) == 0) img.erase(0, 9);
    spec_detail::check_image("rootImage", img);
    p.root_image = img;
  }
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
      if (!spec_detail::is_dns_label(v->substr(0, slash))) fail("overlayNetwork", "the namespace part is not valid");
      check_subdomain("overlayNetwork", v->substr(slash + 1));
    }
    p.overlay_network = *v;
  }
  if (auto v = top.str("registryMirror")) {
    // The agent's own rule (config/settings.cpp), so what is rendered is what it reads.
    if (auto st = config::check_setting("REGISTRY_MIRROR", *v); !st) fail("registryMirror", st.error().message);
    p.registry_mirror = *v;
  }
  p.allowed_images = allowed_images(top);
  p.gpu_types = resource_names(top, "gpuTypes");
  p.infiniband_names = resource_names(top, "infinibandNames");
  top.no_unknown_keys();
  return p;
}

}  // namespace

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
  std::string const shown = readiness::terminal_safe(path);
  UniqueFd const fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) return host_error(Errc::Spec, "cannot open operator profile " + shown);
  std::string text;
  int const err = read_to_end(fd.get(), kMaxProfileBytes, text);
  if (err == EFBIG) return host_error(Errc::Spec, "operator profile " + shown + " is larger than 1 MiB");
  if (err != 0) return host_error(Errc::Spec, "cannot read operator profile " + shown);
  return parse_operator_profile(text, path);
}

}  // namespace cosmicac::host
