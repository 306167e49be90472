#include "container/probe.hpp"

#include "engine/curl_memory.hpp"

#include <curl/curl.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace cosmicac::container {
namespace {

// The body is not read: only the status line decides (as Kubernetes).
std::size_t discard(char*, std::size_t size, std::size_t n, void*) { return size * n; }

std::string failure_text(CURLcode code, CURL* h, ReadyProbe const& probe) {
  if (code == CURLE_OPERATION_TIMEDOUT)
    return "no answer within " + std::to_string((probe.timeout.count() + 999) / 1000) + " s";
  long os_errno = 0;
  curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
  if (code == CURLE_COULDNT_CONNECT && os_errno != 0) return std::strerror(static_cast<int>(os_errno));
  if (code == CURLE_GOT_NOTHING) return "the connection closed without an answer";
  if (code == CURLE_WEIRD_SERVER_REPLY || code == CURLE_UNSUPPORTED_PROTOCOL) return "not an HTTP answer";
  return "no answer (curl error " + std::to_string(static_cast<int>(code)) + ")";
}

}  // namespace

std::string probe_url(ReadyProbe const& probe, std::string const& address) {
  std::string url =
      (probe.kind == ReadyProbe::Kind::Http ? "http://" : "tcp://") + address + ":" + std::to_string(probe.port);
  if (probe.kind == ReadyProbe::Kind::Http) url += probe.path;
  return url;
}

ProbeAnswer run_probe(ReadyProbe const& probe, std::string const& address) {
  if (probe.kind == ReadyProbe::Kind::None) return {false, "no probe to run"};  // fail closed
  in_addr ignored{};
  if (address.empty() || ::inet_pton(AF_INET, address.c_str(), &ignored) != 1)
    return {false, "the container has no IPv4 address on docker's network"};
  engine::init_curl_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> const h(curl_easy_init(), curl_easy_cleanup);
  if (!h) return {false, "cannot start a probe (out of memory)"};
  // libcurl speaks HTTP for both kinds: a Tcp probe only connects.
  std::string const url = "http://" + address + ":" + std::to_string(probe.port) +
                          (probe.kind == ReadyProbe::Kind::Http ? probe.path : "/");
  curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(probe.timeout.count()));
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(h.get(), CURLOPT_FOLLOWLOCATION, 0L);
  if (probe.kind == ReadyProbe::Kind::Tcp) curl_easy_setopt(h.get(), CURLOPT_CONNECT_ONLY, 1L);
  CURLcode const code = curl_easy_perform(h.get());
  if (code != CURLE_OK) return {false, failure_text(code, h.get(), probe)};
  if (probe.kind == ReadyProbe::Kind::Tcp) return {true, "connection accepted"};
  long status = 0;
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
  return {status >= 200 && status < 400, "HTTP " + std::to_string(status)};
}

}  // namespace cosmicac::container
