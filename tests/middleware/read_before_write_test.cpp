// read_before_write: read marks with the content hash, the block text on
// stale or missing reads, fail-open cases, and the per-(thread, path) gate
// under a write racing a read.
#include "deerflow_support.hpp"

#include <agentware/detail/hash.hpp>
#include <agentware/middleware/read_before_write.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace agentware;
namespace fs = std::filesystem;

namespace {

const std::string blocked_text =
    "Error: write_file blocked — /mnt/user-data/workspace/a.txt already exists and you have not read its "
    "current "
    "version. Any write invalidates earlier reads, so re-read before every modification. Call read_file on "
    "it (a "
    "ranged read of the relevant section is enough, e.g. the last ~30 lines before an append), check what is "
    "already there, then retry.";

// The sandbox tools with read_before_write in front, run by an agent.
auto run_calls(dftest::sandbox_env& env, std::vector<message> script) {
    scripted_model model(std::move(script));
    auto a = make_agent(model, tool_set{}, sandbox{}, read_before_write{});
    decltype(a)::state_type state;
    get<thread_data_field>(state) = env.paths;
    auto r = a.run(state, "go");
    INFO(r.error);
    REQUIRE(r.reason == stop_reason::finished);
    return state;
}

std::string write_args(std::string_view content) {
    return fmt::format(R"({{"description":"d","path":"/mnt/user-data/workspace/a.txt","content":"{}"}})",
                       content);
}
const std::string read_args = R"({"description":"d","path":"/mnt/user-data/workspace/./a.txt"})";

} // namespace

TEST_CASE("a write to an existing unread file is blocked, after a read it goes through",
          "[middleware][read_before_write]") {
    dftest::sandbox_env env;
    dftest::write(env.ws() / "a.txt", "old\n");
    auto state = run_calls(env, {test::calls({test::call("c1", "write_file", write_args("new"))}),
                                 test::calls({test::call("c2", "read_file", read_args)}),
                                 test::calls({test::call("c3", "write_file", write_args("new"))}),
                                 test::calls({test::call("c4", "write_file", write_args("newer"))}),
                                 ai_message("done")});
    const auto& m = state.messages;
    CHECK(m.at(2).text() == blocked_text);
    CHECK(m.at(2).is_error());
    // The read carries the mark: normalised path and the hash of the whole file.
    const auto& mark = m.at(4).metadata.at("deerflow_read_mark").as_object();
    CHECK(mark.at("path") == "/mnt/user-data/workspace/a.txt");
    CHECK(mark.at("hash").as_string() == detail::sha256_hex("old\n"));
    CHECK(m.at(6).text() == "OK");
    // That write changed the file: the earlier read no longer counts.
    CHECK(m.at(8).text() == blocked_text);
    CHECK(dftest::read(env.ws() / "a.txt") == "new");
}

TEST_CASE("a ranged read marks the hash of the whole file", "[middleware][read_before_write]") {
    dftest::sandbox_env env;
    dftest::write(env.ws() / "a.txt", "1\n2\n3\n");
    auto state = run_calls(
        env,
        {test::calls(
             {test::call("c1", "read_file",
                         R"({"description":"d","path":"/mnt/user-data/workspace/a.txt","start_line":3})")}),
         test::calls({test::call(
             "c2", "str_replace",
             R"({"description":"d","path":"/mnt/user-data/workspace/a.txt","old_str":"3","new_str":"4"})")}),
         ai_message("done")});
    CHECK(state.messages.at(2).metadata.at("deerflow_read_mark").at("hash").as_string() ==
          detail::sha256_hex("1\n2\n3\n"));
    CHECK(state.messages.at(4).text() == "OK");
    CHECK(dftest::read(env.ws() / "a.txt") == "1\n2\n4\n");
}

TEST_CASE("new files, failed reads and unreadable files fail open", "[middleware][read_before_write]") {
    dftest::sandbox_env env;
    auto state = run_calls(
        env,
        {test::calls({test::call("c1", "write_file", write_args("first"))}),
         test::calls({test::call("c2", "read_file",
                                 R"({"description":"d","path":"/mnt/user-data/workspace/missing.txt"})")}),
         ai_message("done")});
    CHECK(state.messages.at(2).text() == "OK"); // a new file
    CHECK(state.messages.at(4).text().starts_with("Error:"));
    CHECK_FALSE(state.messages.at(4).metadata.contains("deerflow_read_mark")); // no mark for a failed read
    // A path outside the sandbox is the tool's business (it refuses it).
    auto outside =
        run_calls(env, {test::calls({test::call("c1", "write_file",
                                                R"({"description":"d","path":"/etc/x","content":"y"})")}),
                        ai_message("done")});
    CHECK(outside.messages.at(2).text().find("blocked") == std::string::npos);
}

TEST_CASE("reads and writes in parallel in one round: the write is judged on the state before the round",
          "[middleware][read_before_write][concurrency]") {
    dftest::sandbox_env env;
    dftest::write(env.ws() / "a.txt", "old\n");
    auto state = run_calls(env, {test::calls({test::call("c1", "read_file", read_args),
                                              test::call("c2", "write_file", write_args("new"))}),
                                 ai_message("done")});
    CHECK(state.messages.at(3).text() == blocked_text); // the read of the same round does not count yet
    CHECK(state.messages.at(2).metadata.at("deerflow_read_mark").at("hash").as_string() ==
          detail::sha256_hex("old\n"));
    CHECK(dftest::read(env.ws() / "a.txt") == "old\n");
}

TEST_CASE("a write racing a read: the mark always matches what the read returned",
          "[middleware][read_before_write][concurrency]") {
    dftest::sandbox_env env;
    const fs::path file = env.ws() / "a.txt";
    dftest::write(file, "v0");
    read_before_write mw;
    runtime rt;
    rt.thread_id = "t1";
    using req_t = tool_request<dftest::full_state>;
    for (int round = 0; round < 20; ++round) {
        std::string returned;
        tool_response read_result;
        std::thread reader([&] {
            req_t req{
                tool_call{"r", "read_file", boost::json::object{{"path", "/mnt/user-data/workspace/a.txt"}}},
                nullptr, &env.state, &rt};
            read_result = mw.wrap_tool_call(req, [&](auto& r) {
                returned = dftest::read(file);
                std::this_thread::sleep_for(std::chrono::milliseconds(2)); // a slow read
                return tool_response{tool_message(r.call->id, "read_file", returned), {}, false};
            });
        });
        std::thread writer([&] {
            // Give the writer the latest content's mark, so it may write.
            dftest::full_state st = env.state;
            message mark = tool_message("m", "read_file", "");
            mark.metadata["deerflow_read_mark"] = boost::json::object{
                {"path", "/mnt/user-data/workspace/a.txt"}, {"hash", detail::sha256_hex(dftest::read(file))}};
            st.messages.push_back(mark);
            req_t req{
                tool_call{"w", "write_file", boost::json::object{{"path", "/mnt/user-data/workspace/a.txt"}}},
                nullptr, &st, &rt};
            mw.wrap_tool_call(req, [&](auto& r) {
                dftest::write(file, "v" + std::to_string(round + 1));
                return tool_response{tool_message(r.call->id, "write_file", "OK"), {}, false};
            });
        });
        reader.join();
        writer.join();
        REQUIRE(read_result.msg.metadata.contains("deerflow_read_mark"));
        CHECK(read_result.msg.metadata.at("deerflow_read_mark").at("hash").as_string() ==
              detail::sha256_hex(returned));
    }
}

namespace {

namespace asio = boost::asio;
using async_req = tool_request<dftest::full_state>;

// A read tool of the coroutine loop: reads the file, then is suspended for a while (a slow read).
asio::awaitable<tool_response> slow_read(fs::path file, std::string* returned, std::string id) {
    *returned = dftest::read(file);
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(5));
    co_await t.async_wait(asio::use_awaitable);
    co_return tool_response{tool_message(id, "read_file", *returned), {}, false};
}

asio::awaitable<tool_response> quick_write(fs::path file, std::string content, std::string id) {
    dftest::write(file, content);
    co_return tool_response{tool_message(id, "write_file", "OK"), {}, false};
}

// Runs a wrap_tool_call of the coroutine loop to its end.
asio::awaitable<void> run_wrapped(read_before_write& mw, async_req req, auto next, tool_response* out) {
    *out = co_await mw.wrap_tool_call(req, next);
}

} // namespace

TEST_CASE("coroutine loop: a write racing a suspended read waits for its mark, holding no thread",
          "[middleware][read_before_write][concurrency][async]") {
    dftest::sandbox_env env;
    const fs::path file = env.ws() / "a.txt";
    dftest::write(file, "v0");
    read_before_write mw;
    runtime rt;
    rt.thread_id = "t1";
    const std::string path = "/mnt/user-data/workspace/a.txt";
    // One thread: a coroutine that blocked it while waiting for the gate would never let the read finish.
    asio::io_context io;
    std::string returned;
    tool_response read_result, write_result;
    dftest::full_state st = env.state; // the writer has a mark of the content before the read
    message seen = tool_message("m", "read_file", "");
    seen.metadata["deerflow_read_mark"] =
        boost::json::object{{"path", path}, {"hash", detail::sha256_hex(dftest::read(file))}};
    st.messages.push_back(seen);
    tool_call read_call{"r", "read_file", boost::json::object{{"path", path}}};
    tool_call write_call{"w", "write_file", boost::json::object{{"path", path}}};
    // The read starts first and is suspended inside the tool; the write comes while it is.
    asio::co_spawn(io,
                   run_wrapped(
                       mw, async_req{std::move(read_call), nullptr, &env.state, &rt},
                       [&](auto& r) { return slow_read(file, &returned, r.call->id); }, &read_result),
                   asio::detached);
    asio::co_spawn(io,
                   run_wrapped(
                       mw, async_req{std::move(write_call), nullptr, &st, &rt},
                       [&](auto& r) { return quick_write(file, "v1", r.call->id); }, &write_result),
                   asio::detached);
    io.run();
    CHECK(returned == "v0");
    REQUIRE(read_result.msg.metadata.contains("deerflow_read_mark"));
    // The mark hashes what the read returned: the write ran after the read's mark, not inside the read.
    CHECK(read_result.msg.metadata.at("deerflow_read_mark").at("hash").as_string() ==
          detail::sha256_hex("v0"));
    CHECK(write_result.msg.text() == "OK");
    CHECK(dftest::read(file) == "v1");
}

TEST_CASE("coroutine loop: two writes to one file are judged one after the other",
          "[middleware][read_before_write][concurrency][async]") {
    dftest::sandbox_env env;
    const fs::path file = env.ws() / "a.txt";
    dftest::write(file, "v0");
    read_before_write mw;
    runtime rt;
    rt.thread_id = "t1";
    const std::string path = "/mnt/user-data/workspace/a.txt";
    dftest::full_state st = env.state; // both writers hold a mark of "v0"
    message seen = tool_message("m", "read_file", "");
    seen.metadata["deerflow_read_mark"] =
        boost::json::object{{"path", path}, {"hash", detail::sha256_hex("v0")}};
    st.messages.push_back(seen);
    asio::io_context io;
    tool_response first, second;
    tool_call w1{"w1", "write_file", boost::json::object{{"path", path}}};
    tool_call w2{"w2", "write_file", boost::json::object{{"path", path}}};
    // The first write is suspended before it writes; the second must not pass its check meanwhile.
    auto slow_write = [&](auto& r) -> asio::awaitable<tool_response> {
        return [](fs::path f, std::string id) -> asio::awaitable<tool_response> {
            asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(5));
            co_await t.async_wait(asio::use_awaitable);
            dftest::write(f, "v1");
            co_return tool_response{tool_message(id, "write_file", "OK"), {}, false};
        }(file, r.call->id);
    };
    asio::co_spawn(io, run_wrapped(mw, async_req{std::move(w1), nullptr, &st, &rt}, slow_write, &first),
                   asio::detached);
    asio::co_spawn(io,
                   run_wrapped(
                       mw, async_req{std::move(w2), nullptr, &st, &rt},
                       [&](auto& r) { return quick_write(file, "v2", r.call->id); }, &second),
                   asio::detached);
    io.run();
    CHECK(first.msg.text() == "OK");
    CHECK(second.msg.text().starts_with("Error: write_file blocked")); // "v0" is no longer the file
    CHECK(dftest::read(file) == "v1");
}

TEST_CASE("read_before_write options in JSON", "[middleware][read_before_write][options]") {
    auto o = boost::json::value_to<read_before_write_options>(
        boost::json::parse(R"({"write_tools":["write_file","str_replace","edit_file"]})"));
    CHECK(o.write_tools.size() == 3);
    CHECK(boost::json::value_to<read_before_write_options>(boost::json::value_from(o)) == o);
    CHECK(o.elide_blocked_payloads);
    CHECK(o.elide_min_chars == 2000);
    o = boost::json::value_to<read_before_write_options>(
        boost::json::parse(R"({"elide_blocked_payloads":false,"elide_min_chars":10})"));
    CHECK_FALSE(o.elide_blocked_payloads);
    CHECK(o.elide_min_chars == 10);
    CHECK(boost::json::value_to<read_before_write_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(
        boost::json::value_to<read_before_write_options>(boost::json::parse(R"({"elide_min_chars":-1})")),
        Catch::Contains("read_before_write.elide_min_chars"));
    CHECK_THROWS_WITH(
        boost::json::value_to<read_before_write_options>(boost::json::parse(R"({"enabled":true})")),
        Catch::Contains("read_before_write.enabled"));
    CHECK_THROWS_WITH(
        boost::json::value_to<read_before_write_options>(boost::json::parse(R"({"write_tools":[1]})")),
        Catch::Contains("read_before_write.write_tools[0]"));
}

namespace {

// The sandbox tools with read_before_write (options `o`) in front; the model kept to read its requests.
struct elision_run {
    scripted_model model;
    std::vector<message> stored;
};
elision_run run_elision(dftest::sandbox_env& env, std::vector<message> script,
                        read_before_write_options o = {}) {
    scripted_model model(std::move(script));
    auto a = make_agent(model, tool_set{}, sandbox{}, read_before_write{std::move(o)});
    decltype(a)::state_type state;
    get<thread_data_field>(state) = env.paths;
    auto r = a.run(state, "go");
    INFO(r.error);
    REQUIRE(r.reason == stop_reason::finished);
    return {model, state.messages};
}

std::string elided(std::size_t chars, std::string_view tool) {
    return fmt::format(
        "[payload elided: {} chars; this {} call was blocked by the read-before-write gate and "
        "nothing was written]",
        chars, tool);
}

std::string content_of(const message& ai, std::size_t call, std::string_view field = "content") {
    return std::string(ai.tool_calls.at(call).args.at(field).as_string());
}

} // namespace

TEST_CASE("a refused write's payload is elided in the model requests, the stored call keeps it",
          "[middleware][read_before_write][elision]") {
    dftest::sandbox_env env;
    dftest::write(env.ws() / "a.txt", "old\n");
    const std::string big(2500, 'x');
    auto run = run_elision(env, {test::calls({test::call("c1", "write_file", write_args(big)),
                                              test::call("c2", "write_file", write_args("short"))}),
                                 test::calls({test::call("c3", "read_file", read_args)}),
                                 test::calls({test::call("c4", "write_file", write_args(big))}),
                                 ai_message("done")});
    const auto requests = run.model.requests();
    REQUIRE(requests.size() == 4);
    // The refusals carry the block mark.
    const auto& block = run.stored.at(2).metadata.at("deerflow_write_block").as_object();
    CHECK(block.at("path") == "/mnt/user-data/workspace/a.txt");
    CHECK(block.at("tool") == "write_file");
    for (std::size_t i = 1; i < requests.size(); ++i) {
        const message& ai = requests[i].messages.at(1);
        CHECK(content_of(ai, 0) == elided(2500, "write_file"));
        CHECK(content_of(ai, 1) == "short"); // under elide_min_chars
        CHECK(ai.tool_calls.at(0).args.at("path") == "/mnt/user-data/workspace/a.txt");
    }
    // The allowed write keeps its payload.
    CHECK(content_of(requests[3].messages.at(6), 0) == big);
    // The stored history is untouched.
    CHECK(content_of(run.stored.at(1), 0) == big);
    CHECK(dftest::read(env.ws() / "a.txt") == big);
}

TEST_CASE("str_replace payloads with elide_min_chars 0, and the option off",
          "[middleware][read_before_write][elision]") {
    dftest::sandbox_env env;
    dftest::write(env.ws() / "a.txt", "old\n");
    const std::string args =
        R"({"description":"d","path":"/mnt/user-data/workspace/a.txt","old_str":"old","new_str":"né"})";
    std::vector<message> script{test::calls({test::call("c1", "str_replace", args)}), ai_message("done")};
    SECTION("elide every non-empty payload") {
        read_before_write_options o;
        o.elide_min_chars = 0;
        auto run = run_elision(env, script, o);
        const auto requests = run.model.requests(); // a copy: the message below is read from it
        const message& ai = requests.at(1).messages.at(1);
        CHECK(content_of(ai, 0, "old_str") == elided(3, "str_replace"));
        CHECK(content_of(ai, 0, "new_str") == elided(2, "str_replace")); // characters, not bytes
        CHECK(content_of(run.stored.at(1), 0, "new_str") == "né");
    }
    SECTION("elide_blocked_payloads off") {
        read_before_write_options o;
        o.elide_blocked_payloads = false;
        o.elide_min_chars = 0;
        auto run = run_elision(env, script, o);
        CHECK(content_of(run.model.requests().at(1).messages.at(1), 0, "old_str") == "old");
    }
}

TEST_CASE("the refused-call index pairs per occurrence and follows a rewritten history",
          "[middleware][read_before_write][elision]") {
    auto ai = [](std::string id, std::string call_id) {
        message m = test::calls({test::call(std::move(call_id), "write_file", R"({"content":"c"})")});
        m.id = std::move(id);
        return m;
    };
    auto result = [](std::string id, std::string call_id, bool refused) {
        message m = tool_message(call_id, "write_file", refused ? "Error: blocked" : "OK",
                                 refused ? tool_status::error : tool_status::ok);
        if (refused) m.metadata["deerflow_write_block"] = boost::json::object{};
        m.id = std::move(id);
        return m;
    };
    detail::blocked_call_index ix;
    std::vector<message> ms{ai("m1", "x"), result("m2", "x", false), ai("m3", "x"), result("m4", "x", true)};
    auto b = ix.update(ms, read_before_write::write_block_key);
    REQUIRE(b.size() == 1); // the id repeats: only the second call was refused
    CHECK(b[0].message == 2);
    ms.push_back(ai("m5", "y"));
    ms.push_back(result("m6", "y", true));
    CHECK(ix.update(ms, read_before_write::write_block_key).size() == 2); // only the new messages read
    ms.erase(ms.begin(), ms.begin() + 2);                                 // a summarised history
    b = ix.update(ms, read_before_write::write_block_key);
    REQUIRE(b.size() == 2);
    CHECK(b[0].message == 0);
    CHECK(b[1].message == 2);
}
