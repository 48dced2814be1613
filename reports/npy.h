// NumPy .npy files (format 1.0; 2.0 and 3.0 are read too): one array, little-endian, C
// order. The bisect reproducer keeps its tensors in them so numpy (np.load) reads them as
// they are. numpy has no bfloat16 or fp8 dtype: those are stored as their bits ('<u2',
// '|u1') and the reproducer's case file names the real dtype.
//
// No packaged C++ library reads or writes .npy (Debian has none; cnpy is unmaintained), so
// this is the format's header (a Python dict literal of three fixed keys) and raw data,
// and nothing more: it refuses what it does not understand rather than guess.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rb {

struct NpyArray {
  std::string descr;                 // '<f4', '<f8', '<f2', '<u2', '|u1', ...
  std::vector<std::int64_t> shape;   // C order
  std::vector<unsigned char> data;   // shape_bytes() bytes
  std::size_t item_size() const;     // from descr
  // The bytes the shape holds (its elements times item_size()); nullopt where a dimension is
  // negative or the product overflows 64 bits, as a corrupt header's shape can.
  std::optional<std::size_t> shape_bytes() const;
};

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes atomically (reports/atomic_file.h). Throws NpyError on a bad descr or a size that
// does not match the shape, std::runtime_error on an I/O failure.
void write_npy(const std::string& path, const NpyArray& a);
// Throws NpyError naming the file and what is wrong (not .npy, big-endian, Fortran order,
// an unknown descr, a shape whose size overflows, data shorter or longer than the shape).
NpyArray read_npy(const std::string& path);

}  // namespace rb
