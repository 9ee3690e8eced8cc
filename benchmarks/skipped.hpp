// A benchmark line that cannot run here (what it compares with is not
// installed) says so, without failing CI's run, which fails on errors.
#ifndef AGENTWARE_BENCHMARKS_SKIPPED_HPP
#define AGENTWARE_BENCHMARKS_SKIPPED_HPP

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

namespace agentware::bench {

/// Marks `state` skipped with `note` (Google Benchmark 1.8's skip with a
/// message; a label before it) and writes the note to stderr as `binary: note`.
inline void skip_with_note(benchmark::State& state, const char* binary, const std::string& note) {
    std::fprintf(stderr, "%s: %s\n", binary, note.c_str());
    [&](auto& st) {
        if constexpr (requires { st.SkipWithMessage(note); })
            st.SkipWithMessage(note);
        else
            st.SetLabel(note);
    }(state);
}

} // namespace agentware::bench

#endif
