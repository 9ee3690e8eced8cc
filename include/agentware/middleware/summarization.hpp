#ifndef AGENTWARE_MIDDLEWARE_SUMMARIZATION_HPP
#define AGENTWARE_MIDDLEWARE_SUMMARIZATION_HPP

// summarization: compacts a long conversation (DeerFlow's
// DeerFlowSummarizationMiddleware over LangChain's SummarizationMiddleware).
//
// Before a model call, when a trigger fires, the older part of the history is
// summarised by a model (the configured one, else the run's own), the summary
// goes to the `summary_text` state field (it is not a message: durable_context
// projects it into every request) and the history keeps the recent messages,
// the latest real user message and the dynamic-context reminders.
//
// Its before_model hook is a coroutine: in async_run the summary call is
// awaited on the run's executor instead of holding its thread.
//
// Beyond DeerFlow (as deepagents does): when the provider answers that the
// prompt is too long (model_error_kind::context_length_exceeded), the history
// is compacted whatever the trigger says and the call is retried once.
//
// Cost per round: the token total of each thread is kept as a running sum
// (the messages added since the last round are counted, not the history), so
// a round costs the same at 10 and 10,000 messages while no trigger fires.

#include <agentware/agent/coroutine_hooks.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/core/fields.hpp>
#include <agentware/detail/awaitable.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/prompt_text.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/hook_tool_runtime.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/model/error.hpp>
#include <agentware/model/token_counter.hpp>
#include <agentware/state/update.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// The state field that holds the running summary of what was compacted away.
struct summary_text_field {
    static constexpr std::string_view name = "summary_text";
    using value_type = std::string;
};

/// A size of context: a fraction of the model's input window, tokens, or messages.
struct context_size {
    enum class kind { fraction, tokens, messages };
    kind type = kind::messages;
    double value = 0;
    friend bool operator==(const context_size&, const context_size&) = default;
};

struct summarization_options {
    bool enabled = false;
    /// The model to summarise with, by name (the application builds it and
    /// sets `summarization::model`); none means the run's own model.
    std::optional<std::string> model_name;
    /// When to compact: any of these (none: never, unless the provider rejects a too long prompt).
    std::vector<context_size> trigger;
    /// What to keep verbatim after a compaction.
    context_size keep{context_size::kind::messages, 20};
    /// Tokens of history the summary prompt may quote (none: no trimming).
    std::optional<std::size_t> trim_tokens_to_summarize = 4000;
    /// The prompt, with a `{messages}` placeholder (none: the default).
    std::optional<std::string> summary_prompt;
    /// Tools whose reads of skill files durable_context records.
    std::vector<std::string> skill_file_read_tool_names{"read_file", "read", "view", "cat"};
    /// Ours: the model's input window, for `fraction` (DeerFlow reads the model profile); 0: unknown.
    std::size_t max_input_tokens = 0;
    /// Ours: compact and retry once when the provider says the context is too long.
    bool retry_on_context_length = true;
    /// deepagents: the summary is a message at the head of the kept history
    /// (naming the file the history was offloaded to, if any) instead of the
    /// `summary_text` field.
    bool summary_as_message = false;

    static constexpr std::string_view config_section = "summarization";
    friend bool operator==(const summarization_options&, const summarization_options&) = default;
};

/// What a before_summarization hook sees (DeerFlow's SummarizationEvent).
struct summarization_event {
    std::span<const message> messages_to_summarize;
    std::span<const message> preserved_messages;
    std::string_view thread_id;
    const runtime* rt = nullptr;
    /// Ours: the state being compacted as a tool sees it (read-only, the
    /// history not yet replaced), for a filesystem backend_factory.
    const tool_runtime* tool_rt = nullptr;
    /// Ours: changes to other state fields the offload asks for (a state
    /// backend's `files`), applied with the compaction; when they cannot be
    /// applied, the summary names no file. Null for before_summarization hooks.
    state_update* update = nullptr;
};

namespace detail {

// LangChain's buffer form of a message list ("Human: ...\nAI: ...").
inline std::string buffer_string(std::span<const message> ms) {
    std::string out;
    for (const message& m : ms) {
        std::string_view who = m.is_human() ? "Human" : m.is_ai() ? "AI" : m.is_system() ? "System" : "Tool";
        if (!out.empty()) out += '\n';
        out += who;
        out += ": ";
        out += m.text();
    }
    return out;
}

/// A human message a person wrote: not the summary, not hidden from the UI.
inline bool is_real_user_message(const message& m) {
    return m.is_human() && m.name != "summary" && !m.metadata_flag("hide_from_ui");
}

} // namespace detail

class summarization {
public:
    using state_fields = fields<summary_text_field>;

    // Texts kept for parity with DeerFlow (reference §5.7).
    static constexpr std::string_view no_history_summary = "No previous conversation history.";
    static constexpr std::string_view too_long_summary = "Previous conversation was too long to summarize.";
    // Text kept for parity with LangChain (reference next.md §1.2): the head and tail the
    // reference quotes of DEFAULT_SUMMARY_PROMPT (its middle is not in the reference).
    static constexpr std::string_view default_summary_prompt =
        "<role>\nContext Extraction Assistant\n</role>\n\n<primary_objective>\nYour sole objective in this "
        "task "
        "is to extract the highest quality/most relevant context from the conversation history below.\n"
        "</primary_objective>\n\nRespond ONLY with the extracted context. Do not include any additional "
        "information, or text before or after the extracted context.\n\n<messages>\nMessages to "
        "summarize:\n{messages}\n</messages>";
    static constexpr std::size_t max_tracked_threads = 4096;

    summarization() : summarization(summarization_options{}) {}
    explicit summarization(summarization_options o, std::optional<any_chat_model> own_model = std::nullopt)
        : model(std::move(own_model)), options_(std::move(o)), shared_(std::make_shared<shared>()) {}

    /// The configured model; empty: the run's model (`rt.model`).
    std::optional<any_chat_model> model;
    /// Called after a summary is made, before the history is replaced; an
    /// exception is swallowed (DeerFlow logs it). The memory middleware's flush goes here.
    std::vector<std::function<void(const summarization_event&)>> before_summarization;
    /// deepagents' offload: keeps the messages about to be summarised
    /// somewhere the model can read them again, and returns where (the summary
    /// message names it), or nothing when it could not. An exception counts as
    /// nothing. It may put state changes in `event.update` (a state backend's
    /// write). See deep_summarization.hpp.
    std::function<std::optional<std::string>(const summarization_event&)> offload;

    // Texts kept for parity with deepagents (reference next.md §2.5): the summary message.
    static constexpr std::string_view offloaded_summary_message =
        "You are in the middle of a conversation that has been summarized.\n\nThe full conversation history "
        "has been saved to {file_path} should you need to refer back to it for details.\n\nA condensed "
        "summary "
        "follows:\n\n<summary>\n{summary}\n</summary>";
    static constexpr std::string_view plain_summary_message =
        "Here is a summary of the conversation to date:\n\n"
        "{summary}";

    const summarization_options& options() const noexcept { return options_; }

    /// Compacts when a trigger fires.
    template <class State>
    boost::asio::awaitable<void> before_model(State& state, runtime& rt) {
        co_await compact(state, rt, false);
    }

    /// Retries once, after a forced compaction, a call the provider rejects as too long.
    template <class Request, class Next>
    auto wrap_model_call(Request& req, Next&& next) {
        if constexpr (detail::is_awaitable_v<decltype(next(req))>) {
            return retry_async(req, std::forward<Next>(next));
        } else {
            try {
                return next(req);
            } catch (const model_error& e) {
                if (!options_.retry_on_context_length || !retries(e) || !req.state || !req.rt) throw;
                if (!detail::hook_runner().run(compact(*req.state, *req.rt, true))) throw;
                req.messages = cow_vector<message>(req.state->messages);
                return next(req);
            }
        }
    }

    /// The tokens the trigger counts for this thread's history (the running total).
    template <class State>
    std::uint64_t counted_tokens(const State& state, std::string_view thread_id) const {
        std::lock_guard lock(shared_->mutex);
        return running_total(state.messages, thread_id);
    }

    /// Runs one compaction: when `force`, whatever the trigger says. True when
    /// the history was compacted.
    template <class State>
    boost::asio::awaitable<bool> compact(State& state, runtime& rt, bool force) {
        auto& messages = state.messages;
        std::string& summary = get<summary_text_field>(state);
        if (!force && !triggered(messages, summary, rt.thread_id)) co_return false;
        for (auto& m : messages)
            if (m.id.empty()) m.id = make_message_id();

        std::size_t cutoff = cutoff_index(messages);
        if (cutoff == 0) co_return false;
        std::string latest_user_id;
        for (auto it = messages.rbegin(); it != messages.rend(); ++it)
            if (detail::is_real_user_message(*it)) {
                latest_user_id = it->id;
                break;
            }
        std::vector<message> to_summarize, kept;
        for (std::size_t i = 0; i < cutoff; ++i) {
            if (messages[i].metadata_flag("dynamic_context_reminder") ||
                (!latest_user_id.empty() && messages[i].id == latest_user_id))
                kept.push_back(messages[i]); // rescued, before the preserved tail
            else
                to_summarize.push_back(messages[i]);
        }
        if (to_summarize.empty()) co_return false;
        const std::size_t rescued = kept.size();
        for (std::size_t i = cutoff; i < messages.size(); ++i)
            kept.push_back(messages[i]);

        // As a message, the previous summary is among the messages summarised.
        // (Named, not a temporary of the co_await's full-expression: g++ 12
        // frees such a conditional's temporary twice.)
        const std::string previous = options_.summary_as_message ? std::string() : summary;
        std::optional<std::string> made = co_await summarize(to_summarize, previous, rt);
        if (!made) co_return false; // every candidate failed: no compaction this turn

        const tool_runtime state_view = detail::hook_tool_runtime(state, &rt);
        summarization_event event{to_summarize, std::span<const message>(kept).subspan(rescued), rt.thread_id,
                                  &rt, &state_view};
        for (auto& hook : before_summarization) {
            try {
                hook(event);
            } catch (...) { // a hook's failure does not undo the compaction
            }
        }
        std::optional<std::string> saved_to;
        if (offload) {
            state_update changes;
            event.update = &changes;
            try {
                saved_to = offload(event);
                if (saved_to && !changes.empty()) {
                    if constexpr (requires(state_update u) { state.apply(std::move(u)); })
                        state.apply(std::move(changes)); // a state_error: no file after all
                    else
                        saved_to.reset();
                }
            } catch (...) { // the summary goes on without the file
                saved_to.reset();
            }
            event.update = nullptr;
        }
        if (options_.summary_as_message) {
            kept.insert(kept.begin(), summary_message(*made, saved_to));
            messages = std::move(kept);
        } else {
            messages = std::move(kept);
            summary = std::move(*made);
        }
        forget(rt.thread_id);
        co_return true;
    }

    /// The summary prompt for these messages (and the previous summary), or
    /// nothing when it cannot be built. `trim_tokens_to_summarize` bounds the
    /// whole prompt: the prompt's own text (the template and the section tags)
    /// over it cannot be built; what remains goes to the messages (the newest
    /// that fit, starting on a human message; the last one alone when none
    /// fits), and with a previous summary half of it to each section (the
    /// summary's end, the messages' start).
    std::optional<std::string> build_prompt(std::span<const message> to_summarize,
                                            std::string_view previous) const {
        const bool with_previous = !previous.empty();
        std::string_view prev = previous;
        std::span<const message> shown = to_summarize;
        std::optional<std::size_t> half_chars;
        if (const auto& limit = options_.trim_tokens_to_summarize) {
            const std::uint64_t fixed = token_counter{}.estimate(render_prompt(with_previous, {}, {}));
            if (fixed > *limit) return std::nullopt;
            const std::uint64_t budget = *limit - fixed;
            shown = trimmed(to_summarize, budget);
            if (with_previous) half_chars = static_cast<std::size_t>(budget * 4 / 2);
        }
        std::string formatted = detail::buffer_string(shown);
        if (half_chars) { // cut on code-point boundaries
            prev = detail::utf8_suffix(prev, *half_chars);
            formatted.resize(detail::utf8_prefix(formatted, *half_chars).size());
        }
        return render_prompt(with_previous, detail::escape_html(prev), detail::escape_html(formatted));
    }

    /// The summary step alone (DeerFlow's `_create_summary`): nothing to
    /// summarise gives the canned `no_history_summary` and a prompt that cannot
    /// be built the canned `too_long_summary`, both without a model call;
    /// otherwise the first candidate that answers: the configured model, then
    /// the run's. Nothing when all fail or answer blank.
    // A template only so that g++ emits the coroutine where it is used (g++ 12
    // emits a non-template inline coroutine in every file that includes it).
    template <class = void>
    boost::asio::awaitable<std::optional<std::string>> summarize(const std::vector<message>& to_summarize,
                                                                 const std::string& previous, runtime& rt) {
        if (to_summarize.empty()) co_return std::string(no_history_summary);
        std::optional<std::string> prompt = build_prompt(to_summarize, previous);
        if (!prompt) co_return std::string(too_long_summary);
        chat_request req;
        req.messages = cow_vector<message>(std::vector<message>{human_message(*prompt)});
        if (model) {
            if (auto s = co_await ask(*model, req)) co_return s;
        }
        if (rt.model) {
            if (auto s = co_await ask(rt.model, req)) co_return s;
        }
        co_return std::nullopt;
    }

    /// deepagents' summary message: a human message named "summary" (so it is
    /// not taken for the user's latest message), `lc_source: summarization`.
    static message summary_message(std::string_view summary_text,
                                   const std::optional<std::string>& saved_to) {
        std::string text(saved_to ? offloaded_summary_message : plain_summary_message);
        auto put = [&](std::string_view key, std::string_view value) {
            if (auto at = text.find(key); at != std::string::npos) text.replace(at, key.size(), value);
        };
        if (saved_to) put("{file_path}", *saved_to);
        put("{summary}", summary_text);
        message m = human_message(std::move(text));
        m.name = "summary";
        m.id = make_message_id();
        m.metadata["lc_source"] = "summarization";
        return m;
    }

private:
    // The prompt around already escaped sections: the previous summary's
    // (when there is one) and the new messages', in place of `{messages}`,
    // trailing space stripped.
    std::string render_prompt(bool with_previous, std::string_view prev, std::string_view formatted) const {
        std::string body;
        if (with_previous) body = detail::format("<existing_summary>\n{}\n</existing_summary>\n\n", prev);
        body += detail::format("<new_messages>\n{}\n</new_messages>", formatted);
        std::string_view tmpl =
            options_.summary_prompt ? std::string_view(*options_.summary_prompt) : default_summary_prompt;
        std::string out;
        std::size_t at = tmpl.find("{messages}");
        if (at == std::string_view::npos) {
            out = std::string(tmpl);
        } else {
            out = std::string(tmpl.substr(0, at));
            out += body;
            out += tmpl.substr(at + 10);
        }
        while (!out.empty() && detail::is_space(out.back()))
            out.pop_back();
        return out;
    }

    // Per thread: each counted message's tokens and a hash of its id, and their sum.
    struct running {
        std::vector<std::uint64_t> tokens;
        std::vector<std::size_t> id_hashes;
        std::uint64_t total = 0;
    };
    struct shared {
        std::mutex mutex;
        std::map<std::string, running, std::less<>> threads;
    };

    static bool retries(const model_error& e) noexcept {
        return e.kind() == model_error_kind::context_length_exceeded;
    }

    template <class Request, class Next>
    boost::asio::awaitable<model_response> retry_async(Request req, Next next) {
        std::exception_ptr failure;
        try {
            co_return co_await next(req);
        } catch (const model_error& e) {
            if (!options_.retry_on_context_length || !retries(e) || !req.state || !req.rt) throw;
            failure = std::current_exception();
        }
        if (!co_await compact(*req.state, *req.rt, true)) std::rethrow_exception(failure);
        req.messages = cow_vector<message>(req.state->messages);
        co_return co_await next(req);
    }

    // The running total of this thread's messages: only the messages added
    // since the last count are counted; a history cut back (messages removed
    // from its end) subtracts theirs, and so does a message replaced at the
    // end of what was counted (its id differs), back to the last one in place.
    std::uint64_t running_total(const std::vector<message>& ms, std::string_view thread_id) const {
        auto it = shared_->threads.find(thread_id);
        if (it == shared_->threads.end()) {
            if (shared_->threads.size() >= max_tracked_threads) shared_->threads.clear();
            it = shared_->threads.emplace(std::string(thread_id), running{}).first;
        }
        running& r = it->second;
        std::hash<std::string> hash;
        while (r.tokens.size() > ms.size()) {
            r.total -= r.tokens.back();
            r.tokens.pop_back();
            r.id_hashes.pop_back();
        }
        // Back to the last message still in place: a run's input that replaced
        // an earlier one cut back (a retried turn) costs only the new tail.
        while (!r.tokens.empty() && r.id_hashes.back() != hash(ms[r.tokens.size() - 1].id)) {
            r.total -= r.tokens.back();
            r.tokens.pop_back();
            r.id_hashes.pop_back();
        }
        token_counter counter;
        for (std::size_t i = r.tokens.size(); i < ms.size(); ++i) {
            const std::uint64_t n = counter.estimate(ms[i]);
            r.tokens.push_back(n);
            r.id_hashes.push_back(hash(ms[i].id));
            r.total += n;
        }
        return r.total;
    }

    void forget(std::string_view thread_id) {
        std::lock_guard lock(shared_->mutex);
        if (auto it = shared_->threads.find(thread_id); it != shared_->threads.end())
            shared_->threads.erase(it);
    }

    // The previous summary as the trigger counts it: DeerFlow adds it to the
    // history as a human message named "summary" (the name counts too).
    static std::uint64_t summary_tokens(const std::string& summary) {
        message m = human_message(summary);
        m.name = "summary";
        return token_counter{}.estimate(m);
    }

    bool triggered(const std::vector<message>& ms, const std::string& summary,
                   std::string_view thread_id) const {
        if (options_.trigger.empty()) return false;
        // The previous summary counts as one more message and its tokens.
        const std::size_t count = ms.size() + (summary.empty() ? 0 : 1);
        std::uint64_t tokens = 0;
        bool need_tokens = false;
        for (const auto& t : options_.trigger)
            need_tokens |= t.type != context_size::kind::messages;
        if (need_tokens) {
            std::lock_guard lock(shared_->mutex);
            tokens = running_total(ms, thread_id);
            if (!summary.empty()) tokens += summary_tokens(summary);
        }
        for (const auto& t : options_.trigger) {
            switch (t.type) {
            case context_size::kind::messages:
                if (static_cast<double>(count) >= t.value) return true;
                break;
            case context_size::kind::tokens:
                if (static_cast<double>(tokens) >= t.value) return true;
                break;
            case context_size::kind::fraction:
                if (options_.max_input_tokens > 0 &&
                    tokens >=
                        static_cast<std::uint64_t>(static_cast<double>(options_.max_input_tokens) * t.value))
                    return true;
                break;
            }
        }
        return false;
    }

    // Where the kept tail starts; 0: nothing to compact. Never between an ai
    // message and the results of its tool calls.
    std::size_t cutoff_index(const std::vector<message>& ms) const {
        std::size_t cutoff = 0;
        if (options_.keep.type == context_size::kind::messages) {
            auto n = static_cast<std::size_t>(options_.keep.value);
            if (ms.size() <= n) return 0;
            cutoff = ms.size() - n;
        } else {
            double target = options_.keep.value;
            if (options_.keep.type == context_size::kind::fraction) {
                if (options_.max_input_tokens == 0) return 0;
                target = static_cast<double>(options_.max_input_tokens) * options_.keep.value;
            }
            token_counter counter;
            std::uint64_t sum = 0;
            cutoff = ms.size();
            while (cutoff > 0 && static_cast<double>(sum + counter.estimate(ms[cutoff - 1])) <= target)
                sum += counter.estimate(ms[--cutoff]);
        }
        // Safe: a tool result at the cut moves it back to the ai message that called.
        if (cutoff < ms.size() && ms[cutoff].is_tool()) {
            while (cutoff > 0 && ms[cutoff].is_tool())
                --cutoff;
            if (!ms[cutoff].is_ai()) return 0;
        }
        return cutoff;
    }

    // The newest messages that fit the budget, starting on a human message;
    // the last message alone when none does.
    static std::span<const message> trimmed(std::span<const message> ms, std::uint64_t budget) {
        if (ms.empty()) return ms;
        token_counter counter;
        std::uint64_t sum = 0;
        std::size_t first = ms.size();
        while (first > 0 && sum + counter.estimate(ms[first - 1]) <= budget)
            sum += counter.estimate(ms[--first]);
        while (first < ms.size() && !ms[first].is_human())
            ++first;
        if (first == ms.size()) return ms.subspan(ms.size() - 1); // the last message only
        return ms.subspan(first);
    }

    template <class M>
    static boost::asio::awaitable<std::optional<std::string>> ask(M& m, const chat_request& req) {
        try {
            model_response r = co_await m.async_invoke(req);
            std::string text = r.ai.text();
            if (!detail::trim(text).empty()) co_return text;
        } catch (...) { // the next candidate is tried
        }
        co_return std::nullopt;
    }

    summarization_options options_;
    std::shared_ptr<shared> shared_;
};

// ---- JSON form (DeerFlow's `summarization:` section) -------------------

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const context_size& c) {
    std::string_view type = c.type == context_size::kind::fraction ? "fraction"
                            : c.type == context_size::kind::tokens ? "tokens"
                                                                   : "messages";
    jv = boost::json::object{{"type", type}, {"value", c.value}};
}

inline context_size tag_invoke(boost::json::value_to_tag<context_size>, const boost::json::value& jv) {
    json_reader r(jv);
    context_size c;
    c.type = json_choose(r.path_of("type"), r.required<std::string>("type"),
                         {json_choice_of<context_size::kind>{"fraction", context_size::kind::fraction},
                          {"tokens", context_size::kind::tokens},
                          {"messages", context_size::kind::messages}});
    c.value = r.required<double>("value");
    if (c.value < 0 || (c.type == context_size::kind::fraction && c.value > 1))
        throw json_error(r.path_of("value"), c.type == context_size::kind::fraction
                                                 ? "expected a fraction in [0, 1]"
                                                 : "expected a value >= 0");
    r.reject_unknown_keys();
    return c;
}

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const summarization_options& o) {
    boost::json::object out{
        {"enabled", o.enabled},
        {"trigger", boost::json::value_from(o.trigger)},
        {"keep", boost::json::value_from(o.keep)},
        {"skill_file_read_tool_names", boost::json::value_from(o.skill_file_read_tool_names)},
        {"max_input_tokens", o.max_input_tokens},
        {"retry_on_context_length", o.retry_on_context_length},
        {"summary_as_message", o.summary_as_message}};
    out["model_name"] = o.model_name ? boost::json::value(*o.model_name) : boost::json::value(nullptr);
    out["trim_tokens_to_summarize"] = o.trim_tokens_to_summarize
                                          ? boost::json::value(*o.trim_tokens_to_summarize)
                                          : boost::json::value(nullptr);
    out["summary_prompt"] =
        o.summary_prompt ? boost::json::value(*o.summary_prompt) : boost::json::value(nullptr);
    jv = std::move(out);
}

/// Reads DeerFlow's `summarization:` keys; `trigger` is one size or a list,
/// and null (or absent) means never.
inline summarization_options tag_invoke(boost::json::value_to_tag<summarization_options>,
                                        const boost::json::value& jv) {
    json_reader r(jv, std::string(summarization_options::config_section));
    summarization_options o;
    // An explicit null switches the setting off; an absent key keeps the default.
    auto nullable = [&](std::string_view key, auto& into) {
        if (const auto* v = r.object().if_contains(key); v && v->is_null()) {
            into.reset();
            r.skip(key);
        } else {
            r.read(key, into);
        }
    };
    r.read("enabled", o.enabled);
    nullable("model_name", o.model_name);
    if (const auto* t = r.find("trigger")) {
        if (t->is_object())
            o.trigger = {json_read_as<context_size>(*t, r.path_of("trigger"))};
        else if (!t->is_null())
            o.trigger = json_read_as<std::vector<context_size>>(*t, r.path_of("trigger"));
        r.skip("trigger");
    }
    r.read("keep", o.keep);
    nullable("trim_tokens_to_summarize", o.trim_tokens_to_summarize);
    nullable("summary_prompt", o.summary_prompt);
    if (o.summary_prompt && o.summary_prompt->find("{messages}") == std::string::npos)
        throw json_error(r.path_of("summary_prompt"), "must contain the {messages} placeholder");
    r.read("skill_file_read_tool_names", o.skill_file_read_tool_names)
        .read("max_input_tokens", o.max_input_tokens)
        .read("retry_on_context_length", o.retry_on_context_length)
        .read("summary_as_message", o.summary_as_message)
        .reject_unknown_keys();
    return o;
}

} // namespace agentware

#endif
