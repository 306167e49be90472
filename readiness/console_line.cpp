#include "readiness/console_line.hpp"

#include "common/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cosmicac::readiness {
namespace {

bool starts_with_prefix(std::string_view l) { return l.substr(0, kConsolePrefix.size()) == kConsolePrefix; }

}  // namespace

std::string console_line(Event const& e) {
  std::string line(kConsolePrefix);
  line += to_json_line(e);
  return line;
}

std::optional<Event> parse_console_line(std::string_view line, std::string* error) {
  if (error) error->clear();
  if (!starts_with_prefix(line)) return std::nullopt;
  line.remove_prefix(kConsolePrefix.size());
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto e = parse_event(line);
  if (!e) {
    if (error) *error = e.error().message;
    return std::nullopt;
  }
  return std::move(*e);
}

bool ConsoleBoots::take(Event const& e) {
  if (!any_ || e.boot_id != boot_) {
    if (earlier_.count(e.boot_id) != 0) return false;  // a boot another followed
    if (any_) {
      earlier_.insert(boot_);
      earlier_order_.push_back(boot_);
      if (earlier_order_.size() > kMaxEarlierBoots) {
        earlier_.erase(earlier_order_.front());
        earlier_order_.pop_front();
      }
    }
    any_ = true;
    boot_ = e.boot_id;
  } else if (e.seq <= last_seq_ && e.time_ms <= last_ms_) {
    return false;  // read again, or out of order
  }
  last_seq_ = e.seq;
  last_ms_ = e.time_ms;
  return true;
}

void ConsoleReader::take_line(std::string_view l, std::vector<Event>& out) {
  if (!starts_with_prefix(l)) {
    if (!l.empty() && l != "\r" && l != "\n" && l != "\r\n") ++other_lines_;
    return;
  }
  std::string err;
  auto e = parse_console_line(l, &err);
  if (!e) {
    ++bad_lines_;
    last_error_ = std::move(err);
    return;
  }
  if (!boots_.take(*e)) {
    ++repeated_lines_;
    return;
  }
  out.push_back(std::move(*e));
}

void ConsoleReader::feed(std::string_view chunk, std::vector<Event>& out) {
  framer_.feed(
      chunk, [&](std::string_view l) { take_line(l, out); },
      [&](std::string_view seen, std::string_view piece) {
        // Too long for an agent line; count it as ours only if it claimed to be.
        std::string start(seen.substr(0, kConsolePrefix.size()));
        start.append(piece.substr(0, kConsolePrefix.size() - start.size()));
        if (starts_with_prefix(start)) {
          ++bad_lines_;
          last_error_ = "console line longer than " + std::to_string(max_line_) + " bytes";
        } else {
          ++other_lines_;
        }
      });
}

Status keep_kernel_lines_stamped(std::string const& path) {
  auto now = read_file(path, 16);
  if (!now) return now.error();
  if (!now->empty() && (now->front() == 'Y' || now->front() == 'y' || now->front() == '1')) return ok();
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid() || ::write(fd.get(), "Y", 1) != 1)
    return make_error(Reason::Internal,
                      path + ": " + std::strerror(errno) + ": the kernel's console lines stay without their timestamp");
  return ok();
}

}  // namespace cosmicac::readiness
