// DeerFlow's gateway routes over HTTP on loopback, as its web UI calls them:
// models without secrets, skill switches written to extensions_config.json,
// memory facts, multipart uploads into the thread's folder, artifacts with
// their types and every traversal refused, MCP servers with secrets masked,
// and the LangGraph API under /api/langgraph.
#include "server_support.hpp"

#include <agentware/server/deerflow_gateway.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <mutex>
#include <thread>

namespace server_test {
namespace gateway_test {

namespace fs = std::filesystem;
using boost::json::object;

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

boost::json::object read_json(const fs::path& p) { return boost::json::parse(read_file(p)).as_object(); }

/// A server with the gateway over a configuration whose folders are all in `dir`.
struct gateway_fixture {
    temp_dir dir;
    server::file_store store;
    std::unique_ptr<server::agent_server> server;
    std::thread thread;
    fs::path extensions = dir.path / "extensions_config.json";
    fs::path home = dir.path / "home";
    struct change_log { // written on the server's threads
        std::mutex mutex;
        std::vector<fs::path> files;
        std::vector<fs::path> get() {
            std::lock_guard lock(mutex);
            return files;
        }
    };
    std::shared_ptr<change_log> changes = std::make_shared<change_log>();

    explicit gateway_fixture(object extra = {}) {
        object config{
            {"models", boost::json::array{object{{"name", "fast"},
                                                 {"use", "langchain_openai:ChatOpenAI"},
                                                 {"model", "gpt-4o-mini"},
                                                 {"display_name", "Fast"},
                                                 {"api_key", "sk-very-secret"},
                                                 {"base_url", "https://user:hunter2@models.example/v1"},
                                                 {"supports_vision", true}},
                                          object{{"name", "deep"},
                                                 {"model", "claude"},
                                                 {"description", "Thinks first"},
                                                 {"supports_thinking", true},
                                                 {"supports_reasoning_effort", true},
                                                 {"api_key", "$ANTHROPIC_API_KEY"}}}},
            {"token_usage", object{{"enabled", true}}},
            {"thread_data", object{{"base_dir", home.string()}}},
            {"memory", object{{"backend_config", object{{"storage_path", (dir.path / "memory").string()}}}}},
            {"skills", object{{"path", "skills"}}},
            {"uploads", object{{"max_files", 3}}}};
        for (const auto& kv : extra)
            config[kv.key()] = kv.value();
        server::server_options so;
        so.runs.workers = 4;
        server = std::make_unique<server::agent_server>(store, std::vector{agent_assistant()}, so);
        server::deerflow_gateway_options o;
        o.config = std::move(config);
        o.config_path = (dir.path / "config.yaml").string();
        o.on_extensions_changed = [changes = changes](const fs::path& file) {
            std::lock_guard lock(changes->mutex);
            changes->files.push_back(file);
        };
        // The routes are added before the server's threads start.
        server::add_deerflow_gateway(server->routes(), std::move(o));
        server->listen();
        thread = std::thread([this] { server->run(); });
    }
    ~gateway_fixture() {
        server->stop();
        thread.join();
    }
    unsigned short port() const { return server->port(); }
    fs::path user_data(const std::string& thread) const {
        return home / "users" / "default" / "threads" / thread / "user-data";
    }
};

struct upload_file {
    std::string filename, content;
};

reply upload(unsigned short port, const std::string& target, const std::vector<upload_file>& files) {
    namespace http = boost::beast::http;
    const std::string boundary = "----agentwareBoundary7MA4YWxk";
    std::string body;
    for (const auto& f : files)
        body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"files\"; filename=\"" +
                f.filename + "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + f.content + "\r\n";
    body += "--" + boundary + "--\r\n";
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "multipart/form-data; boundary=" + boundary);
    req.body() = body;
    req.prepare_payload();
    http::write(stream, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    reply r;
    r.status = res.result_int();
    r.body = res.body();
    return r;
}

std::string detail_of(const reply& r) { return std::string(r.json().at("detail").as_string()); }

TEST_CASE("gateway: models as configured, never their keys or URLs, features", "[server][gateway]") {
    gateway_fixture g;
    auto r = call(g.port(), "GET", "/api/models");
    REQUIRE(r.status == 200);
    CHECK(r.body.find("sk-very-secret") == std::string::npos);
    CHECK(r.body.find("hunter2") == std::string::npos);
    CHECK(r.body.find("ANTHROPIC_API_KEY") == std::string::npos);
    CHECK(r.body.find("base_url") == std::string::npos);
    const auto doc = r.json().as_object();
    CHECK(doc.at("token_usage").at("enabled") == true);
    const auto& models = doc.at("models").as_array();
    REQUIRE(models.size() == 2);
    CHECK(models[0].at("name") == "fast");
    CHECK(models[0].at("model") == "gpt-4o-mini");
    CHECK(models[0].at("display_name") == "Fast");
    CHECK(models[0].at("description").is_null());
    CHECK(models[0].at("supports_vision") == true);
    CHECK(models[0].at("supports_thinking") == false);
    CHECK(models[1].at("supports_thinking") == true);
    CHECK(models[1].at("supports_reasoning_effort") == true);

    auto one = call(g.port(), "GET", "/api/models/deep");
    REQUIRE(one.status == 200);
    CHECK(one.json().at("description") == "Thinks first");
    auto missing = call(g.port(), "GET", "/api/models/nope");
    CHECK(missing.status == 404);
    CHECK(detail_of(missing) == "Model 'nope' not found");

    auto features = call(g.port(), "GET", "/api/features");
    REQUIRE(features.status == 200);
    CHECK(features.json().at("agents_api").at("enabled") == false);
}

TEST_CASE("gateway: a skill switched off is off in extensions_config.json and the catalog",
          "[server][gateway]") {
    gateway_fixture g;
    write_file(
        g.dir.path / "skills/public/deep-research/SKILL.md",
        "---\nname: deep-research\ndescription: Research a topic in depth.\nlicense: MIT\n---\n\nSteps.\n");
    write_file(g.dir.path / "skills/custom/my-notes/SKILL.md",
               "---\nname: my-notes\ndescription: Keep notes.\n---\n\nBody.\n");
    write_file(g.extensions, R"({"mcpServers": {"fs": {"command": "npx", "args": ["x"]}}, "other": 1})");

    auto list = call(g.port(), "GET", "/api/skills");
    REQUIRE(list.status == 200);
    const auto skills = list.json().at("skills").as_array();
    REQUIRE(skills.size() == 2);
    CHECK(skills[0].at("name") == "deep-research");
    CHECK(skills[0].at("category") == "public");
    CHECK(skills[0].at("license") == "MIT");
    CHECK(skills[0].at("enabled") == true);
    CHECK(skills[0].at("editable") == false);
    CHECK(skills[1].at("category") == "custom");
    CHECK(skills[1].at("editable") == true);

    auto off = call(g.port(), "PUT", "/api/skills/deep-research", R"({"enabled": false})");
    REQUIRE(off.status == 200);
    CHECK(off.json().at("enabled") == false);
    const auto ext = read_json(g.extensions);
    CHECK(ext.at("skills").at("deep-research").at("enabled") == false);
    CHECK(ext.at("mcpServers").at("fs").at("command") == "npx"); // the rest of the file is kept
    CHECK(ext.at("other") == 1);
    REQUIRE(g.changes->get().size() == 1); // the program is told, with the file
    CHECK(g.changes->get().at(0) == g.extensions);
    skills_options so;
    so.path = (g.dir.path / "skills").string();
    const auto catalog = load_skills(so, read_skill_states(boost::json::value(ext)));
    REQUIRE(catalog.skills.size() == 2);
    CHECK_FALSE(catalog.skills[0].enabled);
    CHECK(call(g.port(), "GET", "/api/skills/deep-research").json().at("enabled") == false);

    CHECK(call(g.port(), "POST", "/api/skills/deep-research/enable").json().at("enabled") == true);
    CHECK(read_json(g.extensions).at("skills").at("deep-research").at("enabled") == true);
    CHECK(call(g.port(), "POST", "/api/skills/my-notes/disable").json().at("enabled") == false);

    auto unknown = call(g.port(), "PUT", "/api/skills/nope", R"({"enabled": false})");
    CHECK(unknown.status == 404);
    CHECK(g.changes->get().size() == 3);
    CHECK(detail_of(unknown) == "Skill 'nope' not found");
    CHECK(call(g.port(), "PUT", "/api/skills/my-notes", R"({"enabled": "no"})").status == 422);
}

TEST_CASE("gateway: memory facts are added, changed and removed in the memory files", "[server][gateway]") {
    gateway_fixture g;
    auto empty = call(g.port(), "GET", "/api/memory");
    REQUIRE(empty.status == 200);
    CHECK(empty.json().at("facts").as_array().empty());
    CHECK(empty.json().at("user").at("workContext").at("summary") == "");

    auto added = call(g.port(), "POST", "/api/memory/facts",
                      R"({"content": "Prefers tea", "category": "preference"})");
    REQUIRE(added.status == 200);
    const auto facts = added.json().at("facts").as_array();
    REQUIRE(facts.size() == 1);
    const std::string id(facts[0].at("id").as_string());
    CHECK(facts[0].at("content") == "Prefers tea");
    CHECK(facts[0].at("confidence") == 0.5);
    CHECK(facts[0].at("source") == "manual");
    // What the memory middleware reads.
    memory_storage storage(g.dir.path / "memory");
    auto stored = storage.load("default", "");
    REQUIRE(stored.facts.size() == 1);
    CHECK(stored.facts[0].id == id);
    CHECK(stored.facts[0].category == "preference");

    CHECK(call(g.port(), "POST", "/api/memory/facts", R"({"content": " Prefers tea "})").status == 409);
    auto blank = call(g.port(), "POST", "/api/memory/facts", R"({"content": "   "})");
    CHECK(blank.status == 400);
    CHECK(detail_of(blank) == "Memory fact content cannot be empty.");
    CHECK(call(g.port(), "POST", "/api/memory/facts", R"({"content": "x", "confidence": 2})").status == 400);
    CHECK(call(g.port(), "POST", "/api/memory/facts", R"({"category": "x"})").status == 422);

    auto patched = call(g.port(), "PATCH", "/api/memory/facts/" + id,
                        R"({"content": "Prefers green tea", "confidence": 0.9})");
    REQUIRE(patched.status == 200);
    CHECK(patched.json().at("facts").at(0).at("content") == "Prefers green tea");
    CHECK(patched.json().at("facts").at(0).at("category") == "preference");
    CHECK(storage.load("default", "").facts.at(0).confidence == 0.9);

    auto missing = call(g.port(), "PATCH", "/api/memory/facts/fact_missing", R"({"content": "y"})");
    CHECK(missing.status == 404);
    CHECK(detail_of(missing) == "Memory fact 'fact_missing' not found.");
    CHECK(call(g.port(), "DELETE", "/api/memory/facts/fact_missing").status == 404);

    auto removed = call(g.port(), "DELETE", "/api/memory/facts/" + id);
    REQUIRE(removed.status == 200);
    CHECK(removed.json().at("facts").as_array().empty());
    CHECK(storage.load("default", "").facts.empty());

    // Import replaces, export gives it back; config hides the memory model's key.
    auto imported = call(g.port(), "POST", "/api/memory/import",
                         R"({"user": {"workContext": {"summary": "Builds agents", "updatedAt": "2026-01-01"}},
                             "facts": [{"id": "fact_a1", "content": "Uses C++", "category": "context", "confidence": 0.8}]})");
    REQUIRE(imported.status == 200);
    auto exported = call(g.port(), "GET", "/api/memory/export").json();
    CHECK(exported.at("user").at("workContext").at("summary") == "Builds agents");
    CHECK(exported.at("facts").at(0).at("id") == "fact_a1");
    CHECK(call(g.port(), "DELETE", "/api/memory").json().at("facts").as_array().empty());
    auto config = call(g.port(), "GET", "/api/memory/config");
    REQUIRE(config.status == 200);
    CHECK(config.json().at("mode") == "middleware");
    CHECK(call(g.port(), "GET", "/api/memory/status").json().at("data").at("facts").as_array().empty());
}

TEST_CASE("gateway: uploads land in the thread's uploads folder, are listed and removed",
          "[server][gateway]") {
    gateway_fixture g;
    const fs::path uploads = g.user_data("t-1") / "uploads";
    auto r = upload(
        g.port(), "/api/threads/t-1/uploads",
        {{"notes.txt", "first"}, {"notes.txt", "second\r\n--not a boundary"}, {"data.csv", "a,b\n1,2\n"}});
    REQUIRE(r.status == 200);
    const auto doc = r.json().as_object();
    CHECK(doc.at("success") == true);
    CHECK(doc.at("message") == "Successfully uploaded 3 file(s)");
    const auto& files = doc.at("files").as_array();
    REQUIRE(files.size() == 3);
    CHECK(files[0].at("filename") == "notes.txt");
    CHECK(files[1].at("filename") == "notes_1.txt");
    CHECK(files[1].at("original_filename") == "notes.txt");
    CHECK(files[1].at("virtual_path") == "/mnt/user-data/uploads/notes_1.txt");
    CHECK(files[1].at("artifact_url") == "/api/threads/t-1/artifacts/mnt/user-data/uploads/notes_1.txt");
    CHECK(files[2].at("size") == 8);
    CHECK(read_file(uploads / "notes.txt") == "first");
    CHECK(read_file(uploads / "notes_1.txt") == "second\r\n--not a boundary");

    auto list = call(g.port(), "GET", "/api/threads/t-1/uploads/list");
    REQUIRE(list.status == 200);
    CHECK(list.json().at("count") == 3);
    CHECK(list.json().at("files").at(0).at("filename") == "data.csv");
    CHECK(list.json().at("files").at(0).at("extension") == ".csv");
    CHECK(call(g.port(), "GET", "/api/threads/t-1/uploads/limits").json().at("max_files") == 3);

    auto del = call(g.port(), "DELETE", "/api/threads/t-1/uploads/notes.txt");
    REQUIRE(del.status == 200);
    CHECK(del.json().at("message") == "Deleted notes.txt");
    CHECK_FALSE(fs::exists(uploads / "notes.txt"));
    CHECK(call(g.port(), "DELETE", "/api/threads/t-1/uploads/notes.txt").status == 404);
    write_file(g.dir.path / "outside.txt", "keep me");
    CHECK(call(g.port(), "DELETE", "/api/threads/t-1/uploads/..%2F..%2F..%2F..%2F..%2F..%2Foutside.txt")
              .status == 400);
    CHECK(fs::exists(g.dir.path / "outside.txt"));

    // A bad name refuses the whole request: nothing is written.
    auto bad = upload(g.port(), "/api/threads/t-1/uploads", {{"fine.txt", "x"}, {"..", "y"}});
    CHECK(bad.status == 400);
    CHECK(detail_of(bad).find("unsafe") != std::string::npos);
    CHECK_FALSE(fs::exists(uploads / "fine.txt"));
    CHECK(upload(g.port(), "/api/threads/t-1/uploads", {{"a\x01.txt", "x"}}).status == 400);
    // A path is cut to its last component.
    auto pathy = upload(g.port(), "/api/threads/t-1/uploads", {{"../../escape.txt", "z"}});
    REQUIRE(pathy.status == 200);
    CHECK(fs::exists(uploads / "escape.txt"));
    CHECK_FALSE(fs::exists(g.user_data("t-1") / ".." / "escape.txt"));
    CHECK(upload(g.port(), "/api/threads/t-1/uploads", {{"1", "1"}, {"2", "2"}, {"3", "3"}, {"4", "4"}})
              .status == 413);
    CHECK(upload(g.port(), "/api/threads/bad.id/uploads", {{"a.txt", "x"}}).status == 422);
    CHECK(call(g.port(), "POST", "/api/threads/t-1/uploads", R"({"files": []})").status == 422);

    // The thread's local files go with DELETE /api/threads/{id}.
    auto gone = call(g.port(), "DELETE", "/api/threads/t-1");
    REQUIRE(gone.status == 200);
    CHECK(gone.json().at("message") == "Deleted local thread data for t-1");
    CHECK_FALSE(fs::exists(g.user_data("t-1")));
    CHECK(call(g.port(), "DELETE", "/api/threads/t-1").json().at("message") == "No local data for t-1");
    CHECK(call(g.port(), "DELETE", "/api/threads/bad.id").status == 422);
}

TEST_CASE("gateway: artifacts are served with their type, never a file outside the thread",
          "[server][gateway]") {
    gateway_fixture g;
    const fs::path outputs = g.user_data("t-2") / "outputs";
    write_file(outputs / "report.md", "# Report\n");
    write_file(outputs / "page.html", "<script>alert(1)</script>");
    write_file(outputs / "chart.png", std::string("\x89PNG\r\n\x1a\n\0\0", 10));
    write_file(g.user_data("t-2") / "workspace" / "draft.txt", "draft");
    write_file(g.dir.path / "secret.txt", "TOP-SECRET");
    write_file(g.user_data("t-3") / "outputs" / "other.txt", "OTHER-THREAD");
    fs::create_symlink(g.dir.path / "secret.txt", outputs / "link.txt");

    const std::string base = "/api/threads/t-2/artifacts/mnt/user-data/";
    auto md = call(g.port(), "GET", base + "outputs/report.md");
    REQUIRE(md.status == 200);
    CHECK(md.body == "# Report\n");
    CHECK(md.headers["content-type"] == "text/markdown; charset=utf-8");
    CHECK(md.headers["content-disposition"] == "inline; filename*=UTF-8''report.md");
    auto download = call(g.port(), "GET", base + "outputs/report.md?download=true");
    CHECK(download.headers["content-disposition"] == "attachment; filename*=UTF-8''report.md");
    auto html = call(g.port(), "GET", base + "outputs/page.html");
    REQUIRE(html.status == 200);
    CHECK(html.headers["content-disposition"].starts_with("attachment"));
    CHECK(html.headers["content-type"] == "text/html; charset=utf-8");
    CHECK(call(g.port(), "GET", base + "outputs/chart.png").headers["content-type"] == "image/png");
    CHECK(call(g.port(), "GET", base + "workspace/draft.txt").body == "draft");
    auto part = call(g.port(), "GET", base + "outputs/report.md", {}, {{"Range", "bytes=2-7"}});
    CHECK(part.status == 206);
    CHECK(part.body == "Report");
    CHECK(part.headers["content-range"] == "bytes 2-7/9");
    CHECK(call(g.port(), "GET", base + "outputs/missing.md").status == 404);
    CHECK(call(g.port(), "GET", base + "outputs").status == 400);
    CHECK(call(g.port(), "GET", "/api/threads/t-2/artifacts/etc/passwd").status == 400);

    const std::vector<std::string> hostile{
        base + "outputs/../../../../../../secret.txt",
        base + "outputs/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.txt",
        base + "outputs/..%2F..%2F..%2F..%2F..%2F..%2Fsecret.txt",
        base + "outputs/%2E%2E%2f%2E%2E%2f..%2f..%2f..%2f..%2fsecret.txt",
        base + "../../../t-3/user-data/outputs/other.txt",
        "/api/threads/t-2/artifacts/" + (g.dir.path / "secret.txt").string(),
        "/api/threads/t-2/artifacts/%2F" + (g.dir.path / "secret.txt").string().substr(1),
        base + "outputs/link.txt",
        "/api/threads/..%2Ft-3/artifacts/mnt/user-data/outputs/other.txt",
    };
    for (const auto& target : hostile) {
        INFO(target);
        auto r = call(g.port(), "GET", target);
        CHECK((r.status == 400 || r.status == 403 || r.status == 404 || r.status == 422));
        CHECK(r.body.find("TOP-SECRET") == std::string::npos);
        CHECK(r.body.find("OTHER-THREAD") == std::string::npos);
    }
    CHECK(call(g.port(), "GET", base + "outputs/link.txt").status == 403);
    CHECK(call(g.port(), "GET", base + "outputs/%2e%2e/%2e%2e/%2e%2e/secret.txt").status == 403);
}

TEST_CASE("gateway: MCP servers with their secrets masked, PUT keeps them, PATCH switches one",
          "[server][gateway]") {
    gateway_fixture g;
    write_file(g.extensions, R"({
        "mcpServers": {
            "github": {"enabled": true, "type": "stdio", "command": "npx", "args": ["-y", "@mcp/github"],
                       "env": {"GITHUB_TOKEN": "ghp-real-token"}, "description": "GitHub"},
            "remote": {"type": "http", "url": "https://mcp.example/api", "headers": {"Authorization": "Bearer abc123"},
                       "oauth": {"token_url": "https://auth.example", "client_secret": "cs-999"}, "apiKey": "k-42"}
        },
        "skills": {"deep-research": {"enabled": false}}
    })");
    auto r = call(g.port(), "GET", "/api/mcp/config");
    REQUIRE(r.status == 200);
    for (const char* secret : {"ghp-real-token", "abc123", "cs-999", "k-42"})
        CHECK(r.body.find(secret) == std::string::npos);
    const auto servers = r.json().at("mcp_servers").as_object();
    CHECK(servers.at("github").at("env").at("GITHUB_TOKEN") == "***");
    CHECK(servers.at("github").at("command") == "npx");
    CHECK(servers.at("remote").at("headers").at("Authorization") == "***");
    CHECK(servers.at("remote").at("oauth").at("client_secret").is_null());
    CHECK(servers.at("remote").at("enabled") == true);

    // The UI sends back what it got, with one switch changed (less the OAuth
    // settings and the unknown key, which the lead agent cannot start from: refused).
    object sent = r.json().as_object();
    CHECK(call(g.port(), "PUT", "/api/mcp/config", boost::json::serialize(sent)).status == 400);
    sent["mcp_servers"].as_object()["remote"].as_object().erase("oauth");
    sent["mcp_servers"].as_object()["remote"].as_object().erase("apiKey");
    sent["mcp_servers"].as_object()["github"].as_object()["enabled"] = false;
    auto put = call(g.port(), "PUT", "/api/mcp/config", boost::json::serialize(sent));
    REQUIRE(put.status == 200);
    auto file = read_json(g.extensions);
    CHECK(file.at("mcpServers").at("github").at("enabled") == false);
    CHECK(file.at("mcpServers").at("github").at("env").at("GITHUB_TOKEN") == "ghp-real-token");
    CHECK(file.at("mcpServers").at("remote").at("headers").at("Authorization") == "Bearer abc123");
    CHECK(file.at("mcpServers").at("remote").at("url") == "https://mcp.example/api");
    CHECK_FALSE(
        file.at("mcpServers").at("github").as_object().contains("url")); // GET's null default is not written
    CHECK_NOTHROW(mcp::read_extensions_config(boost::json::value(file)));
    CHECK(file.at("skills").at("deep-research").at("enabled") == false);

    auto patch = call(g.port(), "PATCH", "/api/mcp/config", R"({"server_name": "github", "enabled": true})");
    REQUIRE(patch.status == 200);
    CHECK(patch.json().at("mcp_servers").at("github").at("enabled") == true);
    CHECK(read_json(g.extensions).at("mcpServers").at("github").at("enabled") == true);
    auto unknown = call(g.port(), "PATCH", "/api/mcp/config", R"({"server_name": "nope", "enabled": true})");
    CHECK(unknown.status == 404);
    CHECK(detail_of(unknown) == "MCP server 'nope' not found");

    // A masked value for a key the file does not have, a command that is not a launcher: refused, file
    // unchanged.
    const std::string before = read_file(g.extensions);
    CHECK(call(g.port(), "PUT", "/api/mcp/config",
               R"({"mcp_servers": {"new": {"command": "npx", "env": {"KEY": "***"}}}})")
              .status == 400);
    auto shell = call(g.port(), "PUT", "/api/mcp/config",
                      R"({"mcp_servers": {"x": {"command": "bash", "args": ["-c", "id"]}}})");
    CHECK(shell.status == 400);
    CHECK(detail_of(shell).find("disallowed stdio command 'bash'") != std::string::npos);
    CHECK(call(g.port(), "PUT", "/api/mcp/config",
               R"({"mcp_servers": {"x": {"command": "npx", "args": ["-c", "id"]}}})")
              .status == 400);
    CHECK(read_file(g.extensions) == before);
}

TEST_CASE("gateway: the LangGraph API answers under /api/langgraph too", "[server][gateway]") {
    gateway_fixture g;
    CHECK(call(g.port(), "GET", "/api/langgraph/ok").status == 200);
    auto created = call(g.port(), "POST", "/api/langgraph/threads", body({{"metadata", object{}}}));
    REQUIRE(created.status == 200);
    const std::string id(created.json().at("thread_id").as_string());
    CHECK(call(g.port(), "GET", "/threads/" + id).status == 200);
    CHECK(call(g.port(), "DELETE", "/api/langgraph/threads/" + id).status == 204);
    CHECK(call(g.port(), "GET", "/threads/" + id).status == 404);
}

} // namespace gateway_test
} // namespace server_test
