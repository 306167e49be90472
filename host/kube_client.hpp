// A minimal Kubernetes REST client over libcurl: one request at a time, JSON
// bodies, the authentication of a ClusterAccess. It knows HTTP, not
// Kubernetes semantics (those are in kube_ops).
#pragma once

#include "common/error.hpp"
#include "host/cluster_access.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace cosmicac::host {

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

  // path: "/api/v1/namespaces/x/secrets". An Error (Internal, transient) only
  // when no HTTP response came (connection refused, TLS failure, timeout);
  // any HTTP status is a response. content_type: of a non-empty body
  // (server-side apply sends application/apply-patch+yaml).
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

  ClusterAccess access_;
  std::chrono::seconds timeout_;
};

}  // namespace cosmicac::host
