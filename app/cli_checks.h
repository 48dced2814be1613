// CLI11 helpers shared by the subcommands: options parsed from text by the functions in
// lists.h, so every number is range-checked before it is narrowed and every refusal names
// the option, the accepted form and the limits.
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/names.h"

namespace rb {

// The names the dtype options accept: x's (the input dtypes), w's and the residual stream's
// ("same" or an input dtype), y's ("same" or an fp8 dtype).
struct DtypeOptionNames {
  std::vector<std::string> x, w{"same"}, y{"same"};
};
inline DtypeOptionNames dtype_option_names() {
  DtypeOptionNames n;
  for (DType d : all_of<DType>()) (is_input_dtype(d) ? n.x : n.y).emplace_back(dtype_name(d));
  n.w.insert(n.w.end(), n.x.begin(), n.x.end());
  return n;
}

// A CLI11 validator from a parse function that throws std::invalid_argument.
template <class F>
CLI::Validator parses_as(F parse) {
  return CLI::Validator(
      [parse](std::string& s) -> std::string {
        try {
          parse(s);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "");
}

// A path option given as "" (an unset shell variable, say): refused, where it would otherwise
// read as the current directory or as the option's default.
inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? std::string("an empty path; give a file or directory") : ""; },
      "");
}

// An option read as text, checked by `parse` at parse time, and stored into `target` as
// parse's result. `form` is the value's name in --help, `default_text` its shown default.
template <class T, class Parse>
CLI::Option* add_parsed(CLI::App& app, const std::string& name, T& target, Parse parse, const std::string& form,
                        const std::string& desc, const std::string& default_text) {
  return app
      .add_option_function<std::string>(
          name, [&target, parse](const std::string& s) { target = static_cast<T>(parse(s)); }, desc)
      ->check(parses_as(parse))
      ->type_name(form)
      ->default_str(default_text);
}

}  // namespace rb
