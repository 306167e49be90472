#include "registry/pull.hpp"

#include "engine/images.hpp"
#include "engine/system.hpp"
#include "registry/auth_header.hpp"

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

}  // namespace

std::string ImageToPull::reference() const {
  return digest.empty() ? repository + ":" + tag : repository + "@" + digest;
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

std::optional<PullResult> usable_local_image(engine::Client& client, ImageToPull const& image, PullPolicy policy) {
  if (policy == PullPolicy::Always) return std::nullopt;
  auto have = inspect_image(client, image);
  if (!have) {
    if (have.error().reason != Reason::ImageNotFound) spdlog::warn("{}", have.error().message);
    return std::nullopt;
  }
  spdlog::info("image {} already present ({}), pull policy missing: not pulling", image.reference(), have->image_id);
  return *have;
}

Status check_credentials(engine::Client& client, Credentials const& creds, RetryPolicy const& retry) {
  return with_retries("registry login check", retry, [&]() -> Status {
    if (auto st = engine::check_auth(client, auth_config_json(creds), creds.registry); !st) return st;
    spdlog::info("registry {} accepted the credentials of user {}", creds.registry, creds.username);
    return ok();
  });
}

Result<PullResult> inspect_image(engine::Client& client, ImageToPull const& image) {
  auto info = engine::inspect_image(client, image.reference());
  if (!info) return info.error();
  PullResult res{.image_id = info->id};
  for (auto const& d : info->repo_digests) {
    auto const at = d.find('@');
    if (at != std::string::npos && familiar(d.substr(0, at)) == familiar(image.repository)) {
      res.repo_digest = d;
      break;
    }
  }
  return res;
}

Result<PullResult> pull_image(engine::Client& client, ImageToPull const& image, Credentials const* creds,
                              PullOptions const& options) {
  bool const send_creds = creds != nullptr && credentials_apply(creds->registry, image.domain);
  if (creds && !send_creds)
    spdlog::warn("image {} is not on {}: pulling anonymously (credentials are only sent to their registry)",
                 image.reference(), creds->registry);

  Status st = with_retries("pulling " + image.reference(), options.retry, [&]() -> Status {
    auto pulled = engine::pull_image(client,
                                     {.reference = image.reference(),
                                      .from_image = image.repository,
                                      .tag = image.digest.empty() ? image.tag : image.digest,
                                      .auth_header = send_creds ? registry_auth_header(*creds) : std::string()},
                                     options.on_progress, options.progress_interval);
    if (!pulled) return pulled.error();
    spdlog::info("pulled {}: {} layers, {} bytes ({})", image.reference(), pulled->layers, pulled->bytes_total,
                 pulled->status);
    return ok();
  });
  if (!st) return st.error();
  auto res = inspect_image(client, image);
  if (!res) return res.error();
  res->pulled = true;
  return res;
}

}  // namespace cosmicac::registry
