#include "host/base/rfc3339.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace cosmicac::host {
namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return false;
  for (std::size_t i = pos; i < pos + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int num(std::string_view s, std::size_t pos, std::size_t n) {
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
  if (!digits(s, 0, 4) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' || !digits(s, 8, 2) ||
      (s[10] != 'T' && s[10] != 't') || !digits(s, 11, 2) || s[13] != ':' || !digits(s, 14, 2) || s[16] != ':' ||
      !digits(s, 17, 2))
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = num(s, 0, 4) - 1900;
  tm.tm_mon = num(s, 5, 2) - 1;
  tm.tm_mday = num(s, 8, 2);
  tm.tm_hour = num(s, 11, 2);
  tm.tm_min = num(s, 14, 2);
  tm.tm_sec = num(s, 17, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    return std::nullopt;
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return std::nullopt;
  }
  long offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    if (!digits(s, i + 1, 2) || i + 3 >= s.size() || s[i + 3] != ':' || !digits(s, i + 4, 2)) return std::nullopt;
    offset = (num(s, i + 1, 2) * 60L + num(s, i + 4, 2)) * 60L * (s[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  // system_clock counts nanoseconds in 64 bits (years 1678-2261): a year
  // outside that would overflow the conversion. Before 1970 is long expired,
  // after 2261 is never.
  int const year = tm.tm_year + 1900;
  if (year < 1970) return std::chrono::system_clock::time_point{};
  if (year > 2261) return std::chrono::system_clock::time_point::max();
  std::time_t t = ::timegm(&tm);
  return std::chrono::system_clock::from_time_t(t - offset);
}

std::string format_rfc3339_micro(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto const us = std::max(duration_cast<microseconds>(t.time_since_epoch()), microseconds(0));
  std::time_t const secs = static_cast<std::time_t>(duration_cast<seconds>(us).count());
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  // Room for every int at its widest, as gcc's -Wformat-truncation counts (the
  // text itself is 27 characters).
  char buf[128];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>((us % seconds(1)).count()));
  return buf;
}

}  // namespace cosmicac::host
