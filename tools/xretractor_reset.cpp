// xretractor's plans one after another: the idle instance, the plans clients send (xqry --reset) and their storage.
#include <sys/stat.h>

#include "grammar/front.hpp"
#include "tools/xretractor.hpp"

namespace xretractor {

bool emptyPlanText(const std::string& text) {
  try {
    return rql::parseText(text).empty();
  } catch (const std::exception&) {
    return false;  // the compile reports what is wrong with it
  }
}

std::string compileSent(const std::string& text, const RunArgs& a, ir::Plan& out) {
  ir::Options copt = compileOptions();
  disablePasses(a.disabled, copt);  // checked at start
  std::string errors;
  if (compileText(text, "reset", copt, out, a.strict, &errors)) {
    while (!errors.empty() && errors.back() == '\n') errors.pop_back();
    return errors.empty() ? "the plan does not compile" : errors;
  }
  if (!existingStorageDir(out)) return "reset: error: the plan's storage directory does not exist";
  // A plan from a client is not the operator's: DO SYSTEM would run its commands as this user.
  for (auto& q : out.queries)
    for (auto& r : q.rules)
      if (r.action == ir::RuleAction::SYSTEM && !a.allowAdhocSystem)
        return "Rejected: rule '" + r.name + "' on stream '" + q.id +
               "' uses DO SYSTEM; a plan sent by a client may not run shell commands unless the engine was " +
               "started with --allow-adhoc-system";
  return "";
}

namespace {

// Idle: no plan, but hello and kill work, data commands answer empty, and
// xqry --reset loads a plan (sw.load). False when -m's count ran out or killed.
bool runIdle(tools::Instance& inst, const RunArgs& a, PlanSwitch& sw) {
  ipc::ServerHooks idleHooks;
  idleHooks.kill = [] { gStop.store(true); };
  idleHooks.list = [] { return std::vector<ipc::StreamInfo>{}; };  // no streams
  idleHooks.exists = [](const std::string&) { return false; };
  idleHooks.adhoc = [](const std::string&) -> std::string {
    return "Rejected: the instance is idle (no plan runs); load one with xqry --reset FILE";
  };
  idleHooks.reset = [&](const std::string& text, std::vector<std::string>&) -> std::string {
    if (emptyPlanText(text)) return "OK";  // idle already
    ir::Plan plan;
    if (std::string err = compileSent(text, a, plan); !err.empty()) return err;
    const std::optional<std::string> dir = existingStorageDir(plan);
    std::string why;
    if (!inst.lockStorage(*dir, &why)) return "Rejected: " + why;
    sw.load = std::move(plan);
    return "OK";
  };
  for (int64_t n = 1; !gStop.load() && (a.limit == 0 || n < a.limit); ++n) {
    inst.server->poll(idleHooks, 100);
    if (sw.load) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> existingStorageDir(ir::Plan& plan) {
  if (!plan.find(":STORAGE") && !gConfig.storageDir.empty()) {
    ir::Query st;
    st.id = ":STORAGE";
    st.filename = gConfig.storageDir;
    plan.queries.insert(plan.queries.begin(), st);
  }
  const ir::Query* st = plan.find(":STORAGE");
  std::string dir = st ? st->filename : "";
  struct stat sb {};
  if (dir.empty() || (stat(dir.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode))) return dir;
  return std::nullopt;
}

int serve(tools::Instance& inst, std::optional<ir::Plan> plan, const RunArgs& a) {
  for (bool fromClient = false;; fromClient = true) {
    PlanSwitch sw;
    if (!plan) {
      if (!runIdle(inst, a, sw)) break;
      plan = std::move(sw.load);
      sw = {};
    }
    sw.fromClient = fromClient;
    if (int rc = runEngine(inst, *plan, a, sw)) {
      if (!fromClient) return rc;
      sw.toIdle = true;  // a loaded plan that cannot start leaves the instance idle, not gone
    }
    if (!sw.toIdle) return 0;
    gStop.store(false);
    inst.storageLock.reset();
    plan.reset();
  }
  inst.server->shutdown();
  return 0;
}

}  // namespace xretractor
