// What the server tests share: a model whose answers follow from the
// conversation (so runs in any order get the same answers), the agents made
// from it, a blocking HTTP client and an SSE reader.
#ifndef AGENTWARE_TESTS_SERVER_SUPPORT_HPP
#define AGENTWARE_TESTS_SERVER_SUPPORT_HPP

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/human_in_the_loop.hpp>
#include <agentware/server/file_store.hpp>
#include <agentware/server/server.hpp>
#include <agentware/tool/make_tool.hpp>

#include "../support/coroutine_test.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace server_test {

using namespace agentware;

/// Answers from the last human message: "echo X" calls the echo tool, "write"
/// calls write_file (which needs review), "slow N" answers after N ms (or
/// fails at once when cancelled), anything else is echoed back.
class rule_model {
public:
    model_response invoke(const chat_request& r) {
        cancelled_->store(false);
        const auto& ms = r.messages;
        std::string human;
        for (std::size_t i = ms.size(); i-- > 0;)
            if (ms[i].is_human()) {
                human = ms[i].text();
                break;
            }
        const bool after_tool = !ms.empty() && ms.back().is_tool();
        model_response out;
        if (human.starts_with("slow ")) {
            const auto until =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(std::stoi(human.substr(5)));
            while (std::chrono::steady_clock::now() < until && !cancelled_->load())
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            if (cancelled_->load()) throw model_error(model_error_kind::cancelled, "cancelled");
            out.ai = ai_message("done: " + human);
        } else if (human.starts_with("echo ") && !after_tool) {
            out.ai = ai_message("", {tool_call{"call_echo", "echo", {{"text", human.substr(5)}}}});
        } else if (human.starts_with("echo ")) {
            out.ai = ai_message("echo said: " + ms.back().text());
        } else if (human.starts_with("delegate") && !after_tool) {
            out.ai = ai_message("", {tool_call{"call_task", "delegate", {{"text", human}}}});
        } else if (human.starts_with("delegate")) {
            out.ai = ai_message("delegated: " + ms.back().text());
        } else if (human.starts_with("write") && !after_tool) {
            out.ai = ai_message("", {tool_call{"call_write", "write_file", {{"path", "a.txt"}}}});
        } else if (human.starts_with("write")) {
            out.ai = ai_message("written: " + ms.back().text());
        } else {
            out.ai = ai_message("you said: " + human);
        }
        return out;
    }
    void cancel() { cancelled_->store(true); }

private:
    std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
};

/// The same answers from a coroutine (an asynchronous model, as the HTTP
/// clients are): "slow N" waits on a timer, not on a thread. Counts the
/// calls in flight at once.
class async_rule_model {
public:
    struct counters {
        std::atomic<int> in_flight{0};
        std::atomic<int> most{0};
    };
    explicit async_rule_model(std::shared_ptr<counters> c) : counters_(std::move(c)) {}

    model_response invoke(const chat_request& r) { return rules_.invoke(r); }
    boost::asio::awaitable<model_response> async_invoke(const chat_request& r) {
        const int now = ++counters_->in_flight;
        for (int seen = counters_->most.load();
             now > seen && !counters_->most.compare_exchange_weak(seen, now);) {
        }
        std::string human;
        for (std::size_t i = r.messages.size(); i-- > 0;)
            if (r.messages[i].is_human()) {
                human = r.messages[i].text();
                break;
            }
        if (human.starts_with("slow ")) {
            boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
            t.expires_after(std::chrono::milliseconds(std::stoi(human.substr(5))));
            co_await t.async_wait(boost::asio::use_awaitable);
            --counters_->in_flight;
            model_response out;
            out.ai = ai_message("done: " + human);
            co_return out;
        }
        --counters_->in_flight;
        co_return rules_.invoke(r);
    }

private:
    rule_model rules_;
    std::shared_ptr<counters> counters_;
};

inline tool_set tools() {
    tool_set t;
    t.add(make_tool("echo", "Echoes its text.",
                    R"({"type":"object","properties":{"text":{"type":"string"}}})",
                    [](const boost::json::object& a) {
                        return std::string("echo: ") + std::string(a.at("text").as_string());
                    }));
    t.add(make_tool("write_file", "Writes a file.",
                    R"({"type":"object","properties":{"path":{"type":"string"}}})",
                    [](const boost::json::object& a) {
                        return std::string("wrote ") + std::string(a.at("path").as_string());
                    }));
    // A stand-in for the `task` tool: the events a delegation streams.
    t.add(make_tool("delegate", "Delegates.", R"({"type":"object","properties":{"text":{"type":"string"}}})",
                    [](const boost::json::object&, const tool_runtime& rt) {
                        const std::string id = "call_task";
                        rt.events.emit({{"type", "task_started"}, {"task_id", id}, {"description", "sub"}});
                        rt.events.emit({{"type", "subagent_token"}, {"task_id", id}, {"text", "partial"}});
                        rt.events.emit(
                            {{"type", "task_running"},
                             {"task_id", id},
                             {"message", boost::json::object{{"role", "assistant"}, {"content", "step"}}}});
                        rt.events.emit({{"type", "task_completed"}, {"task_id", id}, {"result", "sub done"}});
                        return std::string("sub done");
                    }));
    return t;
}

inline server::assistant_spec agent_assistant() {
    return server::make_assistant("agent", [] {
        human_in_the_loop_options o;
        o.interrupt_on["write_file"] = interrupt_on_config{};
        return std::make_unique<decltype(make_agent(rule_model{}, tools(), human_in_the_loop(o)))>(
            make_agent(rule_model{}, tools(), human_in_the_loop(o)));
    });
}

inline std::shared_ptr<async_rule_model::counters> async_counters() {
    static auto c = std::make_shared<async_rule_model::counters>();
    return c;
}

/// "async_agent": the same agent over the asynchronous model.
inline server::assistant_spec async_agent_assistant() {
    return server::make_assistant("async_agent", [] {
        return std::make_unique<decltype(make_agent(async_rule_model{async_counters()}, tools()))>(
            make_agent(async_rule_model{async_counters()}, tools()));
    });
}

/// A server on 127.0.0.1 (a free port), serving in a thread of its own.
class running_server {
public:
    explicit running_server(server::store& s, server::server_options o = {})
        : server_(s, {agent_assistant(), async_agent_assistant()}, tune(std::move(o))) {
        server_.listen();
        thread_ = std::thread([this] { server_.run(); });
    }
    ~running_server() {
        server_.stop();
        thread_.join();
    }
    unsigned short port() const { return server_.port(); }
    server::agent_server& get() { return server_; }

private:
    static server::server_options tune(server::server_options o) {
        o.runs.workers = 4;
        return o;
    }
    server::agent_server server_;
    std::thread thread_;
};

struct reply {
    unsigned status = 0;
    std::map<std::string, std::string> headers;
    std::string body;

    boost::json::value json() const { return boost::json::parse(body); }
};

inline reply call(unsigned short port, std::string method, const std::string& target,
                  const std::string& body = {}, std::map<std::string, std::string> headers = {}) {
    namespace http = boost::beast::http;
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    for (const auto& [k, v] : headers)
        req.set(k, v);
    if (!body.empty()) {
        req.set(http::field::content_type, "application/json");
        req.body() = body;
    }
    req.prepare_payload();
    http::write(stream, req);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    http::read(stream, buffer, parser);
    reply r;
    r.status = parser.get().result_int();
    for (const auto& f : parser.get()) {
        std::string name(f.name_string());
        for (auto& c : name)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[name] = std::string(f.value());
    }
    r.body = parser.get().body();
    boost::system::error_code ec;
    stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    return r;
}

struct sse_frame {
    std::string name;
    boost::json::value data;
    std::string id;
};

inline std::vector<sse_frame> parse_sse(const std::string& text) {
    std::vector<sse_frame> out;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find("\n\n", at);
        if (end == std::string::npos) end = text.size();
        const std::string block = text.substr(at, end - at);
        at = end + 2;
        sse_frame e;
        bool any = false;
        std::size_t line_at = 0;
        while (line_at < block.size()) {
            std::size_t nl = block.find('\n', line_at);
            if (nl == std::string::npos) nl = block.size();
            const std::string line = block.substr(line_at, nl - line_at);
            line_at = nl + 1;
            if (line.starts_with("event: ")) {
                e.name = line.substr(7);
                any = true;
            } else if (line.starts_with("data: ")) {
                e.data = boost::json::parse(line.substr(6));
            } else if (line.starts_with("id: ")) {
                e.id = line.substr(4);
            }
        }
        if (any) out.push_back(std::move(e));
    }
    return out;
}

inline std::string body(const boost::json::object& o) { return boost::json::serialize(o); }

/// Polls until `pred` holds (or `within` passes).
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds within = std::chrono::seconds(5)) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < until) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
}

struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        path = std::filesystem::temp_directory_path() /
               ("agentware-server-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    static std::atomic<int>& counter() {
        static std::atomic<int> n{0};
        return n;
    }
};

} // namespace server_test

#endif
