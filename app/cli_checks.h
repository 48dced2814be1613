// CLI11 helpers shared by the subcommands: options parsed from text by the functions in
// lists.h, so every number is range-checked before it is narrowed and every refusal names
// the option, the accepted form and the limits.
#pragma once

#include <CLI/CLI.hpp>
#include <cctype>
#include <optional>
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

// Walks the command line as CLI11 will read it, option by option in the scope of the
// subcommand named before it: for each "--name[=value]" (and "-x", merge's -o), calls
// refuse(scope, name, option, value), option null where the scope has none of that name and
// value the one the option takes (after '=', else the next argument; null for a flag or where
// none is left, CLI11's own message then). Returns the first refusal (empty when none).
template <class Refuse>
std::string first_refusal(CLI::App& app, int argc, char** argv, Refuse refuse) {
  CLI::App* scope = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    const bool is_long = a.rfind("--", 0) == 0;
    const bool is_short =
        !is_long && a.size() == 2 && a[0] == '-' && std::isalpha(static_cast<unsigned char>(a[1]));
    if (!is_long && !is_short) {
      const std::vector<CLI::App*> sub =
          scope->get_subcommands([&](CLI::App* s) { return s->check_name(a); });
      if (!sub.empty()) scope = sub.front();
      continue;
    }
    const std::size_t eq = is_long ? a.find('=') : std::string::npos;
    const std::string name = a.substr(0, eq);
    const CLI::Option* opt = scope->get_option_no_throw(name);
    std::optional<std::string> value;
    if (opt != nullptr && opt->get_type_size_max() != 0) {
      if (eq != std::string::npos)
        value = a.substr(eq + 1);
      else if (i + 1 < argc)
        value = argv[++i];
    }
    if (std::string why = refuse(*scope, name, opt, value ? &*value : nullptr); !why.empty()) return why;
  }
  return {};
}

// A list option's value with an empty item, as "OPTION: why" (empty when every list value on
// the line is whole). CLI11 splits a list at its delimiter and drops empty items, so "--H 1,,2"
// would read as 1,2 and "--H ," as no value at all, the next argument then taken as --H's;
// this refuses an empty, leading, trailing or doubled comma.
inline std::string empty_list_item(CLI::App& app, int argc, char** argv) {
  return first_refusal(
      app, argc, argv,
      [](CLI::App&, const std::string& name, const CLI::Option* opt, const std::string* value) {
        const char d = opt != nullptr && value != nullptr ? opt->get_delimiter() : '\0';
        if (d == '\0') return std::string();
        const std::string twice(2, d);
        if (value->empty() || value->front() == d || value->back() == d ||
            value->find(twice) != std::string::npos)
          return name + ": '" + *value + "' has an empty item (a list is values separated by single '" +
                 std::string(1, d) + "')";
        return std::string();
      });
}

// A "--name" (or "-x") the command it follows does not have, as "name: why". CLI11 says so
// too, but only after its checks of the values: "merge --out m.csv a.csv" (merge's output is
// -o/--output) was refused as "INPUTS: File does not exist: m.csv", naming the file and not
// the option.
inline std::string unknown_option(CLI::App& app, int argc, char** argv) {
  return first_refusal(
      app, argc, argv,
      [&app](CLI::App& scope, const std::string& name, const CLI::Option* opt, const std::string*) {
        if (opt != nullptr) return std::string();
        const std::string cmd =
            &scope == &app ? std::string("rmsnorm-bench") : "rmsnorm-bench " + scope.get_name();
        return name + ": not an option of " + cmd + " (`" + cmd + " --help` lists them)";
      });
}

// A dtype option that no case of the run reads, as "--name value: why" ("" when each is read):
// an fp8 y where no op writes y (fwd and add do), a residual dtype where no op has a residual
// stream (add and add-bwd), a y scale where no y is fp8. The run would otherwise measure other
// cases than asked and say nothing. ops: the run's ops; ydtypes, rdtypes: the values given
// ("same" reads as nothing asked); scale_given: a y scale was given; fp8_y: some case of the
// run has an fp8 y.
inline std::string unread_dtype_option(const std::vector<Op>& ops, const std::vector<std::string>& ydtypes,
                                       const std::vector<std::string>& rdtypes, bool scale_given,
                                       bool fp8_y) {
  bool y = false, residual = false;
  std::string given;
  for (Op op : ops) {
    y = y || has_fp8_output(op);
    residual = residual || has_residual(op);
    given += (given.empty() ? "" : ", ") + std::string(op_name(op));
  }
  const auto asked = [](const std::vector<std::string>& values) {
    for (const std::string& v : values)
      if (v != "same") return v;
    return std::string();
  };
  if (const std::string v = asked(ydtypes); !v.empty() && !y)
    return "--ydtype " + v + ": an fp8 y is an output of fwd and add only, not of " + given;
  if (const std::string v = asked(rdtypes); !v.empty() && !residual)
    return "--rdtype " + v + ": a residual stream is add's and add-bwd's only, not of " + given;
  if (scale_given && !fp8_y)
    return "--y-scale: it scales an fp8 y, and no case of the run has one "
           "(give --ydtype e4m3 or e5m2, with fwd or add)";
  return std::string();
}

}  // namespace rb
