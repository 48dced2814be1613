// Child processes of the CLI: the --devices workers and the plotting script.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rb {

// Starts `path` with argv `args` (args[0] is the program name) and the current environment.
// Returns the child's pid, or -1 when it cannot be started.
pid_t spawn_process(const std::string& path, const std::vector<std::string>& args);

// Waits for a child; its exit code, or 128 + signal when a signal ended it.
int wait_process(pid_t pid);

// Waits for every child. While they run, a SIGINT or SIGTERM recorded by the interrupt
// handlers (interrupt.h) is forwarded to each child still running, so each finishes its
// current case and writes what it finished. Returns each child's exit code (128 + signal when
// a signal ended it), in the order of pids.
std::vector<int> wait_forwarding_signals(const std::vector<pid_t>& pids);

// The directory holding this executable (from /proc/self/exe).
std::string executable_dir();

// scripts/<name> beside the build the executable lives in (../scripts), else in the source
// tree it was built from.
std::string find_script(const std::string& name);

}  // namespace rb
