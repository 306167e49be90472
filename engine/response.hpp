// What dockerd answered: the status and, where kept, the body. Its own header
// so that the code judging an answer (http_error.hpp, registry_error.hpp)
// needs no transport.
#pragma once

#include <string>

namespace cosmicac::engine {

struct Response {
  long status = 0;
  std::string body;  // for streams: only kept when the status is not 2xx
};

}  // namespace cosmicac::engine
