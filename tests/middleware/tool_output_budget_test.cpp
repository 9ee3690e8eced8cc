// tool_output_budget: externalising big results (a 50 MB one included),
// binary output, the truncation fallback when saving fails, exempt tools and
// per-tool thresholds, and cutting oversized history in the request.
#include "deerflow_support.hpp"

#include <agentware/middleware/tool_output_budget.hpp>

#include <catch2/catch.hpp>

using namespace agentware;
namespace fs = std::filesystem;

namespace {

// A tool that answers with `text`.
auto big_tool(std::string name, std::shared_ptr<const std::string> text) {
    return make_tool(std::move(name), "Big output.", R"({"type":"object","properties":{}})",
                     [text](const boost::json::object&) { return *text; });
}

struct budget_run {
    dftest::sandbox_env env;
    std::vector<recorded_request> requests;
    std::vector<message> messages;

    void run(std::string tool, std::string text, tool_output_budget mw = {}, bool with_thread = true) {
        auto shared = std::make_shared<const std::string>(std::move(text));
        scripted_model model({test::calls({test::call("c1", tool)}), ai_message("done")});
        tool_set tools;
        tools.add(share_tool(big_tool(tool, shared)));
        auto a = make_agent(model, std::move(tools), std::move(mw));
        decltype(a)::state_type state;
        if (with_thread) get<thread_data_field>(state) = env.paths;
        auto r = a.run(state, "go");
        REQUIRE(r.reason == stop_reason::finished);
        requests = model.requests();
        messages = state.messages;
    }
    fs::path saved(const message& m) const {
        std::string virt(m.metadata.at("tool_output").at("path").as_string());
        REQUIRE(virt.starts_with("/mnt/user-data/outputs/.tool-results/"));
        return fs::path(env.paths.outputs_path) / virt.substr(std::string("/mnt/user-data/outputs/").size());
    }
};

} // namespace

TEST_CASE("a result over the threshold is saved and replaced by a synopsis",
          "[middleware][tool_output_budget]") {
    budget_run t;
    std::string text = "HEAD" + std::string(20000, 'x') + "TAIL";
    t.run("web_search", text);
    const message& m = t.messages.at(2);
    const std::string shown = m.text();
    CHECK(shown.size() < 4000);
    CHECK(shown.find("20008 characters of text") != std::string::npos);
    CHECK(shown.find("HEAD") != std::string::npos);
    CHECK(shown.find("TAIL") != std::string::npos);
    CHECK(shown.find("read_file") != std::string::npos);
    const fs::path file = t.saved(m);
    CHECK(file.filename().string().starts_with("web_search-"));
    CHECK(file.extension() == ".txt");
    CHECK(file.stem().string().size() == std::string("web_search-").size() + 12);
    CHECK(dftest::read(file) == text);
    CHECK(shown.find(std::string(m.metadata.at("tool_output").at("path").as_string())) != std::string::npos);
}

TEST_CASE("a 50 MB result is saved whole, the model sees a few KB", "[middleware][tool_output_budget]") {
    budget_run t;
    std::string text;
    text.reserve(50 * 1024 * 1024 + 64);
    text += "{\"rows\":[";
    while (text.size() < 50 * 1024 * 1024)
        text += "\"0123456789abcdef0123456789abcdef\",";
    text += "\"end\"]}";
    const std::size_t size = text.size();
    t.run("query_db", std::move(text));
    const message& m = t.messages.at(2);
    CHECK(m.text().size() < 4000);
    CHECK(m.text().find("characters of JSON") != std::string::npos);
    const fs::path file = t.saved(m);
    CHECK(file.extension() == ".json");
    CHECK(fs::file_size(file) == size);
    CHECK(t.requests.at(1).messages.at(2).text() == m.text());
}

TEST_CASE("binary output is saved without samples", "[middleware][tool_output_budget]") {
    budget_run t;
    std::string bin;
    for (int i = 0; i < 20000; ++i)
        bin += static_cast<char>(i % 256);
    t.run("bash", bin);
    const message& m = t.messages.at(2);
    CHECK(m.text().find("binary data") != std::string::npos);
    CHECK(m.text().find("first") == std::string::npos);
    CHECK(t.saved(m).extension() == ".bin");
    CHECK(dftest::read(t.saved(m)) == bin);
    // The text the model gets is valid UTF-8.
    CHECK(detail::is_utf8_text(m.text()));
}

TEST_CASE("when saving fails, results over the fallback limit are cut to head and tail",
          "[middleware][tool_output_budget]") {
    budget_run t;
    const std::string text = std::string(10000, 'h') + std::string(20000, 'm') + std::string(5000, 't');
    t.run("web_fetch", text, {}, false); // no thread directories: nowhere to save
    const message& m = t.messages.at(2);
    CHECK(m.text() ==
          std::string(8000, 'h') + "\n\n... [24000 characters omitted] ...\n\n" + std::string(3000, 't'));
    CHECK(m.metadata.at("tool_output").at("truncated") == true);
    // Between the two limits nothing can be done without saving: left whole.
    budget_run u;
    u.run("web_fetch", std::string(20000, 'a'), {}, false);
    CHECK(u.messages.at(2).text().size() == 20000);
    // Saving fails because the outputs directory is a file.
    budget_run v;
    fs::remove_all(v.env.paths.outputs_path);
    dftest::write(v.env.paths.outputs_path, "not a dir");
    v.run("web_fetch", text);
    CHECK(v.messages.at(2).metadata.at("tool_output").at("truncated") == true);
}

TEST_CASE("exempt tools and per-tool thresholds", "[middleware][tool_output_budget]") {
    budget_run t;
    t.run("read_file", std::string(50000, 'r'));
    CHECK(t.messages.at(2).text().size() == 50000);
    tool_output_budget_options o;
    o.tool_overrides["tiny"] = 10;
    budget_run u;
    u.run("tiny", std::string(11, 'x'), tool_output_budget(o));
    CHECK(u.messages.at(2).metadata.contains("tool_output"));
    // Characters, not bytes: 11000 three-byte characters are under the 12000 threshold.
    std::string wide;
    for (int i = 0; i < 11000; ++i)
        wide += "€";
    budget_run w;
    w.run("web_search", wide);
    CHECK(w.messages.at(2).text() == wide);
}

TEST_CASE("oversized tool messages of the history are cut in the request only",
          "[middleware][tool_output_budget]") {
    scripted_model model({ai_message("ok")});
    auto a = make_agent(model, tool_set{}, tool_output_budget{});
    decltype(a)::state_type state;
    state.messages.push_back(human_message("earlier"));
    state.messages.push_back(test::calls({test::call("c0", "bash")}));
    state.messages.push_back(tool_message("c0", "bash", std::string(40000, 'b')));
    state.messages.push_back(ai_message("seen"));
    auto r = a.run(state, "next");
    REQUIRE(r.reason == stop_reason::finished);
    const std::string sent = model.requests().at(0).messages.at(2).text();
    CHECK(sent.size() < 12000);
    CHECK(sent.find("[29000 characters omitted]") != std::string::npos);
    CHECK(state.messages.at(2).text().size() == 40000); // stored whole
}

TEST_CASE("tool_output options in JSON", "[middleware][tool_output_budget][options]") {
    auto o = boost::json::value_to<tool_output_budget_options>(boost::json::parse(
        R"({"externalize_min_chars":100,"tool_overrides":{"bash":500},"exempt_tools":[],"storage_subdir":"big"})"));
    CHECK(o.externalize_min_chars == 100);
    CHECK(o.tool_overrides.at("bash") == 500);
    CHECK(boost::json::value_to<tool_output_budget_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(
        boost::json::value_to<tool_output_budget_options>(boost::json::parse(R"({"storage_subdir":"../x"})")),
        Catch::Contains("tool_output.storage_subdir"));
    CHECK_THROWS_WITH(boost::json::value_to<tool_output_budget_options>(
                          boost::json::parse(R"({"tool_overrides":{"a":"b"}})")),
                      Catch::Contains("tool_output.tool_overrides.a"));
    CHECK_THROWS_WITH(
        boost::json::value_to<tool_output_budget_options>(boost::json::parse(R"({"enable":true})")),
        Catch::Contains("tool_output.enable"));
}

namespace {

// An ai message calling write_file (or another file tool) on `path`.
message file_call(std::string id, std::string tool, std::string path, std::string content = {}) {
    boost::json::object args{{"path", std::move(path)}};
    if (!content.empty()) args["content"] = std::move(content);
    return ai_message("", {tool_call{std::move(id), std::move(tool), std::move(args)}});
}

message file_result(std::string id, std::string tool, bool ok = true) {
    message m = tool_message(std::move(id), std::move(tool), ok ? "ok" : "Error: disk full");
    if (!ok) m.status = tool_status::error;
    return m;
}

std::string content_arg(const message& m) {
    return std::string(m.tool_calls.at(0).args.at("content").as_string());
}

// The history of the elision tests, and what the model was sent after it.
struct write_history {
    std::vector<message> stored;
    std::vector<message> sent;

    explicit write_history(tool_output_budget_options o) {
        scripted_model model({ai_message("ok")});
        auto a = make_agent(model, tool_set{}, tool_output_budget(std::move(o)));
        decltype(a)::state_type state;
        auto& h = state.messages;
        h.push_back(human_message("start"));
        h.push_back(file_call("w1", "write_file", "/mnt/user-data/outputs/a.md", std::string(3000, 'a')));
        h.push_back(file_result("w1", "write_file"));
        h.push_back(file_call("r1", "read_file", "/mnt/user-data/outputs/a.md"));
        h.push_back(file_result("r1", "read_file"));
        h.push_back(file_call("w2", "write_file", "/mnt/user-data//outputs/./a.md", std::string(2500, 'b')));
        h.push_back(file_result("w2", "write_file"));
        h.push_back(file_call("w3", "write_file", "/mnt/user-data/outputs/b.md", std::string(4000, 'c')));
        h.push_back(file_result("w3", "write_file", false)); // failed
        h.push_back(file_call("w4", "write_file", "/mnt/user-data/outputs/c.md", "short"));
        h.push_back(file_result("w4", "write_file"));
        h.push_back(file_call("s1", "str_replace", "/mnt/user-data/outputs/a.md"));
        h.push_back(file_result("s1", "str_replace"));
        h.push_back(file_call("r2", "read_file", "/mnt/user-data/outputs/b.md"));
        h.push_back(file_result("r2", "read_file"));
        h.push_back(file_call("r3", "read_file", "/mnt/user-data/outputs/c.md"));
        h.push_back(file_result("r3", "read_file"));
        h.push_back(ai_message("written"));
        auto r = a.run(state, "next");
        REQUIRE(r.reason == stop_reason::finished);
        stored = state.messages;
        sent = model.requests().at(0).messages;
    }
};

} // namespace

TEST_CASE("superseded write_file content is elided in the request only", "[middleware][tool_output_budget]") {
    tool_output_budget_options o;
    o.keep_recent_writes = 0;
    write_history t(o);
    const std::string elided_a =
        "[content elided: 3000 chars; this write_file call succeeded and the file was read or modified again "
        "afterwards, so the on-disk file is the current version; call read_file on its path to see it]";
    CHECK(content_arg(t.sent.at(1)) == elided_a);
    CHECK(content_arg(t.sent.at(5)).starts_with("[content elided: 2500 chars;")); // str_replace later
    CHECK(t.sent.at(5).tool_calls.at(0).args.at("path") == "/mnt/user-data//outputs/./a.md");
    CHECK(content_arg(t.sent.at(7)) == std::string(4000, 'c')); // the write failed
    CHECK(content_arg(t.sent.at(9)) == "short");                // under superseded_write_min_chars
    // The stored history keeps what the model wrote.
    CHECK(content_arg(t.stored.at(1)) == std::string(3000, 'a'));
    CHECK(content_arg(t.stored.at(5)) == std::string(2500, 'b'));

    tool_output_budget_options small;
    small.keep_recent_writes = 0;
    small.superseded_write_min_chars = 0;
    CHECK(content_arg(write_history(small).sent.at(9)).starts_with("[content elided: 5 chars;"));
}

TEST_CASE("the newest successful writes keep their content", "[middleware][tool_output_budget]") {
    // Successful writes are w1, w2 and w4 (w3 failed): the default keeps w4.
    write_history d(tool_output_budget_options{});
    CHECK(content_arg(d.sent.at(1)).starts_with("[content elided: 3000 chars;"));
    CHECK(content_arg(d.sent.at(5)).starts_with("[content elided: 2500 chars;"));
    tool_output_budget_options two;
    two.keep_recent_writes = 2; // w2 and w4 kept, though w2 was superseded
    write_history t(two);
    CHECK(content_arg(t.sent.at(1)).starts_with("[content elided: 3000 chars;"));
    CHECK(content_arg(t.sent.at(5)) == std::string(2500, 'b'));
    tool_output_budget_options off;
    off.elide_superseded_writes = false;
    write_history n(off);
    CHECK(content_arg(n.sent.at(1)) == std::string(3000, 'a'));
    CHECK(content_arg(n.sent.at(5)) == std::string(2500, 'b'));
}

TEST_CASE("a write is elided from the round after the read that supersedes it",
          "[middleware][tool_output_budget]") {
    scripted_model model(
        {test::calls({test::call("r1", "read_file", R"({"path":"/w/a.md"})")}), ai_message("ok")});
    tool_set tools;
    tools.add(share_tool(make_tool("read_file", "Reads.", R"({"type":"object","properties":{}})",
                                   [](const boost::json::object&) { return std::string("the file"); })));
    tool_output_budget_options o;
    o.keep_recent_writes = 0;
    auto a = make_agent(model, std::move(tools), tool_output_budget(o));
    decltype(a)::state_type state;
    state.messages.push_back(file_call("w1", "write_file", "/w/a.md", std::string(3000, 'a')));
    state.messages.push_back(file_result("w1", "write_file"));
    state.messages.push_back(file_call("w2", "write_file", "/w/b.md", std::string(3000, 'b')));
    state.messages.push_back(file_result("w2", "write_file"));
    for (std::size_t i = 0; i < state.messages.size(); ++i)
        state.messages[i].id = "h" + std::to_string(i); // indexed incrementally across rounds
    auto r = a.run(state, "go");
    REQUIRE(r.reason == stop_reason::finished);
    const auto& rounds = model.requests();
    REQUIRE(rounds.size() == 2);
    CHECK(content_arg(rounds.at(0).messages.at(0)) == std::string(3000, 'a')); // not yet superseded
    CHECK(content_arg(rounds.at(1).messages.at(0)).starts_with("[content elided: 3000 chars;"));
    CHECK(content_arg(rounds.at(1).messages.at(2)) == std::string(3000, 'b')); // b.md never touched again
    CHECK(content_arg(state.messages.at(0)) == std::string(3000, 'a'));
}

TEST_CASE("superseded-write options in JSON", "[middleware][tool_output_budget][options]") {
    tool_output_budget_options d;
    CHECK(d.elide_superseded_writes);
    CHECK(d.superseded_write_min_chars == 2000);
    CHECK(d.keep_recent_writes == 1);
    auto o = boost::json::value_to<tool_output_budget_options>(boost::json::parse(
        R"({"elide_superseded_writes":false,"superseded_write_min_chars":10,"keep_recent_writes":3})"));
    CHECK_FALSE(o.elide_superseded_writes);
    CHECK(o.superseded_write_min_chars == 10);
    CHECK(o.keep_recent_writes == 3);
    CHECK(boost::json::value_to<tool_output_budget_options>(boost::json::value_from(o)) == o);
    CHECK_THROWS_WITH(boost::json::value_to<tool_output_budget_options>(
                          boost::json::parse(R"({"keep_recent_writes":"all"})")),
                      Catch::Contains("tool_output.keep_recent_writes"));
    CHECK_THROWS_WITH(boost::json::value_to<tool_output_budget_options>(
                          boost::json::parse(R"({"elide_superseded_writes":1})")),
                      Catch::Contains("tool_output.elide_superseded_writes"));
}
