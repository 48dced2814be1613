// Replacing a file in one step, so a reader (or a crash) never sees it half written.
#pragma once

#include <string>

namespace rb {

// Writes text to a temporary file beside path (same directory, so the rename stays on one
// file system), flushes it to disk (fsync), and renames it over path. On any failure the
// temporary file is removed, path is left as it was (absent, or its old contents), and
// std::runtime_error is thrown naming path and the failing step. A path that is a device or a
// FIFO (/dev/null, /dev/stdout) is written through instead, not replaced.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace rb
