#include "common/ready_probe.hpp"

#include <algorithm>

namespace cosmicac {
namespace {

constexpr std::string_view kHttp = "http:";
constexpr std::string_view kTcp = "tcp:";

}  // namespace

std::string probe_text(ReadyProbe const& probe) {
  switch (probe.kind) {
    case ReadyProbe::Kind::None: return {};
    case ReadyProbe::Kind::Http: return std::string(kHttp) + std::to_string(probe.port) + probe.path;
    case ReadyProbe::Kind::Tcp: return std::string(kTcp) + std::to_string(probe.port);
  }
  return {};
}

Status parse_probe_text(std::string_view v, ReadyProbe& p) {
  auto bad = [] {
    return make_error(Reason::ConfigInvalid, "must be http:PORT/PATH or tcp:PORT (port 1-65535, an absolute path)");
  };
  if (v.starts_with(kHttp)) p.kind = ReadyProbe::Kind::Http;
  else if (v.starts_with(kTcp)) p.kind = ReadyProbe::Kind::Tcp;
  else return bad();
  v.remove_prefix(p.kind == ReadyProbe::Kind::Http ? kHttp.size() : kTcp.size());
  std::size_t const digits = std::min(v.find_first_not_of("0123456789"), v.size());
  p.port = 0;
  for (std::size_t i = 0; i < digits && i < 6; ++i) p.port = p.port * 10 + static_cast<unsigned>(v[i] - '0');
  p.path = v.substr(digits);
  if (digits == 0 || digits > 5 || p.port == 0 || p.port > 65535) return bad();
  if (p.kind == ReadyProbe::Kind::Tcp) return p.path.empty() ? ok() : bad();
  if (p.path.empty() || p.path.front() != '/' || p.path.size() > kMaxProbePathLength ||
      p.path.find_first_not_of(kProbePathCharacters) != std::string::npos)
    return bad();
  return ok();
}

}  // namespace cosmicac
