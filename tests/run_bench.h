// Test helper: runs the built rmsnorm-bench as a user would and captures its exit status and
// output. The binary is found beside the test's build folder (build/tests/../rmsnorm-bench),
// so the tests work wherever the build folder is moved.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace rb::testing_support {

inline std::filesystem::path bench_exe() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (self.parent_path() / ".." / "rmsnorm-bench").lexically_normal();
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct RunResult {
  int status = -1;     // exit status, or -1 when the process did not exit normally
  int signal = 0;      // the signal that ended it, if any
  std::string output;  // stdout and stderr together
};

inline RunResult run_bench(const std::vector<std::string>& args) {
  // `timeout` turns a hang into exit 124 instead of a stuck test.
  std::string cmd = "timeout 60 " + shell_quote(bench_exe().string());
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>&1";
  RunResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    r.output = "popen failed";
    return r;
  }
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = ::pclose(p);
  if (st != -1 && WIFEXITED(st)) {
    r.status = WEXITSTATUS(st);
    // The shell reports a child killed by signal N as exit 128 + N.
    if (r.status > 128 && r.status < 128 + 65) r.signal = r.status - 128;
  } else if (st != -1 && WIFSIGNALED(st)) {
    r.signal = WTERMSIG(st);
  }
  return r;
}

}  // namespace rb::testing_support
