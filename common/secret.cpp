#include "common/secret.hpp"

#include <string.h>  // explicit_bzero
#include <sys/prctl.h>
#include <sys/resource.h>

namespace cosmicac {

void wipe(std::string& s) noexcept {
  // Touch the whole allocation: earlier, longer contents may sit past size().
  s.resize(s.capacity());
  if (!s.empty()) explicit_bzero(s.data(), s.size());
  s.clear();
}

Secret::Secret(Secret&& other) noexcept : value_(std::move(other.value_)) { other.clear(); }

Secret& Secret::operator=(Secret&& other) noexcept {
  if (this != &other) {
    clear();
    value_ = std::move(other.value_);
    other.clear();
  }
  return *this;
}

Secret::~Secret() { clear(); }

void Secret::clear() noexcept { wipe(value_); }

void harden_process_against_dumps() noexcept {
  rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

}  // namespace cosmicac
