// libFuzzer target: resolve_kubeconfig on one or two kubeconfig files (the
// input split at the first "\n---8<---\n"), with the current context and a
// named one. Properties: no crash, no exception escapes; an accepted config
// has a server without a trailing slash and never both a certificate and no
// key (or the reverse).
#include "host/cluster/kubeconfig.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac::host;
  std::string_view in(reinterpret_cast<char const*>(data), size);
  std::vector<KubeconfigFile> files;
  constexpr std::string_view kCut = "\n---8<---\n";
  if (auto cut = in.find(kCut); cut != std::string_view::npos) {
    files.push_back({"/fuzz/a/config", std::string(in.substr(0, cut))});
    files.push_back({"/fuzz/b/config", std::string(in.substr(cut + kCut.size()))});
  } else {
    files.push_back({"/fuzz/a/config", std::string(in)});
  }
  for (std::string context : {"", "ctx"}) {
    auto r = resolve_kubeconfig(files, context);
    if (!r) continue;
    if (!r->server.empty() && r->server.back() == '/') std::abort();
    bool cert = !r->client_cert_pem.empty() || !r->client_cert_file.empty();
    bool key = !r->client_key_pem.empty() || !r->client_key_file.empty();
    if (cert != key) std::abort();
    if (r->exec && (r->exec->command.empty() || r->exec->interactive_mode.empty())) std::abort();
  }
  (void)base64_decode(in);
  return 0;
}
