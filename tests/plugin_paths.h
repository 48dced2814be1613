// The example plugins' paths for the plugin tests. CMake passes the paths of this build
// (RB_PLUGIN_*); a build carried to another machine (the GPU check) finds them beside the
// test binary instead: <test dir>/../examples/plugin/<file>.
#pragma once

#include <filesystem>
#include <string>

namespace rb::test {

inline std::string plugin_file(const char* built) {
  namespace fs = std::filesystem;
  if (fs::exists(built)) return built;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / ".." / "examples" / "plugin" / fs::path(built).filename()).lexically_normal().string();
}

}  // namespace rb::test

// Each RB_PLUGIN_X names the resolved path from here on.
#define RB_RESOLVE_PLUGIN(X) (::rb::test::plugin_file(X))
