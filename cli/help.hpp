#pragma once
// The CLI's help and usage errors: help text wrapped to the terminal (subcommand help lists the
// global options too), parse errors as "cudadiag: error: ..." with the closest subcommand or
// option suggested, and the model `cudadiag completion` generates its scripts from.

#include "cli_support/cli_support.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace cudadiag::cli {

// A CLI11 formatter whose descriptions wrap at `width` columns with a hanging indent, and whose
// subcommand help ends with the parent's (global) options.
std::shared_ptr<CLI::Formatter> make_help_formatter(std::size_t width);

// The message for a parse error, without the "cudadiag: error: " prefix, ending with where to read
// more. Words CLI11 did not expect are listed in the order `argv` has them, and the first is
// explained (`did you mean 'find'?`, with the valid subcommands for an unknown word); any other
// error is CLI11's own message (or its validator's), with no guess.
std::string usage_error_message(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

// The commands, options and positional words of `app` for completion scripts; `words_for` gives a
// subcommand's positional words (component names for `find`, ids for `explain`, ...).
std::vector<cli_support::CompletionCommand>
completion_model(const CLI::App& app,
                 const std::function<std::vector<std::string>(const std::string&)>& words_for);

} // namespace cudadiag::cli
