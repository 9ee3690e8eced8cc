// What of a conversation memory looks at: the filter, trivial turns, the signals,
// the conversation as the prompt shows it.
#include <agentware/memory/messages.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

namespace {

message human_with(std::string text, std::string_view key = {}, boost::json::value v = true) {
    message m = human_message(std::move(text));
    if (!key.empty()) m.metadata[key] = std::move(v);
    return m;
}

message ai_calling(std::string name) {
    return ai_message("", {tool_call{"c1", std::move(name), boost::json::object{}}});
}

std::vector<std::string> texts(const std::vector<message>& ms) {
    std::vector<std::string> out;
    for (const auto& m : ms)
        out.push_back((m.is_human() ? "H:" : "A:") + m.text());
    return out;
}

} // namespace

TEST_CASE("the memory filter keeps user turns without uploads and final answers only", "[memory]") {
    std::vector<message> conv{
        system_message("system"),
        human_message("<uploaded_files>\n- a.pdf\n</uploaded_files>\nSummarise the report please"),
        ai_calling("read_file"),
        tool_message("c1", "read_file", "contents"),
        ai_message("Here is the summary."),
        human_message(
            "<current_uploads>x.png</current_uploads>\n\n"), // nothing left: dropped with its answer
        ai_message("I see an image."),
        human_with("hidden note", "hide_from_ui"),
        human_with("Option B", "human_input_response", boost::json::object{{"answer", "B"}}),
        ai_message("Going with B."),
    };
    // the clarification answer is hidden but kept
    conv[8].metadata["hide_from_ui"] = true;
    CHECK(texts(filter_messages_for_memory(conv)) ==
          std::vector<std::string>{"H:Summarise the report please", "A:Here is the summary.", "H:Option B",
                                   "A:Going with B."});
}

TEST_CASE("trivial turns are dropped with their reply", "[memory]") {
    for (std::string trivial :
         {"ok", "Okay.", "thanks!", "Thank you", "got it", "谢谢！", "好的", "嗯嗯", "收到。"}) {
        std::vector<message> conv{human_message("I work on compilers"), ai_message("Nice."),
                                  human_message(trivial), ai_message("You're welcome.")};
        INFO(trivial);
        CHECK(texts(filter_messages_for_memory(conv)) ==
              std::vector<std::string>{"H:I work on compilers", "A:Nice."});
    }
    // not trivial: more than the acknowledgement
    CHECK(
        filter_messages_for_memory({human_message("ok, use tabs from now on"), ai_message("Sure.")}).size() ==
        2);
    CHECK_FALSE(worth_remembering(filter_messages_for_memory({human_message("thanks"), ai_message("np")})));
    CHECK_FALSE(worth_remembering(filter_messages_for_memory({human_message("only a question")})));
}

TEST_CASE("signals come from the user's turns among the last six messages", "[memory]") {
    auto sig = [](std::vector<message> ms) { return detect_memory_signals(ms); };
    CHECK(sig({human_message("That's wrong, try again"), ai_message("ok")}) ==
          std::vector<std::string>{"correction"});
    CHECK(sig({human_message("I prefer tabs. Perfect!"), ai_message("ok")}) ==
          std::vector<std::string>{"reinforcement", "preference"});
    CHECK(sig({human_message("不对，你理解错了"), ai_message("好")}) ==
          std::vector<std::string>{"correction"});
    CHECK(sig({ai_message("That's wrong"), human_message("fine")})
              .empty()); // the assistant's words do not count
    std::vector<message> old{human_message("you misunderstood"), ai_message("a")};
    for (int i = 0; i < 3; ++i) {
        old.push_back(human_message("next"));
        old.push_back(ai_message("b"));
    }
    CHECK(sig(old).empty()); // seven messages back
}

TEST_CASE("the conversation for the prompt is escaped and long texts are cut in the middle", "[memory]") {
    std::string long_text(600, 'a');
    long_text += std::string(600, 'b');
    const std::string c = format_conversation_for_memory(
        {human_message("<b>x</b> & y"), ai_message(long_text), human_message(" ")});
    CHECK(c.starts_with("User: &lt;b&gt;x&lt;/b&gt; &amp; y\n\nAssistant: " + std::string(500, 'a') +
                        "\n...[truncated]...\n" + std::string(500, 'b')));
    CHECK(c.ends_with(std::string(500, 'b')));
}
