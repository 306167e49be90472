#include "engine/images.hpp"

#include "common/secret.hpp"
#include "engine/http_error.hpp"
#include "engine/registry_error.hpp"

#include <nlohmann/json.hpp>

namespace cosmicac::engine {

Result<ImageInfo> inspect_image(Client& client, std::string const& reference) {
  auto r = client.request(Request{.path = "/images/" + reference + "/json"});
  if (!r) return r.error();
  if (r->status == 404) return make_error(Reason::ImageNotFound, reference + " is not present locally");
  if (r->status != 200) return http_error(Reason::DockerUnavailable, "inspecting " + reference, *r);
  auto const j = nlohmann::json::parse(r->body, nullptr, false);
  ImageInfo info;
  if (j.is_object() && j.contains("Id") && j["Id"].is_string()) info.id = j["Id"].get<std::string>();
  if (info.id.empty()) return make_error(Reason::DockerUnavailable, "inspecting " + reference + ": no Id");
  if (j.contains("RepoDigests") && j["RepoDigests"].is_array())
    for (auto const& d : j["RepoDigests"])
      if (d.is_string()) info.repo_digests.push_back(d.get<std::string>());
  return info;
}

Result<PullProgress> pull_image(Client& client, ImagePull pull,
                                std::function<void(PullProgress const&)> const& on_progress,
                                std::chrono::milliseconds interval) {
  using Clock = std::chrono::steady_clock;
  Request req{.method = "POST", .path = "/images/create"};
  req.query = {{"fromImage", pull.from_image}, {"tag", pull.tag}};
  if (!pull.auth_header.empty()) req.headers.push_back(std::move(pull.auth_header));  // wiped below
  ProgressAggregator agg;
  std::string stream_error;
  auto last_report = Clock::now() - interval;
  auto r = client.stream(req, [&](std::string_view line) {
    std::string err = agg.feed(line);
    if (!err.empty() && stream_error.empty()) stream_error = std::move(err);
    if (on_progress && Clock::now() - last_report >= interval) {
      last_report = Clock::now();
      on_progress(agg.snapshot());
    }
  });
  for (auto& h : req.headers) wipe(h);
  std::string const what = "pulling " + pull.reference;
  if (auto e = registry_answer_error(what, r)) return *e;
  if (!stream_error.empty()) {
    Error e = classify_pull_error(stream_error, 200);
    e.message = what + ": " + e.message;
    return e;
  }
  auto const progress = agg.snapshot();
  if (on_progress) on_progress(progress);
  return progress;
}

Result<std::string> parse_distribution_digest(std::string_view body) {
  if (body.size() > kMaxDistributionBody)
    return make_error(Reason::RegistryUnreachable, "the registry's descriptor is larger than 256 KiB");
  auto const j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("Descriptor") || !j["Descriptor"].is_object())
    return make_error(Reason::RegistryUnreachable, "the registry's answer has no descriptor");
  auto const& d = j["Descriptor"];
  if (!d.contains("digest") || !d["digest"].is_string())
    return make_error(Reason::RegistryUnreachable, "the registry's descriptor has no digest");
  auto const digest = d["digest"].get<std::string>();
  constexpr std::string_view kPrefix = "sha256:";
  bool ok_digest = digest.size() == kPrefix.size() + 64 && digest.starts_with(kPrefix);
  for (std::size_t k = kPrefix.size(); ok_digest && k < digest.size(); ++k)
    ok_digest = (digest[k] >= '0' && digest[k] <= '9') || (digest[k] >= 'a' && digest[k] <= 'f');
  if (!ok_digest) return make_error(Reason::RegistryUnreachable, "the registry's descriptor has no sha256 digest");
  return digest;
}

Result<std::string> resolve_manifest_digest(Client& client, std::string const& reference, std::string auth_header) {
  Request req{.path = "/distribution/" + reference + "/json"};
  if (!auth_header.empty()) req.headers.push_back(std::move(auth_header));
  auto r = client.request(req);
  for (auto& h : req.headers) wipe(h);
  std::string const what = "resolving " + reference;
  if (auto e = registry_answer_error(what, r)) return *e;
  auto digest = parse_distribution_digest(r->body);
  if (!digest) return make_error(digest.error().reason, what + ": " + digest.error().message);
  return digest;
}

Status tag_image(Client& client, std::string const& source, std::string const& repo, std::string const& tag) {
  auto r = client.request(
      Request{.method = "POST", .path = "/images/" + source + "/tag", .query = {{"repo", repo}, {"tag", tag}}});
  if (!r) return r.error();
  if (r->status == 404) return make_error(Reason::ImageNotFound, "tagging " + source + ": not present locally");
  if (r->status != 201 && r->status != 200)
    return http_error(Reason::DockerUnavailable, "tagging " + source + " as " + repo + ":" + tag, *r);
  return ok();
}

}  // namespace cosmicac::engine
