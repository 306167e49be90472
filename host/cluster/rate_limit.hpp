// The client-side bound on requests, as client-go's QPS and Burst: a token
// bucket that holds `burst` tokens and gains `qps` a second; a request takes
// one as it starts, and waits for it when there is none. One limiter per
// client, shared by its threads (`wait` runs several), so a fleet's watches,
// polls and retries together stay within it. Written here: client-go's
// flowcontrol is Go, and no Debian C++ library has a token bucket.
#pragma once

#include <chrono>
#include <mutex>

namespace cosmicac::host {

struct RequestRate {
  double qps = 0;  // 0: no limit
  int burst = 1;
};

class RequestRateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RequestRateLimiter(RequestRate rate);

  // Takes a token for a request starting at `now` and says how long the
  // request must wait first (zero while the bucket has one). Waiters are
  // served in the order they asked: each reserves the next token to come.
  Clock::duration reserve(Clock::time_point now);
  // reserve(now), then sleeps that long.
  void acquire();

 private:
  RequestRate rate_;
  std::mutex mu_;
  double tokens_;  // below 0: tokens promised to waiters
  Clock::time_point last_{};
  bool started_ = false;
};

}  // namespace cosmicac::host
