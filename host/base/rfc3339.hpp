// The timestamps Kubernetes writes (metadata.creationTimestamp, an
// ExecCredential's expirationTimestamp, the kubelet's log line prefixes).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace cosmicac::host {

// RFC 3339 ("2006-01-02T15:04:05Z", fractions and offsets allowed; the
// fraction is dropped). None when the text is not one. Years before 1970 read
// as the epoch, after 2261 as the clock's maximum.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

}  // namespace cosmicac::host
