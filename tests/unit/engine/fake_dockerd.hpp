// A scripted HTTP/1.1 server on a unix socket, standing in for dockerd in the
// tests (no dockerd runs here). Responses are scripted per "METHOD path" (the
// path without its /v<ver> prefix and query); every request is recorded.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cosmicac::test {

struct FakeResponse {
  int status = 200;
  std::string body;                    // sent with Content-Length when `chunks` is empty
  std::vector<std::string> chunks;     // sent chunked, one HTTP chunk each (a stream)
  bool cut = false;                    // after the chunks: announce another chunk, send half, close
  std::chrono::milliseconds delay{0};  // before answering
};

struct RecordedRequest {
  std::string method;
  std::string target;                          // as sent: /v1.47/images/create?fromImage=…
  std::string path;                            // without version prefix and query: /images/create
  std::string version;                         // "1.47" or "" when unversioned
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class FakeDockerd {
 public:
  FakeDockerd();  // listens on a fresh socket in a temporary directory
  ~FakeDockerd();
  FakeDockerd(FakeDockerd const&) = delete;
  FakeDockerd& operator=(FakeDockerd const&) = delete;

  std::string const& socket_path() const { return socket_; }

  // Queues responses for "METHOD /path"; they are served in order, the last
  // one again and again. Unscripted routes answer 404 {"message":"no route"}.
  void script(std::string const& method, std::string const& path, std::vector<FakeResponse> responses);
  // A handler decides dynamically (takes precedence over scripts).
  void handle(std::string const& method, std::string const& path,
              std::function<FakeResponse(RecordedRequest const&)> handler);
  // The /version answer a docker of this API range gives.
  void script_version(std::string const& api, std::string const& min_api);

  std::vector<RecordedRequest> requests() const;
  std::vector<RecordedRequest> requests(std::string const& method, std::string const& path) const;
  int count(std::string const& method, std::string const& path) const {
    return static_cast<int>(requests(method, path).size());
  }

 private:
  void serve();
  void serve_connection(int fd);
  FakeResponse answer(RecordedRequest const& req);

  std::string dir_, socket_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<FakeResponse>> scripts_;
  std::map<std::string, std::size_t> served_;
  std::map<std::string, std::function<FakeResponse(RecordedRequest const&)>> handlers_;
  std::vector<RecordedRequest> log_;
};

// Writes every formatted spdlog record into a string (installed as the default
// logger at debug level for its lifetime).
class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  std::string text() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace cosmicac::test
