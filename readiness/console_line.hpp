// The readiness events on the VM's serial console (docs/events.md,
// "The serial console"). KubeVirt logs the first serial port; the kernel,
// systemd and getty write there too, so each agent line carries a fixed
// prefix with the protocol version:
//
//   cosmicac-bootstrap v1 {"v":1,"seq":3,...}\n
//
// The JSON is exactly the protocol-v1 event line (to_json_line); no second
// protocol.
//
// Who may speak (docs/events.md, "Only the agent speaks on the console"): a
// process in the guest can make the kernel print text it chooses (the name of
// the file a process faulted in, with newlines in it), so the prefix found
// anywhere proves nothing. A host takes a line as the agent's only when the
// prefix is its very first byte: every line the kernel prints starts with its
// timestamp ("[   12.345678] "), which the agent keeps on
// (keep_kernel_lines_stamped), and the agent starts each of its lines on a
// line of its own. Of those lines a host takes the newest boot's, each once
// and in order (ConsoleBoots). ConsoleReader applies both: it is the one rule
// that `wait`, `get`, `list` and the tests' stand-ins read through.
#pragma once

#include "common/error.hpp"
#include "common/line_framer.hpp"
#include "readiness/event.hpp"

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::readiness {

inline constexpr std::string_view kConsolePrefix = "cosmicac-bootstrap v1 ";

// One console line: the prefix, the compact v1 event JSON, '\n'.
std::string console_line(Event const& e);

// One line of console output (with or without its '\n' / "\r\n").
// nullopt when the line does not start with the prefix (not ours: the kernel's
// lines start with their timestamp, whatever text follows it) or does not
// parse; in the latter case `error`, when given, says why (it stays empty for
// "not ours").
std::optional<Event> parse_console_line(std::string_view line, std::string* error = nullptr);

// Which of the agent's lines a host takes: those of the newest boot, each
// once and in order. A boot_id not seen before is a new boot and the newest
// from then on; a boot that another followed is never taken again. Within
// the boot, a seq above the last one taken; or one not above it with a later
// time than the last one taken: a new run of the boot (the unit restarts
// after a failure; a run's seq starts again, at 1 or, where a port snapshot
// took 1, a little above). Within a run the console's seq and time go up
// together, so anything else is a line read again (a log re-read from an
// earlier point) or out of order, and is not taken.
class ConsoleBoots {
 public:
  bool take(Event const& e);
  // The newest boot ("" before any event).
  std::string const& boot() const { return boot_; }

 private:
  static constexpr std::size_t kMaxEarlierBoots = 1024;
  bool any_ = false;
  std::string boot_;
  std::uint64_t last_seq_ = 0;
  std::int64_t last_ms_ = 0;
  std::set<std::string> earlier_;  // boots another followed
  std::deque<std::string> earlier_order_;
};

// The same over a byte stream in chunks of any size (a console log read in
// pieces), or over lines already framed (take_line). Bad agent lines are
// counted and skipped, never fatal; lines ConsoleBoots does not take are
// counted as repeated.
class ConsoleReader {
 public:
  // Room for a v1 line, its prefix and a "\r".
  explicit ConsoleReader(std::size_t max_line = kMaxLineBytes + 64) : framer_(max_line), max_line_(max_line) {}

  // Appends every agent event completed by `chunk` to `out`.
  void feed(std::string_view chunk, std::vector<Event>& out);
  std::vector<Event> feed(std::string_view chunk) {
    std::vector<Event> out;
    feed(chunk, out);
    return out;
  }
  // One whole line (its '\n' optional): appends its event, when taken, to `out`.
  void take_line(std::string_view line, std::vector<Event>& out);
  // Forgets a partial line (the log was rotated or re-read from elsewhere).
  void reset() { framer_.reset(); }

  std::string const& boot() const { return boots_.boot(); }         // the newest boot seen
  std::uint64_t bad_lines() const { return bad_lines_; }            // had the prefix, did not parse
  std::uint64_t other_lines() const { return other_lines_; }        // kernel, systemd, getty…
  std::uint64_t repeated_lines() const { return repeated_lines_; }  // not taken by ConsoleBoots
  std::string const& last_error() const { return last_error_; }

 private:
  LineFramer framer_;
  std::size_t max_line_;
  ConsoleBoots boots_;
  std::uint64_t bad_lines_ = 0;
  std::uint64_t other_lines_ = 0;
  std::uint64_t repeated_lines_ = 0;
  std::string last_error_;
};

// The kernel prints each line of its records behind a timestamp when
// printk's `time` parameter is on (Debian's default): turns it on where it is
// off, so that no line the kernel prints can start with text a process chose.
// `path`: /sys/module/printk/parameters/time. An error when it stays off (no
// such parameter, not writable).
Status keep_kernel_lines_stamped(std::string const& path = "/sys/module/printk/parameters/time");

}  // namespace cosmicac::readiness
