#ifndef AGENTWARE_MIDDLEWARE_CLARIFICATION_HPP
#define AGENTWARE_MIDDLEWARE_CLARIFICATION_HPP

// clarification: brings the `ask_clarification` tool and handles its calls
// (DeerFlow's ClarificationMiddleware). The question is formatted as the tool
// message (type icon, context, numbered options or form fields) with a
// structured request for a UI in its metadata, and the run ends: the user's
// answer arrives as the next run. It must be the last middleware, so its
// wrap_tool_call is the innermost and sees the call before anything runs it.
//
// As DeerFlow since its issue 4906 (PRs 4908/4934): when an answer asks for
// clarification together with other calls, after_model takes the other calls
// out of that answer (same message, same id, its text untouched, no note), so
// only the question is answered; the model may make them again once the user
// answered. Runs where clarification is disabled keep every call.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/runtime.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/detail/json_values.hpp>
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct clarification_options {
    std::string tool_name = "ask_clarification";
    bool provide_tool = true; ///< add the tool to the agent (off when you bring your own)
    bool skip_batched_calls =
        true; ///< after_model drops the calls batched with a clarification (DeerFlow #4906)
    std::size_t max_fields = 16;
    std::size_t max_field_options = 24;
    std::size_t max_text = 200; ///< names, labels, placeholders, field options (code points)
    std::size_t max_fields_json_bytes = 16384;

    static constexpr std::string_view config_section = "clarification";
    friend bool operator==(const clarification_options&, const clarification_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const clarification_options& o) {
    jv = boost::json::object{{"tool_name", o.tool_name},
                             {"provide_tool", o.provide_tool},
                             {"skip_batched_calls", o.skip_batched_calls},
                             {"max_fields", o.max_fields},
                             {"max_field_options", o.max_field_options},
                             {"max_text", o.max_text},
                             {"max_fields_json_bytes", o.max_fields_json_bytes}};
}
inline clarification_options tag_invoke(boost::json::value_to_tag<clarification_options>,
                                        const boost::json::value& jv) {
    json_reader r(jv, std::string(clarification_options::config_section));
    clarification_options o;
    r.read("tool_name", o.tool_name)
        .read("provide_tool", o.provide_tool)
        .read("skip_batched_calls", o.skip_batched_calls)
        .read("max_fields", o.max_fields)
        .read("max_field_options", o.max_field_options)
        .read("max_text", o.max_text)
        .read("max_fields_json_bytes", o.max_fields_json_bytes)
        .reject_unknown_keys();
    return o;
}

/// What a clarification call turns into: the text the model and a plain UI
/// show, and the structured request a form-capable UI renders.
struct clarification_request {
    std::string request_id;
    std::string text;
    boost::json::object payload; ///< DeerFlow's `artifact.human_input`
};

struct clarification {
    static constexpr bool must_be_last = true;

    // Text kept for parity with DeerFlow's ClarificationMiddleware
    static constexpr std::string_view disabled_text =
        "Clarification is disabled in this context — the human is not present to answer synchronously. Do "
        "not ask "
        "for confirmation. Proceed with your best judgment, carry out the requested action, and state any "
        "assumptions you made in your final response.";
    static constexpr std::string_view tool_body_text = "Clarification request processed by middleware";
    // Text kept for parity with DeerFlow's ClarificationMiddleware
    static constexpr std::string_view form_footer = "Please reply with a value for each field.";
    static constexpr std::string_view tool_description =
        "Ask the user for clarification when information is missing, a requirement is ambiguous, several "
        "approaches "
        "are possible, an action is risky, or you want to suggest something. The run stops until the user "
        "answers.";

    clarification_options options;

    clarification() = default;
    explicit clarification(clarification_options o) : options(std::move(o)) {}

    /// The `ask_clarification` tool. Its body never runs inside an agent with
    /// this middleware (the call is answered here), so it only says so.
    std::vector<std::shared_ptr<tool_interface>> tools() const {
        if (!options.provide_tool) return {};
        return {
            share_tool(make_tool(options.tool_name, std::string(tool_description), tool_parameters(),
                                 [](const boost::json::object&) { return std::string(tool_body_text); }))};
    }

    /// A non-interactive run (context `non_interactive`) is not offered the tool.
    auto wrap_model_call(auto& req, auto&& next) {
        if (req.rt && detail::flag(req.rt->context, "non_interactive")) {
            const auto& tools = req.tools.get();
            if (std::any_of(tools.begin(), tools.end(),
                            [&](const tool_schema& t) { return t.name == options.tool_name; })) {
                auto& edited = req.tools.edit();
                edited.erase(
                    std::remove_if(edited.begin(), edited.end(),
                                   [&](const tool_schema& t) { return t.name == options.tool_name; }),
                    edited.end());
            }
        }
        return next(req);
    }

    /// An answer that asks for clarification keeps only its clarification
    /// calls: the others are taken out before anything runs them (DeerFlow
    /// #4906). Looks at the new answer alone; the message keeps its id, text
    /// and unusable calls, and no note is added.
    template <class State>
    void after_model(State& state, runtime& rt) {
        if (!options.skip_batched_calls || state.messages.empty()) return;
        message& last = state.messages.back();
        if (!last.is_ai() || last.tool_calls.empty()) return;
        const auto asks = [&](const tool_call& c) { return c.name == options.tool_name; };
        const auto kept =
            static_cast<std::size_t>(std::count_if(last.tool_calls.begin(), last.tool_calls.end(), asks));
        if (kept == 0 || kept == last.tool_calls.size()) return; // nothing asked, or nothing else called
        if (disabled(rt)) return; // nobody is asked, so the other calls must run
        last.tool_calls.erase(std::remove_if(last.tool_calls.begin(), last.tool_calls.end(),
                                             [&](const tool_call& c) { return !asks(c); }),
                              last.tool_calls.end());
    }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (req.call->name != options.tool_name) return next(req);
        if (req.rt && disabled(*req.rt)) {
            message m = tool_message(req.call->id, options.tool_name, std::string(disabled_text));
            m.id = request_id_for(req.call->id, disabled_text);
            return short_circuit(req, next, tool_response{std::move(m), {}, false});
        }
        clarification_request cr = build(req.call->args, req.call->id);
        message m = tool_message(req.call->id, options.tool_name, std::move(cr.text));
        m.id = std::move(cr.request_id);
        m.metadata["human_input"] = std::move(cr.payload);
        return short_circuit(req, next, tool_response{std::move(m), {}, true});
    }

    // --- the formatting, public for UIs and tests ---

    static std::string_view icon_for(std::string_view type) noexcept {
        if (type == "ambiguous_requirement") return "🤔";
        if (type == "approach_choice") return "🔀";
        if (type == "risk_confirmation") return "⚠️";
        if (type == "suggestion") return "💡";
        return "❓"; // missing_info and anything unknown
    }

    static std::string request_id_for(std::string_view tool_call_id, std::string_view text) {
        if (!detail::trim(tool_call_id).empty()) return "clarification:" + std::string(tool_call_id);
        return "clarification:" + detail::sha256_hex(text).substr(0, 16);
    }

    /// Options as DeerFlow accepts them: a list, a JSON text of one, a mapping
    /// (its scalar leaves, in order) or a single value; tags stripped, blanks
    /// dropped, duplicates removed.
    static std::vector<std::string> normalize_options(const boost::json::value& v) {
        std::vector<std::string> raw;
        if (v.is_string()) {
            boost::system::error_code ec;
            boost::json::value parsed = boost::json::parse(v.get_string(), ec);
            if (ec)
                raw.emplace_back(v.get_string());
            else
                collect_leaves(parsed, raw);
        } else {
            collect_leaves(v, raw);
        }
        std::vector<std::string> out;
        for (auto& r : raw) {
            std::string s(detail::trim(strip_tags(r)));
            if (s.empty() || std::find(out.begin(), out.end(), s) != out.end()) continue;
            out.push_back(std::move(s));
        }
        return out;
    }

    /// Form fields, all or nothing: any structural error means no form.
    std::optional<boost::json::array> normalize_fields(const boost::json::value& v) const {
        boost::json::value parsed;
        const boost::json::value* list = &v;
        if (v.is_string()) {
            boost::system::error_code ec;
            parsed = boost::json::parse(v.get_string(), ec);
            if (ec) return std::nullopt;
            list = &parsed;
        }
        const auto* arr = list->if_array();
        if (!arr || arr->empty() || arr->size() > options.max_fields) return std::nullopt;
        static constexpr std::array<std::string_view, 13> reserved{
            "__proto__",        "constructor",      "prototype",
            "toString",         "toLocaleString",   "valueOf",
            "hasOwnProperty",   "isPrototypeOf",    "propertyIsEnumerable",
            "__defineGetter__", "__defineSetter__", "__lookupGetter__",
            "__lookupSetter__"};
        static constexpr std::array<std::string_view, 7> types{"text",         "textarea", "number", "select",
                                                               "multi_select", "checkbox", "date"};
        boost::json::array out;
        std::set<std::string> names;
        for (const auto& item : *arr) {
            const auto* f = item.if_object();
            if (!f) return std::nullopt;
            const auto* name_v = f->if_contains("name");
            if (!name_v || !name_v->is_string()) return std::nullopt;
            std::string name(detail::trim(name_v->get_string()));
            if (name.empty() || detail::utf8_chars(name) > options.max_text || !names.insert(name).second ||
                std::find(reserved.begin(), reserved.end(), name) != reserved.end())
                return std::nullopt;
            std::string label(detail::trim(detail::string_at(*f, "label")));
            if (label.empty()) label = name;
            label = detail::cap(label, options.max_text);
            std::string type = detail::string_at(*f, "type");
            if (std::find(types.begin(), types.end(), type) == types.end()) type = "text";
            std::vector<std::string> opts;
            if (type == "select" || type == "multi_select") {
                if (const auto* o = f->if_contains("options")) opts = normalize_options(*o);
                if (opts.size() > options.max_field_options) opts.resize(options.max_field_options);
                for (auto& o : opts)
                    o = detail::cap(o, options.max_text);
                if (opts.empty()) type = "text";
            }
            boost::json::object field{
                {"name", name}, {"label", label}, {"type", type}, {"required", required_of(*f)}};
            std::string placeholder(detail::trim(detail::string_at(*f, "placeholder")));
            if (!placeholder.empty()) field["placeholder"] = detail::cap(placeholder, options.max_text);
            if (!opts.empty()) {
                boost::json::array oa;
                for (std::size_t i = 0; i < opts.size(); ++i)
                    oa.push_back(boost::json::object{{"id", detail::format("{}-option-{}", name, i + 1)},
                                                     {"label", opts[i]},
                                                     {"value", opts[i]}});
                field["options"] = std::move(oa);
            }
            out.push_back(std::move(field));
        }
        if (boost::json::serialize(out).size() > options.max_fields_json_bytes) return std::nullopt;
        return out;
    }

    /// The text and the structured request for a call's arguments.
    clarification_request build(const boost::json::object& args, std::string_view tool_call_id) const {
        const auto* q = args.if_contains("question");
        const std::string question = q && !q->is_null() ? detail::python_str(*q) : std::string();
        std::string type = detail::string_at(args, "clarification_type");
        if (type.empty()) type = "missing_info";
        const auto* context = args.if_contains("context");
        std::optional<boost::json::array> fields;
        if (const auto* f = args.if_contains("fields"); f && !f->is_null()) fields = normalize_fields(*f);
        std::vector<std::string> opts;
        if (const auto* o = args.if_contains("options"); o && !o->is_null()) opts = normalize_options(*o);

        std::vector<std::string> lines;
        const std::string icon(icon_for(type));
        if (context && detail::truthy(*context)) {
            lines.push_back(icon + " " + detail::python_str(*context));
            lines.push_back("\n" + question);
        } else {
            lines.push_back(icon + " " + question);
        }
        if (fields) {
            lines.emplace_back();
            for (std::size_t i = 0; i < fields->size(); ++i) {
                const auto& f = (*fields)[i].as_object();
                std::string line = detail::format("  {}. {}", i + 1, detail::string_at(f, "label"));
                if (f.at("required").as_bool()) line += " (required)";
                if (const auto* fo = f.if_contains("options")) {
                    std::string labels;
                    for (const auto& o : fo->as_array())
                        labels += (labels.empty() ? "" : " / ") + detail::string_at(o.as_object(), "label");
                    line += " — options: " + labels;
                }
                if (detail::string_at(f, "type") == "multi_select") line += " (multiple allowed)";
                lines.push_back(std::move(line));
            }
            lines.emplace_back();
            lines.emplace_back(form_footer);
        } else if (!opts.empty()) {
            lines.emplace_back();
            for (std::size_t i = 0; i < opts.size(); ++i)
                lines.push_back(detail::format("  {}. {}", i + 1, opts[i]));
        }
        std::string text;
        for (std::size_t i = 0; i < lines.size(); ++i)
            text += (i ? "\n" : "") + lines[i];

        clarification_request out;
        out.request_id = request_id_for(tool_call_id, text);
        boost::json::object& p = out.payload;
        p["version"] = fields ? 2 : 1;
        p["kind"] = "human_input_request";
        p["source"] = "ask_clarification";
        p["request_id"] = out.request_id;
        p["clarification_type"] = type;
        p["question"] = question;
        p["input_mode"] = fields ? "form" : (!opts.empty() ? "choice_with_other" : "free_text");
        if (!detail::trim(tool_call_id).empty()) p["tool_call_id"] = tool_call_id;
        if (context)
            p["context"] =
                context->is_null() ? boost::json::value() : boost::json::value(detail::python_str(*context));
        if (fields) {
            p["fields"] = std::move(*fields);
        } else if (!opts.empty()) {
            boost::json::array oa;
            for (std::size_t i = 0; i < opts.size(); ++i)
                oa.push_back(boost::json::object{
                    {"id", detail::format("option-{}", i + 1)}, {"label", opts[i]}, {"value", opts[i]}});
            p["options"] = std::move(oa);
        }
        out.text = std::move(text);
        return out;
    }

    static boost::json::object tool_parameters() {
        return boost::json::parse(R"({
  "type": "object",
  "properties": {
    "question": {"type": "string", "description": "The question to ask the user."},
    "clarification_type": {"type": "string",
      "enum": ["missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"],
      "description": "Why you ask."},
    "context": {"type": "string", "description": "What the user needs to know to answer."},
    "options": {"type": "array", "items": {"type": "string"}, "description": "Answers to choose from."},
    "fields": {"type": "array", "description": "A form to fill in instead of one answer.",
      "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "label": {"type": "string"},
        "type": {"type": "string", "enum": ["text", "textarea", "number", "select", "multi_select", "checkbox", "date"]},
        "required": {"type": "boolean"}, "options": {"type": "array", "items": {"type": "string"}},
        "placeholder": {"type": "string"}}, "required": ["name"]}}
  },
  "required": ["question", "clarification_type"]
})")
            .as_object();
    }

private:
    static void collect_leaves(const boost::json::value& v, std::vector<std::string>& out) {
        if (const auto* o = v.if_object()) {
            for (const auto& kv : *o)
                collect_leaves(kv.value(), out);
        } else if (const auto* a = v.if_array()) {
            for (const auto& e : *a)
                collect_leaves(e, out);
        } else if (!v.is_null()) {
            out.push_back(detail::python_str(v));
        }
    }

    // Removes `<tag ...>` and `</tag>`: option labels are shown as plain text.
    static std::string strip_tags(std::string_view s) {
        std::string out;
        for (std::size_t i = 0; i < s.size();) {
            if (s[i] == '<') {
                std::size_t j = i + 1;
                if (j < s.size() && s[j] == '/') ++j;
                const bool letter =
                    j < s.size() && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z'));
                const std::size_t close = s.find('>', j);
                if (letter && close != std::string_view::npos) {
                    i = close + 1;
                    continue;
                }
            }
            out += s[i++];
        }
        return out;
    }

    static bool required_of(const boost::json::object& f) {
        const auto* r = f.if_contains("required");
        if (!r) return false;
        if (r->is_string()) return detail::lower(detail::trim(r->get_string())) == "true";
        return detail::truthy(*r);
    }

    static bool disabled(const runtime& rt) {
        return detail::flag(rt.context, "disable_clarification") ||
               detail::flag(rt.context, "non_interactive");
    }
};

} // namespace agentware

#endif
