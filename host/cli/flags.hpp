// The flag groups every command shares, parsed the same way wherever they
// appear (kubectl's ConfigFlags, FilenameOptions and PrintFlags): the cluster
// (--kubeconfig, --context, -n), the job spec and operator profile (-f,
// --profile), the output format (-o), durations (--timeout and kin) and
// --dry-run.
#pragma once

#include "common/error.hpp"
#include "host/base/host_error.hpp"
#include "host/base/yaml_json.hpp"
#include "host/cli/problem.hpp"
#include "host/cluster/cluster_access.hpp"
#include "host/cluster/kubeconfig.hpp"
#include "host/spec/job_spec.hpp"
#include "host/spec/operator_profile.hpp"
#include "host/verbs/request.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cosmicac::host::cli {

// --kubeconfig, --context, -n/--namespace. Each bind gives every flag its
// help line (COMMAND --help is made from them: host/cli/dispatch.hpp).
struct ClusterFlags {
  std::string kubeconfig, context, ns;
  // --qps, --burst: the client-side rate limit (client-go's QPS and Burst).
  // qps: kube-controller-manager's 20 (client-go's own 5 would hold a
  // hundred-job apply for minutes); a fleet's `wait` still stays bounded.
  // burst: kube-scheduler's 100 (its --kube-api-burst; kube-controller-manager
  // has 30). A rollout's batch is a burst: a 10-job batch is ~90 requests at
  // once, then nothing but the wait until its VMs boot (minutes), time enough
  // to refill the bucket. With 30 the limiter alone held each such batch
  // (90 − 30) / 20 = 3 s before its last VM restarted (issue 53 item 7,
  // bench/README.md); 100 lets it go at once, the average still 20 a second.
  RequestRate rate{.qps = 20, .burst = 100};
  // kubectl's global flags that mean something here (kubectl hands them to its
  // plugins: `kubectl cosmicac wait ... --request-timeout 10s --as bob`).
  std::optional<std::chrono::milliseconds> request_timeout;
  std::string as_user;
  std::vector<std::string> as_groups;
  void bind(CLI::App& app, bool with_kubeconfig = true);
  void bind_kubectl_flags(CLI::App& app);
  // The kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster), with the
  // rate limit; a failure exits 1.
  Result<ClusterAccess> access() const;
  // -n, else the namespace of the kubeconfig's context (kubectl's rule).
  std::string namespace_in(ClusterAccess const& access) const { return ns.empty() ? access.default_namespace : ns; }
};

// -f/--filename (as kubectl's: repeated or comma-separated, a directory's
// *.yaml, *.yml and *.json sorted by name, its subdirectories with -R, "-"
// for stdin once), -R/--recursive and --profile.
struct LoadedSpec {
  std::string source;  // as given, "<stdin>" for "-": for messages
  std::string file;    // as given ("-" for stdin): for the `wait -f` hint
  JobSpec spec;
};

// Every job's objects in one list, job after job (render, apply's client dry run).
std::vector<Json> objects_of(std::vector<LoadedSpec> const& specs);

struct FileFlags {
  std::vector<std::string> filenames;
  bool recursive = false;
  std::string profile;
  void bind(CLI::App& app);
  bool has_files() const { return !filenames.empty(); }
  // The files -f names, in order, directories expanded. A directory with no
  // such file, "-" twice, or a file named twice is a spec problem.
  Result<std::vector<std::string>> files() const;
  // The operator's profile (--profile FILE), else the compiled-in defaults.
  Result<OperatorProfile> load_profile() const;
  // … with the operator's namespace: the profile's, else `ns_flag` (-n); the
  // two must agree where both are given (exit 2 naming both).
  Result<OperatorProfile> load_profile(std::string const& ns_flag) const;
  // Every tenant job spec -f names, each with the operator's names and
  // namespace from the profile and -n (a spec naming another namespace, or
  // none given by the operator, is refused), all read before anything is
  // done; two naming the same job are refused. Every problem is a spec
  // problem (exit 2).
  Outcome load_specs(std::string const& ns_flag, std::vector<LoadedSpec>& specs) const;
  // … exactly one (render-userdata, doctor): more is a usage problem naming `command`.
  Outcome load_spec(std::string const& ns_flag, std::optional<JobSpec>& spec, std::string const& command) const;
};

// The jobs of one apply or delete of several: each failure is said as it
// happens (naming the job when there are several), the exit status is the
// first failure's, the summary counts them.
class JobTally {
 public:
  void add(LoadedSpec const& job, std::optional<Problem> problem, bool name_the_job);
  // "<verb> 2 of 3 jobs; failed: cosmic-ac/b (b.yaml)"
  std::string summary(std::string const& verb) const;
  // Done, or the first failure's exit status (each failure said already).
  Outcome outcome() const;

 private:
  std::size_t jobs_ = 0;
  std::vector<std::string> failed_;
  std::optional<Errc> first_failure_;
};

// -o/--output yaml|json. Empty: the command's own default (a table, progress lines).
struct PrintFlags {
  std::string output;
  void bind(CLI::App& app);
  Outcome validate() const;
  // JSON with every non-ASCII character escaped (a terminal sees no raw C1 or
  // bidi control from the API server), or YAML (ASCII-only writer); objects
  // (more than one) as a v1 List or a YAML stream.
  std::string format(Json const& value) const;
  std::string format_objects(std::vector<Json> const& objects) const;
};

// --dry-run[=none|client|server]: a bare --dry-run is client, as kubectl's;
// parsed once, while the command line is (another value is a usage problem).
struct DryRunFlag {
  DryRun mode = DryRun::None;
  void bind(CLI::App& app);

 private:
  std::string text_;  // CLI11's, as given
};

// A duration flag (--timeout, --interval, --schedule-timeout) in Go's syntax
// (5m, 1h30m, 500ms), parsed once, while the command line is: a bad value is
// a usage problem naming the flag; an empty one keeps the default.
struct DurationFlag {
  std::chrono::milliseconds value;
  explicit DurationFlag(std::chrono::milliseconds default_value) : value(default_value) {}
  // `what` says what the duration bounds; the help line adds the default.
  void bind(CLI::App& app, std::string const& name, std::string const& what);
};

// kubectl's global flags that cosmicac-vmi does not take (`kubectl options`),
// with why and what to use instead; `arg` as given ("--token=x", "-s").
// Empty for any other argument.
std::string kubectl_flag_refusal(std::string_view arg);

// -n against the profile's namespace: empty when either is absent or they agree.
Outcome namespace_conflict(std::string const& ns_flag, OperatorProfile const& profile);

}  // namespace cosmicac::host::cli
