#include "host/cluster/watch.hpp"

#include "common/terminal_text.hpp"
#include "host/base/json_read.hpp"
#include "host/cluster/api_status.hpp"

#include <algorithm>
#include <set>

namespace cosmicac::host {
namespace {

std::optional<WatchEvent::Type> event_type(std::string_view t) {
  if (t == "ADDED") return WatchEvent::Type::Added;
  if (t == "MODIFIED") return WatchEvent::Type::Modified;
  if (t == "DELETED") return WatchEvent::Type::Deleted;
  if (t == "BOOKMARK") return WatchEvent::Type::Bookmark;
  if (t == "ERROR") return WatchEvent::Type::Error;
  return std::nullopt;
}

}  // namespace

Result<WatchEvent> parse_watch_event(std::string_view line) {
  auto j = parse_json(line);
  if (!j || !j->is_object()) return host_error(Errc::Server, "a watch event is not a JSON object");
  auto type = event_type(string_at(*j, {"type"}));
  if (!type) return host_error(Errc::Server, "a watch event has an unknown type");
  auto it = j->find("object");
  if (it == j->end() || !it->is_object()) return host_error(Errc::Server, "a watch event has no object");
  WatchEvent e;
  e.type = *type;
  e.object = std::move(*it);
  if (e.type != WatchEvent::Type::Error) e.resource_version = string_at(e.object, {"metadata", "resourceVersion"});
  return e;
}

bool LineSplitter::feed(std::string_view chunk, std::function<bool(std::string_view)> const& on_line) {
  while (!chunk.empty()) {
    auto nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (!overlong_) partial_.append(piece);
    if (partial_.size() > max_) {
      partial_.clear();
      if (!overlong_) ++dropped_;
      overlong_ = true;
    }
    if (nl == std::string_view::npos) return true;
    chunk.remove_prefix(nl + 1);
    bool const was_overlong = std::exchange(overlong_, false);
    std::string l = std::exchange(partial_, {});
    if (!was_overlong && !on_line(l)) return false;
  }
  return true;
}

Reflector::Reflector(KubeClient& client, ApiResource const& resource, std::string ns, Query selector,
                     ReflectorOptions opts, std::function<void()> changed,
                     std::function<void(std::string const&)> notice)
    : client_(client),
      resource_(resource),
      ns_(std::move(ns)),
      selector_(std::move(selector)),
      opts_(std::move(opts)),
      changed_(std::move(changed)),
      notice_(std::move(notice)) {
  thread_ = std::thread([this] { run(); });
}

Reflector::~Reflector() {
  request_stop();
  thread_.join();
}

void Reflector::request_stop() {
  stop_ = true;
  std::lock_guard l(pause_mu_);
  pause_cv_.notify_all();
}

bool Reflector::synced() const {
  std::lock_guard l(mu_);
  return synced_;
}

std::optional<Result<HttpResponse>> Reflector::list_failure() const {
  std::lock_guard l(mu_);
  return list_failure_;
}

std::optional<Json> Reflector::get(std::string const& name) const {
  std::lock_guard l(mu_);
  auto it = objects_.find(name);
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

std::vector<Json> Reflector::items() const {
  std::lock_guard l(mu_);
  std::vector<Json> out;
  out.reserve(objects_.size());
  for (auto const& [name, obj] : objects_) out.push_back(obj);
  return out;
}

std::string Reflector::path(Query extra) const {
  Query q = selector_;
  for (auto& kv : extra) q.push_back(std::move(kv));
  auto p = api_path(resource_, ns_, {}, {}, q);
  return p ? *p : std::string();  // the namespace was checked by the caller
}

void Reflector::pause(std::chrono::milliseconds d) {
  std::unique_lock l(pause_mu_);
  pause_cv_.wait_for(l, d, [this] { return stop_.load(); });
}

// The loop: list, then watch from the list's version until stopped. Every
// way round it either holds a watch open or sleeps: no request loop spins.
void Reflector::run() {
  auto delay = opts_.backoff;
  bool polling = false;
  while (!stop_) {
    std::string rv;
    {
      std::lock_guard l(mu_);
      rv = resource_version_;
    }
    if (rv.empty() || polling) {
      if (!list()) {
        pause(polling ? opts_.poll_interval : delay);
        if (!polling) delay = std::min(delay * 2, opts_.backoff_cap);
        continue;
      }
      delay = opts_.backoff;  // the server answers again: the watch follows soon
      if (polling) {
        pause(opts_.poll_interval);
        continue;
      }
    }
    bool progressed = false;
    auto const opened = std::chrono::steady_clock::now();
    switch (watch(progressed)) {
      case WatchEnd::Stopped: return;
      case WatchEnd::Refused: polling = true; continue;
      case WatchEnd::Relist: {
        std::lock_guard l(mu_);
        resource_version_.clear();
        break;
      }
      case WatchEnd::Reconnect:
      case WatchEnd::Failed: break;
    }
    // A watch that ended by its timeoutSeconds after a while is renewed at
    // once; one that failed or ended at once waits, longer each time.
    if (progressed || std::chrono::steady_clock::now() - opened >= opts_.backoff * 10) {
      delay = opts_.backoff;
    } else {
      pause(delay);
      delay = std::min(delay * 2, opts_.backoff_cap);
    }
  }
}

// One LIST: the held objects become its items; a change is reported when a
// name came or went or an object's resourceVersion moved.
bool Reflector::list() {
  ++lists_;
  auto resp = client_.request("GET", path({}));
  std::optional<Json> body;
  if (resp && resp->status == 200) body = parse_json(resp->body);
  if (!body || !body->is_object()) {
    {
      // Once listed, the objects held stay the answer (a restarted API
      // server's authorizer refuses for a moment); the failure is for before.
      std::lock_guard l(mu_);
      if (synced_) return false;
      if (!resp || resp->status != 200) list_failure_ = resp;
      else list_failure_ = host_error(Errc::Server, "listing " + std::string(resource_.plural) + ": not JSON");
    }
    changed_();
    return false;
  }
  std::map<std::string, Json> fresh;
  bool full = false;
  for (auto const& item : array_at(*body, {"items"})) {
    if (fresh.size() == opts_.max_objects) {
      full = true;
      break;
    }
    fresh[string_at(item, {"metadata", "name"})] = held(item);
  }
  std::string const list_version = string_at(*body, {"metadata", "resourceVersion"});
  body.reset();  // the whole answer is not kept beside what is held
  bool differs = false;
  {
    std::lock_guard l(mu_);
    full_ = full_ || full;
    differs = !synced_ || fresh.size() != objects_.size();
    for (auto const& [name, obj] : fresh) {
      auto it = objects_.find(name);
      if (it == objects_.end() ||
          string_at(it->second, {"metadata", "resourceVersion"}) != string_at(obj, {"metadata", "resourceVersion"}))
        differs = true;
    }
    objects_ = std::move(fresh);
    resource_version_ = list_version;
    synced_ = true;
    list_failure_.reset();
  }
  if (full) say_full();
  if (differs) changed_();
  return true;
}

Json Reflector::held(Json const& object) const { return opts_.keep ? opts_.keep(object) : object; }

bool Reflector::full_now() const {
  std::lock_guard l(mu_);
  return full_;
}

void Reflector::say_full() {
  if (said_full_.exchange(true)) return;
  notice_("holding " + std::to_string(opts_.max_objects) + " " + std::string(resource_.plural) + " of " + ns_ +
          ", the most it keeps: any more are not followed (a namespace flooded with them?)");
}

// An event into the held objects; true when it changed them.
bool Reflector::apply(WatchEvent const& e) {
  std::lock_guard l(mu_);
  if (!e.resource_version.empty()) resource_version_ = e.resource_version;
  if (e.type == WatchEvent::Type::Bookmark) return false;
  std::string const name = string_at(e.object, {"metadata", "name"});
  if (e.type == WatchEvent::Type::Deleted) return objects_.erase(name) > 0;
  auto it = objects_.find(name);
  if (it != objects_.end() && string_at(it->second, {"metadata", "resourceVersion"}) == e.resource_version)
    return false;  // seen already (a re-list got it first)
  if (it == objects_.end() && objects_.size() >= opts_.max_objects) {
    full_ = true;
    return false;
  }
  objects_[name] = held(e.object);
  return true;
}

Reflector::WatchEnd Reflector::watch(bool& progressed) {
  std::string rv;
  {
    std::lock_guard l(mu_);
    rv = resource_version_;
  }
  bool const first = ++watches_ == 1;
  WatchEnd end = WatchEnd::Reconnect;
  LineSplitter lines(kMaxWatchLineBytes);
  auto const at = path({{"watch", "true"},
                        {"resourceVersion", rv},
                        {"allowWatchBookmarks", "true"},
                        {"timeoutSeconds", std::to_string(opts_.watch_timeout.count())}});
  auto resp = client_.stream_get(
      at,
      [&](std::string_view chunk) {
        return lines.feed(chunk, [&](std::string_view line) {
          auto e = parse_watch_event(line);
          if (!e) return true;  // not an event: skipped
          if (e->type == WatchEvent::Type::Error) {
            // 410 Expired/Gone: the version is compacted away; anything else: start over too.
            end = WatchEnd::Relist;
            return false;
          }
          progressed = true;
          if (apply(*e)) changed_();
          if (full_now()) say_full();
          return true;
        });
      },
      stop_);
  if (stop_) return WatchEnd::Stopped;
  if (!resp) return WatchEnd::Failed;
  if (resp->status == 410) return WatchEnd::Relist;
  // Refused: on the first watch only. Later a 403 is the API server's
  // authorizer warming up after a restart: retried like any failure.
  if (first && (resp->status == 403 || resp->status == 405)) {
    notice_("watching " + std::string(resource_.plural) + " was refused (" + status_text(*resp) +
            "); listing them every poll interval instead");
    return WatchEnd::Refused;
  }
  if (resp->status != 200) return WatchEnd::Failed;
  return end;
}

}  // namespace cosmicac::host
