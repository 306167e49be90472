// The timestamps Kubernetes writes (metadata.creationTimestamp, an
// ExecCredential's expirationTimestamp, the kubelet's log line prefixes).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace cosmicac::host {

// RFC 3339 ("2006-01-02T15:04:05Z", fractions and offsets allowed; the
// fraction is dropped). None when the text is not one. Years before 1970 read
// as the epoch, after 2261 as the clock's maximum.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

// A metav1.MicroTime as kube-apiserver reads it ("2006-01-02T15:04:05.000000Z":
// Go's RFC3339Micro, exactly six fraction digits, UTC): a Lease's acquireTime
// and renewTime. Times before 1970 are written as the epoch.
std::string format_rfc3339_micro(std::chrono::system_clock::time_point t);

}  // namespace cosmicac::host
