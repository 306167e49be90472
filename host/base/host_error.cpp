#include "host/base/host_error.hpp"

namespace cosmicac::host {

std::string_view errc_name(Errc kind) noexcept {
  switch (kind) {
    case Errc::Usage: return "usage";
    case Errc::Spec: return "spec";
    case Errc::Kubeconfig: return "kubeconfig";
    case Errc::Unauthorized: return "unauthorized";
    case Errc::Forbidden: return "forbidden";
    case Errc::NotFound: return "not-found";
    case Errc::Invalid: return "invalid";
    case Errc::Conflict: return "conflict";
    case Errc::Timeout: return "timeout";
    case Errc::Server: return "server";
    case Errc::Transport: return "transport";
    case Errc::Failed: return "failed";
    case Errc::Internal: return "internal";
  }
  return "internal";
}

HostError host_error(Errc kind, std::string message, bool transient) {
  return HostError{kind, std::move(message), transient};
}

int exit_code(Errc kind) noexcept {
  constexpr int kFailure = 1, kUsage = 2;
  switch (kind) {
    case Errc::Usage:
    case Errc::Spec: return kUsage;
    default: return kFailure;
  }
}

HostError from_guest(Error const& e, Errc kind) { return HostError{kind, e.message, e.transient}; }

}  // namespace cosmicac::host
