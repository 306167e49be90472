// Host side: follows the port's host end, which QEMU exposes as a unix
// socket server (-chardev socket,path=P,server=on,wait=off). Connects,
// reads events, and reconnects after EOF or an error until a deadline. Each
// (re)connect makes the agent resend its full state, so nothing is missed.
#pragma once

#include "common/error.hpp"
#include "readiness/event.hpp"
#include "readiness/stream_reader.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace cosmicac::readiness {

enum class FollowEnd {
  Stopped,   // the callback returned false
  Deadline,  // the deadline passed
};

class SocketFollower {
 public:
  // Returns false to stop following.
  using Callback = std::function<bool(Event const&)>;

  explicit SocketFollower(std::string socket_path,
                          std::chrono::milliseconds retry_interval = std::chrono::milliseconds(200))
      : path_(std::move(socket_path)), retry_(retry_interval) {}

  // An Error only for what retrying cannot fix (a path too long for a socket).
  Result<FollowEnd> run(std::chrono::steady_clock::time_point deadline, Callback const& on_event);

  std::uint64_t connects() const { return connects_; }
  std::uint64_t bad_lines() const { return reader_.bad_lines(); }
  std::string const& last_error() const { return last_error_; }  // last connect/read problem

 private:
  std::string path_;
  std::chrono::milliseconds retry_;
  StreamReader reader_;
  std::uint64_t connects_ = 0;
  std::string last_error_;
};

}  // namespace cosmicac::readiness
