#include "engine/response_sink.hpp"

#include <utility>

namespace cosmicac::engine {
namespace {
constexpr std::size_t kMaxBody = 8u << 20;  // a plain response or an error body
constexpr std::size_t kMaxLine = 1u << 20;  // one line of a stream
}  // namespace

ResponseSink::ResponseSink(LineHandler const* on_line, std::function<long()> status)
    : on_line_(on_line), read_status_(std::move(status)), lines_(kMaxLine) {}

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
  lines_.feed(
      data,
      [&](std::string_view line) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!line.empty() && !overflow_) (*on_line_)(line);
      },
      [&](std::string_view, std::string_view) { overflow_ = true; });
  return !overflow_;
}

void ResponseSink::finish() {
  if (streaming() && !overflow_ && !lines_.partial().empty())
    (*on_line_)(lines_.partial());  // a last line without its newline
}

}  // namespace cosmicac::engine
