#include "reports/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace rb {
namespace {

std::string errno_text(int err) { return err != 0 ? std::strerror(err) : "unknown error"; }

std::string parent_dir(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Makes the rename itself durable. Best effort: the file is already complete and in place.
void sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Writes all of text to fd; false with errno set on failure (EIO for a write of nothing).
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& text) {
  // A device or FIFO (`-o /dev/null`, `--csv /dev/stdout`) is written through: renaming a
  // file over it would replace the device node itself (as root) or fail to create the
  // temporary file beside it (/dev is not writable to others).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 || !write_all(fd, text)) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      throw std::runtime_error(fmt::format("cannot write {}: {}", path, errno_text(err)));
    }
    ::close(fd);
    return;
  }

  // pid and a counter: concurrent writers of one path, in or across processes, never share
  // a temporary file.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = fmt::format("{}.tmp.{}.{}", path, static_cast<long>(::getpid()), counter++);
  const auto fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write {}: {}: {}", path, what, errno_text(err)));
  };

  // O_EXCL: never write through a file or link someone else put there; 0666 minus the umask,
  // as an ordinary fopen would create it.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    throw std::runtime_error(
        fmt::format("cannot write {}: cannot create temporary file {}: {}", path, tmp, errno_text(err)));
  }
  if (!write_all(fd, text)) {
    const int err = errno;
    ::close(fd);
    fail("write failed", err);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail("fsync failed", err);
  }
  if (::close(fd) != 0) fail("close failed", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed", errno);
  sync_dir(parent_dir(path));
}

}  // namespace rb
