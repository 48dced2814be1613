#include "app/interrupt.h"

#include <csignal>
#include <cstring>

namespace rb {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void record_signal(int sig) {
  if (g_signal == 0) g_signal = sig;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = record_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return static_cast<int>(g_signal); }

void reset_interrupt() { g_signal = 0; }

void throw_if_interrupted() {
  if (const int sig = interrupt_signal()) throw Interrupted(sig);
}

}  // namespace rb
