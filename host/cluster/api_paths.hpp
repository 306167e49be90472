// The REST paths cosmicac-vmi requests, built in one place: for the
// resources it uses (host/base/api_resources.hpp, the api:: constants), one
// builder that checks each name as Kubernetes does (a namespace is a DNS-1123
// label, an object's name a DNS-1123 subdomain) and percent-escapes every
// segment and query value. A name taken from an
// API answer (a list item, a volume, a pod) is checked, with the field it
// came from, before it goes into a path: `../x` or `a?b` never reaches the
// server as another path.
#pragma once

#include "host/base/api_resources.hpp"  // the resources (api::) these paths are built for
#include "host/base/host_error.hpp"
#include "host/base/kube_names.hpp"  // the name rules these paths are built with

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cosmicac::host {

// The API server's version (a path outside the resource tree).
inline constexpr const char* kVersionPath = "/version";
// KubeVirt's API group's discovery document: the resources its CRDs serve
// (readable by any authenticated user, as every discovery path is).
inline constexpr const char* kKubeVirtDiscoveryPath = "/apis/kubevirt.io/v1";

// An error naming `field` (where the value came from: "metadata.name of the
// launcher pod in the pod list") and the value, terminal-safe, when it is not
// a valid object name / namespace / label value.
Status check_name(std::string_view name, std::string const& field);
Status check_namespace(std::string_view ns, std::string const& field);
Status check_label_value(std::string_view value, std::string const& field);

// Every byte but A-Z a-z 0-9 - . _ ~ as %XX.
std::string percent_escape(std::string_view s);

using Query = std::vector<std::pair<std::string_view, std::string>>;

// "/apis/GROUP/VERSION[/namespaces/NS]/PLURAL[/NAME[/SUBRESOURCE]][?k=v&…]".
// ns: required for a namespaced resource, refused for a cluster-scoped one;
// name: empty for the collection; every segment and query value escaped.
// An error (no path) when the namespace or the name is not valid.
Result<std::string> api_path(ApiResource const& r, std::string_view ns, std::string_view name = {},
                             std::string_view subresource = {}, Query const& query = {});

}  // namespace cosmicac::host
