// A STAND-IN for kube-apiserver (no real API server runs here): a real HTTP/1.1
// server on 127.0.0.1 in the test process (one thread, plain HTTP), with the
// semantics cosmicac-vmi relies on — create (201, with a metadata.uid) / AlreadyExists (409), get,
// delete (200/404), bearer-token and basic authentication (401), per-verb
// denial (403), an API group that is not served (404), and a scripted VMI
// status that advances on each GET; lists of pods (labelSelector) and events
// (fieldSelector involvedObject.name); a container's log, whole or followed
// (follow=true streams until the test drops it; timestamps=true, sinceTime),
// fed by the test. Failure bodies are metav1.Status objects (kind Status,
// reason, code, details {name, group, kind, causes}).
// Where cosmicac-vmi depends on kube-apiserver's behaviour it mimics it:
// 409 AlreadyExists (also while the object is terminating); 422 Invalid with
// causes (PVC spec immutable but for storage growth of a bound claim; a
// missing name or fieldManager; scripted refusals); a new PVC carries
// kubernetes.io/pvc-protection, dropped once it is terminating and no pod
// mounts it; dryRun=All (nothing persisted; a dry-run DELETE answers what the
// object would become); fieldValidation=Strict (400 on unknown fields at
// create, against the schemas given with strict_schema; server-side apply of
// such an object is kube-apiserver's 500 "field not declared in schema");
// server-side apply (PATCH application/apply-patch+yaml: create if absent,
// else merge — a terminating object too — each manager owning the leaves it
// applied, reported as metadata.managedFields; another manager's differing
// leaf is a 409 Conflict unless force=true); a DELETE that removes the object
// at once answers a Status of Success; deletion with finalizers and propagation
// (Foreground: deletionTimestamp + foregroundDeletion finalizer, dependents by
// ownerReference uid removed, then the object; Background: the object, then
// its dependents), one garbage-collection step per request so a client sees
// the terminating state; a DELETE whose DeleteOptions.preconditions.uid is not
// the object's is 409 Conflict with kube-apiserver's message (rest.BeforeDelete)
// and deletes nothing. tests/realapi/contract.py holds it to kube-apiserver's
// answers. It is not a Kubernetes implementation: a watch
// (watch=true) sends every object it has not sent as it is now, then each
// change, every 50 ms, with a fresh resourceVersion; it resumes nothing from
// a resourceVersion (never 410); lists hold fields as stored. A scripted VMI
// status advances on each GET, list, and watch tick.
#pragma once

#include "swagger_validator.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cosmicac::test {

class ApiServerStandIn {
 public:
  // expected_authorization: the exact Authorization header required ("Bearer t",
  // "Basic ..."); empty: anonymous access accepted.
  explicit ApiServerStandIn(std::string expected_authorization);
  ~ApiServerStandIn();
  ApiServerStandIn(ApiServerStandIn const&) = delete;
  ApiServerStandIn& operator=(ApiServerStandIn const&) = delete;

  std::string url() const;  // http://127.0.0.1:<port>

  // Requests with this method whose path starts with the prefix get 403.
  void deny(std::string method, std::string path_prefix);
  // Paths under this prefix get 404 as if the API group were not installed.
  void unserve(std::string path_prefix);
  // The next n requests get this status (e.g. 503), before anything else.
  void fail_next(int status, int n);
  // The VMI at this object path reports these statuses, one per GET; the
  // last one repeats.
  void script_status(std::string object_path, std::vector<nlohmann::json> statuses);
  // Pre-existing object (for 409 / delete tests).
  void put(std::string object_path, nlohmann::json object);

  // A container's log: text appended here is stamped with the time it
  // arrives (RFC 3339, ns) and reaches every follower at once. Text without
  // a final newline goes out at once as a partial line, as the kubelet
  // streams a CRI partial entry (the runtime splits lines over 16 KiB): with
  // timestamps=true the kubelet's stamp prefixes a line's first entry only,
  // so the rest of a long line arrives as the guest wrote it.
  void append_log(std::string const& pod, std::string const& container, std::string const& text);
  // Ends every follow stream now (the server side of a dropped connection);
  // the lines stay, later GETs see them again.
  void drop_log_streams();
  // Log GETs for this pod get this status (e.g. 403, or 500 with the
  // kubelet's dial error as the message) instead of the log.
  void refuse_log(std::string const& pod, int status, std::string message = "");

  // Requests with this method whose path starts with the prefix get 422
  // Invalid with these causes ({reason, message, field}).
  void refuse_invalid(std::string method, std::string path_prefix, nlohmann::json causes);
  // fieldValidation=Strict checks objects of this apiVersion/kind against
  // the definition in the schema (unknown fields → 400, other violations → 422).
  void strict_schema(std::string api_version, std::string kind, SwaggerValidator const* schema, std::string definition);
  // Drops the object's finalizers (a terminating one then goes away).
  void remove_finalizers(std::string const& object_path);
  // ---- doctor (h-render): a POST to exactly this path is answered with
  // 201 and what `reply` makes of the request body (SelfSubjectAccessReview).
  void answer_post(std::string path, std::function<nlohmann::json(nlohmann::json const&)> reply);
  // ---- end doctor

  // Once a request "METHOD /path" (no query) has been answered, the object at
  // object_path is replaced by `replacement` (someone deleted it and created
  // another of that name meanwhile: a new uid); once.
  void replace_after(std::string request, std::string object_path, nlohmann::json replacement);

  bool has(std::string const& object_path) const;
  nlohmann::json get(std::string const& object_path) const;
  std::vector<std::string> requests() const;        // "POST /api/v1/..." in order
  std::vector<std::string> authorizations() const;  // Authorization header of each request

 private:
  void serve();
  std::string handle(std::string const& method, std::string const& path, std::string const& auth,
                     std::string const& content_type, std::string const& body);
  std::string answer(std::string const& method, std::string const& path, std::string const& auth,
                     std::string const& content_type, std::string const& body);
  std::string create(std::string const& target, nlohmann::json obj);
  std::string apply_patch(std::string const& target, std::string const& body);
  std::string remove(std::string const& target, std::string const& body);
  std::string update(std::string const& target, std::string const& body);
  std::string list(std::string const& target);
  nlohmann::json list_items(std::string const& target);
  void stream_watch(int fd, std::string target);
  std::string strict_check(std::string const& target, nlohmann::json const& obj, bool apply = false) const;
  void collect_garbage();
  void release_unused_claim(std::string const& path, nlohmann::json& claim) const;
  nlohmann::json with_managed_fields(std::string const& path, nlohmann::json obj) const;
  std::string precheck(std::string const& method, std::string const& path, std::string const& auth);
  void stream_log(int fd, std::string target);

  struct LogLine {          // one CRI log entry
    std::string stamp;      // 2026-01-02T03:04:05.123456789Z
    std::string text;       // without '\n'
    bool ends_line = true;  // false: a partial entry
  };
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string expected_auth_;

  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> denied_;
  std::vector<std::string> unserved_;
  int fail_status_ = 0, fail_count_ = 0;
  std::map<std::string, nlohmann::json> objects_;
  // object path → "manager|Apply" or "manager|Update" → the leaves it owns.
  std::map<std::string, std::map<std::string, std::set<std::string>>> managed_;
  struct Refusal {
    std::string method, prefix;
    nlohmann::json causes;
  };
  std::vector<Refusal> invalid_;
  struct Strict {
    SwaggerValidator const* schema;
    std::string definition;
  };
  std::map<std::string, Strict> strict_;  // "apiVersion|kind"
  std::map<std::string, std::vector<nlohmann::json>> scripts_;
  std::map<std::string, std::size_t> script_pos_;
  std::vector<std::string> requests_;
  std::vector<std::string> auths_;
  int uid_counter_ = 0;
  std::map<std::string, std::vector<LogLine>> logs_;                 // "pod/container"
  std::map<std::string, std::pair<int, std::string>> log_refusals_;  // pod -> status, message
  std::uint64_t log_generation_ = 0;                                 // bumped by drop_log_streams
  std::condition_variable log_cv_;
  std::uint64_t resource_version_ = 1;
  std::vector<std::thread> streams_;
  std::map<std::string, std::function<nlohmann::json(nlohmann::json const&)>> post_answers_;  // doctor
  struct Replacement {
    std::string request, object_path;
    nlohmann::json object;
  };
  std::vector<Replacement> replacements_;
};

}  // namespace cosmicac::test
