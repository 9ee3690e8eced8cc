// mcp/client.hpp: the MCP client against the official reference servers (installed by
// cmake/install-deps.sh into tests/mcp/node_modules, pinned by its package-lock.json) and
// against a small fake server (fake_server.mjs) for the 2026-07-28 era and the failures the
// reference servers do not produce: both protocol eras over stdio and Streamable HTTP,
// server requests, failures, cancellation, progress, concurrent and asynchronous calls.
#include <agentware/mcp/client.hpp>

#include <agentware.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/agent/memory_checkpointer.hpp>
#include <agentware/mcp/tools.hpp>
#include <agentware/presets/lead_agent.hpp>
#include <agentware/tool/make_tool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>

#include "node_server.hpp"
#include "support.hpp"

#include <arpa/inet.h>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <stop_token>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace agentware;
using namespace mcp_test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::string text_of(const boost::json::object& result) { return mcp::to_tool_output(result).text(); }

/// server-everything's Streamable HTTP server, made to listen on 127.0.0.1 only.
mcp_test::http_server everything_http() {
    return mcp_test::http_server({(servers_dir / "loopback.mjs").string(),
                                  node_module("server-everything").string(), "streamableHttp"},
                                 false);
}

/// Runs one async_call_tool on an io_context of its own; its result or its error.
boost::json::object call_async(mcp::client& c, std::string tool, boost::json::object args,
                               mcp::call_options options = {}) {
    boost::asio::io_context io;
    auto result = boost::asio::co_spawn(
        io, c.async_call_tool(std::move(tool), std::move(args), std::move(options)), boost::asio::use_future);
    io.run();
    return result.get();
}

mcp::mcp_error_kind async_failure(mcp::client& c, std::string tool, mcp::call_options options = {}) {
    try {
        call_async(c, std::move(tool), {}, std::move(options));
    } catch (const mcp::mcp_error& e) {
        return e.kind();
    }
    FAIL("no error");
    return mcp::mcp_error_kind::protocol;
}

} // namespace

TEST_CASE("stdio against server-everything (2025 era after the 2026 probe)", "[mcp][stdio]") {
    std::vector<mcp::mcp_event> events;
    std::mutex m;
    mcp::client_options opts;
    opts.on_event = [&](const mcp::mcp_event& e) {
        std::lock_guard lock(m);
        events.push_back(e);
    };
    mcp::client c(everything_stdio(), opts);
    c.connect();
    CHECK(c.era() == mcp::protocol_era::legacy);
    CHECK(c.protocol_version() == "2025-11-25");
    CHECK(c.server_info().contains("name"));
    c.ping();

    const auto tools = c.list_tools();
    const auto has = [&](std::string_view n) {
        return std::any_of(tools.begin(), tools.end(), [&](const auto& t) { return t.name == n; });
    };
    CHECK(has("echo"));
    CHECK(has("get-sum"));
    CHECK(has("get-tiny-image"));

    SECTION("echo and get-sum") {
        CHECK(text_of(c.call_tool("echo", {{"message", "hello"}})) == "Echo: hello");
        CHECK_THAT(text_of(c.call_tool("get-sum", {{"a", 2}, {"b", 40}})), Catch::Contains("42"));
    }
    SECTION("a structured result keeps its structuredContent") {
        const auto r = c.call_tool("get-structured-content", {{"location", "New York"}});
        REQUIRE(r.contains("structuredContent"));
        CHECK(r.at("structuredContent").as_object().contains("temperature"));
        CHECK_FALSE(mcp::to_tool_output(r).text().empty());
    }
    SECTION("an image result becomes an image block") {
        const auto out = mcp::to_tool_output(c.call_tool("get-tiny-image", {}));
        const bool image = std::any_of(out.content.begin(), out.content.end(), [](const content_block& b) {
            return b.is_image() && b.image_url.starts_with("data:image/png;base64,");
        });
        CHECK(image);
    }
    SECTION("unknown tools and bad arguments are errors the model reads") {
        for (auto [name, args] :
             {std::pair<std::string, boost::json::object>{"no-such-tool", {}}, {"get-sum", {{"a", "two"}}}}) {
            try {
                const auto r = c.call_tool(name, args);
                CHECK(is_error(r));
                CHECK(mcp::to_tool_output(r).status == tool_status::error);
            } catch (const mcp::mcp_error& e) {
                CHECK(e.kind() == mcp::mcp_error_kind::remote);
                CHECK(e.code() == mcp::error_code::invalid_params);
            }
        }
    }
    SECTION("progress notifications reach the event stream") {
        const auto r = c.call_tool("trigger-long-running-operation", {{"duration", 1}, {"steps", 3}});
        CHECK_FALSE(is_error(r));
        std::lock_guard lock(m);
        const auto progress = std::count_if(
            events.begin(), events.end(), [](const auto& e) { return e.method == "notifications/progress"; });
        CHECK(progress >= 1);
        CHECK(events.front().server == "everything");
    }
    c.close();
    c.close();
}

TEST_CASE("server-filesystem answers access-denied as an error result", "[mcp][stdio]") {
    const fs::path dir = fs::temp_directory_path() / ("agentware_mcp_fs_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "hello.txt") << "hello from the file";
    mcp::server_config cfg;
    cfg.name = "fs";
    cfg.command = "node";
    cfg.args = {node_module("server-filesystem").string(), dir.string()};
    mcp::client c(cfg);
    CHECK(text_of(c.call_tool("read_text_file", {{"path", (dir / "hello.txt").string()}})) ==
          "hello from the file");
    const auto denied = c.call_tool("read_text_file", {{"path", "/etc/hostname"}});
    CHECK(is_error(denied));
    CHECK_THAT(text_of(denied), Catch::Contains("ccess denied"));
    c.close();
    fs::remove_all(dir);
}

TEST_CASE("Streamable HTTP against server-everything on 127.0.0.1", "[mcp][http]") {
    mcp_test::http_server server = everything_http();
    const auto bound = mcp_test::listeners(server.port());
    REQUIRE_FALSE(bound.empty());
    for (const auto& a : bound)
        CHECK((a == "0100007F:" + std::string(a.substr(9)) ||
               a.starts_with("0000000000000000FFFF00000100007F")));

    mcp::server_config cfg;
    cfg.name = "everything";
    cfg.type = mcp::transport_type::http;
    cfg.url = server.url();
    cfg.headers = {{"X-Test", "1"}};
    cfg.session_init_timeout = 20s;
    mcp::client c(cfg);
    c.connect();
    CHECK(c.era() == mcp::protocol_era::legacy);
    CHECK(c.protocol_version() == "2025-11-25");
    const auto tools = c.list_tools();
    CHECK(tools.size() > 5);
    CHECK(text_of(c.call_tool("echo", {{"message", "over http"}})) == "Echo: over http");
    CHECK_THAT(text_of(c.call_tool("get-sum", {{"a", 1}, {"b", 2}})), Catch::Contains("3"));
    c.close();
}

TEST_CASE("the 2026-07-28 era with server/discover", "[mcp][modern]") {
    mcp::client_options opts;
    opts.roots = {"/work/space"};
    mcp::client c(fake("modern"), opts);
    c.connect();
    CHECK(c.era() == mcp::protocol_era::modern);
    CHECK(c.protocol_version() == "2026-07-28");
    CHECK(c.server_info().at("name") == "fake-modern");
    const auto tools = c.list_tools(); // two pages, every request with _meta (else -32022)
    CHECK(tools.size() == 8);
    CHECK(text_of(c.call_tool("echo", {{"message", "hi"}})) == "echo: hi");
    // input_required with roots/list is answered and the call retried
    const std::string roots = text_of(c.call_tool("roots", {}));
    CHECK_THAT(roots, Catch::Contains("file:///work/space"));
    CHECK_THAT(roots, Catch::Contains(" r1"));
    // elicitation cannot be answered yet: a clear error
    try {
        c.call_tool("ask", {});
        FAIL("no error");
    } catch (const mcp::mcp_error& e) {
        CHECK(e.kind() == mcp::mcp_error_kind::input_required);
        CHECK_THAT(e.what(), Catch::Contains("elicitation/create"));
    }
}

TEST_CASE("a recognised 2026-era error to server/discover is not a reason to fall back", "[mcp][modern]") {
    mcp::client refusing(fake("refuses"));
    try {
        refusing.connect();
        FAIL("connected");
    } catch (const mcp::mcp_error& e) {
        CHECK(e.kind() == mcp::mcp_error_kind::protocol);
        CHECK(e.code() == mcp::error_code::missing_client_capability);
        CHECK_THAT(e.what(), Catch::Contains("refused server/discover") && Catch::Contains("elicitation"));
    }
    // ...unless the server lists a 2025 version this client speaks.
    mcp::client both(fake("refuses-but-2025"));
    both.connect();
    CHECK(both.era() == mcp::protocol_era::legacy);
    CHECK(both.protocol_version() == "2025-11-25");
    both.close();
}

TEST_CASE("the 2026-07-28 era over Streamable HTTP", "[mcp][http][modern]") {
    mcp_test::http_server server({(servers_dir / "fake_server.mjs").string(), "http-modern"}, true);
    ::setenv("AGENTWARE_MCP_TEST_KEY2", "k-123", 1);
    const auto cfg = mcp::read_server_config(
        "remote",
        boost::json::parse(R"({"type": "http", "url": ")" + server.url() +
                           R"(", "headers": {"X-API-Key": "$AGENTWARE_MCP_TEST_KEY2"}})"),
        "mcpServers.remote");
    std::vector<mcp::mcp_event> events;
    mcp::client_options opts;
    opts.on_event = [&](const mcp::mcp_event& e) { events.push_back(e); };
    mcp::client c(cfg, opts);
    c.connect();
    CHECK(c.era() == mcp::protocol_era::modern);
    CHECK(c.list_tools().size() == 8);
    // an SSE answer: progress, list_changed, then the result
    CHECK(text_of(c.call_tool("echo", {{"message", "sse"}})) == "echo: sse");
    REQUIRE(events.size() == 1);
    CHECK(events[0].method == "notifications/progress");
    CHECK(c.tools_changed());
    try { // roots are not enabled: the input request cannot be answered
        c.call_tool("roots", {});
        FAIL("no error");
    } catch (const mcp::mcp_error& e) {
        CHECK(e.kind() == mcp::mcp_error_kind::input_required);
    }
    c.close();

    auto wrong = cfg;
    wrong.headers["X-API-Key"] = "wrong";
    mcp::client refused(wrong);
    CHECK_THROWS_AS(refused.connect(), mcp::mcp_error); // 401 to the probe, then initialize refused
}

TEST_CASE("legacy handshake versions", "[mcp][stdio]") {
    SECTION("the version offered, echoed") {
        mcp::client c(fake("legacy"));
        c.connect();
        CHECK(c.era() == mcp::protocol_era::legacy);
        CHECK(c.protocol_version() == "2025-11-25");
    }
    SECTION("each 2025 revision a server answers instead is accepted") {
        for (const std::string version : {"2025-06-18", "2025-03-26"}) {
            INFO(version);
            mcp::client c(fake("v" + version));
            c.connect();
            CHECK(c.era() == mcp::protocol_era::legacy);
            CHECK(c.protocol_version() == version);
            CHECK(text_of(c.call_tool("echo", {{"message", "x"}})) == "echo: x");
            c.close();
        }
    }
    SECTION("a version the client does not speak is refused, naming it and the one offered") {
        for (const std::string version : {"2024-11-05", "2099-01-01"}) {
            INFO(version);
            mcp::client_options opts;
            opts.era = mcp::era_preference::legacy;
            mcp::client c(fake("v" + version), opts);
            try {
                c.connect();
                FAIL("connected");
            } catch (const mcp::mcp_error& e) {
                CHECK(e.kind() == mcp::mcp_error_kind::protocol);
                CHECK_THAT(e.what(), Catch::Contains("answered protocol version \"" + version +
                                                     "\" to the offered 2025-11-25; this client speaks"));
            }
        }
    }
}

namespace {
/// The fake server over Streamable HTTP in `mode` ("legacy", "v2025-03-26", ...).
mcp::server_config fake_http(const mcp_test::http_server& server) {
    auto cfg = fake("legacy");
    cfg.type = mcp::transport_type::http;
    cfg.url = server.url();
    return cfg;
}

/// What the fake server over HTTP has received (its unlisted tool "seen").
boost::json::array seen_by(mcp::client& c) {
    return boost::json::parse(text_of(c.call_tool("seen", {}))).as_array();
}
} // namespace

TEST_CASE("legacy handshake versions over Streamable HTTP", "[mcp][http]") {
    for (const std::string version : {"2025-06-18", "2025-03-26"}) {
        INFO(version);
        mcp_test::http_server server({(servers_dir / "fake_server.mjs").string(), "http-v" + version}, true);
        mcp::client c(fake_http(server));
        c.connect();
        CHECK(c.era() == mcp::protocol_era::legacy);
        CHECK(c.protocol_version() == version);
        CHECK(text_of(c.call_tool("echo", {{"message", "x"}})) == "echo: x");
        // After initialize each request carries MCP-Protocol-Version from
        // 2025-06-18 on (the server refuses one without), none at 2025-03-26.
        bool initialized = false;
        int requests = 0;
        for (const auto& v : seen_by(c)) {
            const auto& o = v.as_object();
            if (!o.contains("method")) continue;
            if (o.at("method") == "initialize") {
                initialized = true;
                continue;
            }
            if (!initialized) continue;
            ++requests;
            INFO(boost::json::serialize(o));
            if (version == "2025-03-26")
                CHECK(o.at("version").is_null());
            else
                CHECK(o.at("version") == version.c_str());
        }
        CHECK(requests == 3); // notifications/initialized, the echo, "seen"
        c.close();
    }
}

TEST_CASE("server requests and notifications (legacy era)", "[mcp][stdio]") {
    mcp::client_options opts;
    opts.roots = {"/work/space"};
    mcp::client c(fake("legacy"), opts);
    CHECK(c.list_tools().size() == 8);
    CHECK_FALSE(c.tools_changed());
    CHECK(text_of(c.call_tool("echo", {{"message", "x"}})) == "echo: x");
    CHECK(c.tools_changed()); // notifications/tools/list_changed
    CHECK_THAT(text_of(c.call_tool("ask", {})), Catch::Contains("-32601"));      // elicitation refused
    CHECK_THAT(text_of(c.call_tool("sampling", {})), Catch::Contains("-32601")); // sampling refused
    CHECK_THAT(text_of(c.call_tool("roots", {})), Catch::Contains("file:///work/space"));
}

TEST_CASE("roots_by_call: roots/list answered with the thread's workspace in both eras",
          "[mcp][stdio][modern]") {
    mcp::client_options opts;
    opts.roots_by_call = true;
    basic_state<type_list<thread_data_field>> state;
    state.get<thread_data_field>() = thread_paths{
        "/threads/t1/user-data/workspace", "/threads/t1/user-data/uploads", "/threads/t1/user-data/outputs"};
    for (const char* mode : {"legacy", "modern"}) {
        INFO(mode);
        mcp::mcp_toolkit kit({fake(mode)}, opts);
        std::shared_ptr<tool_interface> roots_tool;
        for (const auto& t : kit.tools())
            if (t->schema().name == "fake_roots") roots_tool = t;
        REQUIRE(roots_tool);
        tool_runtime rt;
        rt.bind_state(state);
        const std::string answer = roots_tool->call({}, rt).text();
        CHECK_THAT(answer,
                   Catch::Contains(
                       R"({"roots":[{"uri":"file:///threads/t1/user-data/workspace","name":"workspace"}]})"));
        // A run without thread data: the capability was offered, so the answer is no roots.
        const std::string none = roots_tool->call({}, tool_runtime{}).text();
        CHECK_THAT(none, Catch::Contains(R"({"roots":[]})"));
        kit.close();
    }
}

TEST_CASE("elicitation is answered by the client's handler in both eras", "[mcp][stdio][modern]") {
    std::vector<std::string> asked;
    mcp::client_options opts;
    opts.on_elicitation = [&](const boost::json::object& params) {
        asked.emplace_back(params.at("message").as_string());
        return boost::json::object{{"action", "accept"}, {"content", {{"name", "Ada"}}}};
    };
    for (const char* mode : {"legacy", "modern"}) {
        mcp::client c(fake(mode), opts);
        const std::string answer = text_of(c.call_tool("ask", {}));
        CHECK_THAT(answer, Catch::Contains(R"("action":"accept")"));
        CHECK_THAT(answer, Catch::Contains(R"("name":"Ada")"));
        c.close();
    }
    CHECK(asked == std::vector<std::string>{"Name?", "Name?"});

    opts.on_elicitation = [](const boost::json::object&) -> boost::json::object {
        throw std::runtime_error("no user at the keyboard");
    };
    mcp::client legacy(fake("legacy"), opts);
    const std::string refused = text_of(legacy.call_tool("ask", {}));
    CHECK_THAT(refused, Catch::Contains("elicitation failed: no user at the keyboard"));
    legacy.close();
    mcp::client modern(fake("modern"), opts);
    CHECK_THROWS_WITH(modern.call_tool("ask", {}),
                      Catch::Contains("elicitation failed: no user at the keyboard"));
    modern.close();
}

TEST_CASE("failing servers give readable errors and the client goes on", "[mcp][stdio]") {
    SECTION("a crash mid-call, then a restart") {
        mcp::client c(fake("legacy"));
        try {
            c.call_tool("crash", {});
            FAIL("no error");
        } catch (const mcp::mcp_error& e) {
            CHECK(e.kind() == mcp::mcp_error_kind::closed);
            CHECK_THAT(e.what(), Catch::Contains("exited with status 3"));
        }
        CHECK(text_of(c.call_tool("echo", {{"message", "back"}})) == "echo: back"); // restarted once
        CHECK_THROWS_AS(c.call_tool("crash", {}), mcp::mcp_error);
        CHECK_THROWS_WITH(c.call_tool("echo", {{"message", "x"}}), Catch::Contains("again after a restart"));
    }
    SECTION("a hang times out and the call is cancelled") {
        mcp::client c(fake("legacy"));
        try {
            c.call_tool("hang", {}, 300ms);
            FAIL("no error");
        } catch (const mcp::mcp_error& e) {
            CHECK(e.kind() == mcp::mcp_error_kind::timeout);
        }
        CHECK(text_of(c.call_tool("echo", {{"message", "still"}})) == "echo: still");
    }
    SECTION("garbage") {
        mcp::client c(fake("legacy"));
        CHECK_THROWS_WITH(c.call_tool("garbage", {}), Catch::Contains("not JSON: this is not json"));
    }
    SECTION("a line over the limit stops the server") {
        mcp::client_options opts;
        opts.max_message_bytes = 1 << 20;
        opts.restart_crashed_server = false;
        mcp::client c(fake("legacy"), opts);
        CHECK_THROWS_WITH(c.call_tool("huge", {}), Catch::Contains("longer than 1048576 bytes"));
        CHECK_THROWS_AS(c.call_tool("echo", {{"message", "x"}}), mcp::mcp_error);
    }
    SECTION("a server that never answers initialize") {
        auto cfg = fake("silent");
        cfg.session_init_timeout = 500ms;
        mcp::client_options opts;
        opts.discover_timeout = 200ms;
        mcp::client c(cfg, opts);
        CHECK_THROWS_WITH(c.connect(), Catch::Contains("did not answer initialize"));
    }
    SECTION("a command that does not exist") {
        mcp::server_config cfg;
        cfg.name = "missing";
        cfg.command = "/nonexistent/mcp-server";
        mcp::client c(cfg);
        CHECK_THROWS_WITH(c.connect(), Catch::Contains("cannot start `/nonexistent/mcp-server`"));
    }
    SECTION("as tools, failures are error tool messages") {
        mcp::mcp_toolkit kit({fake("legacy")});
        const auto tools = kit.tools();
        REQUIRE(tools.size() == 8);
        CHECK(tools[0]->schema().name == "fake_echo");
        tool_runtime rt;
        for (const auto& t : tools) {
            if (t->schema().name != "fake_garbage") continue;
            const tool_output out = t->call({}, rt);
            CHECK(out.status == tool_status::error);
            CHECK_THAT(out.text(),
                       Catch::Contains("Error: the MCP tool \"garbage\" of server \"fake\" failed"));
        }
    }
}

namespace {
/// Calls the fake server's `hang` tool with a stop requested 200 ms later;
/// the kind of error it ends with.
mcp::mcp_error_kind hang_until_stopped(mcp::client& c) {
    std::stop_source stop;
    std::jthread stopper([&] {
        std::this_thread::sleep_for(200ms);
        stop.request_stop();
    });
    mcp::call_options options;
    options.stop = stop.get_token();
    try {
        c.call_tool("hang", {}, options);
    } catch (const mcp::mcp_error& e) {
        return e.kind();
    }
    return mcp::mcp_error_kind::protocol; // answered: not what a hanging tool does
}
} // namespace

TEST_CASE("a stop token cancels a call in flight", "[mcp][cancel]") {
    SECTION("stdio: the request is cancelled and the connection goes on") {
        mcp::client c(fake("legacy"));
        CHECK(hang_until_stopped(c) == mcp::mcp_error_kind::cancelled);
        CHECK(text_of(c.call_tool("echo", {{"message", "still here"}})) == "echo: still here");
        c.close();
    }
    SECTION("Streamable HTTP: the open stream is closed") {
        mcp_test::http_server server({(servers_dir / "fake_server.mjs").string(), "http-modern"}, true);
        auto cfg = fake("modern");
        cfg.type = mcp::transport_type::http;
        cfg.url = server.url();
        cfg.headers["X-API-Key"] = "k-123";
        mcp::client c(cfg);
        CHECK(hang_until_stopped(c) == mcp::mcp_error_kind::cancelled);
        CHECK(text_of(c.call_tool("echo", {{"message", "again"}})) == "echo: again");
        c.close();
    }
    SECTION("a stop requested before the call sends nothing") {
        mcp::client c(fake("legacy"));
        std::stop_source stop;
        stop.request_stop();
        mcp::call_options options;
        options.stop = stop.get_token();
        try {
            c.call_tool("echo", {{"message", "x"}}, options);
            FAIL("no error");
        } catch (const mcp::mcp_error& e) {
            CHECK(e.kind() == mcp::mcp_error_kind::cancelled);
            CHECK_THAT(e.what(), Catch::Contains("tools/call request was cancelled"));
        }
        c.close();
    }
}

TEST_CASE("Streamable HTTP (2025 era): a stop or a timeout cancels the request before closing its stream",
          "[mcp][http][cancel]") {
    mcp_test::http_server server({(servers_dir / "fake_server.mjs").string(), "http-legacy"}, true);
    mcp::client c(fake_http(server));
    c.connect();
    CHECK(hang_until_stopped(c) == mcp::mcp_error_kind::cancelled);
    mcp::call_options quick;
    quick.timeout = 300ms;
    const auto started = std::chrono::steady_clock::now();
    try {
        c.call_tool("hang", {}, quick);
        FAIL("answered");
    } catch (const mcp::mcp_error& e) {
        CHECK(e.kind() == mcp::mcp_error_kind::timeout);
        CHECK_THAT(e.what(), Catch::Contains("did not answer within 300 ms; the request was cancelled"));
    }
    CHECK(std::chrono::steady_clock::now() - started < 5s); // the call's timeout, not the entry's 10 s

    // The server saw each hang request cancelled (with the reason), and only
    // then its stream closed (the close may reach it a little later).
    const auto index_of = [](const boost::json::array& seen, auto&& match) {
        for (std::size_t i = 0; i < seen.size(); ++i)
            if (match(seen[i].as_object())) return static_cast<std::ptrdiff_t>(i);
        return std::ptrdiff_t{-1};
    };
    boost::json::array seen;
    std::vector<std::int64_t> hangs;
    for (int attempt = 0; attempt < 40; ++attempt) {
        seen = seen_by(c);
        hangs.clear();
        for (const auto& v : seen)
            if (const auto& o = v.as_object(); o.contains("name") && o.at("name") == "hang")
                hangs.push_back(o.at("id").as_int64());
        const bool all_closed = std::all_of(hangs.begin(), hangs.end(), [&](std::int64_t id) {
            return index_of(seen,
                            [&](const auto& o) { return o.contains("closed") && o.at("closed") == id; }) >= 0;
        });
        if (hangs.size() == 2 && all_closed) break;
        std::this_thread::sleep_for(50ms);
    }
    INFO(boost::json::serialize(seen));
    REQUIRE(hangs.size() == 2);
    const char* reasons[] = {"cancelled by the client", "timeout"};
    for (std::size_t i = 0; i < 2; ++i) {
        const auto cancelled = index_of(seen, [&](const auto& o) {
            return o.contains("method") && o.at("method") == "notifications/cancelled" &&
                   o.at("requestId") == hangs[i];
        });
        const auto closed =
            index_of(seen, [&](const auto& o) { return o.contains("closed") && o.at("closed") == hangs[i]; });
        REQUIRE(cancelled >= 0);
        CHECK(seen[static_cast<std::size_t>(cancelled)].at("reason") == reasons[i]);
        CHECK(closed > cancelled);
    }
    CHECK(text_of(c.call_tool("echo", {{"message", "still"}})) == "echo: still");
    c.close();
}

TEST_CASE("a call's listener gets its progress and the server's log lines", "[mcp][stdio]") {
    mcp::client c(fake("legacy"));
    std::vector<mcp::mcp_event> mine;
    mcp::call_options options;
    options.on_event = [&](const mcp::mcp_event& e) { mine.push_back(e); };
    CHECK(text_of(c.call_tool("echo", {{"message", "log"}}, options)) == "echo: log");
    REQUIRE(mine.size() == 2);
    CHECK(mine[0].method == "notifications/progress");
    CHECK(mine[1].method == "notifications/message");
    CHECK(mine[1].params.at("data") == "asked to log");
    CHECK(mine[1].server == "fake");
    SECTION("a flood of progress notifications fails the call at the limit") {
        mcp::client_options limited;
        limited.max_notifications_per_call = 1000;
        mcp::client flooded(fake("legacy"), limited);
        mine.clear();
        CHECK_THROWS_WITH(flooded.call_tool("echo", {{"message", "flood"}}, options),
                          Catch::Contains("more than 1000 progress notifications for one request"));
        CHECK(mine.size() == 1000); // the listener heard up to the limit
        CHECK(text_of(flooded.call_tool("echo", {{"message", "calm"}})) == "echo: calm");
        flooded.close();
        mine.clear();
        CHECK(text_of(c.call_tool("echo", {{"message", "log"}}, options)) == "echo: log");
    }
    // after the call returned, its listener hears nothing more
    CHECK(text_of(c.call_tool("echo", {{"message", "log"}})) == "echo: log");
    CHECK(mine.size() == 2);
    c.close();
}

TEST_CASE("calls from several threads share one stdio connection", "[mcp][concurrency]") {
    mcp::client c(fake("legacy"));
    c.connect();
    std::vector<std::thread> threads;
    std::atomic<int> right{0};
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 5; ++i) {
                const std::string m = std::to_string(t) + "-" + std::to_string(i);
                if (text_of(c.call_tool("echo", {{"message", m}})) == "echo: " + m) ++right;
            }
        });
    for (auto& th : threads)
        th.join();
    CHECK(right == 30);
    c.close();
}

TEST_CASE("async_call_tool: many calls in flight on one thread", "[mcp][async][concurrency]") {
    for (const char* mode : {"legacy", "modern"}) {
        mcp::client c(fake(mode));
        c.connect();
        boost::asio::io_context io;
        int right = 0;
        for (int i = 0; i < 20; ++i)
            boost::asio::co_spawn(
                io,
                [&c, &right, i]() -> boost::asio::awaitable<void> {
                    const std::string m = std::to_string(i);
                    boost::json::object args; // built outside co_await (g++ 12 rejects the braced form there)
                    args["message"] = m;
                    const boost::json::object result = co_await c.async_call_tool(std::string("echo"), args);
                    if (text_of(result) == "echo: " + m) ++right;
                },
                boost::asio::detached);
        io.run();
        CHECK(right == 20);
        c.close();
    }
    SECTION("timeouts, stops, crashes and errors as in call_tool") {
        mcp::client c(fake("legacy"));
        mcp::call_options quick;
        quick.timeout = 200ms;
        CHECK(async_failure(c, "hang", quick) == mcp::mcp_error_kind::timeout);
        std::stop_source stop;
        mcp::call_options stoppable;
        stoppable.stop = stop.get_token();
        std::jthread stopper([&] {
            std::this_thread::sleep_for(200ms);
            stop.request_stop();
        });
        CHECK(async_failure(c, "hang", stoppable) == mcp::mcp_error_kind::cancelled);
        CHECK(async_failure(c, "nope") == mcp::mcp_error_kind::remote);
        CHECK(async_failure(c, "crash") == mcp::mcp_error_kind::closed);
        // the next call restarts the server (once)
        CHECK(text_of(call_async(c, "echo", {{"message", "back"}})) == "echo: back");
        c.close();
    }
}
