// Where a response body goes while libcurl receives it: collected whole (a
// plain answer, or any non-2xx answer), or, for a 2xx stream, split into
// newline-delimited lines handed to the caller as they complete (framed by
// common/line_framer; CR before LF dropped, empty lines skipped). Both are
// bounded. Internal to engine/ (client.cpp wires it to libcurl).
#pragma once

#include "common/line_framer.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace cosmicac::engine {

class ResponseSink {
 public:
  using LineHandler = std::function<void(std::string_view)>;

  // on_line null: collect the body. `status` is asked for once, at the first bytes.
  ResponseSink(LineHandler const* on_line, std::function<long()> status);

  // Takes the next bytes; false when a bound is exceeded (the transfer must stop).
  bool write(std::string_view data);
  // After the transfer: hands over a last line that had no newline (2xx streams only).
  void finish();

  long status() const noexcept { return status_; }
  void set_status(long s) noexcept { status_ = s; }
  bool overflow() const noexcept { return overflow_; }
  std::string take_body() { return std::move(body_); }

 private:
  bool streaming() const noexcept { return on_line_ != nullptr && status_ >= 200 && status_ < 300; }

  LineHandler const* on_line_;
  std::function<long()> read_status_;
  long status_ = 0;
  std::string body_;  // non-stream body, or non-2xx stream body
  LineFramer lines_;  // a stream's lines
  bool overflow_ = false;
};

}  // namespace cosmicac::engine
