// The middlewares' options in JSON: each converts to JSON and back unchanged,
// and refuses an unknown key and a value of the wrong type naming its path.
// (Each case covers several middlewares of DeerFlow's chain, hence no header's name.)
#include "options_support.hpp"

#include <agentware/presets/deerflow.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

using namespace agentware;
namespace json = boost::json;
using namespace options_test;

namespace {

// value_from then value_to gives the options back; an unknown key and a value
// of the wrong type each give a message that starts with its path.
template <class Options>
void check_json_form(const Options& changed, std::string_view some_key, std::string_view wrong_value,
                     std::string_view expected) {
    const json::value jv = json::value_from(changed);
    CHECK(json::value_to<Options>(jv) == changed);
    CHECK(json::value_to<Options>(json::value_from(Options{})) == Options{});
    CHECK(json::value_to<Options>(json::value(json::object{})) == Options{});

    const std::string section(Options::config_section);
    CHECK(read_error<Options>(R"({"no_such_key": 1})")
              .starts_with(section + ".no_such_key: unknown key (known: "));
    json::object wrong = jv.as_object();
    wrong[some_key] = json::parse(wrong_value);
    CHECK(read_error<Options>(json::serialize(wrong)) ==
          fmt::format("{}.{}: expected {}, got {}", section, some_key, expected, wrong_value));
    CHECK(read_error<Options>("[]") == fmt::format("{}: expected an object, got []", section));
}

} // namespace

TEST_CASE("options: thread_data and uploads in JSON", "[options]") {
    thread_data_options td;
    td.base_dir = "/srv/agents";
    td.lazy_init = false;
    check_json_form(td, "lazy_init", R"("no")", "true or false");

    uploads_options up;
    up.max_files_per_context_section = 3;
    up.discover_new_files = false;
    check_json_form(up, "max_files_per_context_section", R"("x")", "an integer");
}

TEST_CASE("options: sandbox in JSON, with DeerFlow's keys and the timeout in seconds", "[options]") {
    sandbox_options o;
    o.lazy_init = false;
    o.allow_host_bash = true;
    o.bash_command_timeout = std::chrono::seconds(30);
    o.bash_output_max_chars = 1;
    o.bash_capture_max_bytes = 2;
    o.read_file_output_max_chars = 3;
    o.ls_output_max_chars = 4;
    o.write_file_max_bytes = 5;
    o.glob_max_results = 6;
    o.grep_max_results = 7;
    check_json_form(o, "bash_output_max_chars", "-1", "a non-negative integer");
    CHECK(json::value_from(o).as_object().at("bash_command_timeout") == 30);

    // A timeout that is not whole seconds survives the round trip.
    o.bash_command_timeout = std::chrono::milliseconds(1500);
    CHECK(json::value_from(o).as_object().at("bash_command_timeout") == 1.5);
    CHECK(json::value_to<sandbox_options>(json::value_from(o)) == o);

    CHECK(read_error<sandbox_options>(R"({"bash_timout": 5})")
              .starts_with(
                  "sandbox.bash_timout: unknown key (known: use, isolation, lazy_init, allow_host_bash, "));
}

TEST_CASE("options: dangling_tool_call, tool_error_handling and clarification in JSON", "[options]") {
    dangling_tool_call_options d;
    d.max_error_detail = 80;
    d.unknown_tool_name = "nameless";
    d.synthetic_id_prefix = "synth_";
    check_json_form(d, "unknown_tool_name", "7", "a string");

    tool_error_handling_options t;
    t.max_detail = 100;
    t.task_tool_name = "delegate";
    t.meta_key = "meta";
    t.classify_results = false;
    check_json_form(t, "classify_results", "1", "true or false");

    clarification_options c;
    c.tool_name = "ask";
    c.provide_tool = false;
    c.skip_batched_calls = false;
    c.max_fields = 2;
    c.max_field_options = 3;
    c.max_text = 4;
    c.max_fields_json_bytes = 5;
    check_json_form(c, "max_fields", "2.5", "an integer");
}

TEST_CASE("options: guardrails and the allowlist provider in JSON", "[options]") {
    guardrail_options g;
    g.fail_closed = false;
    g.passport = "agent-7";
    check_json_form(g, "passport", "[]", "a string");
    // DeerFlow's `passport: null` is the default.
    CHECK(json::value_to<guardrail_options>(json::parse(R"({"passport": null})")).passport.empty());

    allowlist_provider p;
    p.allowed_tools = std::vector<std::string>{"ls", "read_file"};
    p.denied_tools = {"bash"};
    CHECK(json::value_to<allowlist_provider>(json::value_from(p)) == p);
    CHECK(json::value_to<allowlist_provider>(json::value_from(allowlist_provider{})) == allowlist_provider{});
    CHECK(read_error<allowlist_provider>(R"({"allowed_tools": ["ls", 3]})") ==
          "allowed_tools[1]: expected a string, got 3");
}

TEST_CASE("options: view_image and subagents in JSON", "[options]") {
    view_image_options v;
    v.supports_vision = false;
    v.max_image_bytes = 1024;
    check_json_form(v, "supports_vision", R"("yes")", "true or false");

    subagent_limit_options s;
    s.max_concurrent = 2;
    s.max_total_per_run = 9;
    s.max_concurrent_ceiling = 8;
    s.max_total_ceiling = 90;
    s.task_tool_name = "delegate";
    s.limits_from_context = false;
    check_json_form(s, "max_total_per_run", R"("six")", "an integer");
    // DeerFlow's key for the per-run total.
    CHECK(json::value_to<subagent_limit_options>(json::parse(R"({"max_total_per_run": 4})"))
              .max_total_per_run == 4);
}

TEST_CASE("options: loop_detection in JSON, validated", "[options]") {
    loop_detection_options o;
    o.warn_threshold = 4;
    o.hard_limit = 6;
    o.window_size = 10;
    o.max_tracked_threads = 7;
    o.tool_freq_warn = 20;
    o.tool_freq_hard_limit = 40;
    o.tool_freq_overrides = {{"bash", tool_frequency_limit{150, 300}}};
    o.batch_friendly_tools = {"read_file"};
    o.detect_cycles = false;
    o.cycle_warn = 2;
    o.cycle_hard_limit = 3;
    o.max_cycle_length = 5;
    o.disable_context_key = "no_loops";
    check_json_form(o, "warn_threshold", R"("x")", "an integer");

    CHECK(read_error<loop_detection_options>(R"({"tool_freq_overrides": {"bash": {"warn": 1}}})") ==
          "loop_detection.tool_freq_overrides.bash.hard_limit: missing");
    CHECK(read_error<loop_detection_options>(
              R"({"tool_freq_overrides": {"bash": {"warn": 1, "hard_limit": 2, "hard": 2}}})")
              .starts_with("loop_detection.tool_freq_overrides.bash.hard: unknown key"));
    CHECK(read_error<loop_detection_options>(R"({"warn_threshold": 9})") ==
          "loop_detection: hard_limit must be greater than or equal to warn_threshold");
}

TEST_CASE("options: summarization, durable_context, todo and title in JSON", "[options]") {
    summarization_options su;
    su.trigger = {{context_size::kind::tokens, 32000}, {context_size::kind::messages, 50}};
    su.keep = {context_size::kind::fraction, 0.3};
    su.trim_tokens_to_summarize.reset();
    su.model_name = "small";
    check_json_form(su, "max_input_tokens", R"("x")", "an integer");

    durable_context_options dc;
    dc.max_brief_chars = 80;
    check_json_form(dc, "max_brief_chars", R"("x")", "an integer");

    todo_options td;
    td.max_completion_reminders = 3;
    check_json_form(td, "max_completion_reminders", R"("x")", "an integer");

    title_options ti;
    ti.max_chars = 80;
    ti.model_name = "fast";
    check_json_form(ti, "max_words", R"("x")", "an integer");
}
