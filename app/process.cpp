#include "app/process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <filesystem>

#include "app/interrupt.h"

extern char** environ;

namespace rb {

pid_t spawn_process(const std::string& path, const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

namespace {

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 128;
}

}  // namespace

int wait_process(pid_t pid) {
  int status = 0;
  pid_t r = 0;
  while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  return r < 0 ? 128 : exit_code_of(status);
}

std::vector<int> wait_forwarding_signals(const std::vector<pid_t>& pids) {
  std::vector<int> codes(pids.size(), -1);
  std::size_t running = pids.size();
  int forwarded = 0;
  while (running > 0) {
    const int sig = interrupt_signal();
    if (sig != 0 && sig != forwarded) {
      for (std::size_t i = 0; i < pids.size(); ++i)
        if (codes[i] < 0) ::kill(pids[i], sig);
      forwarded = sig;
    }
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (codes[i] >= 0) continue;
      int status = 0;
      const pid_t r = waitpid(pids[i], &status, WNOHANG);
      if (r == pids[i] || (r < 0 && errno != EINTR)) {
        codes[i] = r < 0 ? 128 : exit_code_of(status);
        --running;
      }
    }
    if (running > 0) {
      // Polling (rather than blocking in waitpid) leaves no window in which a signal
      // arriving just before the wait would go unforwarded.
      const timespec pause{0, 20 * 1000 * 1000};
      nanosleep(&pause, nullptr);
    }
  }
  return codes;
}

std::string executable_dir() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

std::string find_script(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path beside = fs::path(executable_dir()) / ".." / "scripts" / name;
  if (fs::exists(beside)) return beside.string();
  return (fs::path(RB_SOURCE_DIR_STR) / "scripts" / name).string();
}

}  // namespace rb
