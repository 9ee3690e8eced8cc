// deep_summarization: deepagents' defaults, the summary as a message with
// deepagents' text, the offload of the summarised messages through a
// backend, and what happens when the offload cannot write.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/filesystem/disk_backend.hpp>
#include <agentware/filesystem/state_backend.hpp>
#include <agentware/middleware/deep_summarization.hpp>
#include <agentware/middleware/filesystem.hpp>
#include <agentware/model/scripted_model.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace agentware;

namespace deep_summarization_test {

inline std::vector<message> turns(std::size_t pairs) {
    std::vector<message> ms;
    for (std::size_t i = 0; i < pairs; ++i) {
        message h = human_message("question " + std::to_string(i));
        h.id = "h" + std::to_string(i);
        message a = ai_message("answer " + std::to_string(i));
        a.id = "a" + std::to_string(i);
        ms.push_back(std::move(h));
        ms.push_back(std::move(a));
    }
    return ms;
}

class scratch {
public:
    scratch() {
        static std::atomic<int> n{0};
        path_ = std::filesystem::temp_directory_path() /
                ("agentware-deep-summary-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
        std::filesystem::create_directories(path_);
    }
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    ~scratch() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

template <class M>
auto compact_once(summarization& s, std::vector<message> ms, M& run_model) {
    agent_state<pipeline<summarization>> state;
    state.messages = std::move(ms);
    runtime rt;
    rt.thread_id = "t1";
    rt.model = model_ref(run_model);
    bool done = detail::hook_runner().run(s.compact(state, rt, true));
    return std::pair{done, std::move(state)};
}

} // namespace deep_summarization_test

TEST_CASE("deepagents' summarization defaults follow the model's input window",
          "[middleware][summarization][deep]") {
    auto known = deepagents_summarization_options(200000);
    CHECK(known.enabled);
    CHECK(known.summary_as_message);
    CHECK(known.trigger == std::vector<context_size>{{context_size::kind::fraction, 0.85}});
    CHECK(known.keep == context_size{context_size::kind::fraction, 0.10});
    CHECK(known.max_input_tokens == 200000);
    auto unknown = deepagents_summarization_options();
    CHECK(unknown.trigger == std::vector<context_size>{{context_size::kind::tokens, 170000}});
    CHECK(unknown.keep == context_size{context_size::kind::messages, 6});
    // The options' JSON form carries the new switch and reads it back.
    auto back = json_read_as<summarization_options>(boost::json::value_from(known), "summarization");
    CHECK(back == known);
    CHECK_THROWS_WITH(json_read_as<summarization_options>(
                          boost::json::parse(R"({"summary_as_message": "yes"})"), "summarization"),
                      Catch::Contains("summarization.summary_as_message"));
}

TEST_CASE("deep summarization offloads the summarised messages and names the file in the summary",
          "[middleware][summarization][deep]") {
    deep_summarization_test::scratch dir;
    summarization s = make_deep_summarization(disk_backend(dir.path().string(), true));
    scripted_model summarizer({ai_message("They asked 7 questions."), ai_message("Second summary.")});
    auto [done, state] =
        deep_summarization_test::compact_once(s, deep_summarization_test::turns(10), summarizer);
    REQUIRE(done);
    // Six kept (deepagents' default without a window), the summary message first.
    REQUIRE(state.messages.size() == 7);
    const message& summary = state.messages[0];
    CHECK(summary.is_human());
    CHECK(summary.name == "summary");
    CHECK(summary.metadata.at("lc_source") == "summarization");
    CHECK(summary.text() ==
          "You are in the middle of a conversation that has been summarized.\n\nThe full conversation "
          "history has "
          "been saved to /conversation_history/t1.md should you need to refer back to it for details.\n\nA "
          "condensed summary follows:\n\n<summary>\nThey asked 7 questions.\n</summary>");
    CHECK(get<summary_text_field>(state).empty());
    std::ifstream in(dir.path() / "conversation_history" / "t1.md");
    const std::string file((std::istreambuf_iterator<char>(in)), {});
    CHECK(file.starts_with("## Summarized at "));
    CHECK(file.find("Human: question 0\nAI: answer 0") != std::string::npos);
    CHECK(file.find("question 7") == std::string::npos); // kept, not offloaded

    // A second compaction appends to the same file; the old summary is among what it summarises.
    auto more = state.messages;
    for (auto& m : deep_summarization_test::turns(4))
        more.push_back(m);
    auto [again, next] = deep_summarization_test::compact_once(s, more, summarizer);
    REQUIRE(again);
    std::ifstream in2(dir.path() / "conversation_history" / "t1.md");
    const std::string file2((std::istreambuf_iterator<char>(in2)), {});
    CHECK(file2.starts_with(file));
    CHECK(file2.find("They asked 7 questions.") != std::string::npos);
    CHECK(next.messages[0].text().find("<summary>\nSecond summary.\n</summary>") != std::string::npos);
}

TEST_CASE("deep summarization offloads to the state backend through a files update",
          "[middleware][summarization][deep]") {
    // The default backend: the agent state's files, as the filesystem middleware's.
    summarization s = make_deep_summarization();
    scripted_model summarizer({ai_message("First."), ai_message("Second.")});
    agent_state<pipeline<filesystem, summarization>> state;
    file_data other;
    other.content = "kept";
    get<files_field>(state)["/notes.md"] = other;
    state.messages = deep_summarization_test::turns(10);
    runtime rt;
    rt.thread_id = "t9";
    rt.model = model_ref(summarizer);
    REQUIRE(detail::hook_runner().run(s.compact(state, rt, true)));
    const auto& files = get<files_field>(state);
    REQUIRE(files.count("/conversation_history/t9.md") == 1);
    const std::string first = files.at("/conversation_history/t9.md")->content;
    CHECK(first.starts_with("## Summarized at "));
    CHECK(first.find("Human: question 0\nAI: answer 0") != std::string::npos);
    CHECK(first.find("question 7") == std::string::npos);
    CHECK(files.at("/conversation_history/t9.md")->encoding == "utf-8");
    CHECK(files.at("/notes.md")->content == "kept"); // merged by path
    REQUIRE(state.messages.size() == 7);
    CHECK(state.messages[0].text().find("saved to /conversation_history/t9.md should you need") !=
          std::string::npos);

    // The next compaction reads the file back from the state and appends to it.
    for (auto& m : deep_summarization_test::turns(4))
        state.messages.push_back(m);
    REQUIRE(detail::hook_runner().run(s.compact(state, rt, true)));
    const std::string second = files.at("/conversation_history/t9.md")->content;
    CHECK(second.starts_with(first));
    CHECK(second.size() > first.size());
    CHECK(second.find("<summary>\nFirst.\n</summary>") != std::string::npos);
}

TEST_CASE("deep summarization without a writable offload uses the plain summary text",
          "[middleware][summarization][deep]") {
    // The state backend's write is a `files` update: a state without that field
    // cannot take it, so no file is named.
    summarization s(deepagents_summarization_options());
    s.offload = offload_history_to(state_backend{});
    scripted_model summarizer({ai_message("Short.")});
    auto [done, state] =
        deep_summarization_test::compact_once(s, deep_summarization_test::turns(5), summarizer);
    REQUIRE(done);
    CHECK(state.messages[0].text() == "Here is a summary of the conversation to date:\n\nShort.");
    // An offload that throws is the same as one that could not write.
    summarization t(deepagents_summarization_options());
    t.offload = [](const summarization_event&) -> std::optional<std::string> {
        throw std::runtime_error("disk");
    };
    scripted_model other({ai_message("Short.")});
    auto [done2, state2] = deep_summarization_test::compact_once(t, deep_summarization_test::turns(5), other);
    REQUIRE(done2);
    CHECK(state2.messages[0].text() == "Here is a summary of the conversation to date:\n\nShort.");
}
