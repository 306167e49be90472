#include "readiness/gpu_health.hpp"

#include "common/utf8.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string_view>

namespace cosmicac::readiness {
namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

constexpr std::size_t kMaxEntries = 64;
constexpr std::size_t kMaxText = 256;
constexpr std::array<std::string_view, 4> kVerdicts{"healthy", "waiting", "failed", "skipped"};

// At most kMaxText bytes, cut at a UTF-8 character's start so that it reads back within the bound.
std::string capped(std::string const& s) { return std::string(utf8_cut(s, kMaxText)); }

Error bad(std::string const& what) { return make_error(Reason::Internal, "gpu_health: " + what); }

// A string member (absent reads as empty), at most kMaxText bytes.
bool text(json const& o, char const* key, std::string& out, std::string& err) {
  auto it = o.find(key);
  if (it == o.end()) return true;
  if (!it->is_string() || it->get_ref<std::string const&>().size() > kMaxText) {
    err = std::string(key) + " is not a string of at most 256 bytes";
    return false;
  }
  out = it->get<std::string>();
  return true;
}

bool number(json const& o, char const* key, unsigned& out, std::string& err) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() > 0xffff) {
    err = std::string(key) + " is not a number from 0 to 65535";
    return false;
  }
  out = it->get<unsigned>();
  return true;
}

// The array under `key` (absent reads as empty), each entry read by `read`.
template <class T, class Read>
bool entries(json const& o, char const* key, std::vector<T>& out, std::string& err, Read read) {
  auto it = o.find(key);
  if (it == o.end()) return true;
  if (!it->is_array() || it->size() > kMaxEntries) {
    err = std::string(key) + " is not an array of at most 64 entries";
    return false;
  }
  for (auto const& item : *it) {
    T t;
    if (!item.is_object()) {
      err = std::string(key) + " entry is not an object";
      return false;
    }
    if (!read(item, t, err)) return false;
    out.push_back(std::move(t));
  }
  return true;
}

bool read_gpu(json const& o, GpuHealthGpu& g, std::string& err) {
  return number(o, "index", g.index, err) && text(o, "bus_id", g.bus_id, err) && text(o, "fabric", g.fabric, err) &&
         text(o, "ecc", g.ecc, err);
}

bool read_port(json const& o, GpuHealthPort& p, std::string& err) {
  return text(o, "device", p.device, err) && number(o, "port", p.port, err) && text(o, "state", p.state, err);
}

}  // namespace

ojson to_json(GpuHealth const& h) {
  ojson j;
  j["verdict"] = capped(h.verdict);
  if (h.reason) j["reason"] = reason_name(*h.reason);
  if (!h.message.empty()) j["message"] = capped(h.message);
  ojson gpus = ojson::array();
  for (auto const& g : h.gpus)
    if (gpus.size() < kMaxEntries)
      gpus.push_back(ojson{{"index", g.index},
                           {"bus_id", capped(g.bus_id)},
                           {"fabric", capped(g.fabric)},
                           {"ecc", capped(g.ecc)}});
  j["gpus"] = std::move(gpus);
  ojson ports = ojson::array();
  for (auto const& p : h.ib_ports)
    if (ports.size() < kMaxEntries)
      ports.push_back(ojson{{"device", capped(p.device)}, {"port", p.port}, {"state", capped(p.state)}});
  j["ib_ports"] = std::move(ports);
  return j;
}

Result<GpuHealth> gpu_health_from_json(json const& j) {
  if (!j.is_object()) return bad("not an object");
  GpuHealth h;
  std::string err;
  std::string reason;
  if (!text(j, "verdict", h.verdict, err) || !text(j, "reason", reason, err) || !text(j, "message", h.message, err) ||
      !entries(j, "gpus", h.gpus, err, read_gpu) || !entries(j, "ib_ports", h.ib_ports, err, read_port))
    return bad(err);
  bool known = false;
  for (auto v : kVerdicts) known = known || v == h.verdict;
  if (!known) return bad("unknown verdict");
  if (!reason.empty()) {
    Reason r = Reason::Internal;
    if (!reason_from_name(reason, r)) r = Reason::Internal;
    h.reason = r;
  }
  return h;
}

}  // namespace cosmicac::readiness
