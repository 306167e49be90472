// libFuzzer target: what dockerd (and, through it, the registry) sends back
// is untrusted: error bodies, the pull stream, multiplexed container logs,
// API versions, /info, container times and the spec label read from an
// existing container.
// Properties: no crash, no exception, and the aggregated progress never
// reports more layers done than seen.
#include "container/spec.hpp"
#include "engine/api_version.hpp"
#include "engine/containers.hpp"
#include "engine/http_error.hpp"
#include "engine/log_frames.hpp"
#include "engine/pull_progress.hpp"
#include "engine/registry_error.hpp"
#include "engine/system.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace cosmicac;
  std::string_view const in(reinterpret_cast<char const*>(data), size);

  (void)engine::error_message(in);
  (void)engine::classify_pull_error(in, size == 0 ? 500 : 400 + data[0] % 200);

  engine::ProgressAggregator progress;
  std::size_t start = 0;
  while (start <= in.size()) {
    auto const nl = in.find('\n', start);
    auto const line = in.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    (void)progress.feed(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  auto const snap = progress.snapshot();
  if (snap.layers_done > snap.layers || snap.layers < 0) std::abort();

  auto const logs = engine::demultiplex_logs(in);
  (void)engine::last_lines(logs, 1 + (size % 50));

  // Two dotted versions: the input split at its first ','.
  auto const comma = in.find(',');
  auto const a = in.substr(0, comma);
  auto const b = comma == std::string_view::npos ? std::string_view{} : in.substr(comma + 1);
  int const ab = engine::compare_api_versions(a, b);
  if (ab != -engine::compare_api_versions(b, a)) std::abort();
  if (engine::compare_api_versions(a, a) != 0) std::abort();
  (void)engine::negotiate_api_version(a, b, "1.43");

  (void)engine::parse_system_info(in);
  (void)engine::parse_docker_time(std::string(in));

  container::ContainerSpec spec;
  spec.name = "inference";
  spec.image = "ghcr.io/example/model:v1";
  spec.env = {"A=1", "B=two"};
  (void)container::changed_fields(std::string(in), container::spec_label(spec));
  return 0;
}
