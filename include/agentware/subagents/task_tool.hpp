#ifndef AGENTWARE_SUBAGENTS_TASK_TOOL_HPP
#define AGENTWARE_SUBAGENTS_TASK_TOOL_HPP

// The `task` tool (DeerFlow's task tool, reference §5.12): the model's way to
// delegate to a subagent through the executor (executor.hpp). It holds the
// tool's schema, its result text and metadata (kept for parity), and the
// record it leaves in the delegation ledger when the parent keeps one.

#include <agentware/detail/format.hpp>
#include <agentware/detail/hash.hpp>
#include <agentware/detail/iso_time.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/subagents/executor.hpp>
#include <agentware/thread/delegations.hpp>
#include <agentware/tool/tool.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentware {

namespace detail {

inline std::string_view capped_label(std::string_view stop_reason) noexcept {
    // Text kept for parity with DeerFlow (reference §5.12).
    if (stop_reason == "token_capped") return "token budget";
    if (stop_reason == "turn_capped") return "turn budget";
    if (stop_reason == "loop_capped") return "repeated tool-call loop";
    return {};
}

} // namespace detail

/// The task tool's result text (DeerFlow's format_subagent_result_message).
inline std::string format_subagent_result_message(const subagent_result& r) {
    const std::string_view label = detail::capped_label(r.stop_reason);
    // Text kept for parity with DeerFlow (reference §5.12).
    switch (r.status) {
    case subagent_status::completed:
        if (label.empty()) return "Task Succeeded. Result: " + r.result;
        return detail::format("Task Succeeded (capped: {}). Result: {}", label, r.result);
    case subagent_status::failed: {
        std::string head =
            label.empty() ? std::string("Task failed") : detail::format("Task failed (capped: {})", label);
        return r.error.empty() ? head + "." : head + ". Error: " + r.error;
    }
    case subagent_status::cancelled:
        return r.error.empty() ? std::string("Task cancelled by user.")
                               : "Task cancelled by user. Error: " + r.error;
    case subagent_status::timed_out:
        return r.error.empty() ? std::string("Task timed out.") : "Task timed out. Error: " + r.error;
    }
    return "Task failed.";
}

/// The task tool message's metadata (DeerFlow's make_subagent_additional_kwargs).
inline boost::json::object subagent_additional_kwargs(const subagent_result& r) {
    // Built with emplace into tables sized once (no lookup before each insertion,
    // no growth); the keys are distinct.
    boost::json::object o(6);
    // A text within the brief's bound is put in as it is, without a copy on the way.
    const auto brief = [&o](std::string_view key, const std::string& text) {
        constexpr std::size_t bound = 2000;
        if (text.size() <= bound)
            o.emplace(key, std::string_view(text));
        else
            o.emplace(key, detail::bounded_brief(text, bound));
    };
    o.emplace("subagent_status", to_string(r.status));
    if (r.status == subagent_status::completed) {
        brief("subagent_result_brief", r.result);
        const std::array<char, 64> sha256 = detail::sha256_hex_digits(r.result);
        o.emplace("subagent_result_sha256", std::string_view(sha256.data(), sha256.size()));
    } else if (!r.error.empty()) {
        brief("subagent_error", r.error);
    }
    if (!r.stop_reason.empty()) o.emplace("subagent_stop_reason", r.stop_reason);
    if (!r.model_name.empty()) o.emplace("subagent_model_name", r.model_name);
    boost::json::object usage(3);
    usage.emplace("input_tokens", r.usage.input_tokens);
    usage.emplace("output_tokens", r.usage.output_tokens);
    usage.emplace("total_tokens", r.usage.total_tokens);
    o.emplace("subagent_token_usage", std::move(usage));
    return o;
}

/// The `task(description, prompt, subagent_type)` tool: delegates to a
/// subagent through the executor and answers with DeerFlow's result text and
/// metadata. When the parent's state keeps the delegation ledger
/// (durable_context's `delegations`), the result is recorded there too.
class task_tool {
public:
    explicit task_tool(std::shared_ptr<subagent_executor> executor, std::string name = "task")
        : executor_(std::move(executor)) {
        schema_.name = std::move(name);
        const auto available = executor_->registry().available();
        std::string types;
        for (const auto& n : available) {
            types += "\n- " + n;
            if (auto t = executor_->registry().resolve(n); t && !t->description.empty())
                types += ": " + t->description;
        }
        // Our own words.
        schema_.description =
            "Delegate a self-contained task to a subagent, which works on it with its own "
            "context and tools and reports back. Give it everything it needs in `prompt`: it "
            "does not see this conversation. Subagent types:" +
            types;
        boost::json::array names;
        for (const auto& n : available)
            names.emplace_back(n);
        schema_.parameters = boost::json::object{
            {"type", "object"},
            {"properties",
             boost::json::object{
                 {"description",
                  boost::json::object{{"type", "string"},
                                      {"description", "A short (3-5 word) label for the task."}}},
                 {"prompt", boost::json::object{{"type", "string"},
                                                {"description", "The task, with all the context it needs."}}},
                 {"subagent_type", boost::json::object{{"type", "string"},
                                                       {"description", "Which kind of subagent does it."}}}}},
            {"required", boost::json::array{"description", "prompt", "subagent_type"}}};
    }

    const tool_schema& schema() const { return schema_; }
    const std::shared_ptr<subagent_executor>& executor() const noexcept { return executor_; }

    template <class = void> // a template so that g++ emits the coroutine only where it is used
    boost::asio::awaitable<tool_output> async_call(const boost::json::object& args, const tool_runtime& rt) {
        subagent_task task;
        task.task_id = std::string(rt.tool_call_id);
        task.description = string_arg(args, "description");
        task.prompt = string_arg(args, "prompt");
        task.subagent_type = string_arg(args, "subagent_type");
        std::optional<delegation_entry> ledger; // what the ledger keeps of the task
        if (rt.field<delegations_field>() != nullptr) {
            delegation_entry& e = ledger.emplace();
            e.id = task.task_id;
            e.run_id = std::string(rt.run_id);
            e.description = std::string(detail::utf8_prefix(task.description, 200));
            e.subagent_type = task.subagent_type;
            e.result_ref = task.task_id;
        }
        subagent_result r = co_await executor_->execute(std::move(task), subagent_parent::of(rt));
        tool_output out(format_subagent_result_message(r));
        out.metadata = subagent_additional_kwargs(r);
        if (ledger) {
            delegation_entry& e = *ledger;
            e.status = std::string(to_string(r.status));
            if (r.status == subagent_status::completed) { // as the metadata has them
                e.result_brief = std::string(out.metadata.at("subagent_result_brief").as_string());
                e.result_sha256 = std::string(out.metadata.at("subagent_result_sha256").as_string());
            }
            e.stop_reason = r.stop_reason;
            e.created_at = detail::iso_utc(executor_->now());
            out.update.set<delegations_field>({std::move(e)});
        }
        co_return out;
    }

private:
    static std::string string_arg(const boost::json::object& args, std::string_view key) {
        const auto* v = args.if_contains(key);
        return v && v->is_string() ? std::string(v->get_string()) : std::string();
    }

    std::shared_ptr<subagent_executor> executor_;
    tool_schema schema_;
};

/// The task tool over an executor made from `options`, as a shared tool.
/// (A template only so that g++ 12 compiles the delegation's coroutines where
/// the tool is made, not in every file that includes this header.)
template <class = void>
std::shared_ptr<tool_interface> make_task_tool(std::shared_ptr<subagent_executor> executor) {
    return share_tool(task_tool(std::move(executor)));
}
} // namespace agentware

#endif
