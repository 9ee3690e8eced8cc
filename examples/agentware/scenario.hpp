#ifndef AGENTWARE_EXAMPLES_AGENTWARE_SCENARIO_HPP
#define AGENTWARE_EXAMPLES_AGENTWARE_SCENARIO_HPP

// A replay scenario: which middlewares are on, the thread's starting files,
// and turns of user input with the ai messages the scripted model answers.
// The format is documented in docs/replay.md; a malformed scenario is a
// json_error naming the place (`turns[1].model[0]: ...`).

#include <agentware/json/reader.hpp>
#include <agentware/memory/clock.hpp>
#include <agentware/message/detail/base64.hpp>
#include <agentware/message/json.hpp>
#include <agentware/message/message.hpp>
#include <agentware/model/detail/provider_error.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/scripted_model.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace agentware_cli {

using agentware::message;

/// A scenario that cannot run (its model runs out of answers, its files
/// cannot be written): the message says where and why.
class scenario_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A file created in the thread's directories before the first turn.
struct scenario_file {
    std::string path;    ///< relative, under workspace/, uploads/ or outputs/
    std::string content; ///< `content`, or the bytes of `content_base64`
};

/// What a turn's result must show (checked by `agentware replay --check`).
struct turn_expectation {
    std::optional<std::string> stop_reason;
    std::optional<std::size_t> requests;
    std::vector<std::string> contains; ///< substrings of the turn's output JSON
    std::vector<std::string> not_contains;
};

/// The roles a helper model may be scripted for in a turn's `"models"`: one
/// per middleware that calls a model of its own (named as its configuration
/// section). A middleware that gains a model adds its role here and one line
/// in replay_runner.hpp's attach_helper_models.
/// (`memory` is the memory worker's: the runner drives that one itself.)
inline constexpr std::string_view helper_model_roles[] = {
    "summarization", "title", "memory", "llm_tool_selector", "tool_emulator", "model_fallback", "moderation"};

/// A tool call made to throw: the next call of `tool` in the turn throws a
/// std::runtime_error with `error` as its text (tool_error_handling's input).
struct scenario_failure {
    std::string tool;
    std::string error;
};

struct scenario_turn {
    std::vector<message> input;
    /// A turn that continues a paused run instead of sending input:
    /// `"resume": {"decisions": [...]}` (human_in_the_loop's answer) or any value.
    std::optional<boost::json::value> resume;
    std::vector<scenario_failure> fail_next; ///< in the order the calls will meet them
    /// What the scripted model does at each call, in order: answer with an ai
    /// message, or fail with a scripted provider error.
    std::vector<agentware::scripted_step> model;
    double advance_clock = 0; ///< seconds the replay's clock moves before the turn
    /// Per helper role (`"models": {"summarization": [...]}`), what that role's
    /// model does at each call, in order (ai messages or scripted errors).
    std::map<std::string, std::vector<agentware::scripted_step>, std::less<>> helper_models;
    /// Per subagent role, the seconds each of its model's answers takes on the
    /// replay's subagent clock (`{"delay_seconds": 1000}` before a step); one
    /// entry per step, 0 when the script gives none.
    std::map<std::string, std::vector<double>, std::less<>> subagent_delays;
    turn_expectation expect;
};

struct scenario {
    boost::json::object features;
    /// The clock every turn reads (`"now": "2026-11-23T09:00:00Z"`), so dates are deterministic.
    std::optional<std::chrono::system_clock::time_point> now;
    std::string thread_id = "replay";
    std::string system_prompt;
    boost::json::object context; ///< the runtime context of every turn (user_id, flags, ...)
    std::size_t recursion_limit = 100;
    /// Tools never offered (agent::set_disabled_tool_names).
    std::vector<std::string> disabled_tool_names;
    std::vector<scenario_file> files;
    std::vector<scenario_turn> turns;
    /// "deerflow" (the default: DeerFlow's chain from `features`) or "deep"
    /// (deepagents' stack, see deep_replay.hpp).
    std::string agent = "deerflow";
    /// Deep mode: "state" or {"type": "filesystem", "root_dir", "virtual_mode"}.
    boost::json::value backend = "state";
    /// Deep mode: path -> content seeded into the state backend, oldest first.
    std::vector<std::pair<std::string, std::string>> files_state;
    /// Deep mode: deepagents' permission rules.
    boost::json::value permissions;
    /// Deep mode: the Swift tool policy (tool_policy's JSON form).
    boost::json::value policy;
};

namespace detail {

/// Reads "YYYY-MM-DDTHH:MM:SSZ" (UTC); nothing when the text is not that.
inline std::optional<std::chrono::system_clock::time_point> parse_utc(std::string_view text) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
    char z = 0;
    std::string copy(text);
    if (copy.size() != 20 ||
        std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z) != 7 ||
        z != 'Z')
        return std::nullopt;
    std::chrono::year_month_day day{std::chrono::year(y), std::chrono::month(unsigned(mo)),
                                    std::chrono::day(unsigned(d))};
    if (!day.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
    return std::chrono::sys_days(day) + std::chrono::hours(h) + std::chrono::minutes(mi) +
           std::chrono::seconds(sec);
}

inline std::vector<message> read_messages(const boost::json::value& v, const std::string& path) {
    return agentware::json_read_as<std::vector<message>>(v, path);
}

inline turn_expectation read_expectation(const boost::json::value& v, const std::string& path) {
    agentware::json_reader r(v, path);
    turn_expectation e;
    e.stop_reason = r.optional<std::string>("stop_reason");
    e.requests = r.optional<std::size_t>("requests");
    r.read("contains", e.contains).read("not_contains", e.not_contains).reject_unknown_keys();
    return e;
}

inline scenario_file read_file(const boost::json::value& v, const std::string& path) {
    agentware::json_reader r(v, path);
    scenario_file f{r.required<std::string>("path"), {}};
    if (auto encoded = r.optional<std::string>("content_base64")) {
        auto bytes = agentware::detail::base64_decode(*encoded);
        if (!bytes) throw agentware::json_error(r.path_of("content_base64"), "not valid base64");
        f.content = std::move(*bytes);
    } else {
        f.content = r.required<std::string>("content");
    }
    r.reject_unknown_keys();
    return f;
}

// {"error": {"status": 429, "message": "...", "retry_after": 1}}: the model
// call fails as a provider answering with that HTTP status would; `kind`
// ("connection", "timeout", ...) names a failure without a status.
inline agentware::model_error read_model_error(const boost::json::value& v, const std::string& path) {
    agentware::json_reader r(v, path);
    const auto status = r.optional<int>("status").value_or(0);
    const auto text = r.optional<std::string>("message").value_or("");
    const auto retry_after = r.optional<double>("retry_after");
    const auto kind_name = r.optional<std::string>("kind");
    r.reject_unknown_keys();
    agentware::model_error_kind kind = agentware::detail::kind_of_status(status);
    if (kind_name) {
        bool known = false;
        for (int k = 0; k <= static_cast<int>(agentware::model_error_kind::configuration); ++k)
            if (agentware::to_string(static_cast<agentware::model_error_kind>(k)) == *kind_name) {
                kind = static_cast<agentware::model_error_kind>(k);
                known = true;
            }
        if (!known)
            throw agentware::json_error(r.path_of("kind"), "unknown error kind \"" + *kind_name + "\"");
    } else if (status < 400 || status > 599) {
        throw agentware::json_error(r.path_of("status"),
                                    "expected an HTTP error status (400-599), or a `kind`");
    }
    if (retry_after && !(*retry_after >= 0 && *retry_after < 1e6))
        throw agentware::json_error(r.path_of("retry_after"), "expected seconds, at least 0");
    std::string what = status ? fmt::format("scripted: HTTP {} ({})", status, agentware::to_string(kind))
                              : fmt::format("scripted: {}", agentware::to_string(kind));
    if (!text.empty()) what += ": " + text;
    agentware::model_error e(kind, std::move(what), status, text);
    if (retry_after)
        e.set_retry_after(
            std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(*retry_after * 1000))));
    return e;
}

// A model's script: assistant messages and scripted errors, in order.
inline std::vector<agentware::scripted_step> read_steps(const boost::json::value& v,
                                                        const std::string& path) {
    const auto* steps = v.if_array();
    if (!steps) agentware::detail::json_type_error(path, "an array of assistant messages or errors", v);
    std::vector<agentware::scripted_step> out;
    for (std::size_t k = 0; k < steps->size(); ++k) {
        const std::string at = fmt::format("{}[{}]", path, k);
        const auto* o = (*steps)[k].if_object();
        if (o && o->contains("error")) {
            agentware::json_reader step(*o, at);
            out.push_back({{}, read_model_error(*step.find("error"), step.path_of("error"))});
            step.reject_unknown_keys();
            continue;
        }
        message m = agentware::json_read_as<message>((*steps)[k], at);
        if (!m.is_ai())
            throw agentware::json_error(
                at, "the model answers with assistant messages (or {\"error\": ...}) only");
        out.push_back({std::move(m), std::nullopt});
    }
    return out;
}

inline scenario_turn read_turn(const boost::json::value& v, const std::string& path) {
    agentware::json_reader r(v, path);
    scenario_turn turn;
    const auto* input = r.find("input");
    if (const auto* resume = r.find("resume")) {
        if (input)
            throw agentware::json_error(
                r.path_of("resume"), "a turn has either \"input\" or \"resume\" (it continues a paused run)");
        turn.resume = *resume;
    } else if (!input) {
        throw agentware::json_error(r.path_of("input"), "missing (a user's text or a list of messages)");
    } else if (input->is_string())
        turn.input.push_back(agentware::human_message(std::string(input->get_string())));
    else
        turn.input = read_messages(*input, r.path_of("input"));
    const auto* model = r.find("model");
    if (!model)
        throw agentware::json_error(r.path_of("model"), "missing (the ai messages the model answers with)");
    turn.model = read_steps(*model, r.path_of("model"));
    r.read("advance_clock", turn.advance_clock);
    if (!(turn.advance_clock >= 0))
        throw agentware::json_error(r.path_of("advance_clock"), "expected seconds, at least 0");
    if (const auto* models = r.find("models")) {
        const auto* roles = models->if_object();
        if (!roles)
            agentware::detail::json_type_error(r.path_of("models"), "an object of helper roles", *models);
        for (const auto& [role, script] : *roles) {
            std::string at = r.path_of("models") + "." + std::string(role);
            // `subagent:<task call id>`: the model of the subagent that call delegates to.
            const bool subagent = std::string_view(role).starts_with("subagent:") && role.size() > 9;
            if (!subagent && std::find(std::begin(helper_model_roles), std::end(helper_model_roles),
                                       std::string_view(role)) == std::end(helper_model_roles))
                throw agentware::json_error(
                    at, fmt::format("unknown helper model role (known: {}, and subagent:<task call id>)",
                                    fmt::join(helper_model_roles, ", ")));
            if (subagent) {
                // `{"delay_seconds": S}` before a step: that answer takes S seconds on the clock.
                std::vector<double> delays;
                boost::json::array steps;
                double pending = 0;
                if (const auto* list = script.if_array())
                    for (std::size_t k = 0; k < list->size(); ++k) {
                        const auto* o = (*list)[k].if_object();
                        if (!o || !o->contains("delay_seconds")) {
                            steps.push_back((*list)[k]);
                            delays.push_back(pending);
                            pending = 0;
                            continue;
                        }
                        agentware::json_reader d(*o, fmt::format("{}[{}]", at, k));
                        double seconds = -1;
                        d.read("delay_seconds", seconds);
                        d.reject_unknown_keys();
                        if (!(seconds >= 0))
                            throw agentware::json_error(d.path_of("delay_seconds"),
                                                        "expected seconds, at least 0");
                        pending += seconds;
                    }
                if (pending > 0) delays.push_back(pending); // the call after the last answer waits too
                turn.helper_models.emplace(std::string(role),
                                           read_steps(script.is_array() ? steps : script, at));
                turn.subagent_delays.emplace(std::string(role), std::move(delays));
                continue;
            }
            turn.helper_models.emplace(std::string(role), read_steps(script, at));
        }
    }
    if (const auto* e = r.find("expect")) turn.expect = read_expectation(*e, r.path_of("expect"));
    if (const auto* f = r.find("fail_next")) {
        const auto* list = f->if_array();
        if (!list)
            agentware::detail::json_type_error(r.path_of("fail_next"),
                                               "an array of {\"tool\", \"error\"} objects", *f);
        for (std::size_t k = 0; k < list->size(); ++k) {
            agentware::json_reader fr((*list)[k], r.path_of(fmt::format("fail_next[{}]", k)));
            scenario_failure failure{fr.required<std::string>("tool"), fr.required<std::string>("error")};
            if (failure.tool.empty()) throw agentware::json_error(fr.path_of("tool"), "must not be empty");
            fr.reject_unknown_keys();
            turn.fail_next.push_back(std::move(failure));
        }
    }
    r.reject_unknown_keys();
    return turn;
}

} // namespace detail

/// Reads a scenario from its JSON form.
inline scenario parse_scenario(const boost::json::value& jv) {
    agentware::json_reader r(jv);
    scenario s;
    r.skip("description");
    r.read("agent", s.agent);
    if (s.agent != "deerflow" && s.agent != "deep")
        throw agentware::json_error("agent", "expected \"deerflow\" or \"deep\", got \"" + s.agent + "\"");
    if (const auto* b = r.find("backend")) s.backend = *b;
    if (const auto* p = r.find("permissions")) s.permissions = *p;
    if (const auto* p = r.find("policy")) s.policy = *p;
    if (const auto* fs = r.find("files_state")) {
        const auto* o = fs->if_object();
        if (!o) agentware::detail::json_type_error("files_state", "an object of path: content", *fs);
        for (const auto& [path, content] : *o) {
            if (!content.is_string())
                agentware::detail::json_type_error("files_state." + std::string(path), "a string", content);
            s.files_state.emplace_back(std::string(path), std::string(content.get_string()));
        }
    }
    if (s.agent != "deep" && (r.object().contains("backend") || r.object().contains("files_state") ||
                              r.object().contains("permissions") || r.object().contains("policy")))
        throw agentware::json_error("agent",
                                    "backend, files_state, permissions and policy need \"agent\": \"deep\"");
    r.read("features", s.features)
        .read("thread_id", s.thread_id)
        .read("system_prompt", s.system_prompt)
        .read("context", s.context)
        .read("recursion_limit", s.recursion_limit)
        .read("disabled_tool_names", s.disabled_tool_names);
    if (auto now = r.optional<std::string>("now")) {
        s.now = detail::parse_utc(*now);
        if (!s.now) throw agentware::json_error("now", "expected a UTC time as 2026-11-23T09:00:00Z");
    }
    if (s.recursion_limit < 1) throw agentware::json_error("recursion_limit", "expected at least 1, got 0");
    // LangChain's `interrupt_on` (`{"write_file": true}`): the human_in_the_loop feature's.
    if (const auto* on = r.find("interrupt_on")) {
        if (s.features.contains("human_in_the_loop"))
            throw agentware::json_error("interrupt_on",
                                        "given twice: here and in features.human_in_the_loop");
        s.features["human_in_the_loop"] = boost::json::object{{"interrupt_on", *on}};
    }
    if (const auto* files = r.find("files")) {
        const auto* list = files->if_array();
        if (!list)
            agentware::detail::json_type_error("files", "an array of {\"path\", \"content\"} objects",
                                               *files);
        for (std::size_t i = 0; i < list->size(); ++i)
            s.files.push_back(detail::read_file((*list)[i], fmt::format("files[{}]", i)));
    }
    const auto* turns = r.find("turns");
    if (!turns || !turns->is_array() || turns->get_array().empty())
        throw agentware::json_error("turns", "expected a non-empty array of {\"input\", \"model\"} objects");
    for (std::size_t i = 0; i < turns->get_array().size(); ++i)
        s.turns.push_back(detail::read_turn(turns->get_array()[i], fmt::format("turns[{}]", i)));
    r.reject_unknown_keys();
    return s;
}

/// Parses scenario text (JSON); a syntax error is a json_error too.
inline scenario parse_scenario(std::string_view text) {
    boost::system::error_code ec;
    boost::json::value jv = boost::json::parse(text, ec);
    if (ec) throw agentware::json_error({}, "the scenario is not valid JSON: " + ec.message());
    return parse_scenario(jv);
}

} // namespace agentware_cli

#endif
