// A string that holds a secret (the registry token) and nothing else.
//
// It is never printed (no formatter, no stream operator), never copied
// implicitly, and its bytes are wiped with explicit_bzero when it dies, so the
// token lives only as long as the code that needs it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cosmicac {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  Secret(Secret const&) = delete;
  Secret& operator=(Secret const&) = delete;
  Secret(Secret&& other) noexcept;
  Secret& operator=(Secret&& other) noexcept;
  ~Secret();

  // Explicit, greppable access to the bytes.
  std::string_view reveal() const noexcept { return value_; }
  bool empty() const noexcept { return value_.empty(); }
  std::size_t size() const noexcept { return value_.size(); }
  void clear() noexcept;

 private:
  std::string value_;
};

// Wipes a std::string's whole buffer (capacity, not just size) and empties it.
void wipe(std::string& s) noexcept;

// Process-wide hardening for a process that will hold secrets: no core dumps,
// not ptrace-attachable by non-root, not dumpable.
void harden_process_against_dumps() noexcept;

}  // namespace cosmicac
