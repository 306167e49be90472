// A minimal Kubernetes REST client over libcurl: one request at a time, JSON
// bodies, the authentication of a ClusterAccess. It knows HTTP, not
// Kubernetes semantics (those are in kube_ops).
#pragma once

#include "common/error.hpp"
#include "host/cluster_access.hpp"

#include <chrono>
#include <memory>
#include <string>

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
  // any HTTP status is a response.
  Result<HttpResponse> request(std::string const& method, std::string const& path, std::string const& body = {});

  ClusterAccess const& access() const { return access_; }

 private:
  ClusterAccess access_;
  std::chrono::seconds timeout_;
};

}  // namespace cosmicac::host
