// The memory text injected for the model: DeerFlow's layout and escaping, the token budget.
#include <agentware/memory/injection.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

TEST_CASE("the injected memory has DeerFlow's layout and escaping", "[memory]") {
    user_memory m;
    m.user[0].summary = "Builds <compilers> & tools";
    m.user[2].summary = "Release 2.0";
    m.history[1].summary = "Joined in 2024";
    m.facts.push_back(fact("f1", "Prefers \"tabs\"", 0.8, "preference"));
    m.facts.push_back(fact("f2", "Never use sudo", 0.95, "correction"));
    m.facts.back().source_error = "ran sudo <apt>";
    m.facts.push_back(fact("f3", "   ", 0.99));
    m.facts.push_back(fact("f4", "Odd confidence", std::nan(""), "context"));
    m.facts.push_back(fact("f5", "Too sure", 7, "context"));
    CHECK(format_memory_for_injection(m) ==
          "User Context:\n"
          "- Work: Builds &lt;compilers&gt; &amp; tools\n"
          "- Current Focus: Release 2.0\n\n"
          "History:\n"
          "- Earlier: Joined in 2024\n\n"
          "Facts:\n"
          "- [correction | 0.95] Never use sudo (avoid: ran sudo &lt;apt&gt;)\n"
          "- [context | 1.00] Too sure\n"
          "- [preference | 0.80] Prefers \"tabs\"\n"
          "- [context | 0.00] Odd confidence");
    CHECK(memory_block(format_memory_for_injection(user_memory{})).empty());
    memory_injection_options tool_mode;
    tool_mode.include_facts = false;
    CHECK(format_memory_for_injection(m, tool_mode).find("Facts:") == std::string::npos);
}

TEST_CASE("the token budget keeps corrections and stops at the first fact that does not fit", "[memory]") {
    user_memory m;
    for (int i = 0; i < 50; ++i)
        m.facts.push_back(fact(fmt::format("p{}", i), std::string(200, 'p'), 0.9, "preference"));
    m.facts.push_back(fact("c1", "Correction kept", 0.75, "correction"));
    m.facts.push_back(fact("s1", "short", 0.8, "preference")); // would fit, but greedy stops first
    memory_injection_options o;
    o.max_tokens = 200;
    const std::string out = format_memory_for_injection(m, o);
    CHECK(out.starts_with("Facts:\n- [correction | 0.75] Correction kept\n- [preference | 0.90] pppp"));
    CHECK(out.find("short") == std::string::npos);
    // estimate: (chars - cjk)/4 + cjk/2
    CHECK(memory_token_estimate("abcdefgh") == 2);
    CHECK(memory_token_estimate("中文中文") == 2);
    CHECK(memory_token_estimate("ab中文") == 1);
    CHECK(memory_token_estimate(out) <= 200 + 20);
}
