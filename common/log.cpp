#include "common/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-journal.h>

#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace cosmicac::log {
namespace {

thread_local std::map<std::string, std::string, std::less<>> t_fields;

int journal_priority(spdlog::level::level_enum lvl) {
  switch (lvl) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return 3;
    case spdlog::level::warn: return 4;
    case spdlog::level::info: return 6;
    default: return 7;
  }
}

// spdlog's own systemd_sink sends only MESSAGE/PRIORITY; ours adds the thread's
// structured fields. Records are built as iovecs for sd_journal_sendv.
class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(spdlog::details::log_msg const& msg) override {
    std::vector<std::string> parts;
    parts.reserve(4 + t_fields.size());
    parts.push_back("MESSAGE=" + std::string(msg.payload.data(), msg.payload.size()));
    parts.push_back("PRIORITY=" + std::to_string(journal_priority(msg.level)));
    parts.emplace_back("SYSLOG_IDENTIFIER=cosmicac-bootstrap");
    for (auto const& [k, v] : t_fields) parts.push_back(k + "=" + v);
    std::vector<iovec> iov;
    iov.reserve(parts.size());
    for (auto& p : parts) iov.push_back(iovec{p.data(), p.size()});
    sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
  }
  void flush_() override {}
};

// systemd sets JOURNAL_STREAM=<dev>:<ino> when stderr is connected to journald.
bool stderr_is_journal() {
  const char* js = std::getenv("JOURNAL_STREAM");
  if (!js) return false;
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev && static_cast<unsigned long long>(st.st_ino) == ino;
}

}  // namespace

void setup(bool verbose) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  if (stderr_is_journal()) sink = std::make_shared<JournalSink>();
  else sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("cosmicac", sink);
  if (!stderr_is_journal()) logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void set_field(std::string_view key, std::string value) {
  if (value.empty()) {
    auto it = t_fields.find(key);
    if (it != t_fields.end()) t_fields.erase(it);
  } else {
    t_fields[std::string(key)] = std::move(value);
  }
}

StepScope::StepScope(std::string step) {
  auto it = t_fields.find(std::string_view("STEP"));
  if (it != t_fields.end()) previous_ = it->second;
  set_field("STEP", std::move(step));
}

StepScope::~StepScope() { set_field("STEP", std::move(previous_)); }

}  // namespace cosmicac::log
