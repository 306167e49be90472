#include "engine/response_sink.hpp"

#include <utility>

namespace cosmicac::engine {
namespace {
constexpr std::size_t kMaxBody = 8u << 20;  // a plain response or an error body
constexpr std::size_t kMaxLine = 1u << 20;  // one line of a stream
}  // namespace

ResponseSink::ResponseSink(LineHandler const* on_line, std::function<long()> status)
    : on_line_(on_line), read_status_(std::move(status)) {}

bool ResponseSink::write(std::string_view data) {
  if (status_ == 0) status_ = read_status_();
  if (!streaming()) {
    if (body_.size() + data.size() > kMaxBody) {
      overflow_ = true;
      return false;
    }
    body_.append(data);
    return true;
  }
  pending_.append(data);
  std::size_t start = 0;
  for (;;) {
    std::size_t const nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(pending_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) (*on_line_)(line);
    start = nl + 1;
  }
  pending_.erase(0, start);
  if (pending_.size() > kMaxLine) {
    overflow_ = true;
    return false;
  }
  return true;
}

void ResponseSink::finish() {
  if (streaming() && !pending_.empty()) {
    std::string_view const line = pending_;
    (*on_line_)(line);  // a last line without its newline
  }
}

}  // namespace cosmicac::engine
