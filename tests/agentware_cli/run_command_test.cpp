// `agentware run` (examples/agentware/run_command.hpp) as a user starts it,
// against a local OpenAI-compatible server on 127.0.0.1: what DeerFlow's
// configuration asks for works in the product, or the start is refused.
#include "../support/cli_process.hpp"
#include "../support/scripted_http_server.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using agentware::test::scripted_http_server;
using agentware::test::scripted_response;

struct cli_result {
    int status = -1;
    std::string output; // stdout and stderr together
};

// Runs the agentware program in `dir` with `args`, no standard input.
cli_result run_cli(const fs::path& dir, std::vector<std::string> args) {
    const fs::path out_file = dir / "cli-output.txt";
    const pid_t pid = agentware::test::start_cli(AGENTWARE_CLI, dir, out_file, std::move(args));
    REQUIRE(pid >= 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::ifstream in(out_file);
    std::stringstream text;
    text << in.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

struct temp_folder {
    fs::path path = fs::temp_directory_path() / ("agentware-run-" + std::to_string(::getpid()) + "-" +
                                                 std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    temp_folder() { fs::create_directories(path); }
    ~temp_folder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::string chat_answer(const std::string& text) {
    return boost::json::serialize(boost::json::object{
        {"id", "chatcmpl-1"},
        {"object", "chat.completion"},
        {"model", "m"},
        {"choices", boost::json::array{boost::json::object{
                        {"index", 0},
                        {"finish_reason", "stop"},
                        {"message", boost::json::object{{"role", "assistant"}, {"content", text}}}}}},
        {"usage",
         boost::json::object{{"prompt_tokens", 5}, {"completion_tokens", 5}, {"total_tokens", 10}}}});
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string read_tree(const fs::path& root) {
    std::string all;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file()) {
            std::ifstream in(e.path());
            std::stringstream s;
            s << in.rdbuf();
            all += s.str();
        }
    return all;
}

// A model entry as a DeerFlow user writes one, pointed at the local server.
std::string model_entry(const scripted_http_server& server,
                        const std::string& use = "langchain_openai:ChatOpenAI") {
    return "models:\n  - name: local\n    use: " + use +
           "\n    model: m\n    base_url: " + server.base_url() + "\n    api_key: test-key\n";
}

} // namespace

TEST_CASE("agentware run: memory is extracted before a one-shot run ends, and the next run carries it",
          "[agentware_cli][memory]") {
    scripted_http_server server;
    temp_folder dir;
    const fs::path memory_dir = dir.path / "memory";
    // As a DeerFlow user enables it: no model of its own, no dynamic_context section.
    write(dir.path / "config.yaml",
          model_entry(server) +
              "memory:\n  enabled: true\n  backend_config:\n    storage_path: " + memory_dir.string() + "\n");
    // Run 1: the lead's answer, then (at the end of the run) the memory model's.
    server.push(scripted_response::json(chat_answer("Nice to meet you, Ada.")));
    server.push(scripted_response::json(chat_answer(
        R"({"user": {}, "history": {}, "newFacts": [{"content": "Writes C++ agent frameworks", "category": "context",)"
        R"( "confidence": 0.95, "scope": "user", "durability": "durable", "authority": "descriptive"}]})")));
    const auto first = run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads",
                                          "I am Ada and I write C++ agent frameworks for a living."});
    INFO(first.output);
    REQUIRE(first.status == 0);
    CHECK(first.output.find("Nice to meet you, Ada.") != std::string::npos);
    REQUIRE(server.request_count() == 2);
    // The memory request carried the conversation, and the fact is on disk.
    CHECK(server.requests()[1].body.find("I am Ada") != std::string::npos);
    CHECK(read_tree(memory_dir).find("Writes C++ agent frameworks") != std::string::npos);

    // Run 2, a new thread: the lead's request carries the remembered fact.
    const std::string nothing_new = chat_answer(R"({"user": {}, "history": {}, "newFacts": []})");
    server.push(scripted_response::json(chat_answer("Hello again.")));
    server.push(scripted_response::json(nothing_new)); // run 2's own memory update
    const auto second =
        run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi"});
    INFO(second.output);
    REQUIRE(second.status == 0);
    REQUIRE(server.request_count() == 4);
    CHECK(server.requests()[2].body.find("Writes C++ agent frameworks") != std::string::npos);
    CHECK(server.requests()[2].body.find("<memory>") != std::string::npos);
    CHECK(server.requests()[0].body.find("<memory>") == std::string::npos); // nothing known in run 1

    // `dynamic_context: false` says to show the model nothing: the fact stays on disk only.
    write(dir.path / "config.yaml", model_entry(server) +
                                        "memory:\n  enabled: true\n  backend_config:\n    storage_path: " +
                                        memory_dir.string() + "\ndynamic_context: false\n");
    server.push(scripted_response::json(chat_answer("Hello.")));
    server.push(scripted_response::json(chat_answer("I cannot do that."))); // not memory's JSON
    const auto third =
        run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi there"});
    INFO(third.output);
    REQUIRE(third.status == 0);
    REQUIRE(server.request_count() == 6);
    CHECK(server.requests()[4].body.find("Writes C++ agent frameworks") == std::string::npos);
    CHECK(server.requests()[4].body.find("<memory>") == std::string::npos);
    // The update that failed is said, not dropped in silence.
    CHECK(third.output.find("agentware: warning: memory: update failed: ") != std::string::npos);
    CHECK(second.output.find("memory: update failed") == std::string::npos);
    CHECK(read_tree(memory_dir).find("Writes C++ agent frameworks") != std::string::npos);
}

TEST_CASE("agentware run: a model class or a helper model that cannot be made is refused at start",
          "[agentware_cli][models]") {
    scripted_http_server server;
    temp_folder dir;
    // Google's class is not one agentware speaks: refused, and no key leaves for any host.
    write(dir.path / "config.yaml", model_entry(server, "langchain_google_genai:ChatGoogleGenerativeAI"));
    auto r = run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi"});
    CHECK(r.status == 1);
    CHECK(r.output.find(
              "models[0].use: unknown model class \"langchain_google_genai:ChatGoogleGenerativeAI\"") !=
          std::string::npos);
    CHECK(r.output.find("langchain_openai:ChatOpenAI") != std::string::npos); // the known ones are listed
    CHECK(r.output.find("test-key") == std::string::npos);
    CHECK(server.request_count() == 0);

    // A class with no endpoint of its own needs the entry's base URL.
    write(dir.path / "config.yaml",
          "models:\n  - name: mm\n    use: deerflow.models.patched_minimax:PatchedChatMiniMax\n"
          "    model: MiniMax-M3\n    api_key: test-key\n");
    r = run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi"});
    CHECK(r.status == 1);
    CHECK(r.output.find("models[0].base_url: missing") != std::string::npos);

    // Helper models by name: an unknown name names its key.
    for (const auto& [section, key] : std::vector<std::pair<std::string, std::string>>{
             {"title:\n  model_name: nope\n", "title.model_name"},
             {"summarization:\n  model_name: nope\n", "summarization.model_name"},
             {"model_fallback:\n  models: [local, nope]\n", "model_fallback.models[1]"},
             {"llm_tool_selector:\n  model: nope\n", "llm_tool_selector.model"},
             {"tool_emulator:\n  model: nope\n", "tool_emulator.model"},
             {"memory:\n  model_name: nope\n", "memory.model_name"},
             {"memory:\n  backend_config:\n    model:\n      model_name: nope\n",
              "memory.backend_config.model.model_name"}}) {
        write(dir.path / "config.yaml", model_entry(server) + section);
        r = run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi"});
        INFO(section << r.output);
        CHECK(r.status == 1);
        CHECK(r.output.find(key + ": no model named \"nope\" is configured (models: local)") !=
              std::string::npos);
    }
    CHECK(server.request_count() == 0);

    // Moderation gets its endpoint from configuration: its key must be there.
    write(dir.path / "config.yaml", model_entry(server) + "moderation:\n  base_url: " + server.base_url() +
                                        "\n  api_key_env: AGENTWARE_TEST_UNSET_MODERATION_KEY\n");
    r = run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi"});
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find("moderation:") != std::string::npos);
    CHECK(r.output.find("AGENTWARE_TEST_UNSET_MODERATION_KEY") != std::string::npos);
    CHECK(server.request_count() == 0);
}

TEST_CASE("agentware run: the helper models a configuration names are made from models[] and called",
          "[agentware_cli][models]") {
    scripted_http_server lead;   // models[0] "local"
    scripted_http_server helper; // models[1] "helper", model id helper-m
    scripted_http_server check;  // moderation's endpoint
    temp_folder dir;
    const fs::path memory_dir = dir.path / "memory";
    const std::string models =
        model_entry(lead) + "  - name: helper\n    use: langchain_openai:ChatOpenAI\n" +
        "    model: helper-m\n    base_url: " + helper.base_url() + "\n    api_key: helper-key\n";
    // title and memory by name (memory in DeerFlow's earlier spelling), moderation from its keys.
    ::setenv("AGENTWARE_TEST_MODERATION_KEY", "mod-key", 1);
    write(dir.path / "config.yaml",
          models + "title:\n  model_name: helper\n" +
              "memory:\n  enabled: true\n  model_name: helper\n  backend_config:\n    storage_path: " +
              memory_dir.string() + "\nmoderation:\n  base_url: " + check.base_url() +
              "\n  api_key_env: AGENTWARE_TEST_MODERATION_KEY\n");
    const char* clean = R"({"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":false,)"
                        R"("categories":{"violence":false},"category_scores":{"violence":0.001}}]})";
    check.push(scripted_response::json(clean)); // the input
    check.push(scripted_response::json(clean)); // the answer
    lead.push(scripted_response::json(chat_answer("Noted, Ada.")));
    helper.push(scripted_response::json(chat_answer("Ada's agent frameworks"))); // the title
    helper.push(scripted_response::json(chat_answer(
        R"({"user": {}, "history": {}, "newFacts": [{"content": "Maintains a C++ agent library", "category": "context",)"
        R"( "confidence": 0.9, "scope": "user", "durability": "durable", "authority": "descriptive"}]})")));
    const auto r = run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads",
                                      "I am Ada and I maintain a C++ agent library."});
    ::unsetenv("AGENTWARE_TEST_MODERATION_KEY");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("Noted, Ada.") != std::string::npos);
    // The lead's model answered the conversation only.
    REQUIRE(lead.request_count() == 1);
    CHECK(lead.requests()[0].json().at("model") == "m");
    // The helper model, with its own key, made the title and then the memory.
    REQUIRE(helper.request_count() == 2);
    for (const auto& request : helper.requests()) {
        CHECK(request.json().at("model") == "helper-m");
        CHECK(request.header("authorization") == "Bearer helper-key");
    }
    CHECK(helper.requests()[0].body.find("title") != std::string::npos);
    CHECK(helper.requests()[1].body.find("I am Ada") != std::string::npos);
    CHECK(read_tree(memory_dir).find("Maintains a C++ agent library") != std::string::npos);
    // Moderation checked the input and the answer at its configured endpoint, with the key from the
    // environment.
    REQUIRE(check.request_count() == 2);
    CHECK(check.requests()[0].target.ends_with("/moderations"));
    CHECK(check.requests()[0].header("authorization") == "Bearer mod-key");
    CHECK(check.requests()[0].body.find("I am Ada") != std::string::npos);
    CHECK(r.output.find("mod-key") == std::string::npos); // the secret is never printed

    // model_fallback: the lead's model fails, the fallback named in the section answers.
    write(dir.path / "config.yaml",
          "models:\n  - name: local\n    use: langchain_openai:ChatOpenAI\n    model: m\n    base_url: " +
              lead.base_url() + "\n    api_key: test-key\n    max_retries: 0\n" +
              models.substr(models.find("  - name: helper")) + "model_fallback:\n  models: [helper]\n");
    lead.push(scripted_response::json(R"({"error": {"message": "overloaded"}})", 500));
    helper.push(scripted_response::json(chat_answer("Answered by the fallback.")));
    const auto f = run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi"});
    INFO(f.output);
    CHECK(f.status == 0);
    CHECK(f.output.find("Answered by the fallback.") != std::string::npos);
    CHECK(lead.request_count() == 2);
    CHECK(helper.request_count() == 3);
}

TEST_CASE("agentware run: memory's model given twice, or DeerFlow's way, is refused at start",
          "[agentware_cli][memory]") {
    scripted_http_server server;
    temp_folder dir;
    for (const auto& [section, error] : std::vector<std::pair<std::string, std::string>>{
             {"memory:\n  model_name: local\n  backend_config:\n    model:\n      model_name: local\n",
              "memory.model_name: the memory model is also given by backend_config.model; keep one of them"},
             {"memory:\n  backend_config:\n    model:\n      provider: openai\n      model: gpt-4o-mini\n",
              "memory.backend_config.model: give model_name, one of the configured models (local)"},
             {"memory:\n  backend_config:\n    model:\n      model_name: local\n      temperature: 0.2\n",
              "memory.backend_config.model: give model_name alone"}}) {
        write(dir.path / "config.yaml", model_entry(server) + section);
        const auto r =
            run_cli(dir.path, {"run", "--config", "config.yaml", "--threads-dir", "threads", "Hi"});
        INFO(section << r.output);
        CHECK(r.status == 1);
        CHECK(r.output.find(error) != std::string::npos);
    }
    CHECK(server.request_count() == 0);
}
