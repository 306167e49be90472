// Kubernetes' rules for names (apimachinery's IsDNS1123Label,
// IsDNS1123Subdomain, IsValidLabelValue), once for the host: the job spec,
// the operator profile, the API paths and `wait`'s reading of the API's
// answers all ask these, so a name one accepts is never refused by another
// (a spec's "a..b" passed the spec's own looser check and failed only at
// apply, in the path builder).
#pragma once

#include <cstddef>
#include <string_view>

namespace cosmicac::host {

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most `max` (63) characters: namespaces, a job's name.
bool is_dns1123_label(std::string_view s, std::size_t max = 63);
// Dot-separated DNS-1123 labels, at most 253 characters: object names (Secrets, ConfigMaps, …).
bool is_dns1123_subdomain(std::string_view s);
// Empty, or ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] of at most 63: label selector values (a uid).
bool is_label_value(std::string_view s);

}  // namespace cosmicac::host
