// web_tools, the catalog's `web` capability: fetch and curl against a local
// HTTP server on 127.0.0.1, and the HTML reduction fetch applies.
#include "../../agent/support.hpp"
#include "../../support/scripted_http_server.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/agent/async_loop.hpp>
#include <agentware/middleware/capabilities/web.hpp>
#include <agentware/middleware/detail/html_text.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/presets/deep_agent.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

using namespace agentware;
using agentware::test::scripted_http_server;
using agentware::test::scripted_response;

namespace web_tools_test {

inline tool_output use(web_tools& web, std::string_view name, const boost::json::object& args) {
    for (const auto& t : web.tools())
        if (t->schema().name == name) return t->call(args, tool_runtime{});
    FAIL("no tool " << name);
    return {};
}

inline scripted_response page(std::string body, std::string type = "text/html; charset=utf-8",
                              int status = 200) {
    scripted_response r;
    r.status = status;
    r.content_type = std::move(type);
    r.parts = {std::move(body)};
    return r;
}

inline scripted_response redirect(int status, std::string location) {
    return page("", "text/plain", status).header("Location", std::move(location));
}

inline bool failed(const tool_output& o) { return o.status == tool_status::error; }

inline std::string root(const scripted_http_server& s) { return s.base_url(""); }

} // namespace web_tools_test

using namespace web_tools_test;

TEST_CASE("html_to_text keeps what a reader sees", "[middleware][web_tools]") {
    std::string title;
    const std::string text = detail::html_to_text(R"(<!DOCTYPE html><html><head><title> The   Page </title>
<style>p { color: red }</style><script>var x = "<p>not text</p>";</script></head>
<body><h1>Heading</h1><p>First   paragraph with <a href="/next">a link</a> &amp; an &lt;entity&gt;&#33; &#x263A;</p>
<!-- a comment <p>hidden</p> -->
<ul><li>one</li><li>two</li></ul><p>Line<br>break</p><img src="x.png" alt="a cat"><pre>  kept
   as is</pre><table><tr><td>a</td><td>b</td></tr></table><p>unknown &bogus; and lone & and &#xZZ;</p>
</body></html>)",
                                                  &title);
    CHECK(title == "The Page");
    CHECK(text == "# Heading\n\nFirst paragraph with a link (/next) & an <entity>! \xE2\x98\xBA\n\n- one\n- "
                  "two\n\nLine\nbreak\n\n[a cat]\n\n  kept\n   as is\n\na | b\n\nunknown &bogus; and lone & "
                  "and &#xZZ;");
    // Broken markup is text, never an error.
    CHECK(detail::html_to_text("a < b and <unclosed") == "a < b and <unclosed");
    CHECK(detail::html_to_text("<script>never closed") == "");
}

TEST_CASE("fetch returns a page's text, curl the response as received", "[middleware][web_tools]") {
    scripted_http_server server;
    web_tools web;
    REQUIRE(web.tools().size() == 2);

    server.push(page("<html><head><title>Hello</title></head><body><p>Hi <b>there</b></p></body></html>"));
    auto out = use(web, "fetch", {{"url", root(server) + "/docs/page.html?x=1#part"}});
    REQUIRE_FALSE(failed(out));
    CHECK(out.text() == "URL: " + root(server) + "/docs/page.html?x=1\nTitle: Hello\n\nHi there");
    CHECK(out.metadata.at("status") == 200);
    auto req = server.requests().back();
    CHECK(req.method == "GET");
    CHECK(req.target == "/docs/page.html?x=1"); // the fragment stays with the client
    CHECK(req.header("user-agent") == "agentware-web/1");

    server.push(page(R"({"a": 1})", "application/json"));
    out = use(web, "fetch", {{"url", root(server)}});
    CHECK(out.text() == "URL: " + root(server) + "\n\n{\"a\": 1}");
    CHECK(server.requests().back().target == "/");

    server.push(page("plain body", "text/plain").header("X-Answer", "42"));
    out = use(web, "curl",
              {{"url", root(server) + "/raw"}, {"headers", {{"Accept", "text/plain"}, {"X-Trace", "t1"}}}});
    REQUIRE_FALSE(failed(out));
    CHECK(out.text().starts_with("HTTP 200\n"));
    CHECK(out.text().find("X-Answer: 42\n") != std::string::npos);
    CHECK(out.text().ends_with("\n\nplain body"));
    req = server.requests().back();
    CHECK(req.header("x-trace") == "t1");
    CHECK(req.header("accept") == "text/plain");

    // curl shows any status; fetch calls a failure one.
    server.push(page("<p>no such page</p>", "text/html", 404));
    out = use(web, "curl", {{"url", root(server) + "/missing"}});
    CHECK_FALSE(failed(out));
    CHECK(out.text().starts_with("HTTP 404\n"));
    server.push(page("<p>no such page</p>", "text/html", 404));
    out = use(web, "fetch", {{"url", root(server) + "/missing"}});
    CHECK(failed(out));
    CHECK(out.text() == "Error: HTTP 404 from " + root(server) + "/missing\nno such page");
}

TEST_CASE("web_tools follow redirects a few times", "[middleware][web_tools]") {
    scripted_http_server server;
    web_tools_options o;
    o.max_redirects = 2;
    web_tools web(o);

    server.push(redirect(302, "/b/start"));
    server.push(redirect(301, "next?y=2"));
    server.push(page("<p>arrived</p>"));
    auto out = use(web, "fetch", {{"url", root(server) + "/a"}});
    REQUIRE_FALSE(failed(out));
    CHECK(out.text() == "URL: " + root(server) + "/b/next?y=2\n\narrived");
    const auto reqs = server.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[1].target == "/b/start");
    CHECK(reqs[2].target == "/b/next?y=2");

    for (int i = 0; i < 3; ++i)
        server.push(redirect(307, root(server) + "/loop"));
    out = use(web, "fetch", {{"url", root(server) + "/loop"}});
    CHECK(failed(out));
    CHECK(out.text() == "Error: " + root(server) + "/loop redirected more than 2 times");
}

TEST_CASE("web_tools refuse what they must not fetch, before any request", "[middleware][web_tools]") {
    scripted_http_server server;
    web_tools_options o;
    o.blocked_hosts = {"localhost"};
    web_tools blocked(o);
    auto out = use(blocked, "fetch", {{"url", "http://api.localhost:1/x"}});
    CHECK(out.text() == "Error: api.localhost is a blocked host");

    web_tools_options only;
    only.allowed_hosts = {"example.org"};
    web_tools allowed(only);
    out = use(allowed, "fetch", {{"url", root(server) + "/"}});
    CHECK(out.text() ==
          "Error: 127.0.0.1 is not among the hosts these tools may reach (" + root(server) + "/)");
    // A redirect to a host outside the list is refused too.
    web_tools_options local;
    local.allowed_hosts = {"127.0.0.1"};
    web_tools web(local);
    server.push(redirect(302, "http://elsewhere.example/"));
    out = use(web, "fetch", {{"url", root(server) + "/"}});
    CHECK(out.text() == "Error: elsewhere.example is not among the hosts these tools may reach "
                        "(http://elsewhere.example/)");
    CHECK(server.request_count() == 1);

    web_tools any;
    CHECK(use(any, "fetch", {{"url", "ftp://example.org/file"}}).text() ==
          "Error: ftp://example.org/file is not an http:// or https:// URL");
    CHECK(use(any, "fetch", {{"url", "http://user:pw@example.org/"}}).text() ==
          "Error: URLs with credentials are not fetched");
    CHECK(use(any, "fetch", {{"url", "http://example.org/a b"}}).text() ==
          "Error: the URL contains white space or a control character");
    CHECK(use(any, "fetch", boost::json::object{}).text() == "Error: the required argument 'url' is missing");
    CHECK(use(any, "curl", {{"url", root(server)}, {"headers", {{"Host", "evil"}}}}).text() ==
          "Error: the Host header is set by the tool");
    CHECK(use(any, "curl", {{"url", root(server)}, {"headers", {{"Bad Name", "x"}}}}).text() ==
          "Error: \"Bad Name\" is not a header name");
    CHECK(use(any, "curl", {{"url", root(server)}, {"headers", {{"X-A", "1\r\nX-B: 2"}}}}).text() ==
          "Error: the value of header X-A has a line break");
    CHECK(server.request_count() == 1);
}

TEST_CASE("web_tools bound what they read and how long they wait", "[middleware][web_tools]") {
    scripted_http_server server;
    web_tools_options o;
    o.max_bytes = 10;
    o.timeout = std::chrono::seconds(1);
    web_tools web(o);

    server.push(page("0123456789abcdefghij", "text/plain"));
    auto out = use(web, "fetch", {{"url", root(server) + "/big"}});
    REQUIRE_FALSE(failed(out));
    CHECK(out.text() == "URL: " + root(server) +
                            "/big\n\n0123456789\n[the body is longer than 10 bytes; the rest was not read]");

    web_tools_options short_answers;
    short_answers.max_output_chars = 120;
    web_tools brief(short_answers);
    server.push(page(std::string(200, 'x'), "text/plain"));
    out = use(brief, "curl", {{"url", root(server) + "/long"}});
    CHECK(detail::utf8_chars(out.text()) <= 120);
    CHECK(out.text().starts_with("HTTP 200\n"));
    CHECK(out.text().find("... [truncated: showing first") != std::string::npos);

    server.push(page("\x89PNG\r\n\x1a\n", "image/png"));
    out = use(web, "fetch", {{"url", root(server) + "/img"}});
    CHECK(out.text() == "Error: " + root(server) + "/img is image/png, not text");

    scripted_response stall;
    stall.stall = true;
    server.push(stall);
    const auto t0 = std::chrono::steady_clock::now();
    out = use(web, "curl", {{"url", root(server) + "/slow"}});
    CHECK(failed(out));
    CHECK(out.text().starts_with("Error: GET " + root(server) + "/slow failed: "));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("an agent fetches through web_tools, blocking and in async_run", "[middleware][web_tools][async]") {
    scripted_http_server server;
    const std::string url = root(server) + "/news";
    const auto call = ::test::call("f1", "fetch", R"({"url": ")" + url + R"("})");

    server.push(page("<h2>Today</h2><p>Nothing happened.</p>"));
    scripted_model model({::test::calls({call}), ai_message("Quiet day.")});
    auto a = make_agent(model, tool_set{}, web_tools{});
    decltype(a)::state_type state;
    REQUIRE(a.run(state, "news?").ok());
    CHECK(state.messages[2].text() == "URL: " + url + "\n\n## Today\n\nNothing happened.");
    CHECK(model.requests()[0].tool_names == std::vector<std::string>{"fetch", "curl"});

    server.push(page("<p>Still nothing.</p>"));
    scripted_model async_model({::test::calls({call}), ai_message("Still quiet.")});
    auto b = make_agent(async_model, tool_set{}, web_tools{});
    boost::asio::io_context io; // one thread: the fetch must not block it
    std::optional<run_result> result;
    decltype(b)::state_type async_state;
    boost::asio::co_spawn(io, b.async_run(async_state, "news?"), [&](std::exception_ptr e, run_result r) {
        REQUIRE_FALSE(e);
        result = std::move(r);
    });
    io.run();
    REQUIRE(result);
    REQUIRE(result->ok());
    CHECK(async_state.messages[2].text() == "URL: " + url + "\n\nStill nothing.");
}

TEST_CASE("web_tools options from JSON", "[middleware][web_tools][options]") {
    auto o = boost::json::value_to<web_tools_options>(boost::json::parse(
        R"({"timeout": 5, "max_bytes": 100, "allowed_hosts": ["example.org"], "user_agent": "me"})"));
    CHECK(o.timeout == std::chrono::seconds(5));
    CHECK(o.max_bytes == 100);
    CHECK(o.allowed_hosts == std::vector<std::string>{"example.org"});
    CHECK(boost::json::value_to<web_tools_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<web_tools_options>(boost::json::parse(R"({"timout": 5})")),
                      Catch::Contains("web.timout"));
    CHECK_THROWS_WITH(boost::json::value_to<web_tools_options>(boost::json::parse(R"({"timeout": 0})")),
                      Catch::Contains("web.timeout"));
}

TEST_CASE("make_deep_agent applies the tool policy to the web_tools it is given", "[middleware][web_tools]") {
    auto offered = [](tool_policy policy) {
        scripted_model model({ai_message("ok")});
        deep_agent_options o;
        o.subagents.reset();
        o.policy = std::move(policy);
        auto a = make_deep_agent(model, tool_set{}, std::move(o), web_tools{});
        decltype(a)::state_type state;
        REQUIRE(a.run(state, "hi").ok());
        const auto names = model.requests()[0].tool_names;
        return std::pair(std::find(names.begin(), names.end(), "fetch") != names.end(),
                         std::find(names.begin(), names.end(), "curl") != names.end());
    };
    CHECK(offered({}) == std::pair(true, true));
    tool_policy no_curl;
    no_curl.disabled_tools = {"curl"};
    CHECK(offered(no_curl) == std::pair(true, false));
    tool_policy no_web;
    no_web.disabled_middleware = {"web"};
    CHECK(offered(no_web) == std::pair(false, false));
}
