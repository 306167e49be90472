// The host tool's own failure kinds.
//
// The agent's Reason vocabulary is the readiness protocol's: what a guest
// reports about its boot. The host tool fails for other reasons (a command
// line, a spec, an API answer), so it says them in its own words, and one
// function turns a kind into the exit status the CLI documents.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.hpp"

namespace cosmicac::host {

enum class Errc {
  Usage,         // the command line (exit 2)
  Spec,          // the job spec, the operator profile, a value in them (exit 2)
  Kubeconfig,    // the kubeconfig or what it names (server URL, credential plugin settings)
  Unauthorized,  // 401, or the credential plugin gave no usable credential
  Forbidden,     // 403: RBAC or admission refused
  NotFound,      // 404: the object, its namespace or its API is not there
  Invalid,       // a name or value cosmicac-vmi will not put into a request path
  Conflict,      // 409, or a live object that differs from the rendered one / is not ours
  Timeout,       // the wait ran out
  Server,        // the API server's answer: 5xx, 429, another status, a reply we cannot read
  Transport,     // no HTTP answer: DNS, TCP, TLS
  Failed,        // the VMI or its bootstrap failed
  Internal,      // a bug or an impossible state in cosmicac-vmi
};

std::string_view errc_name(Errc kind) noexcept;

struct HostError {
  Errc kind = Errc::Internal;
  std::string message;     // for people: names the thing, never a secret value
  bool transient = false;  // true: retrying the same call may succeed
};

HostError host_error(Errc kind, std::string message, bool transient = false);

// The documented exit status for a failure of this kind: 2 for a usage or
// spec error, 1 for every other failure (0 is success, never an error).
int exit_code(Errc kind) noexcept;

template <class T>
using Result = cosmicac::Result<T, HostError>;
using Status = Result<Ok>;
inline Status ok() { return Ok{}; }
using HostErrorException = BasicErrorException<HostError>;

// The boundary with config/, common/ and readiness/ (which speak the agent's
// Error): their failure becomes a host failure of the given kind, message and
// transience kept.
HostError from_guest(Error const& e, Errc kind);
template <class T>
Result<T> from_guest(cosmicac::Result<T> r, Errc kind) {
  if (!r) return from_guest(r.error(), kind);
  return std::move(r).value();
}

template <class Ch, class Tr>
std::basic_ostream<Ch, Tr>& operator<<(std::basic_ostream<Ch, Tr>& os, HostError const& e) {
  return os << errc_name(e.kind) << ": " << e.message;
}

}  // namespace cosmicac::host
