// tool_error_handling: what a tool throws becomes an error tool message the
// model reads, in both loops; results are classified by DeerFlow's table.
#include "../agent/support.hpp"

#include <agentware/agent/async_loop.hpp>
#include <agentware/middleware/dangling_tool_call.hpp>
#include <agentware/middleware/guardrail.hpp>
#include <agentware/middleware/tool_error_handling.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <stdexcept>

using namespace agentware;

namespace {

struct plain_thrown {};

auto thrower(std::string name, std::function<void()> f) {
    return make_tool(std::move(name), "Fails.", R"({"type":"object"})", [f](const boost::json::object&) {
        f();
        return std::string("unreachable");
    });
}

} // namespace

TEST_CASE("a tool that throws becomes an error tool message and the run goes on",
          "[middleware][tool_errors][agent]") {
    scripted_model model({test::calls({test::call("c1", "explode")}), ai_message("recovered")});
    auto a = make_agent(model, tool_set(thrower("explode", [] { throw std::runtime_error("  boom  "); })),
                        tool_error_handling{});
    auto r = a.invoke("go");
    REQUIRE(r.reason == stop_reason::finished);
    CHECK(r.answer() == "recovered");
    const message& m = r.state.messages.at(2);
    CHECK(m.is_error());
    CHECK(m.tool_call_id() == "c1");
    CHECK(m.name == "explode");
    CHECK(m.text() ==
          "Error: Tool 'explode' failed with std::runtime_error: boom. Continue with available context, "
          "or choose an alternative tool.");
    CHECK(m.metadata.at("deerflow_tool_meta").at("source") == "exception");
    CHECK(m.metadata.at("deerflow_tool_meta").at("status") == "error");
}

TEST_CASE("a huge exception text is cut to 497 characters and an ellipsis", "[middleware][tool_errors]") {
    tool_error_handling h;
    std::string huge(1 << 20, 'x');
    auto r = h.failure(test::call("c", "t"), std::make_exception_ptr(std::runtime_error(huge)));
    CHECK(r.msg.text() == "Error: Tool 't' failed with std::runtime_error: " + std::string(497, 'x') +
                              ".... Continue with available context, or choose an alternative tool.");
    // code points, not bytes: a cut never splits a character
    std::string wide;
    for (int i = 0; i < 600; ++i)
        wide += "é";
    auto w = h.failure(test::call("c", "t"), std::make_exception_ptr(std::runtime_error(wide)));
    std::string cut;
    for (int i = 0; i < 497; ++i)
        cut += "é";
    CHECK(w.msg.text().find(cut + "...") != std::string::npos);
}

TEST_CASE("exception details: empty text, non-standard exceptions, missing name and id",
          "[middleware][tool_errors]") {
    tool_error_handling h;
    CHECK(h.failure(test::call("c", "t"), std::make_exception_ptr(std::logic_error(""))).msg.text() ==
          "Error: Tool 't' failed with std::logic_error: std::logic_error. Continue with available context, "
          "or choose "
          "an alternative tool.");
    CHECK(h.failure(test::call("c", "t"), std::make_exception_ptr(42)).msg.text() ==
          "Error: Tool 't' failed with int: int. Continue with available context, or choose an alternative "
          "tool.");
    CHECK(h.failure(test::call("c", "t"), std::make_exception_ptr(plain_thrown{}))
              .msg.text()
              .find("failed with (anonymous namespace)::plain_thrown") != std::string::npos);
    auto m = h.failure(test::call("", ""), std::make_exception_ptr(std::runtime_error("x"))).msg;
    CHECK(m.name == "unknown_tool");
    CHECK(m.tool_call_id() == "missing_tool_call_id");
    CHECK(m.text() ==
          "Error: Tool 'unknown_tool' failed with std::runtime_error: x. Continue with available context, "
          "or choose an alternative tool.");
}

TEST_CASE("a failed task call reads like a failed subagent", "[middleware][tool_errors]") {
    tool_error_handling h;
    auto m =
        h.failure(test::call("t1", "task"), std::make_exception_ptr(std::runtime_error("network down"))).msg;
    CHECK(m.text() ==
          "Task failed. Error: std::runtime_error: network down. Continue with available context, or "
          "choose an alternative tool.");
    CHECK(m.metadata.at("subagent_status") == "failed");
    CHECK(m.metadata.at("subagent_error") == "std::runtime_error: network down");
    CHECK(m.metadata.at("deerflow_tool_meta").at("error_type") == "unknown"); // "network down" matches no row
    auto q = h.failure(test::call("t1", "task"), std::make_exception_ptr(std::runtime_error("why?"))).msg;
    CHECK(q.text() ==
          "Task failed. Error: std::runtime_error: why? Continue with available context, or choose an "
          "alternative tool.");
}

TEST_CASE("errors are classified by DeerFlow's keyword table", "[middleware][tool_errors]") {
    auto type = [](std::string_view t) { return classify_tool_error(t).error_type; };
    CHECK(type("HTTP 401 returned") == "auth");
    CHECK(type("Invalid API key") == "auth");
    CHECK(type("Rate limit exceeded") == "rate_limited");
    CHECK(type("request timed out") == "transient");
    CHECK(type("Connection reset") == "transient");
    CHECK(type("tool is not configured") == "config");
    CHECK(type("Permission denied: /etc") == "permission");
    CHECK(type("No results found for query") == "no_results");
    CHECK(type("No such file: a.txt") == "not_found");
    CHECK(type("server said 404") == "not_found");
    CHECK(type("internal error") == "internal");
    CHECK(type("status 500") == "internal");
    CHECK(type("id 14010 and 5000") == "unknown"); // numeric codes must stand alone
    CHECK(type("something odd") == "unknown");
    auto auth = classify_tool_error("403 forbidden");
    CHECK(auth.error_type == "auth"); // first matching row wins
    CHECK_FALSE(auth.recoverable_by_model);
    CHECK(auth.recommended_next_action == "stop");
    auto nf = classify_tool_error("does not exist");
    CHECK(nf.recoverable_by_model);
    CHECK(nf.recommended_next_action == "rewrite_query");
}

TEST_CASE("tool results are classified in DeerFlow's order", "[middleware][tool_errors]") {
    auto meta = [](message m) { return classify_tool_result(m); };
    auto err = tool_message("c", "t", R"({"error":"rate limited"})", tool_status::error);
    CHECK(meta(err).error_type == "rate_limited");
    CHECK(meta(err).source == "tool_return");
    CHECK(meta(tool_message("c", "t", R"({"error":"none"})", tool_status::error)).error_type == "unknown");
    CHECK(meta(tool_message("c", "t", "disk not found", tool_status::error)).error_type == "not_found");
    CHECK(meta(tool_message("c", "t", "Error: permission denied")).error_type == "permission");
    CHECK(meta(tool_message("c", "t", "Error: permission denied")).status == "error");
    CHECK(meta(tool_message("c", "t", R"({"error":"timeout"})")).error_type == "transient");
    CHECK(meta(tool_message("c", "t", R"({"error":false,"data":1})")).status == "success");
    auto page = meta(tool_message("c", "web_fetch", "\n\n404 Not Found\n<html>"));
    CHECK(page.status == "error");
    CHECK(page.error_type == "not_found");
    CHECK(page.source == "content_analysis");
    CHECK(meta(tool_message("c", "web_fetch", "Bad Gateway")).status == "error");
    CHECK(meta(tool_message("c", "other", "404 Not Found")).status == "success");
    auto partial = meta(tool_message("c", "t", "Output truncated at 100 lines"));
    CHECK(partial.status == "partial_success");
    CHECK(partial.recommended_next_action == "rewrite_query");
    auto ok = meta(tool_message("c", "t", "all good"));
    CHECK(ok.status == "success");
    CHECK(ok.recommended_next_action == "continue");
}

namespace {

boost::json::object meta_json(const char* status, const char* error_type, bool recoverable,
                              const char* action, const char* source) {
    return {{"status", status},
            {"error_type", error_type ? boost::json::value(error_type) : boost::json::value(nullptr)},
            {"recoverable_by_model", recoverable},
            {"recommended_next_action", action},
            {"source", source}};
}

} // namespace

TEST_CASE("every handled result carries deerflow_tool_meta with DeerFlow's five keys",
          "[middleware][tool_errors]") {
    tool_error_handling h;
    auto stamped = [&](message m) { return h.stamp(tool_response{std::move(m), {}, false}).msg.metadata; };
    // ok and partial results: no error type (JSON null), analysed from the content
    CHECK(stamped(tool_message("c", "t", "all good")).at("deerflow_tool_meta") ==
          meta_json("success", nullptr, true, "continue", "content_analysis"));
    CHECK(stamped(tool_message("c", "t", "3 results, truncated")).at("deerflow_tool_meta") ==
          meta_json("partial_success", nullptr, true, "rewrite_query", "content_analysis"));
    // each error kind of the table, from the tool's own words
    struct row {
        const char* text;
        const char* type;
        bool recoverable;
        const char* action;
    };
    for (const row& r : {row{"Error: 401 Unauthorized", "auth", false, "stop"},
                         row{"Error: rate limit hit", "rate_limited", false, "summarize"},
                         row{"Error: request timed out", "transient", false, "try_alternative"},
                         row{"Error: search is not configured", "config", false, "stop"},
                         row{"Error: access denied", "permission", true, "try_alternative"},
                         row{"Error: no results", "no_results", true, "rewrite_query"},
                         row{"Error: no such file a.txt", "not_found", true, "rewrite_query"},
                         row{"Error: internal error", "internal", false, "stop"},
                         row{"Error: something odd", "unknown", true, "try_alternative"}}) {
        INFO(r.text);
        CHECK(stamped(tool_message("c", "t", r.text)).at("deerflow_tool_meta") ==
              meta_json("error", r.type, r.recoverable, r.action, "tool_return"));
    }
    // a fetched HTTP error page: the reason phrase names the kind
    CHECK(stamped(tool_message("c", "web_fetch", "# HTTP Error 503 - Service Unavailable\nnginx"))
              .at("deerflow_tool_meta") ==
          meta_json("error", "transient", false, "try_alternative", "content_analysis"));
    CHECK(stamped(tool_message("c", "web_fetch", "# 404 Ways to Cook Rice"))
              .at("deerflow_tool_meta")
              .at("status") == "success");
    // exceptions: classified from "<type>: <detail>", the message stays visible to the model
    auto failed = h.failure(test::call("c", "t"),
                            std::make_exception_ptr(std::runtime_error("permission denied: /secret/path")));
    CHECK(failed.msg.text() ==
          "Error: Tool 't' failed with std::runtime_error: permission denied: /secret/path. "
          "Continue with available context, or choose an alternative tool.");
    CHECK(failed.msg.metadata.at("deerflow_tool_meta") ==
          meta_json("error", "permission", true, "try_alternative", "exception"));
    auto timeout =
        h.failure(test::call("c", "t"), std::make_exception_ptr(std::runtime_error("socket timeout")));
    CHECK(timeout.msg.metadata.at("deerflow_tool_meta") ==
          meta_json("error", "transient", false, "try_alternative", "exception"));
    // a custom key still works
    tool_error_handling custom(tool_error_handling_options{.meta_key = "tool_meta"});
    CHECK(custom.stamp(tool_response{tool_message("c", "t", "ok"), {}, false})
              .msg.metadata.contains("tool_meta"));
}

TEST_CASE("successful results are stamped, state-changing and already stamped ones are not",
          "[middleware][tool_errors]") {
    tool_error_handling h;
    auto r = h.stamp(tool_response{tool_message("c", "t", "fine"), {}, false});
    CHECK(r.msg.metadata.at("deerflow_tool_meta").at("status") == "success");
    auto ended = h.stamp(tool_response{tool_message("c", "t", "fine"), {}, true});
    CHECK_FALSE(ended.msg.metadata.contains("deerflow_tool_meta"));
    tool_response pre{tool_message("c", "t", "Error: x"), {}, false};
    pre.msg.metadata["deerflow_tool_meta"] = "mine";
    CHECK(h.stamp(pre).msg.metadata.at("deerflow_tool_meta") == "mine");
}

TEST_CASE("the round that acquires the sandbox is stamped like any other, other state changes are not",
          "[middleware][tool_errors]") {
    tool_error_handling h;
    tool_response first{tool_message("c", "read_file", "text"), {}, false};
    first.update.set<sandbox_field>(sandbox_state{"local:default:t"});
    const auto stamped = h.stamp(first);
    REQUIRE(stamped.msg.metadata.contains("deerflow_tool_meta"));
    CHECK(stamped.msg.metadata.at("deerflow_tool_meta").at("status") == "success");
    CHECK(stamped.update.fields.contains("sandbox")); // the acquisition is kept
    tool_response artifacts{tool_message("c", "present_files", "Successfully presented files"), {}, false};
    artifacts.update.set<artifacts_field>(std::vector<std::string>{"/mnt/user-data/outputs/a"});
    CHECK_FALSE(h.stamp(artifacts).msg.metadata.contains("deerflow_tool_meta"));
    tool_response both = first;
    both.update.set<artifacts_field>(std::vector<std::string>{"/mnt/user-data/outputs/a"});
    CHECK_FALSE(h.stamp(both).msg.metadata.contains("deerflow_tool_meta"));
}

TEST_CASE("refused arguments are recoverable, sandbox refusals are permission errors",
          "[middleware][tool_errors]") {
    auto meta = [](const message& m) { return classify_tool_result(m); };
    const auto missing = meta(
        tool_message("c", "read_file",
                     detail::invalid_arguments_message("read_file", R"(missing required argument "path")"),
                     tool_status::error));
    CHECK(missing.status == "error");
    CHECK(missing.error_type == "unknown");
    CHECK(missing.recoverable_by_model);
    CHECK(missing.recommended_next_action == "try_alternative");
    // A tool's own words about a missing setting stay a configuration error.
    CHECK(meta(tool_message("c", "t", "Error: missing required environment variable X", tool_status::error))
              .error_type == "config");
    for (const char* text :
         {"Error: Permission denied reading file: /etc/passwd", "Error: Permission denied: /mnt/user-data",
          "Error: Permission denied writing to file: /x", "Error: Permission denied accessing file: /x"}) {
        const auto m = meta(tool_message("c", "t", text, tool_status::error));
        CHECK(m.error_type == "permission");
        CHECK(m.recoverable_by_model);
    }
}

TEST_CASE("tool_error_handling works in the coroutine loop too", "[middleware][tool_errors][async]") {
    scripted_model model(
        {test::calls({test::call("c1", "explode"), test::call("c2", "echo", R"({"text":"hi"})")}),
         ai_message("recovered")});
    auto a = make_agent(
        model, tool_set(thrower("explode", [] { throw std::out_of_range("index 9"); }), test::echo_tool()),
        dangling_tool_call{}, guardrail(allowlist_provider{std::nullopt, {"nothing"}}),
        tool_error_handling{});
    boost::asio::io_context io;
    std::optional<invoke_result<decltype(a)::state_type>> out;
    boost::asio::co_spawn(io, a.async_invoke("go"), [&](std::exception_ptr e, auto r) {
        REQUIRE_FALSE(e);
        out = std::move(r);
    });
    io.run();
    REQUIRE(out);
    REQUIRE(out->reason == stop_reason::finished);
    CHECK(out->state.messages.at(2).text() ==
          "Error: Tool 'explode' failed with std::out_of_range: index 9. Continue "
          "with available context, or choose an alternative tool.");
    CHECK(out->state.messages.at(3).text() == "hi");
    CHECK(out->state.messages.at(3).metadata.at("deerflow_tool_meta").at("status") == "success");
}
