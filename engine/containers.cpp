#include "engine/containers.hpp"

#include "engine/http_error.hpp"
#include "engine/log_frames.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <ctime>

namespace cosmicac::engine {
namespace {
using json = nlohmann::json;

Error container_error(std::string_view what, Response const& r) {
  Error e = http_error(Reason::ContainerError, what, r);
  if (e.message.find("could not select device driver") != std::string::npos) e.reason = Reason::GpuUnavailable;
  if (r.status == 404 && e.message.find("No such image") != std::string::npos) e.reason = Reason::ImageNotFound;
  return e;
}

// j[key], or null when j is not an object or has no such key.
json const& member(json const& j, const char* key) {
  static json const absent;
  if (!j.is_object()) return absent;
  auto const it = j.find(key);
  return it == j.end() ? absent : *it;
}
std::string string_of(json const& j, const char* key, const char* fallback = "") {
  json const& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : std::string(fallback);
}
bool bool_of(json const& j, const char* key) {
  json const& v = member(j, key);
  return v.is_boolean() && v.get<bool>();
}

ContainerState state_of(json const& s) {
  ContainerState st;
  st.running = bool_of(s, "Running");
  st.restarting = bool_of(s, "Restarting");
  st.status = string_of(s, "Status", "?");
  if (json const& code = member(s, "ExitCode"); code.is_number_integer()) st.exit_code = code.get<long long>();
  st.started_at = parse_docker_time(string_of(s, "StartedAt"));
  if (json const& health = member(s, "Health"); health.is_object()) st.health = string_of(health, "Status");
  return st;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_docker_time(std::string const& text) {
  std::tm tm{};
  int frac_digits = 0;
  long long frac = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::size_t const dot = text.find('.');
  if (dot != std::string::npos)
    for (std::size_t i = dot + 1;
         i < text.size() && frac_digits < 9 && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++frac_digits)
      frac = frac * 10 + (text[i] - '0');
  while (frac_digits++ < 9) frac *= 10;
  std::time_t const secs = timegm(&tm);
  if (secs <= 0) return std::nullopt;  // "0001-01-01T00:00:00Z": never started
  return std::chrono::system_clock::from_time_t(secs) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(frac));
}

Result<std::optional<ContainerDetails>> inspect_container(Client& client, std::string const& name_or_id) {
  auto r = client.request(Request{.path = "/containers/" + name_or_id + "/json"});
  if (!r) return r.error();
  if (r->status == 404) return std::optional<ContainerDetails>{};
  if (r->status != 200) return container_error("inspecting container " + name_or_id, *r);
  json const j = json::parse(r->body, nullptr, false);
  if (!j.is_object()) return make_error(Reason::ContainerError, "inspecting container " + name_or_id + ": not JSON");
  ContainerDetails d;
  d.id = string_of(j, "Id");
  if (json const& labels = member(member(j, "Config"), "Labels"); labels.is_object())
    for (auto const& [k, v] : labels.items())
      if (v.is_string()) d.labels[k] = v.get<std::string>();
  d.state = state_of(member(j, "State"));
  json const& net = member(j, "NetworkSettings");
  d.ip_address = string_of(net, "IPAddress");
  if (json const& nets = member(net, "Networks"); d.ip_address.empty() && nets.is_object())
    for (auto const& [n, v] : nets.items())
      if (d.ip_address.empty()) d.ip_address = string_of(v, "IPAddress");
  return std::optional<ContainerDetails>(std::move(d));
}

Result<CreatedContainer> create_container(Client& client, std::string const& name, std::string const& body_json) {
  auto r = client.request(
      Request{.method = "POST", .path = "/containers/create", .query = {{"name", name}}, .body = body_json});
  if (!r) return r.error();
  if (r->status != 201) return container_error("creating container " + name, *r);
  json const j = json::parse(r->body, nullptr, false);
  CreatedContainer created{.id = string_of(j, "Id")};
  if (created.id.empty())
    return make_error(Reason::ContainerError, "creating container " + name + ": no Id in the answer");
  if (json const& w = member(j, "Warnings"); w.is_array())
    for (auto const& x : w)
      if (x.is_string()) created.warnings.push_back(x.get<std::string>());
  return created;
}

Status start_container(Client& client, std::string const& id, std::string_view name) {
  auto r = client.request(Request{.method = "POST", .path = "/containers/" + id + "/start"});
  if (!r) return r.error();
  if (r->status != 204 && r->status != 304) return container_error("starting container " + std::string(name), *r);
  return ok();
}

Status stop_container(Client& client, std::string const& id, std::string_view name, int timeout_seconds) {
  auto r = client.request(Request{.method = "POST",
                                  .path = "/containers/" + id + "/stop",
                                  .query = {{"t", std::to_string(timeout_seconds)}}});
  if (!r) return r.error();
  if (r->status != 204 && r->status != 304 && r->status != 404)
    return container_error("stopping container " + std::string(name), *r);
  return ok();
}

Status remove_container(Client& client, std::string const& id) {
  auto r = client.request(Request{.method = "DELETE", .path = "/containers/" + id, .query = {{"force", "1"}}});
  if (!r) return r.error();
  if (r->status != 204 && r->status != 404) return container_error("removing container " + id, *r);
  return ok();
}

Result<std::size_t> count_running_containers(Client& client) {
  auto r = client.request(Request{.path = "/containers/json"});
  if (!r) return r.error();
  if (r->status != 200) return container_error("listing the running containers", *r);
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_array())
    return make_error(Reason::ContainerError, "listing the running containers: dockerd's answer is not a list");
  return j.size();
}

Result<std::vector<std::string>> container_log_tail(Client& client, std::string const& id, std::size_t lines) {
  auto r = client.request(Request{.path = "/containers/" + id + "/logs",
                                  .query = {{"stdout", "1"}, {"stderr", "1"}, {"tail", std::to_string(lines)}}});
  if (!r) return r.error();
  if (r->status != 200) return container_error("reading the log of container " + id, *r);
  return last_lines(demultiplex_logs(r->body), lines);
}

}  // namespace cosmicac::engine
