#include "registry/pull.hpp"

#include "registry/auth_header.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <thread>

namespace cosmicac::registry {
namespace {

using Clock = std::chrono::steady_clock;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

std::string canonical_domain(std::string_view d) {
  std::string s = lower(d);
  if (s == "index.docker.io" || s == "registry-1.docker.io" || s == "registry.hub.docker.com" || s.empty())
    return "docker.io";
  return s;
}

// "docker.io/library/x" and "x" name the same repository (familiar form).
std::string familiar(std::string_view repo) {
  std::string s(repo);
  for (std::string_view p : {"docker.io/", "index.docker.io/"})
    if (s.rfind(p, 0) == 0) s.erase(0, p.size());
  if (s.rfind("library/", 0) == 0) s.erase(0, 8);
  return s;
}

std::string json_str(nlohmann::json const& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string{};
}

}  // namespace

std::string ImageToPull::reference() const {
  return digest.empty() ? repository + ":" + tag : repository + "@" + digest;
}

Error classify_pull_error(std::string_view message, long http_status) {
  std::string const m = lower(message);
  std::string text(message.substr(0, 500));
  if (http_status == 401 || contains(m, "unauthorized") || contains(m, "denied") ||
      contains(m, "authentication required") || contains(m, "incorrect username or password"))
    return make_error(Reason::Auth, std::move(text));
  // Network-level faults first: "i/o timeout" messages may also say "not found" of a DNS name.
  if (http_status >= 500 || contains(m, "timeout") || contains(m, "connection refused") ||
      contains(m, "connection reset") || contains(m, "no such host") || contains(m, "eof") ||
      contains(m, "network is unreachable") || contains(m, "tls handshake") || contains(m, "temporary failure") ||
      contains(m, "too many requests") || contains(m, "service unavailable") || contains(m, "bad gateway"))
    return make_error(Reason::RegistryUnreachable, std::move(text), true);
  if (http_status == 404 || contains(m, "manifest unknown") || contains(m, "not found") ||
      contains(m, "does not exist") || contains(m, "repository name not known") || contains(m, "name unknown"))
    return make_error(Reason::ImageNotFound, std::move(text));
  return make_error(Reason::RegistryUnreachable, std::move(text), false);
}

std::chrono::milliseconds backoff_delay(int attempt, RetryPolicy const& policy, std::mt19937& rng) {
  double d = static_cast<double>(policy.initial_backoff.count());
  for (int i = 1; i < attempt && d < static_cast<double>(policy.max_backoff.count()); ++i) d *= 2;
  d = std::min(d, static_cast<double>(policy.max_backoff.count()));
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  return std::chrono::milliseconds(static_cast<long long>(d * jitter(rng)));
}

bool credentials_apply(std::string_view registry, std::string_view domain) {
  return canonical_domain(registry) == canonical_domain(domain);
}

std::string ProgressAggregator::feed(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return {};
  if (j.contains("errorDetail") || j.contains("error")) {
    std::string msg = json_str(j, "error");
    if (j.contains("errorDetail")) {
      std::string detail = json_str(j["errorDetail"], "message");
      if (!detail.empty()) msg = detail;
    }
    return msg.empty() ? std::string("pull failed (error without a message)") : msg;
  }
  std::string const status = json_str(j, "status");
  std::string const id = json_str(j, "id");
  // Layer lines have an id and a layer status; overall lines ("Pulling from …",
  // "Digest: …", "Status: …") have none or the tag as id.
  bool const layer_status = status == "Pulling fs layer" || status == "Waiting" || status == "Downloading" ||
                            status == "Verifying Checksum" || status == "Download complete" ||
                            status == "Extracting" || status == "Pull complete" || status == "Already exists";
  if (!id.empty() && layer_status) {
    Layer& l = layers_[id];
    bool const downloading = status == "Downloading", extracting = status == "Extracting";
    if ((downloading || extracting) && j.contains("progressDetail") && j["progressDetail"].is_object()) {
      auto const& pd = j["progressDetail"];
      std::uint64_t& current = downloading ? l.downloaded : l.extracted;
      if (pd.contains("current") && pd["current"].is_number_unsigned()) current = pd["current"].get<std::uint64_t>();
      // Extraction reads the same compressed blob: its total only fills a gap.
      if (pd.contains("total") && pd["total"].is_number_unsigned() && (downloading || l.total == 0))
        l.total = pd["total"].get<std::uint64_t>();
    }
    if (status == "Verifying Checksum" || status == "Download complete" || extracting || status == "Pull complete" ||
        status == "Already exists") {
      l.download_done = true;
      if (l.total > 0) l.downloaded = l.total;
    }
    if (status == "Pull complete" || status == "Already exists") {
      l.done = true;
      if (l.total > 0) l.extracted = l.total;
    }
  } else if (!status.empty()) {
    status_ = status;
  }
  return {};
}

PullProgress ProgressAggregator::snapshot() const {
  PullProgress p;
  std::uint64_t downloaded = 0, extracted = 0;
  bool any_downloading = layers_.empty();
  for (auto const& [id, l] : layers_) {
    // A size not announced yet (total 0) does not cap what was counted.
    downloaded += l.total > 0 ? std::min(l.downloaded, l.total) : l.downloaded;
    extracted += l.total > 0 ? std::min(l.extracted, l.total) : l.extracted;
    p.bytes_total += l.total;
    ++p.layers;
    if (l.done) ++p.layers_done;
    if (!l.download_done) any_downloading = true;
  }
  p.activity = any_downloading ? PullActivity::Downloading : PullActivity::Extracting;
  p.bytes_done = any_downloading ? downloaded : extracted;
  p.status = status_;
  return p;
}

Status with_retries(std::string_view what, RetryPolicy const& policy, std::function<Status()> const& attempt) {
  auto const deadline = Clock::now() + policy.budget;
  std::mt19937 rng(std::random_device{}());
  for (int n = 1;; ++n) {
    Status st = attempt();
    if (st || !st.error().transient) return st;
    auto const delay = backoff_delay(n, policy, rng);
    if (Clock::now() + delay > deadline) {
      Error e = st.error();
      e.message = std::string(what) + ": gave up after " + std::to_string(n) + " attempts within the " +
                  std::to_string(policy.budget.count() / 1000) + " s retry budget: " + e.message;
      return e;
    }
    spdlog::warn("{}: attempt {} failed ({}); retrying in {} ms", what, n, st.error().message, delay.count());
    std::this_thread::sleep_for(delay);
  }
}

Status check_credentials(engine::Client& client, Credentials const& creds, RetryPolicy const& retry) {
  return with_retries("registry login check", retry, [&]() -> Status {
    engine::Request req{.method = "POST", .path = "/auth"};
    req.body = auth_config_json(creds);
    auto r = client.request(req);
    wipe(req.body);
    if (!r) {
      Error e = r.error();
      e.reason = Reason::RegistryUnreachable;  // dockerd is there (we negotiated); the call was cut
      return e;
    }
    if (r->status == 200) {
      spdlog::info("registry {} accepted the credentials of user {}", creds.registry, creds.username);
      return ok();
    }
    std::string const msg = engine::error_message(r->body);
    std::string const where = "checking the credentials for " + creds.registry + ": HTTP " + std::to_string(r->status);
    if (r->status == 401) return make_error(Reason::Auth, where + ": " + msg);
    Error e = classify_pull_error(msg, r->status);
    if (e.reason == Reason::ImageNotFound) e.reason = Reason::RegistryUnreachable;  // no image involved
    e.message = where + ": " + msg;
    return e;
  });
}

Result<PullResult> inspect_image(engine::Client& client, ImageToPull const& image) {
  auto r = client.request(engine::Request{.path = "/images/" + image.reference() + "/json"});
  if (!r) return r.error();
  if (r->status == 404) return make_error(Reason::ImageNotFound, image.reference() + " is not present locally");
  if (r->status != 200) return engine::http_error(Reason::DockerUnavailable, "inspecting " + image.reference(), *r);
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  PullResult res;
  res.image_id = json_str(j, "Id");
  if (res.image_id.empty()) return make_error(Reason::DockerUnavailable, "inspecting " + image.reference() + ": no Id");
  if (j.contains("RepoDigests") && j["RepoDigests"].is_array()) {
    for (auto const& d : j["RepoDigests"]) {
      if (!d.is_string()) continue;
      std::string const s = d.get<std::string>();
      auto at = s.find('@');
      if (at != std::string::npos && familiar(s.substr(0, at)) == familiar(image.repository)) {
        res.repo_digest = s;
        break;
      }
    }
  }
  return res;
}

Result<PullResult> pull_image(engine::Client& client, ImageToPull const& image, Credentials const* creds,
                              PullOptions const& options) {
  if (options.policy == config::PullPolicy::Missing) {
    auto have = inspect_image(client, image);
    if (have) {
      spdlog::info("image {} already present ({}), pull policy missing: not pulling", image.reference(), have->image_id);
      return have;
    }
    if (have.error().reason != Reason::ImageNotFound) spdlog::warn("{}", have.error().message);
  }
  bool const send_creds = creds != nullptr && credentials_apply(creds->registry, image.domain);
  if (creds && !send_creds)
    spdlog::warn("image {} is not on {}: pulling anonymously (credentials are only sent to their registry)",
                 image.reference(), creds->registry);

  Status st = with_retries("pulling " + image.reference(), options.retry, [&]() -> Status {
    engine::Request req{.method = "POST", .path = "/images/create"};
    req.query = {{"fromImage", image.repository}, {"tag", image.digest.empty() ? image.tag : image.digest}};
    if (send_creds) req.headers.push_back(registry_auth_header(*creds));
    ProgressAggregator agg;
    std::string stream_error;
    auto last_report = Clock::now() - options.progress_interval;
    auto r = client.stream(req, [&](std::string_view line) {
      std::string err = agg.feed(line);
      if (!err.empty() && stream_error.empty()) stream_error = std::move(err);
      if (options.on_progress && Clock::now() - last_report >= options.progress_interval) {
        last_report = Clock::now();
        options.on_progress(agg.snapshot());
      }
    });
    for (auto& h : req.headers) wipe(h);
    if (!r) {
      Error e = r.error();
      e.reason = Reason::RegistryUnreachable;
      e.message = "pulling " + image.reference() + ": " + e.message;
      return e;
    }
    if (r->status != 200) {
      Error e = classify_pull_error(engine::error_message(r->body), r->status);
      e.message = "pulling " + image.reference() + ": HTTP " + std::to_string(r->status) + ": " + e.message;
      return e;
    }
    if (!stream_error.empty()) {
      Error e = classify_pull_error(stream_error, 200);
      e.message = "pulling " + image.reference() + ": " + e.message;
      return e;
    }
    if (options.on_progress) options.on_progress(agg.snapshot());
    auto const p = agg.snapshot();
    spdlog::info("pulled {}: {} layers, {} bytes ({})", image.reference(), p.layers, p.bytes_total, p.status);
    return ok();
  });
  if (!st) return st.error();
  auto res = inspect_image(client, image);
  if (!res) return res.error();
  res->pulled = true;
  return res;
}

}  // namespace cosmicac::registry
