// DeerFlow's community web tools (web_search, image_search on DuckDuckGo;
// web_fetch on Jina Reader) against an HTTP server on 127.0.0.1 playing each
// service, their answers in DeerFlow's shapes, and their factories reading a
// `tools:` entry.
#include <agentware/middleware/deerflow_web_tools.hpp>

#include "../support/scripted_http_server.hpp"

#include <agentware/detail/python_json.hpp>
#include <agentware/json/reader.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <cstdlib>
#include <string>

using agentware::test::scripted_http_server;
using agentware::test::scripted_response;

namespace deerflow_web_tools_test {

using namespace agentware;

inline scripted_response html(std::string body, int status = 200) {
    scripted_response r;
    r.status = status;
    r.content_type = "text/html; charset=utf-8";
    r.parts = {std::move(body)};
    return r;
}

inline std::string text_of(tool_interface& t, const boost::json::object& args) {
    return t.call(args, tool_runtime{}).text();
}

inline std::size_t code_points(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s)
        n += (c & 0xC0) != 0x80;
    return n;
}

// DuckDuckGo's HTML results page, reduced to what the tool reads: a result
// through DuckDuckGo's redirect, an ad, a direct link and a third result.
inline const char* ddg_page = R"(<html><body>
<div class="result results_links web-result"><div class="links_main result__body">
  <h2 class="result__title"><a rel="nofollow" class="result__a"
     href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fa%3Fx%3D1&amp;rut=f00">Example &amp; A</a></h2>
  <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">The <b>first</b> result.</a>
</div></div>
<div class="result result--ad"><h2 class="result__title"><a class="result__a"
   href="https://duckduckgo.com/y.js?ad_domain=shop.example">Buy now</a></h2>
  <a class="result__snippet" href="#">An ad.</a></div>
<div class="result"><h2 class="result__title"><a class="result__a" href="https://example.com/b">B "quoted"</a></h2>
  <a class="result__snippet" href="https://example.com/b">Second, with ünïcode.</a></div>
<div class="result"><h2 class="result__title"><a class="result__a" href="https://example.net/c">C</a></h2>
  <a class="result__snippet" href="https://example.net/c">Third.</a></div>
</body></html>)";

TEST_CASE("python_json_dumps prints as Python's json.dumps", "[deerflow_web_tools]") {
    const auto v = boost::json::parse(R"({"a": [1, "x", true, null], "b": {}, "c": []})");
    CHECK(detail::python_json_dumps(v) == R"({"a": [1, "x", true, null], "b": {}, "c": []})");
    CHECK(detail::python_json_dumps(v, 2) == "{\n  \"a\": [\n    1,\n    \"x\",\n    true,\n    null\n  ],\n"
                                             "  \"b\": {},\n  \"c\": []\n}");
}

TEST_CASE("web_search: DuckDuckGo's results in DeerFlow's JSON", "[deerflow_web_tools]") {
    scripted_http_server server;
    ddg_web_search_options o;
    o.base_url = server.base_url("");
    auto tool = make_ddg_web_search_tool(o);
    CHECK(tool->schema().name == "web_search");

    server.push(html(ddg_page));
    const std::string out = text_of(*tool, {{"query", "agentware test"}, {"max_results", 2}});
    CHECK(out == R"({
  "query": "agentware test",
  "total_results": 2,
  "results": [
    {
      "title": "Example & A",
      "url": "https://example.org/a?x=1",
      "content": "The first result."
    },
    {
      "title": "B \"quoted\"",
      "url": "https://example.com/b",
      "content": "Second, with ünïcode."
    }
  ]
})");
    const auto req = server.requests().back();
    CHECK(req.method == "POST");
    CHECK(req.target == "/html/");
    CHECK(req.header("content-type") == "application/x-www-form-urlencoded");
    CHECK(req.body == "q=agentware+test&b=&kl=wt-wt&kp=-1");

    // Without max_results, five at most (here the three there are).
    server.push(html(ddg_page));
    auto all = boost::json::parse(text_of(*tool, {{"query", "q"}}));
    CHECK(all.at("total_results") == 3);

    // No results, and a failed search, read as DeerFlow's "No results found".
    server.push(html("<html><body>No results.</body></html>"));
    CHECK(text_of(*tool, {{"query", "nothing"}}) == R"({"error": "No results found", "query": "nothing"})");
    server.push(html("busy", 503));
    auto failed = tool->call({{"query", "busy"}}, tool_runtime{});
    CHECK(failed.text() == R"({"error": "No results found", "query": "busy"})");
    CHECK(failed.metadata.at("search_error") == "HTTP 503");
}

TEST_CASE("image_search: DuckDuckGo's token, then its image API", "[deerflow_web_tools]") {
    scripted_http_server server;
    ddg_image_search_options o;
    o.base_url = server.base_url("");
    o.safesearch = "off";
    auto tool = make_ddg_image_search_tool(o);
    CHECK(tool->schema().name == "image_search");

    server.push(html(R"(<html><script>var x = {vqd="4-12345",b:1};</script></html>)"));
    server.push(scripted_response::json(R"({"results": [
        {"title": "Cat", "image": "https://img.example/1.jpg", "thumbnail": "https://t.example/1.jpg", "url": "u"},
        {"title": "Cats", "image": "https://img.example/2.jpg", "thumbnail": "https://t.example/2.jpg"},
        {"title": "More", "image": "https://img.example/3.jpg", "thumbnail": "https://t.example/3.jpg"}]})"));
    const std::string out =
        text_of(*tool, {{"query", "cats"}, {"max_results", 2}, {"size", "Large"}, {"type_image", "photo"}});
    CHECK(out == R"({
  "query": "cats",
  "total_results": 2,
  "results": [
    {
      "title": "Cat",
      "image_url": "https://img.example/1.jpg",
      "thumbnail_url": "https://t.example/1.jpg"
    },
    {
      "title": "Cats",
      "image_url": "https://img.example/2.jpg",
      "thumbnail_url": "https://t.example/2.jpg"
    }
  ],
  "usage_hint": "Use the 'image_url' values as reference images in image generation. Download them first if needed."
})");
    const auto reqs = server.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].target == "/?q=cats");
    CHECK(reqs[1].target == "/i.js?l=wt-wt&o=json&q=cats&vqd=4-12345&f=%2CLarge%2C%2Cphoto%2C%2C&p=-1");

    // No token: DeerFlow's "No images found".
    server.push(html("<html>no token</html>"));
    CHECK(text_of(*tool, {{"query", "dogs"}}) == R"({"error": "No images found", "query": "dogs"})");
}

TEST_CASE("web_fetch: Jina Reader's page, as DeerFlow frames it", "[deerflow_web_tools]") {
    scripted_http_server server;
    jina_web_fetch_options o;
    o.base_url = server.base_url("");
    auto tool = make_jina_web_fetch_tool(o);
    CHECK(tool->schema().name == "web_fetch");

    ::unsetenv("JINA_API_KEY");
    server.push(html("<html><head><title>Doc</title></head><body><h1>Intro</h1><p>Hello <b>world</b>.</p>"
                     "</body></html>"));
    CHECK(text_of(*tool, {{"url", "https://example.com/page"}}) == "# Doc\n\n# Intro\n\nHello world.");
    auto req = server.requests().back();
    CHECK(req.method == "POST");
    CHECK(req.target == "/");
    CHECK(req.header("x-return-format") == "html");
    CHECK(req.header("x-timeout") == "10");
    CHECK(req.header("authorization").empty());
    CHECK(req.json() == boost::json::parse(R"({"url": "https://example.com/page"})"));

    // The key from the environment; no title and no text read as DeerFlow's.
    ::setenv("JINA_API_KEY", "jk-test", 1);
    server.push(html("<html><body></body></html>"));
    CHECK(text_of(*tool, {{"url", "https://example.com/empty"}}) ==
          "# Untitled\n\nNo content could be extracted from this page");
    CHECK(server.requests().back().header("authorization") == "Bearer jk-test");
    ::unsetenv("JINA_API_KEY");

    // Cut at 4096 characters (code points, as Python slices).
    server.push(html("<p>" + std::string(3000, 'a') + " " + [] {
        std::string s;
        for (int i = 0; i < 2000; ++i)
            s += "\xC3\xA9";
        return s;
    }() + "</p>"));
    const std::string long_text = text_of(*tool, {{"url", "https://example.com/long"}});
    CHECK(code_points(long_text) == 4096);
    CHECK(long_text.ends_with("\xC3\xA9"));

    // Jina's failures, in DeerFlow's texts.
    server.push(html("blocked", 451));
    CHECK(text_of(*tool, {{"url", "https://example.com/x"}}) ==
          "Error: Jina API returned status 451: blocked");
    server.push(html("  \n"));
    CHECK(text_of(*tool, {{"url", "https://example.com/x"}}) == "Error: Jina API returned empty response");
    std::string closed;
    {
        scripted_http_server gone;
        closed = gone.base_url("");
    }
    o.base_url = closed;
    auto unreachable = make_jina_web_fetch_tool(o);
    CHECK(text_of(*unreachable, {{"url", "https://example.com/x"}})
              .starts_with("Error: Request to Jina API failed: "));
}

TEST_CASE("DeerFlow's community tools by their use: names, configured by their entry",
          "[deerflow_web_tools]") {
    const auto tools = deerflow_community_tools();
    REQUIRE(tools.size() == 3);
    CHECK(tools.contains("deerflow.community.ddg_search.tools:web_search_tool"));
    CHECK(tools.contains("deerflow.community.jina_ai.tools:web_fetch_tool"));
    CHECK(tools.contains("deerflow.community.image_search.tools:image_search_tool"));

    // The entry's max_results wins over the model's (as DeerFlow's config does).
    scripted_http_server server;
    const auto& search = tools.at("deerflow.community.ddg_search.tools:web_search_tool");
    auto tool = search(boost::json::object{{"name", "web_search"},
                                           {"group", "web"},
                                           {"use", "deerflow.community.ddg_search.tools:web_search_tool"},
                                           {"max_results", 1},
                                           {"safesearch", "on"},
                                           {"base_url", server.base_url("")}},
                       "tools[0]");
    server.push(html(ddg_page));
    CHECK(boost::json::parse(text_of(*tool, {{"query", "q"}, {"max_results", 5}})).at("total_results") == 1);
    CHECK(server.requests().back().body.ends_with("&kp=1"));

    // DeerFlow's stock entries (timeout for web_fetch, max_results for the others) are read.
    CHECK(tools
              .at("deerflow.community.jina_ai.tools:web_fetch_tool")(
                  boost::json::object{{"name", "web_fetch"}, {"timeout", 10}}, "tools[1]")
              ->schema()
              .name == "web_fetch");

    // A misspelt or mistyped setting is an error naming it.
    auto error_of = [&](const boost::json::object& entry) {
        try {
            search(entry, "tools[0]");
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error_of({{"max_reslts", 3}}).starts_with("tools[0].max_reslts: unknown key (known: "));
    CHECK(error_of({{"max_results", "five"}}).starts_with("tools[0].max_results: expected"));
    CHECK(error_of({{"backend", "bing"}}) ==
          R"(tools[0].backend: expected "auto" or "duckduckgo", got "bing")");
}

} // namespace deerflow_web_tools_test
