// A minimal Kubernetes REST client over libcurl: one handle per request (so
// threads may share a client: `wait` does), JSON bodies, the authentication
// of a ClusterAccess. It knows HTTP, not
// Kubernetes semantics (those are in host/verbs/).
#pragma once

#include "host/base/host_error.hpp"
#include "host/cluster/cluster_access.hpp"
#include "host/cluster/rate_limit.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace cosmicac::host {

class ExecCredentialSource;

// Which failures are worth retrying, decided here once. Transient: HTTP 5xx
// and 429; a connection reset, a receive/send error, a timeout or an empty
// reply; a refused connection only once the server has answered this client
// before (an API server restarting) — refused on first contact is a wrong
// server or port, and kubectl does not retry it either. Everything else
// (configuration, DNS, certificates, TLS) is fatal at once.
bool transient_status(long status);
bool transient_transport_error(int curl_code, bool answered_before);

struct HttpResponse {
  long status = 0;
  std::string body;
};

class KubeClient {
 public:
  explicit KubeClient(ClusterAccess access, std::chrono::seconds request_timeout = std::chrono::seconds(30));
  ~KubeClient();
  KubeClient(KubeClient const&) = delete;
  KubeClient& operator=(KubeClient const&) = delete;

  // path: "/api/v1/namespaces/x/secrets". An Error only when no HTTP response
  // came (transient per transient_transport_error; its message names the
  // server and the kubeconfig); any HTTP status is a response. With an exec
  // credential plugin, a 401 re-runs the plugin and the request once.
  // content_type: of a non-empty body (server-side apply sends
  // application/apply-patch+yaml).
  Result<HttpResponse> request(std::string const& method, std::string const& path, std::string const& body = {},
                               std::string const& content_type = "application/json");

  // A GET whose body is consumed as it arrives (pods/log?follow=true): a 2xx
  // body goes to on_data chunk by chunk and is not kept; another status's body
  // is returned in the response. No overall timeout: it ends when the server
  // closes, on_data returns false, or `stop` becomes true (seen within ~0.2 s).
  Result<HttpResponse> stream_get(std::string const& path, std::function<bool(std::string_view)> on_data,
                                  std::atomic<bool> const& stop);

  ClusterAccess const& access() const { return access_; }

  struct Transfer;  // a streaming transfer's state (kube_client.cpp only)

 private:
  Result<HttpResponse> perform(std::string const& method, std::string const& path, std::string const& body,
                               std::string const& content_type, Transfer* stream);

  Result<HttpResponse> perform_once(std::string const& method, std::string const& path, std::string const& body,
                                    std::string const& content_type, Transfer* stream, bool refresh_credentials);

  ClusterAccess access_;
  std::chrono::seconds timeout_;
  std::unique_ptr<ExecCredentialSource> exec_;
  std::atomic<bool> answered_before_{false};  // `wait`'s two threads share the client
  RequestRateLimiter limiter_;                // access_.rate, for every attempt of every request
};

}  // namespace cosmicac::host
