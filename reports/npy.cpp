#include "reports/npy.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "reports/atomic_file.h"

namespace rb {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

// The descrs we write and read: little-endian (or byte-sized) numbers.
std::size_t descr_size(const std::string& d) {
  static const std::pair<const char*, std::size_t> known[] = {
      {"<f8", 8}, {"<f4", 4}, {"<f2", 2}, {"<u2", 2}, {"|u1", 1}, {"<u1", 1}, {"|i1", 1},
      {"<i4", 4}, {"<i8", 8}, {"<u4", 4}, {"<u8", 8}};
  for (const auto& [name, size] : known)
    if (d == name) return size;
  return 0;
}

// The value of `key` in the header dict: the text after "'key':" up to the next top-level
// comma or the closing brace (a shape tuple's commas are inside parentheses).
std::string dict_value(const std::string& header, const std::string& key, const std::string& file) {
  const std::string needle = "'" + key + "':";
  const std::size_t at = header.find(needle);
  if (at == std::string::npos) throw NpyError(fmt::format("{}: .npy header has no '{}'", file, key));
  std::size_t i = at + needle.size();
  int depth = 0;
  std::string v;
  for (; i < header.size(); ++i) {
    const char ch = header[i];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
    v += ch;
  }
  const std::size_t b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
}

std::vector<std::int64_t> parse_shape(const std::string& text, const std::string& file) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    throw NpyError(fmt::format("{}: .npy shape '{}' is not a tuple", file, text));
  std::vector<std::int64_t> shape;
  std::istringstream in(text.substr(1, text.size() - 2));
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::size_t b = item.find_first_not_of(" "), e = item.find_last_not_of(" ");
    if (b == std::string::npos) continue;  // the trailing comma of a 1-tuple
    const std::string num = item.substr(b, e - b + 1);
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(num, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != num.size() || v < 0) throw NpyError(fmt::format("{}: .npy shape '{}' has '{}', not a size", file, text, num));
    shape.push_back(v);
  }
  return shape;
}

}  // namespace

std::size_t NpyArray::item_size() const { return descr_size(descr); }

std::optional<std::size_t> NpyArray::shape_bytes() const {
  std::size_t n = item_size();
  for (std::int64_t d : shape) {
    const auto u = static_cast<std::size_t>(d);
    if (d < 0 || (u != 0 && n > std::numeric_limits<std::size_t>::max() / u)) return std::nullopt;
    n *= u;
  }
  return n;
}

void write_npy(const std::string& path, const NpyArray& a) {
  if (a.item_size() == 0) throw NpyError(fmt::format("{}: unsupported .npy descr '{}'", path, a.descr));
  const std::optional<std::size_t> need = a.shape_bytes();
  if (need != a.data.size())
    throw NpyError(fmt::format("{}: {} data bytes for shape ({}) of {}-byte elements, which needs {}", path,
                               a.data.size(), fmt::join(a.shape, ", "), a.item_size(),
                               need ? std::to_string(*need) : "more than 2^64 bytes"));
  std::string shape = "(";
  for (std::int64_t d : a.shape) shape += fmt::format("{}, ", d);
  if (a.shape.size() > 1) shape.resize(shape.size() - 2);
  if (a.shape.size() == 1) shape.pop_back();
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", a.descr, shape);
  // Magic, version 1.0, a 2-byte header length; the header is space-padded and ends in a
  // newline so the data starts on a multiple of 64 bytes.
  const std::size_t unpadded = kMagicLen + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  write_file_atomic(path, out);
}

NpyArray read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw NpyError(fmt::format("{}: cannot open", path));
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < kMagicLen + 4 || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    throw NpyError(fmt::format("{}: not a .npy file (no \\x93NUMPY magic)", path));
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
  const std::size_t major = byte(kMagicLen);
  std::size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = byte(8) | byte(9) << 8;
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw NpyError(fmt::format("{}: truncated .npy header", path));
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    header_at = 12;
  } else {
    throw NpyError(fmt::format("{}: .npy format version {} (known: 1, 2, 3)", path, major));
  }
  if (bytes.size() < header_at + header_len) throw NpyError(fmt::format("{}: truncated .npy header", path));
  const std::string header = bytes.substr(header_at, header_len);
  NpyArray a;
  std::string descr = dict_value(header, "descr", path);
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    throw NpyError(fmt::format("{}: .npy descr {} is not a simple type", path, descr));
  a.descr = descr.substr(1, descr.size() - 2);
  if (a.item_size() == 0)
    throw NpyError(fmt::format("{}: .npy dtype '{}' is not one this tool reads (little-endian f8/f4/f2/u2/u1)",
                               path, a.descr));
  if (dict_value(header, "fortran_order", path) != "False")
    throw NpyError(fmt::format("{}: .npy array is in Fortran order (C order expected)", path));
  a.shape = parse_shape(dict_value(header, "shape", path), path);
  // Checked for overflow: a wrapped product could match the data (a huge shape over no data).
  const std::optional<std::size_t> need = a.shape_bytes();
  const std::size_t at = header_at + header_len;
  if (need != bytes.size() - at)
    throw NpyError(fmt::format("{}: .npy data has {} bytes, the shape ({}) of '{}' needs {}", path,
                               bytes.size() - at, fmt::join(a.shape, ", "), a.descr,
                               need ? std::to_string(*need) : "more than 2^64 (a corrupt header)"));
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.end());
  return a;
}

}  // namespace rb
