#include "engine/curl_memory.hpp"

#include <curl/curl.h>

#include <malloc.h>
#include <string.h>  // explicit_bzero

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cosmicac::engine {
namespace {

// libcurl copies what it sends (the X-Registry-Auth header, the /auth body
// with the token) into its own buffers and frees them without wiping. Every
// libcurl allocation goes through these: a block is zeroed, all of it, before
// it goes back to malloc, so no freed copy of a secret lingers in the heap.
void zero_and_free(void* p) {
  if (p == nullptr) return;
  explicit_bzero(p, malloc_usable_size(p));
  std::free(p);
}

void* curl_malloc(std::size_t n) { return std::malloc(n); }
void* curl_calloc(std::size_t n, std::size_t size) { return std::calloc(n, size); }

// Never realloc in place: glibc may move the block and free the old one unwiped.
void* curl_realloc(void* p, std::size_t n) {
  if (p == nullptr) return std::malloc(n);
  void* fresh = std::malloc(n == 0 ? 1 : n);
  if (fresh == nullptr) return nullptr;  // the old block stays valid, as realloc's contract says
  std::memcpy(fresh, p, std::min(n, malloc_usable_size(p)));
  zero_and_free(p);
  return fresh;
}

char* curl_strdup(const char* s) {
  std::size_t const n = std::strlen(s) + 1;
  auto* copy = static_cast<char*>(std::malloc(n));
  if (copy != nullptr) std::memcpy(copy, s, n);
  return copy;
}

}  // namespace

void init_curl_once() {
  // Before any other libcurl call: libcurl takes its allocator once, globally.
  static std::once_flag once;
  std::call_once(once, [] {
    curl_global_init_mem(CURL_GLOBAL_NOTHING,  // no TLS over a unix socket
                         curl_malloc, zero_and_free, curl_realloc, curl_strdup, curl_calloc);
  });
}

}  // namespace cosmicac::engine
