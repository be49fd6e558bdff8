#pragma once
// Where a JSON document closes in a stream of text: the bracket and string state machine of
// `cudadiag fleet`'s stream splitter (json_stream.hpp), fed one piece of text at a time.
//
// Contract: the state counts open brackets outside strings; `advance` reads `text` from its first
// byte with the state left by the previous piece and stops at the byte that brings the depth from 1
// to 0 (returning its offset, state updated through it), or at the end of the text (returning
// npos). Backslash escapes are honoured inside strings, across pieces too; nothing else of JSON is
// checked here (the parser does that).
//
// Two implementations that must agree byte for byte: a table-driven scalar one, everywhere, and one
// that classifies 16 bytes at a time with SSE2 (x86-64's baseline), used when it is available. The
// unit test compares them on generated input.

#include <cstddef>
#include <string_view>

namespace cudadiag::fleet::json_scan {

struct State {
  int depth = 0;
  bool in_string = false;
  bool escaped = false; // the previous byte was a backslash inside a string
};

inline constexpr std::size_t npos = std::string_view::npos;

// The implementation in use (the SSE2 one where compiled in).
std::size_t advance(State& state, std::string_view text);

std::size_t advance_scalar(State& state, std::string_view text);

// Whether `advance` is the SSE2 implementation (the test says which one it compared).
bool vectorised();

} // namespace cudadiag::fleet::json_scan
