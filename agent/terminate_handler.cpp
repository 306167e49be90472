// The static agent's std::terminate message (linked into the static release
// build only: cmake/CosmicacFlags.cmake, agent/CMakeLists.txt).
//
// libstdc++'s default terminate handler, __gnu_cxx::__verbose_terminate_handler,
// demangles the type of the uncaught exception, and so links the whole C++
// demangler (cp-demangle.o, ~46 KB raw, ~15 KB packed) into a binary that must
// fit a ConfigMap and whose commands already catch every exception
// (agent/internal_error.cpp). Defining the handler here keeps libstdc++'s
// vterminate.o, and the demangler with it, out of the static link. The message
// keeps its content, the exception's type (mangled: `c++filt -t` reads it) and
// its what(), and the process still aborts (SIGABRT, as before).
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp): libstdc++'s own name, on purpose
namespace __gnu_cxx {

void __verbose_terminate_handler() {  // NOLINT(bugprone-reserved-identifier): declared in <exception>
  static bool terminating = false;
  if (terminating) {  // what() threw, or a destructor during the report did
    std::fputs("terminate called recursively\n", stderr);
    std::abort();
  }
  terminating = true;
  std::type_info const* type = abi::__cxa_current_exception_type();
  if (type == nullptr) {
    std::fputs("terminate called without an active exception\n", stderr);
    std::abort();
  }
  std::fprintf(stderr, "terminate called after throwing an instance of '%s'\n", type->name());
  try {
    throw;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "  what():  %s\n", e.what());
  } catch (...) {  // not a std::exception: the type is all there is to say
  }
  std::abort();
}

}  // namespace __gnu_cxx
