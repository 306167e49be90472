// What `cosmicac-vmi wait`, `list`/`get` and `apply` read from the API
// server (VMI, DataVolume, pod list, event list, Status bodies — any JSON)
// and print through the terminal escaper: no input crashes the views, and the
// escaper's output never holds a byte a terminal acts on.
#include "common/terminal_text.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/api_status.hpp"
#include "host/verbs/list.hpp"
#include "host/verbs/rendered_diff.hpp"
#include "host/verbs/request.hpp"
#include "host/verbs/views.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

// A server's message as server_text shows it: no byte a terminal acts on but
// the newlines between lines, and every further line indented by four spaces
// (none can pass for a line of cosmicac-vmi's own).
void check_server_text(std::string const& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto const c = static_cast<unsigned char>(out[i]);
    if (c == '\n' && out.compare(i + 1, 4, "    ") == 0) continue;
    if (c < 0x20 || c == 0x7f) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  std::string_view text(reinterpret_cast<char const*>(data), size);
  for (unsigned char c : cosmicac::terminal_safe(text))
    if (c < 0x20 || c == 0x7f) std::abort();
  check_server_text(cosmicac::host::server_text(text));
  auto j = cosmicac::host::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto vmi = cosmicac::host::view_vmi(j);
  auto dv = cosmicac::host::view_datavolume(j);
  auto pod = cosmicac::host::view_pod(j);
  if (auto p = cosmicac::host::pick_launcher_pod(j)) (void)cosmicac::host::view_pod(*p);
  (void)cosmicac::host::latest_probe_failure(j);
  auto row = cosmicac::host::vmi_row(j, std::chrono::system_clock::now());
  std::string const table = cosmicac::host::format_vmi_table({row});
  check_server_text(cosmicac::host::api_error("x", cosmicac::host::HttpResponse{422, std::string(text)}).message);
  for (auto const* line : {&vmi.line, &dv.line, &pod.line, &pod.unschedulable_why})
    for (unsigned char c : *line)
      if (c < 0x20 || c == 0x7f) std::abort();
  for (unsigned char c : table)
    if ((c < 0x20 && c != '\n') || c == 0x7f) std::abort();
  // Names from the answer go into paths: an accepted one stays one plain segment.
  std::vector<std::string> names = vmi.datavolumes;
  names.push_back(pod.name);
  for (auto const& name : names) {
    auto path = cosmicac::host::api_path(cosmicac::host::api::kPods, "ns", name, "log");
    if (path && (path->find_first_of("?#%") != std::string::npos || name.find('/') != std::string::npos ||
                 name == "." || name == ".."))
      std::abort();
  }
  // apply's comparison of a rendered spec with whatever the server holds.
  static cosmicac::host::Json const rendered = cosmicac::host::Json::parse(
      R"({"domain":{"cpu":{"cores":64},"resources":{"requests":{"memory":"512Gi"}}},"volumes":[{"name":"rootdisk"}]})");
  (void)cosmicac::host::rendered_differences(rendered, j, "spec");
  return 0;
}
