// libFuzzer target: an exec credential plugin's stdout (a program the user
// configured, but its output is still untrusted input) in both API versions,
// and the RFC 3339 timestamps in it. Properties: no crash, no exception
// escapes; an accepted credential has a token or a certificate with its key;
// an error is one of the fixed sentences: it never quotes the input (it may
// hold a token).
#include "host/base/rfc3339.hpp"
#include "host/cluster/exec_credential.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::host;
  std::string_view in(reinterpret_cast<char const*>(data), size);
  for (char const* api : {"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}) {
    auto r = parse_exec_credential(in, api);
    if (r) {
      if (r->token.empty() && r->client_cert_pem.empty()) std::abort();
      if (r->client_cert_pem.empty() != r->client_key_pem.empty()) std::abort();
    } else {
      std::string const& m = r.error().message;
      bool fixed = m.rfind("its ", 0) == 0 || m.rfind("it is configured for apiVersion ", 0) == 0;
      if (!fixed || m.find_first_of("\"{}") != std::string::npos || m.size() > 200) std::abort();
    }
  }
  (void)parse_rfc3339(in);
  return 0;
}
