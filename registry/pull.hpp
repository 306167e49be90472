// The pull flow: whether the image must be pulled (the pull policy, decided
// here only), checking the registry credentials, and pulling with bounded
// retries of transient faults. The Docker calls themselves are engine/'s.
#pragma once

#include "common/error.hpp"
#include "engine/client.hpp"
#include "engine/pull_progress.hpp"
#include "registry/credentials.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace cosmicac::registry {

struct ImageToPull {
  std::string domain;             // "ghcr.io"; decides whether the credentials are sent
  std::string repository;         // "ghcr.io/tetherto/x" (domain/path)
  std::string tag;                // "latest"
  std::string digest;             // "sha256:…" or empty; wins over the tag
  std::string reference() const;  // repository@digest or repository:tag
};

// missing: use the image dockerd already has; always: pull it every run.
enum class PullPolicy { Missing, Always };

struct RetryPolicy {
  std::chrono::milliseconds budget{std::chrono::seconds(600)};  // RETRY_BUDGET
  std::chrono::milliseconds initial_backoff{std::chrono::seconds(1)};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(30)};
};

struct PullOptions {
  RetryPolicy retry;
  std::function<void(engine::PullProgress const&)> on_progress;  // rate-limited
  std::chrono::milliseconds progress_interval{std::chrono::seconds(2)};
};

struct PullResult {
  std::string image_id;     // sha256:…
  std::string repo_digest;  // repository@sha256:… (empty for a local-only image)
  bool pulled = false;      // false: the local image was used
};

// Pure: the backoff before retry number `attempt` (1-based): initial·2^(attempt-1)
// capped at max, with ±25 % jitter.
std::chrono::milliseconds backoff_delay(int attempt, RetryPolicy const& policy, std::mt19937& rng);

// Pure: whether credentials for `registry` belong to an image on `domain`
// (docker.io aliases are one registry). Never send a token to another registry.
bool credentials_apply(std::string_view registry, std::string_view domain);

// Runs `attempt` until it succeeds, fails permanently, or the budget is spent.
Status with_retries(std::string_view what, RetryPolicy const& policy, std::function<Status()> const& attempt);

// The pull policy: the image dockerd already has when `policy` lets it be
// used, nullopt when it must be pulled (always, or not present).
std::optional<PullResult> usable_local_image(engine::Client& client, ImageToPull const& image, PullPolicy policy);

// POST /auth, retried. Auth (permanent) on 401; RegistryUnreachable otherwise.
Status check_credentials(engine::Client& client, Credentials const& creds, RetryPolicy const& retry);

// The pull, always (the policy is usable_local_image's). `creds` may be null
// (anonymous); the token is only sent to its own registry.
Result<PullResult> pull_image(engine::Client& client, ImageToPull const& image, Credentials const* creds,
                              PullOptions const& options);

// The image's id and the repo digest matching its repository.
// ImageNotFound when absent.
Result<PullResult> inspect_image(engine::Client& client, ImageToPull const& image);

}  // namespace cosmicac::registry
