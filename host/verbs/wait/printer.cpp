#include "host/verbs/wait/printer.hpp"

#include "common/terminal_text.hpp"

#include <nlohmann/json.hpp>

namespace cosmicac::host {
namespace {

// "9.0 GB", "12.3 MB", "512.0 kB": decimal units, one decimal.
std::string size_text(std::uint64_t bytes) {
  char buf[32];
  auto b = static_cast<double>(bytes);
  if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  return buf;
}

std::string pull_text(readiness::PullProgress const& p) {
  // The agent says which; an older agent does not: bytes_done counts
  // downloaded layer bytes, so once they are all in it is extracting.
  bool extracting = p.activity ? *p.activity == readiness::PullActivity::Extracting
                               : p.bytes_total > 0 && p.bytes_done >= p.bytes_total;
  if (p.bytes_total == 0)
    return std::string(extracting ? "extracting" : "downloading") + " (" + size_text(p.bytes_done) + " so far)";
  if (extracting) return "extracting (" + size_text(p.bytes_total) + " downloaded)";
  return "downloading " + std::to_string(p.bytes_done * 100 / p.bytes_total) + "% (" + size_text(p.bytes_done) +
         " of " + size_text(p.bytes_total) + ")";
}

}  // namespace

std::string agent_event_text(readiness::Event const& e) {
  using readiness::Step;
  using readiness::StepStatus;
  if (!readiness::is_real_step(e.step)) return {};
  std::string step(readiness::step_name(e.step));
  std::string n =
      "[" + std::to_string(static_cast<int>(e.step) + 1) + "/" + std::to_string(readiness::kStepCount) + "] ";
  if (e.phase == readiness::Phase::Ready && e.container)
    return n + "ready: container " + terminal_safe(e.container->name) + " " +
           terminal_safe(e.container->id.substr(0, 12)) + " image " + terminal_safe(e.container->image);
  StepStatus st = e.status.value_or(StepStatus::Progress);
  std::string out = n + step + " " + std::string(readiness::status_name(st));
  if (st == StepStatus::Failed) {
    out += ": reason=" + std::string(reason_name(e.reason.value_or(Reason::Internal))) +
           " message=" + terminal_quoted(e.message);
    return out;
  }
  if (e.step == Step::Pull && e.pull && st == StepStatus::Progress) return n + "pull: " + pull_text(*e.pull);
  if (e.duration_ms) out += " in " + std::to_string(*e.duration_ms) + " ms";
  if (!e.message.empty()) out += ": " + terminal_safe(e.message);
  return out;
}

void WaitPrinter::line(std::string const& text) {
  std::FILE* f = mode_ == WaitOutput::NdJson ? err_ : out_;
  if (mode_ == WaitOutput::Tty && status_shown_) std::fputs("\r\x1b[2K", f);  // clear the updating line
  if (!job_.empty()) std::fputs((terminal_safe(job_) + ": ").c_str(), f);
  std::fputs(text.c_str(), f);
  std::fputc('\n', f);
  status_shown_ = false;
  redraw();
  std::fflush(f);
}

void WaitPrinter::redraw() {
  if (mode_ != WaitOutput::Tty || status_.empty()) return;
  std::fputs("\r\x1b[2K", out_);
  std::fputs(status_.c_str(), out_);
  status_shown_ = true;
  std::fflush(out_);
}

void WaitPrinter::object(Source, std::string const& what, std::string const& text) {
  line(terminal_safe(what) + ": " + text);
}

void WaitPrinter::source(std::string const& text) { line(text); }

void WaitPrinter::agent(readiness::Event const& e) {
  if (mode_ == WaitOutput::NdJson) {
    // ASCII-only JSON: a C1 control or bidi override in a string becomes \uXXXX.
    auto j = nlohmann::json::parse(readiness::to_json_line(e));
    if (!job_.empty()) j["job"] = job_;
    std::string l = j.dump(-1, ' ', true) + "\n";
    std::fputs(l.c_str(), out_);
    std::fflush(out_);
    return;
  }
  std::string text = agent_event_text(e);
  if (text.empty()) return;
  text = "agent " + text;
  if (mode_ == WaitOutput::Tty) {
    if (text == status_) return;  // nothing new to draw
    status_ = text;
    redraw();
    return;
  }
  // One line per change of a step (steps run in parallel: disk beside pull).
  std::string& last = last_agent_[static_cast<std::size_t>(e.step)];
  if (text == last) return;
  last = text;
  line(text);
}

void WaitPrinter::end_progress() {
  if (mode_ == WaitOutput::Tty && status_shown_) {
    std::fputc('\n', out_);  // keep the last progress on screen
    status_shown_ = false;
    status_.clear();
    std::fflush(out_);
  }
}

void WaitPrinter::final_line(std::string const& text, bool to_stderr) {
  end_progress();
  std::FILE* f = to_stderr || mode_ == WaitOutput::NdJson ? err_ : out_;
  std::fputs(text.c_str(), f);
  std::fputc('\n', f);
  std::fflush(f);
}

WaitSink& JobsPrinter::job(std::string const& name) {
  auto& p = printers_[name];
  if (!p) p = std::make_unique<WaitPrinter>(mode_, out_, err_, name);
  return *p;
}

void JobsPrinter::notice(std::string const& text) {
  std::fputs((text + "\n").c_str(), mode_ == WaitOutput::NdJson ? err_ : out_);
  std::fflush(mode_ == WaitOutput::NdJson ? err_ : out_);
}

void JobsPrinter::done(std::string const& name, Result<WaitResult> const& result) {
  auto& p = static_cast<WaitPrinter&>(job(name));
  if (result) {
    p.line(result->summary);
  } else {
    p.line(std::string(result.error().kind == Errc::Timeout ? "timed out: " : "failed: ") + result.error().message);
  }
  if (mode_ != WaitOutput::NdJson) return;
  nlohmann::json r{{"job", name},
                   {"result", result                                 ? "ready"
                              : result.error().kind == Errc::Timeout ? "timeout"
                                                                     : "failed"},
                   {"message", result ? result->summary : result.error().message}};
  std::fputs((r.dump(-1, ' ', true) + "\n").c_str(), out_);
  std::fflush(out_);
}

std::optional<Errc> JobsPrinter::summary(std::vector<std::string> const& jobs,
                                         std::vector<JobOutcome> const& outcomes) {
  std::size_t ready = 0, failed = 0, timed_out = 0;
  std::optional<Errc> first_failure;
  std::string reasons;
  for (auto const& o : outcomes) {
    if (o.result) {
      ++ready;
      continue;
    }
    (o.result.error().kind == Errc::Timeout ? timed_out : failed) += 1;
    if (!first_failure) first_failure = o.result.error().kind;
    reasons += "  " + terminal_safe(o.name) + ": " + o.result.error().message + "\n";
  }
  std::size_t const unfinished = jobs.size() - outcomes.size();
  if (unfinished > 0 && !first_failure) first_failure = Errc::Failed;
  std::string text = "summary: " + std::to_string(jobs.size()) + " jobs: " + std::to_string(ready) + " ready, " +
                     std::to_string(failed) + " failed, " + std::to_string(timed_out) + " timed out";
  if (unfinished > 0) text += ", " + std::to_string(unfinished) + " not followed to the end (--fail-fast)";
  std::FILE* f = mode_ == WaitOutput::NdJson || first_failure ? err_ : out_;
  std::fputs((text + "\n" + reasons).c_str(), f);
  std::fflush(f);
  return first_failure;
}

}  // namespace cosmicac::host
