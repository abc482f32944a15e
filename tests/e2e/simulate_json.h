#pragma once
// `kubesched simulate -o json` from end-to-end tests: run it on manifests (and a configuration),
// and read where each pod went and why the others did not.

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {

//! simulate's JSON for `manifests` (written to <name>.yaml), with `config` as --config when given;
//! a discarded value when it did not print JSON (the exit code is checked).
inline nlohmann::json SimulateJson(const std::string& manifests, const std::string& name,
                                   const std::string& config = "") {
  const std::string file = WriteTempFile(name + ".yaml", manifests);
  std::vector<std::string> args = {"simulate", "-f", file, "-o", "json"};
  if (!config.empty()) {
    args.push_back("--config");
    args.push_back(WriteTempFile(name + "-config.yaml", config));
  }
  RunResult r = RunKubesched(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

//! Pod name -> node ("" when pending).
inline std::map<std::string, std::string> PodPlacement(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  for (const auto& p : j["pods"]) {
    out[p["name"].get<std::string>()] = p["node"].is_string() ? p["node"].get<std::string>() : "";
  }
  return out;
}

//! Pod name -> its last scheduling message ("" when none).
inline std::map<std::string, std::string> PodMessages(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  for (const auto& p : j["pods"]) {
    out[p["name"].get<std::string>()] = p["message"].is_string() ? p["message"].get<std::string>() : "";
  }
  return out;
}

}  // namespace kubesched::e2e
