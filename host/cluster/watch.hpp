// A list-then-watch of one collection, as client-go's reflector and
// `kubectl wait` follow objects: a LIST gives the objects and a
// resourceVersion, a GET with watch=true from that resourceVersion streams
// each change as one JSON event per line (ADDED, MODIFIED, DELETED, BOOKMARK,
// ERROR). A dropped stream is resumed from the last resourceVersion seen
// (backing off while it keeps failing); 410 Gone (that version is compacted
// away, or a restarted API server's watch cache starts later) re-lists, and the re-list is compared with what is held
// so that an object is reported changed only when its resourceVersion moved. Where the first watch is refused (403,
// 405), it lists every poll interval instead. It knows collections, not KubeVirt: the objects' meaning is in verbs/.
#pragma once

#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cluster/api_paths.hpp"
#include "host/cluster/kube_client.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cosmicac::host {

// One line of a watch stream. A watch event carries one whole object: the
// bound is kube-apiserver's own request limit for an object (3 MiB in etcd)
// with room for its JSON framing.
inline constexpr std::size_t kMaxWatchLineBytes = 8u << 20;

struct WatchEvent {
  enum class Type { Added, Modified, Deleted, Bookmark, Error };
  Type type = Type::Added;
  Json object;                   // the object; for Error, a metav1.Status
  std::string resource_version;  // object.metadata.resourceVersion ("" for Error)
};

// {"type":"MODIFIED","object":{…}}: an error (naming what is wrong, never
// echoing the line) when it is not JSON, the type is unknown, or the object
// is not an object.
Result<WatchEvent> parse_watch_event(std::string_view line);

// Cuts a stream into lines of at most max_bytes; the bytes of a longer line
// up to its newline are dropped, never read as the start of a line.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_bytes) : max_(max_bytes) {}
  // Calls on_line for each whole line in the chunk; false from it stops.
  bool feed(std::string_view chunk, std::function<bool(std::string_view)> const& on_line);
  std::size_t dropped() const { return dropped_; }  // overlong lines so far

 private:
  std::size_t max_;
  std::string partial_;
  bool overlong_ = false;
  std::size_t dropped_ = 0;
};

struct ReflectorOptions {
  std::chrono::milliseconds poll_interval{std::chrono::seconds(5)};  // when the watch is refused
  std::chrono::milliseconds backoff{std::chrono::seconds(1)};        // first reconnect delay …
  std::chrono::milliseconds backoff_cap{std::chrono::seconds(30)};   // … doubling up to this
  std::chrono::seconds watch_timeout{std::chrono::minutes(5)};       // timeoutSeconds of one watch
  // What of each object is held: the fields its reader reads (empty: the whole
  // object). A list or a watch may carry anything anyone in the namespace wrote
  // (annotations, a spec of megabytes); only this much of it stays.
  std::function<Json(Json const&)> keep;
  // At most this many objects held. Past it an object of a name not held yet
  // is dropped (one held is still updated), and notice says so once: a
  // namespace flooded with objects costs a bounded amount of memory.
  std::size_t max_objects = 10000;
};

class Reflector {
 public:
  // changed: called (from the reflector's thread) after the held objects
  // changed or the first list's answer came; notice: once, when the watch is
  // refused and it polls instead (the text says why).
  Reflector(KubeClient& client, ApiResource const& resource, std::string ns, Query selector, ReflectorOptions opts,
            std::function<void()> changed, std::function<void(std::string const&)> notice);
  // Stops its thread (joined): at most about a second while a watch is open
  // and quiet (libcurl asks the stop flag about once a second).
  ~Reflector();
  Reflector(Reflector const&) = delete;
  Reflector& operator=(Reflector const&) = delete;

  // Asks the thread to stop and returns at once: several reflectors asked
  // first are then joined in about the time of one (the destructor joins).
  void request_stop();
  // Whether a list has succeeded yet.
  bool synced() const;
  // The last list's answer when it was not a 200 (a status or a transport
  // error), until a list succeeds; never once one has.
  std::optional<Result<HttpResponse>> list_failure() const;
  std::optional<Json> get(std::string const& name) const;
  std::vector<Json> items() const;
  // Counters for tests and the benchmark's reading: lists made, watches opened.
  int lists() const { return lists_; }
  int watches() const { return watches_; }

 private:
  void run();
  bool list();
  enum class WatchEnd { Reconnect, Relist, Refused, Failed, Stopped };
  WatchEnd watch(bool& progressed);
  bool apply(WatchEvent const& e);
  Json held(Json const& object) const;
  void say_full();
  bool full_now() const;
  void pause(std::chrono::milliseconds d);
  std::string path(Query extra) const;

  KubeClient& client_;
  ApiResource const& resource_;
  std::string const ns_;
  Query const selector_;
  ReflectorOptions const opts_;
  std::function<void()> changed_;
  std::function<void(std::string const&)> notice_;
  mutable std::mutex mu_;
  std::map<std::string, Json> objects_;  // by metadata.name
  std::string resource_version_;         // where the next watch starts ("" = list first)
  bool synced_ = false;
  bool full_ = false;  // an object was dropped at max_objects
  std::optional<Result<HttpResponse>> list_failure_;
  std::atomic<int> lists_{0}, watches_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> said_full_{false};
  std::mutex pause_mu_;
  std::condition_variable pause_cv_;
  std::thread thread_;  // last: starts after everything it uses exists
};

}  // namespace cosmicac::host
