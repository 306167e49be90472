#include "host/cli/flags.hpp"

#include "common/file_io.hpp"
#include "common/terminal_text.hpp"
#include "host/base/duration.hpp"
#include "host/render/manifests.hpp"

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>

namespace cosmicac::host::cli {

namespace {

// "--qps: 'x' is not a number of at least 0.001" (CLI11's own validators
// print their whole range, up to DBL_MAX written out).
CLI::Validator number_at_least(double least) {
  return CLI::Validator(
      [least](std::string& text) -> std::string {
        char* end = nullptr;
        double const value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(value >= least))
          return "'" + terminal_safe(text) + "' is not a number of at least " + CLI::detail::to_string(least);
        return {};
      },
      "NUMBER");
}

}  // namespace

void ClusterFlags::bind(CLI::App& app, bool with_kubeconfig) {
  if (with_kubeconfig) {
    app.add_option("--kubeconfig", kubeconfig,
                   "the kubeconfig (else $KUBECONFIG, ~/.kube/config,\nthe in-cluster service account)")
        ->type_name("FILE");
    app.add_option("--context", context, "the kubeconfig's context (else its current-context)")->type_name("NAME");
    app.add_option("--qps", rate.qps,
                   "requests a second to the API server, on average [default " +
                       std::to_string(static_cast<int>(rate.qps)) + "]")
        ->type_name("N")
        ->check(number_at_least(0.001));
    app.add_option("--burst", rate.burst,
                   "requests at once before --qps holds them [default " + std::to_string(rate.burst) + "]")
        ->type_name("N")
        ->check(number_at_least(1));
    bind_kubectl_flags(app);
  }
  app.add_option("-n,--namespace", ns,
                 "the operator's namespace (the profile's, else this, else the\n"
                 "context's); a job spec may repeat it, never choose it")
      ->type_name("NS");
}

void ClusterFlags::bind_kubectl_flags(CLI::App& app) {
  app.add_option_function<std::string>(
         "--request-timeout",
         [this](std::string const& text) {
           // kubectl's: a bare number is seconds, 0 waits for ever.
           bool const digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
           std::string const number = text.substr(0, text.find_first_not_of("0123456789"));
           if (!number.empty() && number.find_first_not_of('0') == std::string::npos &&
               (digits || text.find_first_not_of("smh", number.size()) == std::string::npos)) {
             request_timeout = std::chrono::milliseconds(0);  // "0", "0s", "0ms": none (parse_duration wants > 0)
             return;
           }
           auto parsed = parse_duration(digits ? text + "s" : text);
           if (!parsed) throw CLI::ValidationError("--request-timeout", parsed.error().message);
           request_timeout = *parsed;
         },
         "each API request's bound (kubectl's flag; 0: none)\n[default 30s]")
      ->type_name("DURATION");
  auto no_line_breaks = CLI::Validator(
      [](std::string& text) -> std::string {
        for (char c : text)
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return "a control character in '" + terminal_safe(text) + "'";
        return {};
      },
      "");
  app.add_option("--as", as_user, "act as this user (kubectl's impersonation; the\nserver checks you may)")
      ->type_name("USER")
      ->check(no_line_breaks);
  app.add_option("--as-group", as_groups, "… and as this group; repeated for several")
      ->type_name("GROUP")
      ->allow_extra_args(false)  // one group each: a NAME after it stays a NAME
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(no_line_breaks);
}

Result<ClusterAccess> ClusterFlags::access() const {
  if (!as_groups.empty() && as_user.empty()) return host_error(Errc::Usage, "--as-group needs --as (as kubectl's)");
  auto loaded = load_cluster_access(kubeconfig, context, KubeEnvironment::from_process());
  if (!loaded) return loaded;
  loaded->rate = rate;
  loaded->request_timeout = request_timeout;
  loaded->impersonate_user = as_user;
  loaded->impersonate_groups = as_groups;
  return loaded;
}

namespace {

struct KubectlFlag {
  std::string_view name;  // without dashes
  std::string_view why;
};

constexpr std::string_view kKubeconfigOnly =
    "cosmicac-vmi reads the cluster and its credentials from a kubeconfig context only (--kubeconfig FILE, "
    "--context NAME)";
constexpr std::string_view kNoMeaning = "it has no meaning for cosmicac-vmi";

// `kubectl options` (1.32) less what ClusterFlags binds.
constexpr std::array<KubectlFlag, 22> kKubectlFlags = {{
    {"server", kKubeconfigOnly},
    {"s", kKubeconfigOnly},
    {"cluster", kKubeconfigOnly},
    {"user", kKubeconfigOnly},
    {"token", kKubeconfigOnly},
    {"username", kKubeconfigOnly},
    {"password", kKubeconfigOnly},
    {"certificate-authority", kKubeconfigOnly},
    {"client-certificate", kKubeconfigOnly},
    {"client-key", kKubeconfigOnly},
    {"insecure-skip-tls-verify", kKubeconfigOnly},
    {"tls-server-name", kKubeconfigOnly},
    {"as-uid", "impersonation by UID is not supported (--as and --as-group are)"},
    {"cache-dir", "cosmicac-vmi keeps no discovery cache"},
    {"disable-compression", "cosmicac-vmi asks for no compressed responses"},
    {"match-server-version", kNoMeaning},
    {"warnings-as-errors", kNoMeaning},
    {"profile-output", kNoMeaning},
    {"log-flush-frequency", kNoMeaning},
    {"v", "cosmicac-vmi has no log levels (its messages go to stderr)"},
    {"vmodule", "cosmicac-vmi has no log levels (its messages go to stderr)"},
    {"kubeconfig", "this command reads no cluster"},
}};

}  // namespace

std::string kubectl_flag_refusal(std::string_view arg) {
  if (!arg.starts_with('-')) return {};
  std::string_view name = arg.substr(arg.starts_with("--") ? 2 : 1);
  name = name.substr(0, name.find('='));
  for (auto const& flag : kKubectlFlags)
    if (flag.name == name)
      return std::string(arg.starts_with("--") ? "--" : "-") + std::string(name) +
             " is kubectl's global flag and is not taken: " + std::string(flag.why);
  return {};
}

std::vector<Json> objects_of(std::vector<LoadedSpec> const& specs) {
  std::vector<Json> objects;
  for (auto const& job : specs)
    for (auto& o : render_manifests(job.spec)) objects.push_back(std::move(o));
  return objects;
}

void FileFlags::bind(CLI::App& app) {
  // Each -f takes one value (a comma splits it), so a positional NAME after it stays one.
  app.add_option("-f,--filename", filenames,
                 "a job spec (YAML or JSON); repeated or comma-separated;\n"
                 "a directory: its *.yaml, *.yml, *.json by name; - stdin (once)")
      ->type_name("SPEC")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);  // not the last-wins of single values
  app.add_flag("-R,--recursive", recursive, "-f DIRECTORY reads its subdirectories too");
  app.add_option("--profile", profile,
                 "the operator profile (root image, Secrets, ConfigMap, storage\n"
                 "class, network, GPU types, mirror); else compiled-in defaults")
      ->type_name("FILE");
}

namespace {

bool is_directory(std::string const& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_spec_file_name(std::string const& name) {
  for (std::string_view ext : {".yaml", ".yml", ".json"})
    if (name.size() > ext.size() && name.ends_with(ext)) return true;
  return false;
}

// A directory's spec files, sorted by name; its subdirectories' too (after
// its own files, each in name order) when `recursive`.
::cosmicac::Status add_directory(std::string const& dir, bool recursive, std::vector<std::string>& out) {
  auto names = directory_entries(dir, Reason::ConfigInvalid);
  if (!names) return names.error();
  std::sort(names->begin(), names->end());
  std::vector<std::string> subdirs;
  for (auto const& name : *names) {
    std::string const path = join_path(dir, name);
    if (is_directory(path)) {
      if (recursive) subdirs.push_back(path);
    } else if (is_spec_file_name(name)) {
      out.push_back(path);
    }
  }
  for (auto const& sub : subdirs)
    if (auto st = add_directory(sub, recursive, out); !st) return st;
  return ::cosmicac::ok();
}

}  // namespace

Result<std::vector<std::string>> FileFlags::files() const {
  std::vector<std::string> out;
  bool stdin_seen = false;
  for (auto const& f : filenames) {
    if (f.empty()) return host_error(Errc::Usage, "-f: an empty file name");
    if (f == "-") {
      if (stdin_seen) return host_error(Errc::Usage, "-f -: stdin can be read once");
      stdin_seen = true;
      out.push_back(f);
    } else if (is_directory(f)) {
      std::size_t const before = out.size();
      if (auto st = add_directory(f, recursive, out); !st)
        return host_error(Errc::Spec, terminal_safe(st.error().message));
      if (out.size() == before)
        return host_error(Errc::Spec, terminal_safe(f) + ": no *.yaml, *.yml or *.json file in it" +
                                          (recursive ? "" : " (-R reads its subdirectories)"));
    } else {
      out.push_back(f);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[i] == out[j] && out[i] != "-")
        return host_error(Errc::Usage, "-f names " + terminal_safe(out[i]) + " twice");
  return out;
}

Result<OperatorProfile> FileFlags::load_profile() const {
  if (profile.empty()) return OperatorProfile();
  return load_operator_profile(profile);
}

Result<OperatorProfile> FileFlags::load_profile(std::string const& ns_flag) const {
  auto loaded = load_profile();
  if (!loaded) return loaded;
  if (auto conflict = namespace_conflict(ns_flag, *loaded)) return host_error(Errc::Spec, conflict->message);
  if (loaded->ns.empty()) loaded->ns = ns_flag;
  return loaded;
}

Outcome FileFlags::load_specs(std::string const& ns_flag, std::vector<LoadedSpec>& specs) const {
  auto sources = files();
  if (!sources)
    return sources.error().kind == Errc::Usage ? usage_problem(sources.error().message) : failure(sources.error());
  auto operator_profile = load_profile(ns_flag);
  if (!operator_profile) return failure(operator_profile.error());
  // The spec may repeat the namespace, never choose it: without the
  // operator's, nothing is read.
  if (operator_profile->ns.empty())
    return failure(Errc::Spec,
                   "the namespace is the operator's: give -n NAMESPACE or the operator profile key "
                   "namespace (a job spec may repeat it, never choose it)");
  specs.clear();
  for (auto const& f : *sources) {
    auto loaded = load_renderable_spec(f, *operator_profile);
    if (!loaded) return failure(loaded.error());
    std::string const source = f == "-" ? "<stdin>" : terminal_safe(f);
    for (auto const& earlier : specs)
      if (earlier.spec.name == loaded->name)
        return failure(Errc::Spec, earlier.source + " and " + source + " are both job " + loaded->ns + "/" +
                                       loaded->name + ": one spec a job");
    specs.push_back(LoadedSpec{.source = source, .file = f, .spec = std::move(*loaded)});
  }
  return std::nullopt;
}

Outcome FileFlags::load_spec(std::string const& ns_flag, std::optional<JobSpec>& spec,
                             std::string const& command) const {
  std::vector<LoadedSpec> specs;
  if (auto p = load_specs(ns_flag, specs)) return p;
  if (specs.size() != 1)
    return usage_problem(command + " takes one job spec; -f names " + std::to_string(specs.size()));
  spec = std::move(specs.front().spec);
  return std::nullopt;
}

void JobTally::add(LoadedSpec const& job, std::optional<Problem> problem, bool name_the_job) {
  ++jobs_;
  if (!problem) return;
  std::string const who = job.spec.ns + "/" + job.spec.name + " (" + job.source + ")";
  if (name_the_job) problem->message = "job " + who + ": " + problem->message;
  print_problem(*problem);
  failed_.push_back(who);
  if (!first_failure_) first_failure_ = problem->kind;
}

Outcome JobTally::outcome() const {
  if (!first_failure_) return std::nullopt;
  return already_said(*first_failure_);
}

std::string JobTally::summary(std::string const& verb) const {
  std::string s = verb + " " + std::to_string(jobs_ - failed_.size()) + " of " + std::to_string(jobs_) + " jobs";
  for (std::size_t i = 0; i < failed_.size(); ++i) s += (i == 0 ? "; failed: " : ", ") + failed_[i];
  return s;
}

void PrintFlags::bind(CLI::App& app) {
  app.add_option("-o,--output", output, "print the objects as yaml or json")->type_name("FORMAT");
}

Outcome PrintFlags::validate() const {
  if (!output.empty() && output != "yaml" && output != "json") return usage_problem("-o must be yaml or json");
  return std::nullopt;
}

std::string PrintFlags::format(Json const& value) const {
  if (output == "json") return value.dump(2, ' ', true) + "\n";
  return to_yaml(value);
}

std::string PrintFlags::format_objects(std::vector<Json> const& objects) const {
  if (output == "json") return as_list(objects).dump(2, ' ', true) + "\n";
  return to_yaml_stream(objects);
}

void DryRunFlag::bind(CLI::App& app) {
  app.add_flag("--dry-run{client}", text_,
               "client (a bare --dry-run): the objects, no API call; server:\n"
               "the API server checks each request, stores nothing; none")
      ->type_name("[=client|server|none]")
      ->check(CLI::Validator(
          [this](std::string& text) -> std::string {
            if (text == "none") mode = DryRun::None;
            else if (text == "client") mode = DryRun::Client;
            else if (text == "server") mode = DryRun::Server;
            else return "must be none, client or server";
            return {};
          },
          ""));
}

void DurationFlag::bind(CLI::App& app, std::string const& name, std::string const& what) {
  app.add_option_function<std::string>(
         name,
         [this, name](std::string const& text) {
           if (text.empty()) return;  // --timeout= keeps the default, as before
           auto parsed = parse_duration(text);
           if (!parsed) throw CLI::ValidationError(name, parsed.error().message);  // "--timeout: ..."
           value = *parsed;
         },
         what + " [default " + format_duration(value) + "]")
      ->type_name("DURATION");
}

Outcome namespace_conflict(std::string const& ns_flag, OperatorProfile const& profile) {
  if (ns_flag.empty() || profile.ns.empty() || ns_flag == profile.ns) return std::nullopt;
  return failure(Errc::Spec, "-n " + terminal_safe(ns_flag) + " is not the namespace of operator profile " +
                                 terminal_safe(profile.origin) + " (" + profile.ns + ")");
}

}  // namespace cosmicac::host::cli
