#ifndef AGENTWARE_EXAMPLES_SCENARIO_HPP
#define AGENTWARE_EXAMPLES_SCENARIO_HPP

// A replay scenario: which middlewares are on, the thread's starting files,
// and turns of user input with the ai messages the scripted model answers.
// The format is documented in docs/replay.md; a malformed scenario is a
// json_error naming the place (`turns[1].model[0]: ...`).

#include <agentware/json/reader.hpp>
#include <agentware/message/detail/base64.hpp>
#include <agentware/message/json.hpp>
#include <agentware/message/message.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <cstddef>
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

/// A tool call made to throw: the next call of `tool` in the turn throws a
/// std::runtime_error with `error` as its text (tool_error_handling's input).
struct scenario_failure {
    std::string tool;
    std::string error;
};

struct scenario_turn {
    std::vector<message> input;
    std::vector<scenario_failure> fail_next; ///< in the order the calls will meet them
    std::vector<message> model;              ///< the ai messages the scripted model answers with, in order
    turn_expectation expect;
};

struct scenario {
    boost::json::object features;
    std::string thread_id = "replay";
    std::string system_prompt;
    boost::json::object context; ///< the runtime context of every turn (user_id, flags, ...)
    std::size_t recursion_limit = 100;
    std::vector<scenario_file> files;
    std::vector<scenario_turn> turns;
};

namespace detail {

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

inline scenario_turn read_turn(const boost::json::value& v, const std::string& path) {
    agentware::json_reader r(v, path);
    scenario_turn turn;
    const auto* input = r.find("input");
    if (!input)
        throw agentware::json_error(r.path_of("input"), "missing (a user's text or a list of messages)");
    if (input->is_string())
        turn.input.push_back(agentware::human_message(std::string(input->get_string())));
    else
        turn.input = read_messages(*input, r.path_of("input"));
    const auto* model = r.find("model");
    if (!model)
        throw agentware::json_error(r.path_of("model"), "missing (the ai messages the model answers with)");
    turn.model = read_messages(*model, r.path_of("model"));
    for (std::size_t k = 0; k < turn.model.size(); ++k)
        if (!turn.model[k].is_ai())
            throw agentware::json_error(r.path_of(fmt::format("model[{}]", k)),
                                        "the model answers with assistant messages only");
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
    r.read("features", s.features)
        .read("thread_id", s.thread_id)
        .read("system_prompt", s.system_prompt)
        .read("context", s.context)
        .read("recursion_limit", s.recursion_limit);
    if (s.recursion_limit < 1) throw agentware::json_error("recursion_limit", "expected at least 1, got 0");
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
