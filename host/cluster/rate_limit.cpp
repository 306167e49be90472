#include "host/cluster/rate_limit.hpp"

#include <algorithm>
#include <thread>

namespace cosmicac::host {

RequestRateLimiter::RequestRateLimiter(RequestRate rate)
    : rate_(rate), tokens_(static_cast<double>(std::max(rate.burst, 1))) {}

RequestRateLimiter::Clock::duration RequestRateLimiter::reserve(Clock::time_point now) {
  if (rate_.qps <= 0) return Clock::duration::zero();
  std::lock_guard lock(mu_);
  double const burst = static_cast<double>(std::max(rate_.burst, 1));
  if (started_ && now > last_) {
    double const gained = std::chrono::duration<double>(now - last_).count() * rate_.qps;
    tokens_ = std::min(burst, tokens_ + gained);
  }
  if (!started_ || now > last_) last_ = now;
  started_ = true;
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(-tokens_ / rate_.qps));
}

void RequestRateLimiter::acquire() {
  auto const wait = reserve(Clock::now());
  if (wait > Clock::duration::zero()) std::this_thread::sleep_for(wait);
}

}  // namespace cosmicac::host
