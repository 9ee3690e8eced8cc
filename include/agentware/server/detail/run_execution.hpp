#ifndef AGENTWARE_SERVER_DETAIL_RUN_EXECUTION_HPP
#define AGENTWARE_SERVER_DETAIL_RUN_EXECUTION_HPP

// One run on a worker: its context, its starting state (a fork, a resume, new
// input), the agent, and the events each stream mode asks for, in the order
// and shapes the LangGraph server writes them (reference: server.md §3).

#include <agentware/server/detail/saved_state.hpp>
#include <agentware/server/detail/write_behind.hpp>
#include <agentware/server/run_manager.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace agentware::server {

namespace detail {

// What a run publishes, in the modes it asked for.
class run_events {
public:
    run_events(run_stream& out, const boost::json::array& modes, boost::json::object meta)
        : out_(out), meta_(std::move(meta)) {
        for (const auto& m : modes)
            if (m.is_string()) modes_.insert(std::string(m.get_string()));
    }
    bool wants(std::string_view mode) const { return modes_.contains(std::string(mode)); }
    void send(std::string_view mode, std::string_view name, const boost::json::value& data) {
        if (wants(mode)) out_.publish(std::string(name), boost::json::serialize(data));
    }
    void always(std::string_view name, const boost::json::value& data) {
        out_.publish(std::string(name), boost::json::serialize(data));
    }

    /// The metadata half of a `messages` event.
    boost::json::object message_meta(std::string_view node, std::size_t step) const {
        boost::json::object m = meta_;
        m["langgraph_node"] = node;
        m["langgraph_step"] = step;
        m["langgraph_triggers"] = boost::json::array{agentware::detail::format("branch:to:{}", node)};
        m["langgraph_path"] = boost::json::array{"__pregel_pull", node};
        m["langgraph_checkpoint_ns"] = "";
        m["checkpoint_ns"] = "";
        m["tags"] = boost::json::array{};
        return m;
    }

private:
    run_stream& out_;
    boost::json::object meta_;
    std::set<std::string> modes_;
};

// The state ends with the model's answer: an assistant message that calls no tool.
inline bool answered(const boost::json::value& state) {
    const auto* o = state.if_object();
    const auto* ms = o ? o->if_contains("messages") : nullptr;
    if (ms == nullptr || !ms->is_array() || ms->get_array().empty()) return false;
    const auto* last = ms->get_array().back().if_object();
    if (last == nullptr || string_or(*last, "role", "") != "assistant") return false;
    const auto* calls = last->if_contains("tool_calls");
    return calls == nullptr || !calls->is_array() || calls->get_array().empty();
}

inline boost::json::object ai_chunk(std::string_view id, std::string_view text) {
    return {{"content", text},
            {"additional_kwargs", boost::json::object{}},
            {"response_metadata", boost::json::object{}},
            {"type", "AIMessageChunk"},
            {"name", nullptr},
            {"id", id},
            {"tool_calls", boost::json::array{}},
            {"invalid_tool_calls", boost::json::array{}},
            {"tool_call_chunks", boost::json::array{}}};
}

} // namespace detail

inline boost::asio::awaitable<void> run_manager::run_body(live_run& r) {
    const std::string run_id(r.record.at("run_id").get_string());
    const std::string thread_id(r.record.at("thread_id").get_string());
    boost::json::object kwargs = r.record.at("kwargs").as_object();
    const std::string graph_id = r.spec->graph_id;

    boost::json::object meta = r.record.at("metadata").as_object();
    meta["thread_id"] = thread_id;
    meta["run_id"] = run_id;
    meta["run_attempt"] = r.attempt;
    meta["langgraph_host"] = "self-hosted";
    detail::run_events ev(*r.events, kwargs.at("stream_mode").as_array(), meta);
    ev.always("metadata", boost::json::object{{"run_id", run_id}, {"attempt", r.attempt}});

    const std::stop_token stop = r.stop.get_token();
    for (boost::asio::steady_timer wait(ex_);
         std::chrono::steady_clock::now() < r.not_before && !stop.stop_requested();) { // after_seconds
        wait.expires_after(std::min<std::chrono::steady_clock::duration>(
            std::chrono::milliseconds(20), r.not_before - std::chrono::steady_clock::now()));
        co_await wait.async_wait(boost::asio::use_awaitable);
    }

    // The steps that end a run; each reads or writes the store, so each is a coroutine.
    using step = boost::asio::awaitable<void>;
    // A run whose lease was lost (a shared queue) writes nothing more: the
    // process that took it over does.
    auto thread_status = [&](std::string status) -> step {
        if (co_await still_owned(r)) co_await set_thread_status(thread_id, std::move(status), run_id);
    };
    // A shutdown with a shared queue: the run goes back to it, as its last
    // checkpoint left it, for another process to go on with.
    auto released = [&]() -> boost::asio::awaitable<bool> {
        if (options_.queue == nullptr || !flag(r, &live_run::draining) || !co_await still_owned(r))
            co_return false;
        co_await events_written(r);
        co_await options_.queue->release(run_id);
        co_return true;
    };
    auto fail = [&](std::string kind, std::string message) -> step {
        boost::json::object error{{"error", kind}, {"message", message}};
        ev.always("error", error);
        r.events->set_outcome(boost::json::serialize(boost::json::object{{"__error__", error}}));
        r.record["error"] = message;
        co_await set_run_status(r, "error");
        if (options_.log) options_.log(agentware::detail::format("run {} failed: {}", run_id, message));
    };
    auto end_status_of_thread = [&]() -> boost::asio::awaitable<std::string> {
        auto last = co_await store_.last_checkpoint(thread_id);
        co_return detail::waits_on_interrupt(last) ? "interrupted" : "idle";
    };
    auto end_thread = [&]() -> step { co_await thread_status(co_await end_status_of_thread()); };
    auto final_values = [&]() -> step {
        auto c = co_await store_.last_checkpoint(thread_id);
        r.events->set_outcome(
            boost::json::serialize(c ? langchain_values(c->at("values")) : boost::json::object{}));
    };
    auto finish_cancelled = [&]() -> step {
        co_await final_values();
        if (!co_await still_owned(r)) co_return;
        if (r.cancel_action == "rollback") {
            co_await store_.truncate_checkpoints(thread_id, r.checkpoints_before);
            co_await end_thread(); // while the run's row still fences the write
            co_await store_.erase_run(run_id);
            co_return;
        }
        if (!r.cancel_reason.empty()) r.record["cancel_reason"] = r.cancel_reason;
        co_await set_run_status(r, "interrupted");
        co_await end_thread();
    };
    auto end_temporary = [&]() -> step {
        if (kwargs.at("temporary").as_bool()) co_await store_.erase_thread(thread_id);
    };
    // A run refused before its agent starts: an error, and the thread as it was.
    auto refuse = [&](std::string kind, std::string message) -> step {
        co_await fail(std::move(kind), std::move(message));
        co_await end_thread();
        co_await end_temporary();
    };

    // The run's context: config.configurable, then context (LangGraph merges both into the runtime).
    boost::json::object context;
    std::size_t recursion_limit = 100;
    if (const auto* c = kwargs.at("config").as_object().if_contains("configurable"); c && c->is_object())
        for (const auto& kv : c->get_object())
            context[kv.key()] = kv.value();
    for (const auto& kv : kwargs.at("context").as_object())
        context[kv.key()] = kv.value();
    if (const auto* l = kwargs.at("config").as_object().if_contains("recursion_limit"); l && l->is_number())
        recursion_limit = std::size_t(std::max<double>(1, l->to_number<double>()));

    // What failed, when the run threw: caught below, answered after the handler
    // (a handler cannot wait for the store).
    std::optional<std::pair<std::string, std::string>> failure;
    bool invalid_input = false;
    std::shared_ptr<detail::write_behind<checkpoint_record>> writer;
    try {
        r.checkpoints_before = co_await store_.checkpoint_count(thread_id);
        if (co_await released()) co_return;
        if (stop.stop_requested()) {
            co_await finish_cancelled();
            co_await end_temporary();
            co_return;
        }
        co_await set_run_status(r, "running");
        co_await thread_status("busy");
        writer = std::make_shared<detail::write_behind<checkpoint_record>>(
            [this, &r](std::vector<checkpoint_record> saved) -> boost::asio::awaitable<void> {
                for (auto& c : saved) {
                    if (!co_await still_owned(r)) co_return; // the run is another process's now
                    co_await store_.add_checkpoint(std::move(c));
                }
            },
            ex_);

        // A fork: the run starts from an earlier checkpoint, copied as the thread's newest.
        std::string from;
        if (const auto& id = kwargs.at("checkpoint_id"); id.is_string()) from = id.get_string();
        if (const auto& c = kwargs.at("checkpoint"); c.is_object())
            from = detail::string_or(c.get_object(), "checkpoint_id", from);
        auto last = co_await store_.last_checkpoint(thread_id);
        if (!from.empty() && (!last || detail::string_or(*last, "checkpoint_id", "") != from)) {
            std::optional<checkpoint_record> base;
            auto all = co_await store_.checkpoints(thread_id);
            for (auto& c : all)
                if (detail::string_or(c, "checkpoint_id", "") == from) base = std::move(c);
            if (!base) {
                co_await refuse("ValueError", agentware::detail::format(
                                                  "Checkpoint {} not found on thread {}", from, thread_id));
                co_return;
            }
            (*base)["parent_checkpoint_id"] = last ? last->at("checkpoint_id") : nullptr;
            (*base)["checkpoint_id"] = new_uuid7();
            (*base)["source"] = "fork";
            (*base)["run_id"] = run_id;
            (*base)["created_at"] = iso_now();
            co_await store_.add_checkpoint(*base);
            last = std::move(base);
        }
        boost::json::value state = last ? last->at("values") : boost::json::value(boost::json::object{});
        boost::json::array pending = detail::pending_interrupts(state);
        // Another attempt of a run whose process died: it goes on from the
        // last checkpoint it saved, its input already in it (and the tool
        // calls whose results were saved do not run again).
        const bool going_on = r.attempt > 1 && last && detail::string_or(*last, "run_id", "") == run_id;
        if (going_on && pending.empty() && detail::answered(state)) {
            // It had ended (its answer is saved); only its end was not written.
            co_await final_values();
            co_await set_run_status(r, "success");
            co_await thread_status("idle");
            co_await end_temporary();
            co_return;
        }

        run_request req;
        req.thread_id = thread_id;
        req.run_id = run_id;
        req.context = context;
        req.recursion_limit = recursion_limit;
        req.stop = stop;

        const auto* command = going_on ? nullptr : kwargs.at("command").if_object();
        if (going_on) {
            // Nothing new: the agent starts from the state as saved.
        } else if (command != nullptr && command->contains("resume")) {
            boost::json::value value = command->at("resume");
            if (pending.empty()) {
                // Kept for parity: LangGraph's name for a resume that answers nothing.
                co_await refuse("UnknownInterruptError",
                                r.strict_resume
                                    ? "strict_resume: the thread has no interrupt waiting for this resume"
                                    : "the thread has no interrupt waiting: nothing to resume");
                co_return;
            }
            std::optional<std::string> unknown_interrupt;
            // {"<interrupt id>": value} for the only pending interrupt is that value.
            if (const auto* o = value.if_object(); o && pending.size() == 1 && o->size() == 1) {
                const auto& id = pending[0].as_object().at("id");
                if (id.is_string() && o->contains(id.get_string())) value = o->at(id.get_string());
            } else if (o && pending.size() > 1 && r.strict_resume) {
                for (const auto& kv : *o) {
                    const bool known = std::any_of(pending.begin(), pending.end(), [&](const auto& p) {
                        return p.as_object().at("id") == boost::json::value(kv.key());
                    });
                    if (!known) {
                        unknown_interrupt = std::string(kv.key());
                        break;
                    }
                }
            }
            if (unknown_interrupt) {
                co_await refuse("UnknownInterruptError",
                                agentware::detail::format("strict_resume: no interrupt \"{}\" is waiting",
                                                          *unknown_interrupt));
                co_return;
            }
            req.resume = std::move(value);
        } else {
            req.input = read_run_input(kwargs.at("input"), "input");
            if (!pending.empty()) {
                // New input on a paused thread drops the question it was waiting on.
                auto copy = *last;
                copy["values"].as_object().erase("__interrupt__");
                copy["parent_checkpoint_id"] = last->at("checkpoint_id");
                copy["checkpoint_id"] = new_uuid7();
                copy["source"] = "input";
                copy["run_id"] = run_id;
                copy["created_at"] = iso_now();
                co_await store_.add_checkpoint(copy);
                state = copy["values"];
                pending.clear();
            }
        }
        if (command != nullptr)
            if (const auto* update = command->if_contains("update"); update && update->is_object()) {
                // A state update before the run: its messages join the input.
                if (const auto* ms = update->get_object().if_contains("messages"))
                    for (auto& m : read_run_input(boost::json::object{{"messages", *ms}}, "command.update"))
                        req.input.push_back(std::move(m));
            }

        // The first `values`: the thread's state with the new input (named
        // now, so that the client sees each message under one id throughout).
        for (auto& m : req.input)
            if (m.id.empty()) m.id = new_uuid7();
        boost::json::object initial_values = langchain_values(state);
        {
            auto& ms = initial_values["messages"].as_array();
            for (const auto& m : req.input)
                ms.push_back(langchain_message(m));
            ev.send("values", "values", initial_values);
            ev.send("events", "events",
                    boost::json::object{{"event", "on_chain_start"},
                                        {"name", graph_id},
                                        {"run_id", run_id},
                                        {"tags", boost::json::array{}},
                                        {"metadata", meta},
                                        {"data", boost::json::object{{"input", kwargs.at("input")}}}});
        }

        // Saves: each is a checkpoint (and a `values` event).
        // The agent reads the state it saved last (the writer may not have
        // written it yet): the run keeps it.
        std::size_t step = co_await store_.checkpoint_count(thread_id);
        std::string parent = last ? detail::string_or(*last, "checkpoint_id", "") : "";
        std::optional<boost::json::value> latest;
        if (last) latest = state;
        // The agent saves from its thread, tool results come from theirs.
        std::mutex saving;
        std::vector<boost::json::value> results_since_save;
        // `key` is "values" (the whole state) or "changes" (since the last checkpoint).
        auto push_checkpoint = [&](const char* key, boost::json::value body) {
            checkpoint_record c{{"checkpoint_id", new_uuid7()},
                                {"parent_checkpoint_id",
                                 parent.empty() ? boost::json::value(nullptr) : boost::json::value(parent)},
                                {"thread_id", thread_id},
                                {"run_id", run_id},
                                {"created_at", iso_now()},
                                {"step", step},
                                {"source", "loop"},
                                {"metadata", r.record.at("metadata")}};
            c[key] = std::move(body);
            parent = std::string(c.at("checkpoint_id").get_string());
            ++step;
            writer->push(std::move(c));
            if (ev.wants("checkpoints") || ev.wants("debug")) {
                boost::json::value now = *latest;
                if (auto* ms = now.as_object().if_contains("messages"); ms && ms->is_array())
                    for (const auto& m : results_since_save)
                        ms->as_array().push_back(m);
                boost::json::object cp{
                    {"values", langchain_values(now)},
                    {"metadata", boost::json::object{{"source", "loop"},
                                                     {"step", step},
                                                     {"parents", boost::json::object{}}}},
                    {"next", boost::json::array{}},
                    {"config",
                     boost::json::object{{"configurable", boost::json::object{{"thread_id", thread_id},
                                                                              {"checkpoint_ns", ""},
                                                                              {"checkpoint_id", parent}}}}}};
                ev.send("checkpoints", "checkpoints", cp);
                ev.send(
                    "debug", "debug",
                    boost::json::object{
                        {"step", step}, {"type", "checkpoint"}, {"timestamp", iso_now()}, {"payload", cp}});
            }
        };
        req.state.load = [&](std::string_view) {
            std::lock_guard lock(saving);
            return latest;
        };
        req.state.save = [&](std::string_view, const boost::json::value& saved) {
            std::lock_guard lock(saving);
            results_since_save.clear();
            latest = saved;
            push_checkpoint("values", saved);
        };
        // The agent's saves: what changed since the last checkpoint (the
        // state saved last and the tool results checkpointed since).
        req.state.save_changes = [&](std::string_view, const state_view& now) -> const boost::json::value* {
            std::lock_guard lock(saving);
            if (!latest || !latest->is_object()) {
                results_since_save.clear();
                latest = now.whole();
                push_checkpoint("values", *latest);
                return &*latest;
            }
            auto changes = detail::advance_saved_state(latest->as_object(), results_since_save, now);
            push_checkpoint("changes", std::move(changes));
            return &*latest;
        };
        if (options_.queue != nullptr)
            // Shared by several processes: each tool result is checkpointed as
            // it completes, so a run taken over after its process died does
            // not call that tool again.
            req.state.save_result = [&](std::string_view, const boost::json::value& result) {
                std::lock_guard lock(saving);
                if (!latest || !latest->is_object()) return;
                const auto* ms = latest->as_object().if_contains("messages");
                if (ms == nullptr || !ms->is_array()) return;
                results_since_save.push_back(result);
                push_checkpoint("changes", boost::json::object{
                                               {"at", ms->as_array().size() + results_since_save.size() - 1},
                                               {"append", boost::json::array{result}}});
            };
        std::string streaming_id;  // the ai message being streamed, "" between model calls
        std::string streamed_text; // its text so far (legacy `messages` mode)
        std::size_t round = 0;
        // A streamed message keeps, for the rest of the run, the id its chunks
        // had: clients merge the chunks and the finished message by id.
        std::map<std::string, std::string, std::less<>> alias;
        auto aliased = [&](boost::json::object& m) {
            if (const auto* id = m.if_contains("id"); id && id->is_string())
                if (auto it = alias.find(std::string_view(id->get_string())); it != alias.end())
                    m["id"] = it->second;
        };
        boost::json::object current = std::move(initial_values); // the state as the client last saw it
        auto send_values = [&] {
            for (auto& m : current["messages"].as_array())
                aliased(m.as_object());
            ev.send("values", "values", current);
        };
        req.observer.on_checkpoint = [&](const boost::json::value& saved) {
            current = langchain_values(saved);
            send_values();
        };
        req.observer.on_text = [&](std::string_view delta) {
            if (delta.empty()) return;
            if (streaming_id.empty()) {
                streaming_id = "run-" + new_uuid7();
                streamed_text.clear();
                if (ev.wants("messages"))
                    ev.send("messages", "messages/metadata",
                            boost::json::object{
                                {streaming_id,
                                 boost::json::object{{"metadata", ev.message_meta("model", round + 1)}}}});
            }
            streamed_text += delta;
            ev.send("messages-tuple", "messages",
                    boost::json::array{detail::ai_chunk(streaming_id, delta),
                                       ev.message_meta("model", round + 1)});
            ev.send("messages", "messages/partial",
                    boost::json::array{detail::ai_chunk(streaming_id, streamed_text)});
            ev.send("events", "events",
                    boost::json::object{
                        {"event", "on_chat_model_stream"},
                        {"name", "model"},
                        {"run_id", run_id},
                        {"tags", boost::json::array{}},
                        {"metadata", ev.message_meta("model", round + 1)},
                        {"data", boost::json::object{{"chunk", detail::ai_chunk(streaming_id, delta)}}}});
        };
        req.observer.on_update = [&](const agent_update& u) {
            round = u.round;
            boost::json::array ms;
            const std::string node(u.node);
            const bool was_streamed = !streaming_id.empty();
            for (const auto& m : u.messages) {
                if (node == "model" && was_streamed && m.is_ai()) alias[m.id] = streaming_id;
                ms.push_back(langchain_message(m));
                aliased(ms.back().as_object());
            }
            ev.send("updates", "updates", boost::json::object{{node, boost::json::object{{"messages", ms}}}});
            const bool streamed = was_streamed;
            for (const auto& m : ms) {
                const auto& mo = m.as_object();
                // A message the client has not seen as chunks comes whole.
                if (node != "model" || !streamed)
                    ev.send("messages-tuple", "messages",
                            boost::json::array{m, ev.message_meta(node, u.round + 1)});
                ev.send("messages", "messages/complete", boost::json::array{m});
                const bool tool = mo.at("type") == "tool";
                ev.send("events", "events",
                        boost::json::object{{"event", tool ? "on_tool_end" : "on_chat_model_end"},
                                            {"name", tool ? mo.at("name") : boost::json::value("model")},
                                            {"run_id", run_id},
                                            {"tags", boost::json::array{}},
                                            {"metadata", ev.message_meta(node, u.round + 1)},
                                            {"data", boost::json::object{{"output", m}}}});
                if (tool)
                    ev.send("tools", "tools",
                            boost::json::object{
                                {"event", mo.at("status") == "error" ? "tool-error" : "tool-finished"},
                                {"tool_call_id", mo.at("tool_call_id")},
                                {"name", mo.at("name")},
                                {"output", mo.at("content")}});
            }
            const std::string task_id = new_uuid7();
            ev.send("tasks", "tasks",
                    boost::json::object{
                        {"id", task_id},
                        {"name", node},
                        {"input", boost::json::object{}},
                        {"triggers", boost::json::array{agentware::detail::format("branch:to:{}", node)}},
                        {"interrupts", boost::json::array{}},
                        {"metadata", boost::json::object{}}});
            boost::json::object result{{"id", task_id},
                                       {"name", node},
                                       {"result", boost::json::object{{"messages", ms}}},
                                       {"interrupts", boost::json::array{}},
                                       {"error", nullptr}};
            ev.send("tasks", "tasks", result);
            ev.send("debug", "debug",
                    boost::json::object{{"step", u.round + 1},
                                        {"type", "task_result"},
                                        {"timestamp", iso_now()},
                                        {"payload", result}});
            streaming_id.clear();
            // After the tools, the state with their results (the next save comes before the next model call's
            // tools).
            if (node == "tools" && current.contains("messages")) {
                for (const auto& m : ms)
                    current["messages"].as_array().push_back(m);
                send_values();
            }
        };
        // Subagents' progress: root `custom` events (as DeerFlow's UI reads
        // them) and, with stream_subgraphs, each delegation's own stream under
        // the namespace `task:<task id>` (`messages|task:call_1`, ...).
        const bool subgraphs = kwargs.at("subgraphs").as_bool();
        req.observer.on_event = [&](const boost::json::object& e) {
            ev.send("custom", "custom", e);
            const auto* task = e.if_contains("task_id");
            if (!subgraphs || task == nullptr || !task->is_string()) return;
            const std::string ns = "task:" + std::string(task->get_string());
            const std::string type = detail::string_or(e, "type", "");
            ev.send("custom", "custom|" + ns, e);
            boost::json::object meta_ns = ev.message_meta("model", 0);
            meta_ns["langgraph_checkpoint_ns"] = ns;
            meta_ns["checkpoint_ns"] = ns;
            if (type == "subagent_token")
                ev.send("messages-tuple", "messages|" + ns,
                        boost::json::array{detail::ai_chunk("task-" + std::string(task->get_string()),
                                                            detail::string_or(e, "text", "")),
                                           meta_ns});
            else if (type == "task_running")
                if (const auto* m = e.if_contains("message"); m && m->is_object())
                    ev.send("updates", "updates|" + ns,
                            boost::json::object{
                                {"model", boost::json::object{{"messages", boost::json::array{*m}}}}});
        };

        std::shared_ptr<assistant_run> runner(r.spec->factory(context));
        {
            std::lock_guard lock(mutex_);
            r.runner = runner;
        }
        if (stop.stop_requested()) runner->cancel();
        run_outcome out;
        if (runner->is_async())
            out = co_await runner->async_run(req);
        else // a blocking agent holds a thread of the pool, not the event loop
            out = co_await boost::asio::co_spawn(
                pool_, [&]() -> boost::asio::awaitable<run_outcome> { co_return runner->run(req); },
                boost::asio::use_awaitable);
        {
            std::lock_guard lock(mutex_);
            r.runner.reset();
        }
        // The agent goes on the pool: its destructor may wait (memory's queue
        // flushing what a summary handed it), and must not hold the event loop.
        boost::asio::post(pool_, [done = std::move(runner)]() mutable { done.reset(); });
        co_await writer->flush();

        if (co_await released()) co_return;
        if (stop.stop_requested() && !r.cancel_action.empty()) {
            co_await finish_cancelled();
        } else if (out.reason == stop_reason::interrupted) {
            boost::json::array list;
            for (const auto& i : out.interrupts)
                list.push_back(boost::json::object{{"id", i.id}, {"value", i.value}});
            ev.send("updates", "updates", boost::json::object{{"__interrupt__", list}});
            ev.send("values", "values", boost::json::object{{"__interrupt__", list}});
            r.events->set_outcome(boost::json::serialize(boost::json::object{{"__interrupt__", list}}));
            co_await set_run_status(r, "interrupted");
            co_await thread_status("interrupted");
        } else if (!out.ok()) {
            co_await fail(out.reason == stop_reason::recursion_limit ? "GraphRecursionError" : "Error",
                          out.error);
            co_await thread_status("error");
        } else {
            if (auto c = co_await store_.last_checkpoint(thread_id))
                ev.send("events", "events",
                        boost::json::object{
                            {"event", "on_chain_end"},
                            {"name", graph_id},
                            {"run_id", run_id},
                            {"tags", boost::json::array{}},
                            {"metadata", meta},
                            {"data", boost::json::object{{"output", langchain_values(c->at("values"))}}}});
            co_await final_values();
            co_await set_run_status(r, "success");
            co_await thread_status("idle");
        }
    } catch (const json_error& e) {
        failure.emplace("ValidationError", e.what());
        invalid_input = true;
    } catch (const std::exception& e) {
        failure.emplace("Error", e.what());
    }
    if (failure) {
        if (writer) co_await writer->flush(false); // what the agent saved before it failed stays
        if (co_await released()) co_return;
        co_await fail(failure->first, failure->second);
        if (invalid_input)
            co_await end_thread();
        else
            co_await thread_status("error");
    }
    co_await end_temporary();
}

} // namespace agentware::server

#endif
