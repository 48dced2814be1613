// libFuzzer target: reports/csv_reader (read_csv_text). Whatever the bytes, the reader either
// throws CsvError or returns records that (1) satisfy every column's accepted values
// (find_violation) and (2) written back with csv_row and read again, give the same rows.
// Anything else (a crash, another exception type, an impossible record accepted, a row that
// changes on the way back) aborts: a crash or a silent acceptance fails. Built by scripts/fuzz.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "reports/columns.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "csv_reader_fuzz: %s\n", what.c_str());
  std::abort();
}

std::vector<rb::Record> read_or_refuse(const std::string& text, bool& refused) {
  refused = false;
  try {
    return rb::read_csv_text("fuzz.csv", text);
  } catch (const rb::CsvError&) {
    refused = true;
  } catch (const std::exception& e) {
    fail(std::string("an exception other than CsvError: ") + e.what());
  } catch (...) {
    fail("a non-std exception");
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  bool refused = false;
  const std::vector<rb::Record> rows = read_or_refuse(text, refused);
  if (refused) return 0;
  for (const rb::Record& r : rows) {
    if (const auto v = rb::find_violation(r)) {
      fail("accepted an impossible row: column " + std::string(v->column->name) + ": " + v->message);
    }
  }
  const std::string written = rb::csv_file_text(rows);
  const std::vector<rb::Record> back = read_or_refuse(written, refused);
  if (refused) fail("its own rewrite is refused:\n" + written);
  if (back.size() != rows.size()) fail("row count changed on the way back:\n" + written);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rb::csv_row(back[i]) != rb::csv_row(rows[i])) {
      fail("row changed on the way back:\n" + rb::csv_row(rows[i]) + "\n" + rb::csv_row(back[i]));
    }
  }
  return 0;
}
