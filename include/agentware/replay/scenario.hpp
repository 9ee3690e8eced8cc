#ifndef AGENTWARE_REPLAY_SCENARIO_HPP
#define AGENTWARE_REPLAY_SCENARIO_HPP

// A replay scenario: which middlewares are on, the thread's starting files,
// and turns of user input with the ai messages the scripted model answers.
// The format is documented in docs/replay.md.

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

namespace agentware::replay {

/// A scenario file that cannot be used: the message says where and why.
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

struct scenario_turn {
    std::vector<message> input;
    std::vector<message> model; ///< the ai messages the scripted model answers with, in order
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

inline const boost::json::object& object_at(const boost::json::value& v, const std::string& where) {
    if (const auto* o = v.if_object()) return *o;
    throw scenario_error(fmt::format("{} must be a JSON object", where));
}

inline std::string string_at(const boost::json::object& o, std::string_view key, const std::string& where) {
    const auto* v = o.if_contains(key);
    if (!v) throw scenario_error(fmt::format("{}: \"{}\" is missing", where, key));
    if (!v->is_string()) throw scenario_error(fmt::format("{}: \"{}\" must be a string", where, key));
    return std::string(v->get_string());
}

inline std::vector<message> read_messages(const boost::json::value& v, const std::string& where) {
    const auto* arr = v.if_array();
    if (!arr) throw scenario_error(fmt::format("{} must be an array of messages", where));
    std::vector<message> out;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        try {
            out.push_back(boost::json::value_to<message>((*arr)[i]));
        } catch (const std::exception& e) {
            throw scenario_error(fmt::format("{}[{}]: {}", where, i, e.what()));
        }
    }
    return out;
}

inline std::vector<std::string> strings_at(const boost::json::object& o, std::string_view key,
                                           const std::string& where) {
    std::vector<std::string> out;
    const auto* v = o.if_contains(key);
    if (!v) return out;
    const auto* arr = v->if_array();
    if (!arr) throw scenario_error(fmt::format("{}: \"{}\" must be an array of strings", where, key));
    for (const auto& s : *arr) {
        if (!s.is_string())
            throw scenario_error(fmt::format("{}: \"{}\" must be an array of strings", where, key));
        out.emplace_back(s.get_string());
    }
    return out;
}

inline turn_expectation read_expectation(const boost::json::value& v, const std::string& where) {
    const auto& o = object_at(v, where);
    turn_expectation e;
    if (o.contains("stop_reason")) e.stop_reason = string_at(o, "stop_reason", where);
    if (const auto* r = o.if_contains("requests")) {
        if (!r->is_int64() || r->get_int64() < 0)
            throw scenario_error(fmt::format("{}: \"requests\" must be a whole number", where));
        e.requests = static_cast<std::size_t>(r->get_int64());
    }
    e.contains = strings_at(o, "contains", where);
    e.not_contains = strings_at(o, "not_contains", where);
    return e;
}

} // namespace detail

/// Reads a scenario from its JSON form; every problem is a scenario_error
/// naming the place (`turns[1].model[0]: ...`).
inline scenario parse_scenario(const boost::json::value& jv) {
    using namespace detail;
    const auto& o = object_at(jv, "the scenario");
    static constexpr std::string_view known[] = {"features", "thread_id",       "system_prompt",
                                                 "context",  "recursion_limit", "files",
                                                 "turns",    "description"};
    for (const auto& kv : o) {
        bool ok = false;
        for (auto k : known)
            ok = ok || kv.key() == k;
        if (!ok)
            throw scenario_error(
                fmt::format("the scenario has an unknown key \"{}\" (known: features, thread_id, "
                            "system_prompt, context, recursion_limit, files, turns, description)",
                            std::string_view(kv.key())));
    }
    scenario s;
    if (const auto* f = o.if_contains("features")) s.features = object_at(*f, "features");
    if (o.contains("thread_id")) s.thread_id = string_at(o, "thread_id", "the scenario");
    if (o.contains("system_prompt")) s.system_prompt = string_at(o, "system_prompt", "the scenario");
    if (const auto* c = o.if_contains("context")) s.context = object_at(*c, "context");
    if (const auto* r = o.if_contains("recursion_limit")) {
        if (!r->is_int64() || r->get_int64() < 1)
            throw scenario_error("recursion_limit must be a whole number of at least 1");
        s.recursion_limit = static_cast<std::size_t>(r->get_int64());
    }
    if (const auto* f = o.if_contains("files")) {
        const auto* arr = f->if_array();
        if (!arr) throw scenario_error("files must be an array of {\"path\", \"content\"} objects");
        for (std::size_t i = 0; i < arr->size(); ++i) {
            const std::string where = fmt::format("files[{}]", i);
            const auto& fo = object_at((*arr)[i], where);
            if (fo.contains("content_base64")) {
                auto bytes = agentware::detail::base64_decode(string_at(fo, "content_base64", where));
                if (!bytes) throw scenario_error(where + ": \"content_base64\" is not valid base64");
                s.files.push_back({string_at(fo, "path", where), std::move(*bytes)});
            } else {
                s.files.push_back({string_at(fo, "path", where), string_at(fo, "content", where)});
            }
        }
    }
    const auto* turns = o.if_contains("turns");
    if (!turns || !turns->is_array() || turns->get_array().empty())
        throw scenario_error(
            "the scenario needs \"turns\": a non-empty array of {\"input\", \"model\"} objects");
    for (std::size_t i = 0; i < turns->get_array().size(); ++i) {
        const std::string where = fmt::format("turns[{}]", i);
        const auto& t = object_at(turns->get_array()[i], where);
        scenario_turn turn;
        const auto* input = t.if_contains("input");
        if (!input) throw scenario_error(where + ": \"input\" is missing");
        if (input->is_string())
            turn.input.push_back(human_message(std::string(input->get_string())));
        else
            turn.input = read_messages(*input, where + ".input");
        const auto* model = t.if_contains("model");
        if (!model)
            throw scenario_error(where + ": \"model\" is missing (the ai messages the model answers with)");
        turn.model = read_messages(*model, where + ".model");
        for (std::size_t k = 0; k < turn.model.size(); ++k)
            if (!turn.model[k].is_ai())
                throw scenario_error(
                    fmt::format("{}.model[{}]: the model answers with assistant messages only", where, k));
        if (const auto* e = t.if_contains("expect")) turn.expect = read_expectation(*e, where + ".expect");
        s.turns.push_back(std::move(turn));
    }
    return s;
}

/// Parses scenario text (JSON); a syntax error is a scenario_error too.
inline scenario parse_scenario(std::string_view text) {
    boost::system::error_code ec;
    boost::json::value jv = boost::json::parse(text, ec);
    if (ec) throw scenario_error("the scenario is not valid JSON: " + ec.message());
    return parse_scenario(jv);
}

} // namespace agentware::replay

#endif
