// Run-time settings of the vendor providers (kernels/vendor/vendor.h): set once by the CLI
// before any case runs, read by the providers when they load their libraries and list
// variants.
#include "kernels/vendor/vendor.h"

namespace rb::vendor {
namespace {

VendorOptions& stored_options() {
  static VendorOptions o;
  return o;
}

}  // namespace

void set_options(const VendorOptions& o) { stored_options() = o; }

const VendorOptions& options() { return stored_options(); }

}  // namespace rb::vendor
