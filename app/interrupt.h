// SIGINT / SIGTERM during a sweep. The handler only records the signal (a sig_atomic_t); the
// run loop checks it between cases and finishes cleanly: the CSV holds every finished case,
// the report covers them, and the exit code is 128 + the signal (130, 143).
#pragma once

#include <exception>

namespace rb {

// Installs the recording handler for SIGINT and SIGTERM (without SA_RESTART, so a blocking
// wait returns EINTR and its loop sees the signal).
void install_interrupt_handlers();

// The first signal recorded since the handlers were installed (or reset), else 0.
int interrupt_signal();

// Forgets a recorded signal (tests).
void reset_interrupt();

// Thrown between cases once a signal is recorded.
struct Interrupted : std::exception {
  int signal;
  explicit Interrupted(int sig) : signal(sig) {}
  const char* what() const noexcept override { return "interrupted by a signal"; }
};

// Throws Interrupted when a signal has been recorded.
void throw_if_interrupted();

}  // namespace rb
