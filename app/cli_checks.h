// CLI11 helpers shared by the subcommands: options parsed from text by the functions in
// lists.h, so every number is range-checked before it is narrowed and every refusal names
// the option, the accepted form and the limits.
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>

namespace rb {

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
