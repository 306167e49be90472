// Kubernetes resource quantities ("256Gi", "1.5T", "500M"), as the API server
// reads them (k8s.io/apimachinery resource.Quantity grammar). Used to validate
// sizes in the job spec before anything reaches the cluster.
#pragma once

#include "host/base/host_error.hpp"

#include <string_view>

namespace cosmicac::host {

// The value in base units (bytes for storage/memory). Errors (Errc::Spec)
// say what part of the text is wrong.
Result<long double> parse_quantity(std::string_view text);

inline constexpr long double kGiB = 1024.0L * 1024.0L * 1024.0L;

}  // namespace cosmicac::host
