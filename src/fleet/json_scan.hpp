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
// `advance_line` is the same machine over a piece that ends at a line break, for a splitter that
// reads whole blocks of lines: it finds the line's end in the same pass as the brackets.
//
// Two implementations of each that must agree byte for byte: a table-driven scalar one, everywhere,
// and one that classifies 16 (advance) or 64 (advance_line) bytes at a time with SSE2 (x86-64's
// baseline), used when it is available. The unit test and the fuzz target compare them.

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

// Where a line's piece of a document closes, or where the line ends.
struct LineScan {
  std::size_t close = npos;    // as advance() answers for the piece; npos when it does not close
  std::size_t line_end = npos; // when it does not close: the offset of the first '\n', or text.size()
};

// advance() over the piece of `text` before its first '\n' (all of `text` when it has none), with
// the state it leaves; the bytes after the piece are not read past the close or the '\n'.
LineScan advance_line(State& state, std::string_view text);

LineScan advance_line_scalar(State& state, std::string_view text);

// Whether `advance` is the SSE2 implementation (the test says which one it compared).
bool vectorised();

} // namespace cudadiag::fleet::json_scan
