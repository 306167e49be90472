// A STAND-IN for kube-apiserver (no real API server runs here): a real HTTP/1.1
// server on 127.0.0.1 in the test process (one thread, plain HTTP), with the
// semantics cosmicac-vmi relies on — create (201, with a metadata.uid) / AlreadyExists (409), get,
// delete (200/404), bearer-token and basic authentication (401), per-verb
// denial (403), an API group that is not served (404), and a scripted VMI
// status that advances on each GET. It is not a Kubernetes implementation:
// no validation, no watch, no resourceVersion semantics.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
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

  bool has(std::string const& object_path) const;
  nlohmann::json get(std::string const& object_path) const;
  std::vector<std::string> requests() const;  // "POST /api/v1/..." in order
  std::vector<std::string> authorizations() const;  // Authorization header of each request

 private:
  void serve();
  std::string handle(std::string const& method, std::string const& path, std::string const& auth,
                     std::string const& body);

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
  std::map<std::string, std::vector<nlohmann::json>> scripts_;
  std::map<std::string, std::size_t> script_pos_;
  std::vector<std::string> requests_;
  std::vector<std::string> auths_;
  int uid_counter_ = 0;
};

}  // namespace cosmicac::test
