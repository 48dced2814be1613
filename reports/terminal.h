// What the terminal shows: a progress line while the sweep runs, a compact table at the end.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "reports/record.h"

namespace rb {

// Fixed-width table, in input order, of the timed rows and of every fail or error (so a
// failure is never only a count), then "N pass, N fail, N skip, N error". Ends in a newline.
std::string summary_table(const std::vector<Record>& records);

// "[ 12/240] fp16 row-vector M=16384 H=4096 pass 3950 GB/s (92.4%)": one short line, no newline.
std::string progress_line(std::size_t done, std::size_t total, const Record& last);

// "N pass, N fail, N skip, N error" for records.
std::string counts_line(const std::vector<Record>& records);

}  // namespace rb
