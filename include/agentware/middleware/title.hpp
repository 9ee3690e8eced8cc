#ifndef AGENTWARE_MIDDLEWARE_TITLE_HPP
#define AGENTWARE_MIDDLEWARE_TITLE_HPP

// title: names the conversation after its first exchange (DeerFlow's
// TitleMiddleware, reference §5.9). With a model configured, the model is
// asked (its after_model hook is a coroutine, awaited in async_run); without
// one, or when the model fails or answers nothing, the title is made from the
// user's first message.

#include <agentware/agent/coroutine_hooks.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/prompt_text.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>
#include <agentware/model/any_chat_model.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

/// The `title` state field.
struct title_field {
    static constexpr std::string_view name = "title";
    using value_type = std::string;
};

struct title_options {
    bool enabled = true;
    std::size_t max_words = 6;  ///< 1 to 20
    std::size_t max_chars = 60; ///< 10 to 200
    /// The model to ask, by name (the application builds it and sets `title::model`); null: the fallback
    /// only.
    std::optional<std::string> model_name;
    // Text kept for parity with DeerFlow (reference §5.9).
    std::string prompt_template = "Generate a concise title (max {max_words} words) for this conversation.\n"
                                  "User: {user_msg}\nAssistant: {assistant_msg}\n\n"
                                  "Return ONLY the title, no quotes, no explanation.";

    static constexpr std::string_view config_section = "title";
    friend bool operator==(const title_options&, const title_options&) = default;
};

namespace detail {

inline std::string replaced_all(std::string text, std::string_view what, std::string_view with) {
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
        text.replace(at, what.size(), with);
    return text;
}

inline std::string_view strip_chars(std::string_view s, char c) {
    while (!s.empty() && s.front() == c)
        s.remove_prefix(1);
    while (!s.empty() && s.back() == c)
        s.remove_suffix(1);
    return s;
}

} // namespace detail

class title {
public:
    using state_fields = fields<title_field>;

    // Text kept for parity with DeerFlow (reference §5.9).
    static constexpr std::string_view default_title = "New Conversation";

    title() : title(title_options{}) {}
    explicit title(title_options o, std::optional<any_chat_model> own_model = std::nullopt)
        : model(std::move(own_model)), options_(std::move(o)) {
        options_.max_words = std::clamp<std::size_t>(options_.max_words, 1, 20);
        options_.max_chars = std::clamp<std::size_t>(options_.max_chars, 10, 200);
    }

    /// The model to ask; none: the fallback only (DeerFlow does not fall back to the run's model here).
    std::optional<any_chat_model> model;

    const title_options& options() const noexcept { return options_; }

    template <class State>
    boost::asio::awaitable<void> after_model(State& state, runtime&) {
        if (!should_generate(state)) co_return;
        const std::string user = first_text(state, true);
        std::string made;
        if (model) {
            try {
                chat_request req;
                req.messages = cow_vector<message>(std::vector<message>{human_message(prompt(state))});
                model_response r = co_await model->async_invoke(req);
                made = parse(r.ai.text());
            } catch (...) { // the fallback below
                made.clear();
            }
        }
        get<title_field>(state) = made.empty() ? fallback(user) : std::move(made);
    }

    /// True after the first exchange of a conversation that has no title.
    template <class State>
    bool should_generate(const State& state) const {
        if (!options_.enabled || !get<title_field>(state).empty() || state.messages.size() < 2) return false;
        std::size_t users = 0, ais = 0;
        for (const auto& m : state.messages) {
            // A second user message settles it: a long thread costs no more than a short one.
            if (m.is_human() && !is_reminder(m) && ++users > 1) return false;
            if (m.is_ai()) ++ais;
        }
        return users == 1 && ais >= 1;
    }

    /// The prompt for this state's first exchange.
    template <class State>
    std::string prompt(const State& state) const {
        std::string user(detail::first_code_points(first_text(state, true), 500));
        std::string ai(detail::first_code_points(detail::strip_think(first_text(state, false)), 500));
        std::string p =
            detail::replaced_all(options_.prompt_template, "{max_words}", std::to_string(options_.max_words));
        p = detail::replaced_all(std::move(p), "{user_msg}", user);
        return detail::replaced_all(std::move(p), "{assistant_msg}", ai);
    }

    /// The title in a model's answer: think blocks, spaces and quotes removed, cut to max_chars.
    std::string parse(std::string_view answer) const {
        std::string text = detail::strip_think(answer);
        std::string_view t = detail::trim(text);
        t = detail::strip_chars(t, '"');
        t = detail::strip_chars(t, '\'');
        return std::string(detail::first_code_points(t, options_.max_chars));
    }

    /// The title made from the user's message alone.
    std::string fallback(std::string_view user) const {
        const std::size_t n = std::min<std::size_t>(options_.max_chars, 50);
        if (detail::utf8_chars(user) > n) {
            std::string cut(detail::first_code_points(user, std::min(n, options_.max_chars - 3)));
            while (!cut.empty() && detail::is_space(cut.back()))
                cut.pop_back();
            return cut + "...";
        }
        return user.empty() ? std::string(default_title) : std::string(user);
    }

private:
    static bool is_reminder(const message& m) {
        const auto* v = m.metadata.if_contains("dynamic_context_reminder");
        return v && v->is_bool() && v->get_bool();
    }

    template <class State>
    static std::string first_text(const State& state, bool user) {
        for (const auto& m : state.messages)
            if (user ? (m.is_human() && !is_reminder(m)) : m.is_ai()) return m.text();
        return {};
    }

    title_options options_;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const title_options& o) {
    boost::json::object out{{"enabled", o.enabled},
                            {"max_words", o.max_words},
                            {"max_chars", o.max_chars},
                            {"prompt_template", o.prompt_template}};
    out["model_name"] = o.model_name ? boost::json::value(*o.model_name) : boost::json::value(nullptr);
    jv = std::move(out);
}

/// Reads DeerFlow's `title:` keys; out-of-range sizes are errors naming the key.
inline title_options tag_invoke(boost::json::value_to_tag<title_options>, const boost::json::value& jv) {
    json_reader r(jv, std::string(title_options::config_section));
    title_options o;
    r.read("enabled", o.enabled)
        .read("max_words", o.max_words)
        .read("max_chars", o.max_chars)
        .read("model_name", o.model_name)
        .read("prompt_template", o.prompt_template)
        .reject_unknown_keys();
    if (o.max_words < 1 || o.max_words > 20) throw json_error(r.path_of("max_words"), "expected 1 to 20");
    if (o.max_chars < 10 || o.max_chars > 200) throw json_error(r.path_of("max_chars"), "expected 10 to 200");
    return o;
}

} // namespace agentware

#endif
