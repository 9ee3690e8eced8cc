#ifndef AGENTWARE_MIDDLEWARE_MODERATION_HPP
#define AGENTWARE_MIDDLEWARE_MODERATION_HPP

// moderation: sends the user's input, the tool results and the model's output
// to a moderation endpoint and acts on what it flags (langchain_openai's
// OpenAIModerationMiddleware, Python's design).
//   before_model: the tool results after the last ai message
//                 (check_tool_results), then the last human message (check_input);
//   after_model:  the last ai message (check_output).
// Flagged content, by exit behaviour:
//   end:     an ai message with the violation text ends the run;
//   error:   throws moderation_flagged;
//   replace: the flagged message's content becomes the violation text.
//
// The check itself is a function (`moderation_options::check`, or set_check):
// `openai_moderation_client` (model/openai_moderation_client.hpp) calls an
// OpenAI-compatible endpoint over the model clients' HTTP transport; any other
// function may stand in (a local classifier, a test's script). A moderation
// built without one (from configuration) fails its first check until given one.

#include <agentware/agent/runtime.hpp>
#include <agentware/core/jump.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/openai_moderation_format.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

struct moderation_options {
    std::string model = "omni-moderation-latest"; ///< the moderation model the endpoint is asked for
    bool check_input = true;
    bool check_output = true;
    bool check_tool_results = false;
    std::string exit_behavior = "end"; ///< "end", "error" or "replace"
    /// Placeholders {categories}, {category_scores} (JSON), {original_content}. Empty: LangChain's text.
    std::string violation_message;
    /// The endpoint the lead agent builds the check from (make_lead_agent):
    /// its base URL ("/moderations" is appended) and the variable holding its
    /// key (empty: a server that needs none). Code that calls set_check
    /// ignores them.
    std::string base_url = "https://api.openai.com/v1";
    std::string api_key_env = "OPENAI_API_KEY";
    /// The endpoint call (code only): text -> result. Throws on failure (the run fails with it).
    std::function<moderation_result(const std::string& text, const std::string& model)> check;

    void validate() const {
        if (exit_behavior != "end" && exit_behavior != "error" && exit_behavior != "replace")
            throw std::invalid_argument("exit_behavior must be \"end\", \"error\" or \"replace\"");
    }

    static constexpr std::string_view config_section = "moderation";
    friend bool operator==(const moderation_options& a, const moderation_options& b) {
        return a.model == b.model && a.check_input == b.check_input && a.check_output == b.check_output &&
               a.check_tool_results == b.check_tool_results && a.exit_behavior == b.exit_behavior &&
               a.violation_message == b.violation_message && a.base_url == b.base_url &&
               a.api_key_env == b.api_key_env;
    }
};

/// Thrown with exit_behavior "error".
class moderation_flagged : public std::runtime_error {
public:
    moderation_flagged(std::string message, std::string stage, std::string content, moderation_result result)
        : std::runtime_error(std::move(message)), stage(std::move(stage)), content(std::move(content)),
          result(std::move(result)) {}
    std::string stage; ///< "input", "output" or "tool"
    std::string content;
    moderation_result result;
};

struct moderation {
    // Text kept for parity with LangChain (next.md §1.12).
    static constexpr std::string_view default_violation_message =
        "I'm sorry, but I can't comply with that request. It was flagged for {categories}.";

    explicit moderation(moderation_options o = {}) : options_(std::move(o)) { options_.validate(); }

    const moderation_options& options() const noexcept { return options_; }

    /// Sets the endpoint call (e.g. an openai_moderation_client).
    void set_check(std::function<moderation_result(const std::string&, const std::string&)> check) {
        options_.check = std::move(check);
    }

    /// The violation text for flagged `content`.
    std::string violation_text(const std::string& content, const moderation_result& r) const {
        std::string categories;
        for (const auto& [name, flagged] : r.categories)
            if (flagged) {
                std::string shown = name;
                for (char& c : shown)
                    if (c == '_') c = ' ';
                categories += (categories.empty() ? "" : ", ") + shown;
            }
        if (categories.empty()) categories = "OpenAI's safety policies";
        boost::json::object scores;
        for (const auto& [name, score] : r.category_scores)
            scores[name] = score;
        const std::string tmpl = options_.violation_message.empty() ? std::string(default_violation_message)
                                                                    : options_.violation_message;
        try {
            return fmt::format(fmt::runtime(tmpl), fmt::arg("categories", categories),
                               fmt::arg("category_scores", boost::json::serialize(scores)),
                               fmt::arg("original_content", content));
        } catch (const fmt::format_error&) {
            return tmpl; // an unknown placeholder: the template as it is, as Python's KeyError fallback
        }
    }

    template <class State>
    hook_result before_model(State& state, runtime&) {
        auto& ms = state.messages;
        if (options_.check_tool_results) {
            std::size_t ai = last_index(ms, [](const message& m) { return m.is_ai(); });
            if (ai != npos)
                for (std::size_t i = ai + 1; i < ms.size(); ++i)
                    if (ms[i].is_tool())
                        if (auto j = act(state, i, "tool")) return j;
        }
        if (options_.check_input) {
            std::size_t h = last_index(ms, [](const message& m) { return m.is_human(); });
            if (h != npos)
                if (auto j = act(state, h, "input")) return j;
        }
        return std::nullopt;
    }

    template <class State>
    hook_result after_model(State& state, runtime&) {
        if (!options_.check_output) return std::nullopt;
        std::size_t ai = last_index(state.messages, [](const message& m) { return m.is_ai(); });
        return ai == npos ? std::nullopt : act(state, ai, "output");
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    template <class Pred>
    static std::size_t last_index(const std::vector<message>& ms, Pred p) {
        for (std::size_t i = ms.size(); i-- > 0;)
            if (p(ms[i])) return i;
        return npos;
    }

    template <class State>
    hook_result act(State& state, std::size_t index, std::string_view stage) const {
        const std::string text = state.messages[index].text();
        if (text.empty()) return std::nullopt;
        if (!options_.check)
            throw std::logic_error("moderation: no check function (give moderation_options::check or call "
                                   "set_check, e.g. with an openai_moderation_client)");
        moderation_result r = options_.check(text, options_.model);
        if (!r.flagged) return std::nullopt;
        std::string violation = violation_text(text, r);
        if (options_.exit_behavior == "error")
            throw moderation_flagged(std::move(violation), std::string(stage), text, std::move(r));
        if (options_.exit_behavior == "end") {
            message m = ai_message(std::move(violation));
            m.id = make_message_id();
            state.messages.push_back(std::move(m));
            return jump_to::end;
        }
        message& m = state.messages[index];
        m.content = {text_block(std::move(violation))};
        m.metadata["moderation"] = boost::json::object{{"flagged", true}, {"stage", stage}};
        return std::nullopt;
    }

    moderation_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const moderation_options& o) {
    jv = boost::json::object{{"model", o.model},
                             {"check_input", o.check_input},
                             {"check_output", o.check_output},
                             {"check_tool_results", o.check_tool_results},
                             {"exit_behavior", o.exit_behavior},
                             {"violation_message", o.violation_message},
                             {"base_url", o.base_url},
                             {"api_key_env", o.api_key_env}};
}
/// Reads langchain_openai's names (`model`, `check_input`, `check_output`,
/// `check_tool_results`, `exit_behavior`, `violation_message`) and the endpoint
/// (`base_url`, `api_key_env`) the lead agent builds the check from.
inline moderation_options tag_invoke(boost::json::value_to_tag<moderation_options>,
                                     const boost::json::value& jv) {
    json_reader r(jv, std::string(moderation_options::config_section));
    moderation_options o;
    r.read("model", o.model)
        .read("check_input", o.check_input)
        .read("check_output", o.check_output)
        .read("check_tool_results", o.check_tool_results)
        .read("exit_behavior", o.exit_behavior)
        .read("violation_message", o.violation_message)
        .read("base_url", o.base_url)
        .read("api_key_env", o.api_key_env)
        .reject_unknown_keys();
    r.validate(o);
    return o;
}

} // namespace agentware

#endif
