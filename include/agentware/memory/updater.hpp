#ifndef AGENTWARE_MEMORY_UPDATER_HPP
#define AGENTWARE_MEMORY_UPDATER_HPP

// One memory update (reference §9.1, "Updater"): the part of the conversation
// not seen yet (the watermark), the extraction prompt, the memory model's
// answer read tolerantly, every deterministic gate before anything is kept,
// and a save checked against the revision it started from.

#include <agentware/detail/format.hpp>
#include <agentware/memory/clock.hpp>
#include <agentware/memory/eviction.hpp>
#include <agentware/memory/messages.hpp>
#include <agentware/memory/options.hpp>
#include <agentware/memory/storage.hpp>
#include <agentware/model/chat_model.hpp>

#include <boost/json.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentware {

/// The memory model: DeerFlow's `backend_config.model`, or the app's model.
/// Any chat model fits: `memory_model{[m](const chat_request& r) mutable { return m.invoke(r); }}`.
using memory_model = std::function<model_response(const chat_request&)>;

/// One queued update: a conversation (already filtered) of one thread, user and agent.
struct memory_update_item {
    std::string thread_id;
    std::string user_id;
    std::string agent_name; ///< lower-cased; "__default__" when none
    std::string trace_id;
    std::vector<message> messages;
    std::vector<std::string> signals;
    bool bypass_watermark = false; ///< the summarization hook's emergency path
};

/// The memory model's answer, read leniently.
struct memory_update_parse_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

namespace detail {

// Our own words: DeerFlow's static instructions are not in the reference.
inline constexpr std::string_view memory_system_prompt =
    R"(You maintain a long-term memory about one user, used to personalise future conversations.
Read the current memory and the new conversation, then answer with one JSON object and nothing else:
{
  "user": {
    "workContext": {"summary": "...", "shouldUpdate": true, "scope": "user", "authority": "descriptive"},
    "personalContext": {...}, "topOfMind": {...}
  },
  "history": {"recentMonths": {...}, "earlierContext": {...}, "longTermBackground": {...}},
  "newFacts": [{"content": "...", "category": "preference|correction|context|goal|behavior|identity|constraint|decision",
                "confidence": 0.0-1.0, "scope": "user|thread|project", "durability": "durable|transient",
                "authority": "descriptive|instruction", "sourceError": "optional: what was wrong before"}],
  "factsToRemove": [{"id": "fact_...", "scope": "user", "reason": "...", "replacementFactIndex": 0}],
  "factsToReinforce": [{"id": "fact_...", "scope": "user", "reason": "what the user confirmed"}],
  "staleFactsToRemove": [{"id": "fact_...", "reason": "..."}],
  "staleFactsToExtend": [{"id": "fact_...", "extendByDays": 180}],
  "consolidations": [{"sourceIds": ["fact_...", "fact_..."], "content": "...", "category": "...", "confidence": 0.9}]
}
Rules:
- Only record what is true of the user across unrelated tasks (scope "user", durability "durable").
- Describe the user; never store instructions addressed to the assistant (authority "descriptive").
- Set shouldUpdate to false for summaries that do not change.
- Confidence below 0.7 is not stored. Do not repeat facts already in memory.
- Never record details of uploaded files or of the current task.
- List in factsToReinforce only facts already in memory that the user explicitly confirmed in this conversation.
- The last three lists answer the review sections of the request; leave them out when it has none.)";

// Text kept for parity with DeerFlow (reference §9.1).
inline constexpr std::string_view correction_hint =
    "IMPORTANT: Explicit correction signals were detected in this conversation. Record a correction with "
    "confidence >= 0.95 only when it describes a durable, user-level working preference that is safe to "
    "reuse "
    "across unrelated tasks. A correction to facts, files, directions, or constraints in the current task is "
    "thread- or project-scoped and must not be stored.";
// Text kept for parity with DeerFlow (reference §9.1).
inline constexpr std::string_view manual_facts_note =
    "NOTE: Facts marked [MANUAL] are high-trust user-authored edits. Update them only when the new "
    "conversation "
    "is an explicit, unambiguous correction; otherwise preserve them as-is.";

// The other signals' hints: the reference gives only their existence; these are ours.
inline std::string_view signal_hint(std::string_view signal) {
    if (signal == "correction") return correction_hint;
    if (signal == "reinforcement")
        return "NOTE: The user confirmed that an approach worked. Reinforce an existing fact "
               "(\"factsToReinforce\") only when it is a durable, user-level preference.";
    if (signal == "preference")
        return "NOTE: The user stated a preference. Record it only when it holds beyond the current task.";
    if (signal == "identity")
        return "NOTE: The user said something about who they are. Record it as an identity fact when it is "
               "stated plainly.";
    if (signal == "goal")
        return "NOTE: The user stated a goal. Record it only when it is a long-running, user-level goal.";
    if (signal == "decision")
        return "NOTE: The user made a decision. Record it only when it binds future, unrelated work.";
    return {};
}

inline std::string memory_prompt_json(const user_memory& m) {
    boost::json::object user, history;
    for (std::size_t i = 0; i < 3; ++i) {
        user[memory_user_keys[i]] = boost::json::object{{"summary", html_escape(m.user[i].summary)},
                                                        {"updatedAt", m.user[i].updated_at}};
        history[memory_history_keys[i]] = boost::json::object{{"summary", html_escape(m.history[i].summary)},
                                                              {"updatedAt", m.history[i].updated_at}};
    }
    boost::json::array facts;
    for (const auto& f : m.facts)
        facts.push_back(boost::json::object{
            {"id", f.id},
            {"content", (f.source_type == "manual" ? "[MANUAL] " : "") + html_escape(f.content)},
            {"category", html_escape(f.category)},
            {"confidence", f.confidence},
            {"createdAt", f.created_at}});
    boost::json::object doc{
        {"user", std::move(user)}, {"history", std::move(history)}, {"facts", std::move(facts)}};
    // Indented two spaces, non-ASCII kept as is (json.dumps(indent=2, ensure_ascii=False)).
    std::string out;
    std::function<void(const boost::json::value&, int)> write = [&](const boost::json::value& v, int depth) {
        const std::string pad(std::size_t(depth + 1) * 2, ' '), close(std::size_t(depth) * 2, ' ');
        if (v.is_object()) {
            if (v.get_object().empty()) {
                out += "{}";
                return;
            }
            out += "{\n";
            bool first = true;
            for (const auto& kv : v.get_object()) {
                if (!first) out += ",\n";
                first = false;
                out += pad + boost::json::serialize(boost::json::value(kv.key())) + ": ";
                write(kv.value(), depth + 1);
            }
            out += "\n" + close + "}";
        } else if (v.is_array()) {
            if (v.get_array().empty()) {
                out += "[]";
                return;
            }
            out += "[\n";
            bool first = true;
            for (const auto& e : v.get_array()) {
                if (!first) out += ",\n";
                first = false;
                out += pad;
                write(e, depth + 1);
            }
            out += "\n" + close + "]";
        } else {
            out += boost::json::serialize(v);
        }
    };
    write(doc, 0);
    return out;
}

inline std::string lower_trim(const boost::json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? lower(trim(v->get_string())) : std::string();
}

inline std::string casefold(std::string_view s) { return lower(trim(s)); }

inline bool mentions_upload(std::string_view text) {
    static const std::regex re(
        R"(upload(ed|ing)?\b[^.\n]*\b(file|files|document|documents|attachment|attachments)\b|file uploads?|/mnt/user-data/uploads/|<\s*/?\s*(uploaded_files|current_uploads)\s*>)",
        std::regex::icase);
    return std::regex_search(text.begin(), text.end(), re);
}

/// Removes the sentences of a summary that mention uploads.
inline std::string strip_upload_sentences(std::string_view summary) {
    std::string out, sentence;
    auto flush = [&] {
        if (!mentions_upload(sentence)) out += sentence;
        sentence.clear();
    };
    for (std::size_t i = 0; i < summary.size(); ++i) {
        sentence += summary[i];
        const char c = summary[i];
        if ((c == '.' || c == '!' || c == '?') && (i + 1 == summary.size() || summary[i + 1] == ' ')) {
            while (i + 1 < summary.size() && summary[i + 1] == ' ')
                sentence += summary[++i];
            flush();
        }
    }
    flush();
    return std::string(trim(out));
}

/// A fact past the time it was expected to stay true (reference §9.1 step 3).
struct stale_memory_fact {
    std::size_t index;        ///< in the memory's facts
    std::int64_t window_days; ///< expected_valid_days, else staleness_age_days
    std::string since;        ///< the date its age is measured from (YYYY-MM-DD)
};

/// Whole days from `from` (an ISO timestamp) to `now`; nullopt when `from` is malformed.
inline std::optional<std::int64_t> memory_days_since(std::string_view from, memory_clock::time_point now) {
    memory_clock::time_point t;
    if (!parse_iso_utc(from, t)) return std::nullopt;
    return std::chrono::floor<std::chrono::days>(now - t).count();
}

/// The staleness review's candidates: facts older than their window, measured
/// from lastConfirmedAt or else createdAt, the protected categories left out;
/// none unless the review is on and at least staleness_min_candidates are due.
inline std::vector<stale_memory_fact>
stale_memory_facts(const user_memory& m, const memory_backend_options& o, memory_clock::time_point now) {
    std::vector<stale_memory_fact> out;
    if (!o.staleness_review_enabled) return out;
    for (std::size_t i = 0; i < m.facts.size(); ++i) {
        const memory_fact& f = m.facts[i];
        if (std::find(o.staleness_protected_categories.begin(), o.staleness_protected_categories.end(),
                      f.category) != o.staleness_protected_categories.end())
            continue;
        const std::string& since = f.last_confirmed_at.empty() ? f.created_at : f.last_confirmed_at;
        const auto age = memory_days_since(since, now);
        const std::int64_t window = f.expected_valid_days.value_or(std::int64_t(o.staleness_age_days));
        if (age && *age > window) out.push_back({i, window, since.substr(0, 10)});
    }
    if (out.size() < std::max<std::size_t>(o.staleness_min_candidates, 1)) out.clear();
    return out;
}

/// Facts a consolidation may merge: the stored ones a person did not write.
inline bool consolidation_eligible(const memory_fact& f) { return f.source_type != "manual"; }

inline std::size_t consolidation_candidates(const user_memory& m) {
    return std::size_t(std::count_if(m.facts.begin(), m.facts.end(), consolidation_eligible));
}

// The review sections of the prompt: our own words (the reference gives only
// the staleness lines' layout).
inline std::string staleness_section(const user_memory& m, const std::vector<stale_memory_fact>& stale) {
    if (stale.empty()) return {};
    std::string out =
        "Facts Due for Review:\nThese facts are older than the time they were expected to stay true. Remove "
        "those that the conversation or what you know of the user no longer supports "
        "(\"staleFactsToRemove\"), "
        "keep those still true for longer (\"staleFactsToExtend\" with \"extendByDays\"), and leave out any "
        "you are unsure of.\n<stale_facts>";
    for (const auto& s : stale) {
        const memory_fact& f = m.facts[s.index];
        // Layout kept for parity with DeerFlow (reference §9.1).
        out += detail::format("\n- [{} | {} | {:.2f} | {} | valid:{}d] \"{}\"", f.id, html_escape(f.category),
                              f.confidence, s.since, s.window_days, html_escape(f.content));
    }
    return out + "\n</stale_facts>";
}

inline std::string consolidation_section(const user_memory& m, const memory_backend_options& o) {
    if (!o.consolidation_enabled || consolidation_candidates(m) < o.consolidation_min_facts) return {};
    return detail::format(
        "Consolidation:\nSome facts in memory may say the same thing in other words. Merge each group of 2 "
        "to "
        "{} such facts into one (\"consolidations\": \"sourceIds\", the merged \"content\", \"category\" "
        "and \"confidence\"), at most {} groups; a fact belongs to one group at most, and facts marked "
        "[MANUAL] are left as they are.",
        o.consolidation_max_sources, o.consolidation_max_groups_per_cycle);
}

inline std::string new_fact_id() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return detail::format("fact_{:08x}", static_cast<std::uint32_t>(rng()));
}

/// The watermark: the identity of the last message extracted, per queue key
/// (an LRU of `max_keys`). Thread-safe.
class memory_watermarks {
public:
    explicit memory_watermarks(std::size_t max_keys) : max_(std::max<std::size_t>(max_keys, 1)) {}

    static std::string identity(const message& m) {
        if (!m.id.empty()) return "id\x1f" + m.id;
        return detail::format("content\x1f{}\x1f{}", m.is_human() ? "human" : "ai", memory_text(m));
    }

    /// The messages after the marked one when it is still there, else all.
    std::vector<message> feed(const std::string& key, const std::vector<message>& messages) {
        std::string mark;
        {
            std::lock_guard lock(mutex_);
            auto it = map_.find(key);
            if (it == map_.end()) return messages;
            mark = it->second.first;
            order_.splice(order_.begin(), order_, it->second.second);
        }
        for (std::size_t i = messages.size(); i-- > 0;)
            if (identity(messages[i]) == mark)
                return {messages.begin() + std::ptrdiff_t(i + 1), messages.end()};
        return messages;
    }

    void advance(const std::string& key, const message& last) {
        std::lock_guard lock(mutex_);
        auto it = map_.find(key);
        if (it != map_.end()) {
            it->second.first = identity(last);
            order_.splice(order_.begin(), order_, it->second.second);
            return;
        }
        order_.push_front(key);
        map_.emplace(key, std::make_pair(identity(last), order_.begin()));
        while (map_.size() > max_) {
            map_.erase(order_.back());
            order_.pop_back();
        }
    }

    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return map_.size();
    }

private:
    std::size_t max_;
    mutable std::mutex mutex_;
    std::list<std::string> order_;
    std::unordered_map<std::string, std::pair<std::string, std::list<std::string>::iterator>> map_;
};

/// The id of an entry of factsToReinforce or factsToRemove that may be
/// acted on: a string id, scope "user" and a reason that is not blank; else null.
inline const boost::json::value* user_entry_id(const boost::json::object& o) {
    const auto* id = o.if_contains("id");
    const auto* reason = o.if_contains("reason");
    if (!id || !id->is_string() || lower_trim(o, "scope") != "user" || !reason || !reason->is_string() ||
        trim(reason->get_string()).empty())
        return nullptr;
    return id;
}

} // namespace detail

/// Step 5: the first JSON object in `text` that has `user`, `history` or
/// `newFacts`, whatever prose, fences or thinking surround it.
inline boost::json::object parse_memory_update(std::string_view text) {
    for (std::size_t at = text.find('{'); at != std::string_view::npos; at = text.find('{', at + 1)) {
        boost::json::stream_parser p;
        boost::system::error_code ec;
        p.write_some(text.data() + at, text.size() - at, ec);
        if (ec || !p.done()) continue;
        boost::json::value v = p.release();
        if (!v.is_object()) continue;
        const auto& o = v.get_object();
        if (o.contains("user") || o.contains("history") || o.contains("newFacts"))
            return std::move(v.get_object());
    }
    throw memory_update_parse_error(
        "the memory model's answer holds no JSON object with user, history or newFacts");
}

/// Builds the user message of the extraction prompt. `options` and `now`
/// decide the review sections: the facts due for a staleness review, and
/// consolidation when it is on (at the epoch no fact is due).
inline std::string memory_update_prompt(const user_memory& current, const std::vector<message>& feed,
                                        const std::vector<std::string>& signals,
                                        const memory_backend_options& options = {},
                                        memory_clock::time_point now = {}) {
    std::string hints;
    for (const auto& s : signals)
        if (auto h = detail::signal_hint(s); !h.empty())
            hints += (hints.empty() ? "" : "\n") + std::string(h);
    if (std::any_of(current.facts.begin(), current.facts.end(),
                    [](const memory_fact& f) { return f.source_type == "manual"; }))
        hints += (hints.empty() ? "" : "\n") + std::string(detail::manual_facts_note);
    return detail::format(
        "Current Memory State:\n<current_memory>\n{}\n</current_memory>\n\nNew Conversation to "
        "Process:\n<conversation>\n{}\n</conversation>\n\n{}\n\n{}\n\n{}\n\nUpdate the memory based on "
        "the above conversation.",
        detail::memory_prompt_json(current), format_conversation_for_memory(feed), hints,
        detail::staleness_section(current, detail::stale_memory_facts(current, options, now)),
        detail::consolidation_section(current, options));
}

/// Step 6: applies the model's answer to `m` through DeerFlow's gates. Returns
/// what changed (for logs and tests).
struct memory_apply_report {
    std::size_t summaries_updated = 0;
    std::size_t facts_added = 0;
    std::size_t facts_removed = 0;
    std::size_t facts_rejected = 0;
    std::size_t facts_evicted = 0;
    std::size_t stale_removed = 0;      ///< by the staleness review (also counted in facts_removed)
    std::size_t stale_extended = 0;     ///< given a longer expected_valid_days
    std::size_t facts_consolidated = 0; ///< source facts merged (each group becomes one new fact)
    std::size_t facts_reinforced = 0;   ///< confirmed by the user (factsToReinforce, under hybrid or shadow)
    std::vector<std::string> evicted_ids; ///< removed by the capacity limit, lowest score first
    /// Shadow mode: the facts hybrid-v1 would have evicted instead (the confidence policy still decides).
    std::vector<std::string> shadow_evicted_ids;
};

/// `signals` are those detected in the conversation the answer is about:
/// `factsToReinforce` counts only when `reinforcement` is among them and
/// hybrid-v1 (or its shadow) is on.
inline memory_apply_report apply_memory_update(user_memory& m, const boost::json::object& update,
                                               const memory_backend_options& options,
                                               std::string_view thread_id, std::string_view now,
                                               const std::function<std::string()>& make_fact_id = {},
                                               const std::vector<std::string>& signals = {}) {
    memory_apply_report report;
    // Summaries: shouldUpdate, a non-empty summary, scope "user", authority "descriptive".
    auto summaries = [&](std::string_view group, const auto& keys, std::array<memory_summary, 3>& out) {
        const auto* g = update.if_contains(group);
        if (!g || !g->is_object()) return;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            const auto* s = g->get_object().if_contains(keys[i]);
            if (!s || !s->is_object()) continue;
            const auto& o = s->get_object();
            const auto* should = o.if_contains("shouldUpdate");
            const auto* text = o.if_contains("summary");
            if (!should || !should->is_bool() || !should->get_bool() || !text || !text->is_string() ||
                detail::trim(text->get_string()).empty())
                continue;
            if (detail::lower_trim(o, "scope") != "user" ||
                detail::lower_trim(o, "authority") != "descriptive")
                continue;
            out[i] = memory_summary{std::string(detail::trim(text->get_string())), std::string(now)};
            ++report.summaries_updated;
        }
    };
    summaries("user", memory_user_keys, m.user);
    summaries("history", memory_history_keys, m.history);

    // The staleness review: only facts that were due when the prompt was made
    // (the same memory and clock); removals capped, least confident first.
    memory_clock::time_point now_point{};
    const bool now_known = detail::parse_iso_utc(now, now_point);
    const std::vector<detail::stale_memory_fact> stale =
        now_known ? detail::stale_memory_facts(m, options, now_point)
                  : std::vector<detail::stale_memory_fact>{};

    // Confirmations (factsToReinforce): only when the deterministic
    // reinforcement signal fired and hybrid eviction (or its shadow) tracks
    // them; each names a stored fact, scope "user", and a reason. A confirmed
    // fact is evidence still true: the staleness review leaves it alone.
    std::vector<std::string> confirmed;
    const bool tracking =
        options.fact_eviction_policy == memory_eviction_hybrid_v1 || options.fact_eviction_shadow_enabled;
    if (const auto* rf = update.if_contains("factsToReinforce");
        tracking && rf && rf->is_array() &&
        std::find(signals.begin(), signals.end(), "reinforcement") != signals.end()) {
        for (const auto& v : rf->get_array()) {
            if (!v.is_object()) continue;
            const auto& o = v.get_object();
            const auto* id = detail::user_entry_id(o);
            if (!id) continue;
            const std::string target(id->get_string());
            auto it = std::find_if(m.facts.begin(), m.facts.end(),
                                   [&](const memory_fact& f) { return f.id == target; });
            if (it == m.facts.end() ||
                std::find(confirmed.begin(), confirmed.end(), target) != confirmed.end())
                continue;
            it->last_confirmed_at = std::string(now);
            it->updated_at = std::string(now);
            ++it->confirmation_count;
            confirmed.push_back(target);
            ++report.facts_reinforced;
        }
    }

    auto stale_index = [&](const boost::json::value& v) -> std::optional<std::size_t> {
        const boost::json::value* id = &v;
        if (v.is_object()) id = v.get_object().if_contains("id");
        if (!id || !id->is_string()) return std::nullopt;
        if (std::find(confirmed.begin(), confirmed.end(), id->get_string()) != confirmed.end())
            return std::nullopt;
        for (const auto& s : stale)
            if (m.facts[s.index].id == id->get_string()) return s.index;
        return std::nullopt;
    };
    if (!stale.empty()) {
        if (const auto* ext = update.if_contains("staleFactsToExtend"); ext && ext->is_array()) {
            for (const auto& v : ext->get_array()) {
                const auto i = stale_index(v);
                if (!i || !v.is_object()) continue;
                const auto* by = v.get_object().if_contains("extendByDays");
                const double days = by && by->is_number() ? by->to_number<double>() : 0;
                if (!std::isfinite(days) || days < 1) continue;
                memory_fact& f = m.facts[*i];
                const std::int64_t age = detail::memory_days_since(f.created_at, now_point).value_or(0);
                const double extended = std::min(double(std::max<std::int64_t>(age, 0)) + std::floor(days),
                                                 double(options.staleness_max_extension_days));
                f.expected_valid_days = static_cast<std::int64_t>(extended);
                f.updated_at = std::string(now);
                ++report.stale_extended;
            }
        }
        if (const auto* rm = update.if_contains("staleFactsToRemove"); rm && rm->is_array()) {
            std::vector<std::size_t> doomed;
            for (const auto& v : rm->get_array())
                if (const auto i = stale_index(v);
                    i && std::find(doomed.begin(), doomed.end(), *i) == doomed.end())
                    doomed.push_back(*i);
            std::stable_sort(doomed.begin(), doomed.end(), [&](std::size_t a, std::size_t b) {
                return m.facts[a].confidence < m.facts[b].confidence;
            });
            if (doomed.size() > options.staleness_max_removals_per_cycle)
                doomed.resize(options.staleness_max_removals_per_cycle);
            std::sort(doomed.begin(), doomed.end(), std::greater<>());
            for (std::size_t i : doomed)
                m.facts.erase(m.facts.begin() + std::ptrdiff_t(i));
            report.stale_removed = doomed.size();
            report.facts_removed += doomed.size();
        }
    }
    // Consolidation may merge only facts that were stored before this update.
    std::vector<std::string> stored_ids;
    for (const auto& f : m.facts)
        stored_ids.push_back(f.id);

    // New facts.
    std::vector<std::string> seen;
    for (const auto& f : m.facts)
        seen.push_back(detail::casefold(f.content));
    std::vector<std::string> accepted_ids; // per newFacts index, "" when rejected
    if (const auto* nf = update.if_contains("newFacts"); nf && nf->is_array()) {
        for (const auto& v : nf->get_array()) {
            accepted_ids.emplace_back();
            if (!v.is_object()) {
                ++report.facts_rejected;
                continue;
            }
            const auto& o = v.get_object();
            double confidence = 0.5;
            if (const auto* c = o.if_contains("confidence"); c && c->is_number())
                confidence = c->to_number<double>();
            if (!std::isfinite(confidence)) confidence = 0;
            const auto* content = o.if_contains("content");
            const std::string text = content && content->is_string()
                                         ? std::string(detail::trim(content->get_string()))
                                         : std::string();
            const bool gated = detail::lower_trim(o, "scope") == "user" &&
                               detail::lower_trim(o, "durability") == "durable" &&
                               detail::lower_trim(o, "authority") == "descriptive";
            if (!gated || confidence < options.fact_confidence_threshold || text.empty() ||
                std::find(seen.begin(), seen.end(), detail::casefold(text)) != seen.end()) {
                ++report.facts_rejected;
                continue;
            }
            memory_fact f;
            f.id = make_fact_id ? make_fact_id() : detail::new_fact_id();
            f.content = text;
            if (auto c = detail::lower_trim(o, "category"); !c.empty()) f.category = c;
            f.confidence = std::clamp(confidence, 0.0, 1.0);
            f.created_at = std::string(now);
            f.updated_at = f.created_at;
            f.source = thread_id.empty() ? "unknown" : std::string(thread_id);
            if (const auto* e = o.if_contains("sourceError");
                e && e->is_string() && !detail::trim(e->get_string()).empty())
                f.source_error = std::string(detail::trim(e->get_string()));
            if (const auto* d = o.if_contains("expectedValidDays"); d && d->is_number()) {
                const double cap =
                    double(options.staleness_age_days) * options.staleness_max_lifetime_multiplier;
                const double days = std::min(d->to_number<double>(), cap);
                if (std::isfinite(days) && days >= 1) f.expected_valid_days = static_cast<std::int64_t>(days);
            }
            seen.push_back(detail::casefold(text));
            accepted_ids.back() = f.id;
            m.facts.push_back(std::move(f));
            ++report.facts_added;
        }
    }

    // Capacity: the best max_facts under the policy, best first (ties keep
    // their order); in shadow mode hybrid-v1's choice is reported beside it.
    if (m.facts.size() > options.max_facts) {
        const memory_capacity_decision d = select_facts_for_capacity(
            m.facts, options.max_facts, options.fact_eviction_policy, options, now_point);
        if (options.fact_eviction_shadow_enabled && options.fact_eviction_policy != memory_eviction_hybrid_v1)
            for (std::size_t i : select_facts_for_capacity(m.facts, options.max_facts,
                                                           memory_eviction_hybrid_v1, options, now_point)
                                     .evicted)
                report.shadow_evicted_ids.push_back(m.facts[i].id);
        for (std::size_t i : d.evicted)
            report.evicted_ids.push_back(m.facts[i].id);
        std::vector<memory_fact> kept;
        kept.reserve(d.kept.size());
        for (std::size_t i : d.kept)
            kept.push_back(std::move(m.facts[i]));
        m.facts = std::move(kept);
        report.facts_evicted = d.evicted.size();
    }

    // Removals: scope "user", a reason, and a replacement (when named) that survived.
    auto present = [&](std::string_view id) {
        return !id.empty() &&
               std::any_of(m.facts.begin(), m.facts.end(), [&](const memory_fact& f) { return f.id == id; });
    };
    if (const auto* rm = update.if_contains("factsToRemove"); rm && rm->is_array()) {
        for (const auto& v : rm->get_array()) {
            if (!v.is_object()) continue;
            const auto& o = v.get_object();
            const auto* id = detail::user_entry_id(o);
            if (!id) continue;
            if (const auto* r = o.if_contains("replacementFactIndex"); r && !r->is_null()) {
                if (!r->is_int64() || r->get_int64() < 0 ||
                    std::size_t(r->get_int64()) >= accepted_ids.size() ||
                    !present(accepted_ids[std::size_t(r->get_int64())]))
                    continue;
            }
            const std::string target(id->get_string());
            auto it = std::find_if(m.facts.begin(), m.facts.end(),
                                   [&](const memory_fact& f) { return f.id == target; });
            if (it == m.facts.end()) continue;
            m.facts.erase(it);
            ++report.facts_removed;
        }
    }

    // Consolidation: groups of 2..consolidation_max_sources stored facts, in no
    // other group, become one fact no more confident than its most confident
    // source (and still above the threshold).
    if (const auto* groups = update.if_contains("consolidations");
        options.consolidation_enabled && groups && groups->is_array() &&
        detail::consolidation_candidates(m) >= options.consolidation_min_facts) {
        std::vector<std::string> used;
        std::size_t merged = 0;
        for (const auto& v : groups->get_array()) {
            if (merged >= options.consolidation_max_groups_per_cycle) break;
            if (!v.is_object()) continue;
            const auto& o = v.get_object();
            const auto* ids = o.if_contains("sourceIds");
            const auto* content = o.if_contains("content");
            if (!ids || !ids->is_array() || !content || !content->is_string() ||
                detail::trim(content->get_string()).empty())
                continue;
            std::vector<std::string> sources;
            double top = 0;
            bool ok =
                ids->get_array().size() >= 2 && ids->get_array().size() <= options.consolidation_max_sources;
            for (const auto& id : ids->get_array()) {
                if (!ok) break;
                const std::string sid = id.is_string() ? std::string(id.get_string()) : std::string();
                auto it = std::find_if(m.facts.begin(), m.facts.end(),
                                       [&](const memory_fact& f) { return f.id == sid; });
                ok = it != m.facts.end() && detail::consolidation_eligible(*it) &&
                     std::find(stored_ids.begin(), stored_ids.end(), sid) != stored_ids.end() &&
                     std::find(used.begin(), used.end(), sid) == used.end() &&
                     std::find(sources.begin(), sources.end(), sid) == sources.end();
                if (ok) {
                    sources.push_back(sid);
                    top = std::max(top, it->confidence);
                }
            }
            if (!ok) continue;
            double confidence = top;
            if (const auto* c = o.if_contains("confidence"); c && c->is_number())
                confidence = std::min(c->to_number<double>(), top);
            if (!std::isfinite(confidence) || confidence < options.fact_confidence_threshold) continue;
            memory_fact f;
            f.id = make_fact_id ? make_fact_id() : detail::new_fact_id();
            f.content = std::string(detail::trim(content->get_string()));
            const auto first = std::find_if(m.facts.begin(), m.facts.end(),
                                            [&](const memory_fact& x) { return x.id == sources.front(); });
            f.category = detail::lower_trim(o, "category");
            if (f.category.empty()) f.category = first->category;
            f.confidence = std::clamp(confidence, 0.0, 1.0);
            f.created_at = std::string(now);
            f.updated_at = f.created_at;
            f.source = f.source_type = "consolidation";
            f.consolidated_from = sources;
            std::erase_if(m.facts, [&](const memory_fact& x) {
                return std::find(sources.begin(), sources.end(), x.id) != sources.end();
            });
            used.insert(used.end(), sources.begin(), sources.end());
            report.facts_consolidated += sources.size();
            m.facts.push_back(std::move(f));
            ++merged;
        }
    }

    // Nothing about uploads survives.
    for (auto* group : {&m.user, &m.history})
        for (auto& s : *group)
            if (!s.summary.empty() && detail::mentions_upload(s.summary))
                s.summary = detail::strip_upload_sentences(s.summary);
    const auto before = m.facts.size();
    std::erase_if(m.facts, [](const memory_fact& f) { return detail::mentions_upload(f.content); });
    report.facts_removed += before - m.facts.size();
    return report;
}

/// Runs one queued item end to end.
class memory_updater {
public:
    memory_updater(std::shared_ptr<memory_storage> storage, memory_model model,
                   memory_backend_options options, std::shared_ptr<memory_clock> clock)
        : storage_(std::move(storage)), model_(std::move(model)), options_(std::move(options)),
          clock_(std::move(clock)), watermarks_(options_.watermark_max_keys) {}

    static std::string queue_key(const memory_update_item& item) {
        return item.thread_id + '\x1f' + item.user_id + '\x1f' + item.agent_name;
    }

    /// Returns true on success (including "nothing new"); throws on failure
    /// (the watermark then stays, so the next turn retries).
    bool update(const memory_update_item& item) {
        const std::string key = queue_key(item);
        std::vector<message> feed =
            item.bypass_watermark ? item.messages : watermarks_.feed(key, item.messages);
        if (feed.empty()) return true;
        memory_model model;
        {
            std::lock_guard lock(model_mutex_);
            model = model_;
        }
        if (!model) throw std::runtime_error("no memory model configured");
        const std::vector<std::string> signals = detect_memory_signals(feed);
        user_memory m = storage_->load(item.user_id, item.agent_name);
        chat_request request;
        request.system_prompt = std::string(detail::memory_system_prompt);
        request.messages.edit().push_back(
            human_message(memory_update_prompt(m, feed, signals, options_, clock_->now())));
        const model_response answer = model(request);
        const boost::json::object update = parse_memory_update(answer.ai.text());
        memory_apply_report report;
        for (int attempt = 0;; ++attempt) {
            user_memory next = m;
            report = apply_memory_update(next, update, options_, item.thread_id,
                                         detail::iso_utc(clock_->now()), fact_ids_, signals);
            try {
                if (next != m) storage_->save(item.user_id, item.agent_name, next);
                break;
            } catch (const memory_revision_conflict&) {
                if (attempt >= 2) throw;
                m = storage_->load(item.user_id, item.agent_name); // reapply to a fresh snapshot
            }
        }
        if (!item.bypass_watermark) watermarks_.advance(key, feed.back());
        if (observer_) try {
                observer_(item, report);
            } catch (...) {
                // An observer's failure is not the update's: it is stored already.
            }
        return true;
    }

    detail::memory_watermarks& watermarks() noexcept { return watermarks_; }

    /// Where new fact ids come from (default: "fact_" and 8 random hex digits); set before any update.
    void set_fact_ids(std::function<std::string()> source) { fact_ids_ = std::move(source); }

    /// Called on the worker after each update is stored, with what it changed
    /// (evictions, and in shadow mode what hybrid-v1 would have evicted); set before any update.
    void set_observer(std::function<void(const memory_update_item&, const memory_apply_report&)> observer) {
        observer_ = std::move(observer);
    }

    /// Sets the memory model (before or between runs; a running update keeps the one it started with).
    void set_model(memory_model model) {
        std::lock_guard lock(model_mutex_);
        model_ = std::move(model);
    }

private:
    std::shared_ptr<memory_storage> storage_;
    std::mutex model_mutex_;
    memory_model model_;
    memory_backend_options options_;
    std::shared_ptr<memory_clock> clock_;
    detail::memory_watermarks watermarks_;
    std::function<std::string()> fact_ids_;
    std::function<void(const memory_update_item&, const memory_apply_report&)> observer_;
};

} // namespace agentware

#endif
