// Errors as values that carry their reason.
//
// Every failure that crosses a module boundary is an Error: a reason from the
// readiness vocabulary (what the host sees), a human message (never a secret),
// and whether retrying can help. The agent reports it, the journal records it,
// the exit code follows from it.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace cosmicac {

// The fixed failure vocabulary of the readiness protocol (docs/events.md, "Failure reasons").
// Append only: hosts match on these names.
enum class Reason {
  ConfigInvalid,          // config-invalid
  NoDataDisk,             // no-data-disk
  DiskHasForeignContent,  // disk-has-foreign-content
  DiskError,              // disk-error: an I/O or tool failure while preparing the disk
  CredIsoMissing,         // cred-iso-missing
  CredInvalid,            // cred-invalid: the ISO is there but a key file is bad
  Auth,                   // auth
  ImageNotFound,          // image-not-found
  RegistryUnreachable,    // registry-unreachable
  DockerUnavailable,      // docker-unavailable
  GpuUnavailable,         // gpu-unavailable
  ContainerExited,        // container-exited
  ContainerError,         // container-error: dockerd refused to create/start it
  Internal,               // internal
  // The GPU health check (gpu/): each names the GPU (index, bus id) or the port.
  GpuCount,   // gpu-count: fewer GPUs than the VM was given
  GpuDriver,  // gpu-driver: nvidia-smi absent, failing, or its answer unreadable
  GpuFabric,  // gpu-fabric: NVLink fabric registration failed or never completed
  GpuEcc,     // gpu-ecc: uncorrectable ECC errors, a pending or failed row remap, pages pending retirement
  GpuXid,     // gpu-xid: an Xid of a GPU that needs a reset in the kernel log since boot
  IbCount,    // ib-count: fewer InfiniBand devices than the VM was given
  IbLink,     // ib-link: an InfiniBand port that is not Active
  // READY_PROBE never passed within HEALTH_TIMEOUT, or stopped passing after ready.
  ContainerUnready,  // container-unready
  // The data disk grew but what is on it is not ours to grow (not our single
  // partition, errors recorded in its filesystem) or growing it failed.
  DiskGrow,  // disk-grow
};

std::string_view reason_name(Reason reason) noexcept;
// Inverse of reason_name; false when the name is not in the vocabulary.
bool reason_from_name(std::string_view name, Reason& out) noexcept;

struct Error {
  Reason reason = Reason::Internal;
  std::string message;     // for people: names the thing, never a secret value
  bool transient = false;  // true: retrying the same call may succeed
};

Error make_error(Reason reason, std::string message, bool transient = false);

// For test frameworks and diagnostics (templated: no iostreams in the agent
// unless something prints an Error to a stream).
template <class Ch, class Tr>
std::basic_ostream<Ch, Tr>& operator<<(std::basic_ostream<Ch, Tr>& os, Error const& e) {
  return os << reason_name(e.reason) << ": " << e.message;
}

// Exception type thrown by Result::value() on an error; carries the error.
// E is any error type with a `message` string (the agent's Error, the host's own).
template <class E>
struct BasicErrorException : std::exception {
  explicit BasicErrorException(E e) : error(std::move(e)) {}
  const char* what() const noexcept override { return error.message.c_str(); }
  E error;
};
using ErrorException = BasicErrorException<Error>;

// A value or an error, by default the agent's Error (the host tool brings its
// own error type). (std::expected is C++23; boost::system::result drags an
// unconstrained operator<< that breaks test frameworks' printing. This is the
// small subset we use.)
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    check();
    return std::get<0>(v_);
  }
  T const& value() const& {
    check();
    return std::get<0>(v_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  T const& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  T const* operator->() const { return &value(); }

  E const& error() const& { return std::get<1>(v_); }
  E&& error() && { return std::get<1>(std::move(v_)); }

 private:
  void check() const {
    if (v_.index() != 0) throw BasicErrorException<E>(std::get<1>(v_));
  }
  std::variant<T, E> v_;
};

// Success without a value.
struct Ok {};
using Status = Result<Ok>;
inline Status ok() { return Ok{}; }

}  // namespace cosmicac
