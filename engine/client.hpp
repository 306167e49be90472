// The transport to dockerd: HTTP over its unix socket (libcurl).
//
// It prefixes every path with /v<version>, the API version negotiated once
// (system.hpp's negotiate: GET /version), and reports transport failures as Errors whose `transient` flag
// says whether retrying can help. HTTP statuses are returned, not judged: the
// typed endpoints (containers.hpp, images.hpp, system.hpp) know what a 404
// means for their request. Header values are never logged (X-Registry-Auth
// carries the registry token).
#pragma once

#include "common/error.hpp"
#include "engine/api_version.hpp"
#include "engine/response.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cosmicac::engine {

struct ClientOptions {
  std::string socket_path = "/var/run/docker.sock";
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  // A transfer slower than 1 byte/s for this long is cut (a hung dockerd or stream).
  std::chrono::milliseconds low_speed_time{std::chrono::seconds(120)};
  // Whole-request limit for plain requests (streams have only the low-speed limit).
  std::chrono::milliseconds request_timeout{std::chrono::seconds(120)};
  std::string newest_api_version = kNewestApiVersion;
};

struct Request {
  std::string method = "GET";
  std::string path;                                        // "/images/create", without the version prefix
  std::vector<std::pair<std::string, std::string>> query;  // url-encoded by the client
  std::string body;                                        // sent as application/json when not empty
  std::vector<std::string> headers;                        // "Name: value"; values never logged
  bool versioned = true;                                   // false: no /v<ver> prefix (/_ping, /version)
};

class Client {
 public:
  explicit Client(ClientOptions options);

  // The API version chosen by engine::negotiate (system.hpp), or by tests and
  // callers that already know.
  void set_api_version(std::string version) { api_version_ = std::move(version); }
  std::string const& api_version() const noexcept { return api_version_; }
  ClientOptions const& options() const noexcept { return options_; }

  // GET /_ping: ok when dockerd answers 200.
  Status ping();

  // A plain request. Transport failures are Errors with reason DockerUnavailable
  // (callers remap); transient for connection refused, socket missing, timeouts
  // and cut transfers.
  Result<Response> request(Request const& req);

  // A streaming request: on_line is called for every complete newline-delimited
  // line of a 2xx response body as it arrives; a non-2xx body is collected into
  // Response::body instead. A stream cut before its end is a transient Error.
  Result<Response> stream(Request const& req, std::function<void(std::string_view line)> const& on_line);

 private:
  Result<Response> perform(Request const& req, std::function<void(std::string_view)> const* on_line);

  ClientOptions options_;
  std::string api_version_;
};

}  // namespace cosmicac::engine
