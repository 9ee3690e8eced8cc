// memory: the message filter, signals, the queue and its worker, the updater's
// prompt, parsing and gates, DeerMem v2 storage (including a writer killed
// mid-write), the injected text, and the middleware in an agent.
#include "deerflow_support.hpp"

#include <agentware/memory/manager.hpp>
#include <agentware/middleware/memory.hpp>
#include <agentware/presets/deerflow.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;

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

memory_update_item item_for(std::string thread, std::vector<std::string> signals = {}) {
    memory_update_item i;
    i.thread_id = std::move(thread);
    i.user_id = "alice";
    i.agent_name = "__default__";
    i.messages = {human_message("hi there friend"), ai_message("hello")};
    i.signals = std::move(signals);
    return i;
}

// A memory model that answers with `text` and counts its calls.
struct canned_model {
    std::shared_ptr<std::vector<std::string>> answers = std::make_shared<std::vector<std::string>>();
    std::shared_ptr<std::vector<std::string>> prompts = std::make_shared<std::vector<std::string>>();
    memory_model fn() const {
        return [a = answers, p = prompts](const chat_request& r) {
            p->push_back(r.messages.back().text());
            if (a->empty()) throw std::runtime_error("no scripted answer left");
            model_response out;
            out.ai = ai_message(a->front());
            a->erase(a->begin());
            return out;
        };
    }
};

std::string fact_json(std::string content, double confidence = 0.9, std::string category = "preference",
                      std::string scope = "user", std::string durability = "durable",
                      std::string authority = "descriptive") {
    return boost::json::serialize(boost::json::object{{"content", content},
                                                      {"category", category},
                                                      {"confidence", confidence},
                                                      {"scope", scope},
                                                      {"durability", durability},
                                                      {"authority", authority}});
}

std::string update_json(std::vector<std::string> facts, std::string extra = {}) {
    std::string out = R"({"user": {}, "history": {}, "newFacts": [)";
    for (std::size_t i = 0; i < facts.size(); ++i)
        out += (i ? "," : "") + facts[i];
    return out + "]" + extra + "}";
}

memory_options options_at(const temp_dir& dir) {
    memory_options o;
    o.backend_config.storage_path = dir.path.string();
    o.shutdown_flush_timeout_seconds = 5;
    return o;
}

memory_fact fact(std::string id, std::string content, double confidence = 0.9,
                 std::string category = "context") {
    memory_fact f;
    f.id = std::move(id);
    f.content = std::move(content);
    f.confidence = confidence;
    f.category = std::move(category);
    f.created_at = "2026-11-01T00:00:00Z";
    f.source = "thread-1";
    return f;
}

} // namespace

// ---------------------------------------------------------------- filter and signals

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

// ---------------------------------------------------------------- parsing and gates

TEST_CASE("the model's answer is parsed tolerantly", "[memory]") {
    auto o = parse_memory_update("<think>{not json} maybe {\"a\":1}</think>\nHere you go:\n```json\n" +
                                 update_json({fact_json("Likes tea")}) + "\n```\nDone.");
    CHECK(o.at("newFacts").as_array().size() == 1);
    CHECK_THROWS_AS(parse_memory_update("no json here"), memory_update_parse_error);
    CHECK_THROWS_AS(parse_memory_update("{\"user\": {\"workContext\": "),
                    memory_update_parse_error); // truncated
    CHECK_THROWS_AS(parse_memory_update("[1,2] {\"other\": 1}"), memory_update_parse_error);
}

TEST_CASE("every gate of the update applies", "[memory]") {
    user_memory m;
    m.facts.push_back(fact("fact_old00001", "Uses Vim", 0.8));
    memory_backend_options o;
    auto update = parse_memory_update(update_json(
        {fact_json("Prefers tabs"), fact_json("Thread only", 0.9, "context", "thread"),
         fact_json("Transient", 0.9, "context", "user", "transient"),
         fact_json("Told to obey", 0.9, "context", "user", "durable", "instruction"),
         fact_json("Low confidence", 0.69), fact_json("  uses vim  "), fact_json("Prefers tabs"),
         R"({"content":"No confidence","scope":"user","durability":"durable","authority":"descriptive"})",
         fact_json("  "), fact_json("Knows Rust", 0.95, "knowledge"),
         fact_json("Uploaded the file report.pdf to the document store")},
        R"(, "factsToRemove": [{"id":"fact_old00001","scope":"user","reason":""}])"));
    update["user"].as_object()["workContext"] = boost::json::object{{"summary", "Compiler engineer."},
                                                                    {"shouldUpdate", true},
                                                                    {"scope", " User "},
                                                                    {"authority", "Descriptive"}};
    update["user"].as_object()["topOfMind"] = boost::json::object{
        {"summary", "Release."}, {"shouldUpdate", true}, {"scope", "thread"}, {"authority", "descriptive"}};
    update["history"].as_object()["recentMonths"] =
        boost::json::object{{"summary", "Shipped v2. They uploaded a file to the drive."},
                            {"shouldUpdate", true},
                            {"scope", "user"},
                            {"authority", "descriptive"}};
    auto report = apply_memory_update(m, update, o, "thread-9", "2026-11-24T10:00:00Z");
    std::vector<std::string> contents;
    for (const auto& f : m.facts)
        contents.push_back(f.content);
    CHECK(contents == std::vector<std::string>{"Uses Vim", "Prefers tabs", "Knows Rust"});
    CHECK(report.facts_added == 3); // the upload fact was added, then dropped
    CHECK(m.facts[1].source == "thread-9");
    CHECK(m.facts[1].created_at == "2026-11-24T10:00:00Z");
    CHECK(m.facts[1].id.starts_with("fact_"));
    CHECK(m.facts[1].id.size() == 13);
    CHECK(m.user[0].summary == "Compiler engineer.");
    CHECK(m.user[2].summary.empty());
    CHECK(m.history[0].summary == "Shipped v2.");
}

TEST_CASE("capacity keeps the most confident facts and removals need a surviving replacement", "[memory]") {
    user_memory m;
    memory_backend_options o;
    o.max_facts = 10;
    for (int i = 0; i < 10; ++i)
        m.facts.push_back(fact(fmt::format("fact_{:08}", i), fmt::format("fact {}", i), 0.71 + i * 0.01));
    auto update = parse_memory_update(update_json(
        {fact_json("strong", 0.99), fact_json("weak", 0.7)},
        R"(, "factsToRemove": [{"id":"fact_00000009","scope":"user","reason":"replaced","replacementFactIndex":1},
                               {"id":"fact_00000008","scope":"user","reason":"replaced","replacementFactIndex":0},
                               {"id":"fact_00000007","scope":"thread","reason":"x"}])"));
    auto report = apply_memory_update(m, update, o, "t", "now");
    CHECK(report.facts_evicted == 2); // "weak" (0.70) and fact 0 (0.71)
    CHECK(report.facts_removed == 1); // only the removal whose replacement survived
    CHECK(m.facts.size() == 9);
    CHECK(m.facts.front().content == "strong");
    CHECK(std::none_of(m.facts.begin(), m.facts.end(), [](auto& f) { return f.content == "weak"; }));
    CHECK(std::any_of(m.facts.begin(), m.facts.end(), [](auto& f) { return f.id == "fact_00000009"; }));
    CHECK(std::none_of(m.facts.begin(), m.facts.end(), [](auto& f) { return f.id == "fact_00000008"; }));
}

TEST_CASE("the extraction prompt has DeerFlow's layout and hints", "[memory]") {
    user_memory m;
    m.facts.push_back(fact("fact_a", "Likes <b>bold</b>"));
    m.facts.back().source_type = "manual";
    const std::string p =
        memory_update_prompt(m, {human_message("That's wrong"), ai_message("Sorry")}, {"correction"});
    CHECK(p.starts_with("Current Memory State:\n<current_memory>\n{\n  \"user\": {\n"));
    CHECK(p.find("\"content\": \"[MANUAL] Likes &lt;b&gt;bold&lt;/b&gt;\"") != std::string::npos);
    CHECK(p.find("</current_memory>\n\nNew Conversation to Process:\n<conversation>\nUser: That's wrong\n\n"
                 "Assistant: Sorry\n</conversation>\n\nIMPORTANT: Explicit correction signals") !=
          std::string::npos);
    CHECK(p.find("NOTE: Facts marked [MANUAL] are high-trust") != std::string::npos);
    CHECK(p.ends_with("\n\nUpdate the memory based on the above conversation."));
}

// ---------------------------------------------------------------- storage

TEST_CASE("storage writes DeerMem v2's layout and reads it back", "[memory]") {
    temp_dir dir;
    memory_storage s(dir.path);
    user_memory m = s.load("alice", "");
    CHECK(m.revision == 0);
    m.user[0] = {"Works on compilers", "2026-11-24T10:00:00Z"};
    memory_fact f = fact("fact_1a2b3c4d", "Prefers tabs\nover spaces", 0.9, "knowledge");
    f.source_error = "used spaces";
    m.facts.push_back(f);
    CHECK(s.save("alice", "", m) == 1);

    const auto json = boost::json::parse(dftest::read(dir.path / "users/alice/memory.json")).as_object();
    CHECK(json.at("version") == "2.0");
    CHECK(json.at("revision") == 1);
    CHECK(!json.contains("facts"));
    CHECK(json.at("user").at("workContext").at("summary") == "Works on compilers");
    const auto path = s.fact_file("alice", "", "fact_1a2b3c4d");
    CHECK(path == dir.path / "users/alice/agents/__default__/facts" /
                      agentware::detail::sha256_hex("fact_1a2b3c4d").substr(0, 2) / "fact_1a2b3c4d.md");
    const std::string md = dftest::read(path);
    CHECK(md.starts_with(
        "---\nid: fact_1a2b3c4d\ncategory: other\ncategoryExtension: knowledge\nconfidence: 0.9\n"
        "createdAt: '2026-11-01T00:00:00Z'\nsource: {type: conversation, threadId: thread-1}\n"));
    CHECK(md.find("status: active\ntopics: []\nconsolidatedFrom: []\nrevision: 1\nschemaVersion: 2\n") !=
          std::string::npos);
    CHECK(md.find("user_id: alice\nagent_name: __default__\n---\n\n# Prefers tabs\n\nPrefers tabs\nover "
                  "spaces\n") != std::string::npos);

    user_memory back = s.load("alice", "");
    CHECK(back.revision == 1);
    REQUIRE(back.facts.size() == 1);
    CHECK(back.facts[0].content == "Prefers tabs\nover spaces");
    CHECK(back.facts[0].category == "knowledge");
    CHECK(back.facts[0].source_error == "used spaces");
    CHECK(back.facts[0].source == "thread-1");
    CHECK(back.user[0].summary == "Works on compilers");
    CHECK(s.load("alice", "Coder").facts.empty()); // facts are per agent

    // a removed fact's file goes
    back.facts.clear();
    CHECK(s.save("alice", "", back) == 2);
    CHECK(!std::filesystem::exists(path));
}

TEST_CASE("a stale revision is refused", "[memory]") {
    temp_dir dir;
    memory_storage s(dir.path);
    user_memory a = s.load("bob", "x"), b = s.load("bob", "x");
    a.user[0].summary = "first";
    s.save("bob", "x", a);
    b.user[0].summary = "second";
    CHECK_THROWS_AS(s.save("bob", "x", b), memory_revision_conflict);
    CHECK(s.load("bob", "x").user[0].summary == "first");
}

TEST_CASE("a corrupt memory file is reported and never overwritten", "[memory]") {
    temp_dir dir;
    memory_storage s(dir.path);
    dftest::write(dir.path / "users/carol/memory.json", "{\"version\": \"2.0\", \"revis");
    CHECK_THROWS_AS(s.load("carol", ""), memory_storage_error);
    user_memory m;
    CHECK_THROWS_AS(s.save("carol", "", m), memory_storage_error);
    CHECK(dftest::read(dir.path / "users/carol/memory.json") == "{\"version\": \"2.0\", \"revis");
    // the manager's injection is empty rather than failing the run
    memory_manager manager(options_at(dir), {.model = {}, .clock = nullptr, .start_worker = false});
    CHECK(manager.injection("carol", "").empty());
}

TEST_CASE("a v1 memory file is migrated with a backup", "[memory]") {
    temp_dir dir;
    const std::string v1 = R"({"version":"1.0","user":{"workContext":{"summary":"Old work","updatedAt":"x"}},
        "facts":[{"id":"fact_v1000001","content":"Likes tea","category":"preference","confidence":0.8,
                  "createdAt":"2025-01-01T00:00:00Z","source":"t-old"},
                 {"id":"../../evil","content":"bad id"}]})";
    dftest::write(dir.path / "users/dave/memory.json", v1);
    memory_storage s(dir.path);
    user_memory m = s.load("dave", "");
    CHECK(dftest::read(dir.path / "users/dave/memory.json.v1.bak") == v1);
    CHECK(m.user[0].summary == "Old work");
    REQUIRE(m.facts.size() == 1);
    CHECK(m.facts[0].content == "Likes tea");
    CHECK(m.facts[0].source == "t-old");
    const auto json = boost::json::parse(dftest::read(dir.path / "users/dave/memory.json")).as_object();
    CHECK(json.at("version") == "2.0");
    CHECK(!json.contains("facts"));
    CHECK(s.load("dave", "").facts.size() == 1); // migrated once
}

TEST_CASE("user ids that are not safe in a path are refused before touching the disk", "[memory]") {
    temp_dir dir;
    memory_storage s(dir.path);
    for (std::string bad :
         std::vector<std::string>{"../etc", "a/b", "", "..", "x y", std::string("a\0b", 3)}) {
        INFO(bad);
        CHECK_THROWS_AS(s.load(bad, ""), std::invalid_argument);
        CHECK_THROWS_AS(s.save(bad, "", user_memory{}), std::invalid_argument);
    }
    CHECK_THROWS_AS(s.load("ok", "../agent"), std::invalid_argument);
    CHECK_THROWS_AS(s.fact_file("ok", "", "../x"), std::invalid_argument);
    CHECK(!std::filesystem::exists(dir.path / "users"));
    memory_manager manager(options_at(dir), {.model = {}, .clock = nullptr, .start_worker = false});
    CHECK(manager.add("t", {human_message("I like tea"), ai_message("ok")}, "", "../x") ==
          memory_add_result::dropped);
}

TEST_CASE("a writer killed in the middle of a save loses no earlier memory", "[memory]") {
    temp_dir dir;
    {
        memory_storage s(dir.path);
        user_memory m;
        m.user[0].summary = "Durable summary";
        for (int i = 0; i < 20; ++i)
            m.facts.push_back(fact(fmt::format("fact_base{:04}", i), fmt::format("base fact {}", i)));
        s.save("erin", "", m);
    }
    for (int round = 0; round < 4; ++round) {
        int ready[2];
        REQUIRE(::pipe(ready) == 0);
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            // The child saves larger and larger memories forever, until killed.
            ::close(ready[0]);
            memory_storage s(dir.path);
            bool told = false;
            for (int i = 0;; ++i) {
                try {
                    user_memory m = s.load("erin", "");
                    m.user[1].summary = std::string(200000 + i, 'x');
                    m.facts.push_back(
                        fact(fmt::format("fact_c{}r{}n{}", ::getpid(), round, i), std::string(5000, 'y')));
                    s.save("erin", "", m);
                } catch (...) {
                }
                if (!told) {
                    told = ::write(ready[1], "x", 1) == 1;
                }
            }
        }
        ::close(ready[1]);
        char c;
        REQUIRE(::read(ready[0], &c, 1) == 1); // at least one save done: the next is under way
        ::close(ready[0]);
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        CHECK(WIFSIGNALED(status));

        memory_storage s(dir.path);
        user_memory m = s.load("erin", ""); // readable: no torn file
        CHECK(m.user[0].summary == "Durable summary");
        CHECK(m.revision >= 2 + round);
        for (int i = 0; i < 20; ++i) {
            const auto id = fmt::format("fact_base{:04}", i);
            CHECK(std::any_of(m.facts.begin(), m.facts.end(),
                              [&](const memory_fact& f) { return f.id == id; }));
        }
        s.save("erin", "", m); // and writable again
    }
}

// ---------------------------------------------------------------- queue and worker

TEST_CASE("the queue keeps the latest conversation per key and unions signals", "[memory]") {
    std::vector<memory_update_item> seen;
    auto clock = std::make_shared<manual_clock>();
    memory_update_queue q(
        {.debounce = 30s, .start_worker = false}, [&](const auto& i) { seen.push_back(i); }, clock);
    auto a = item_for("t1", {"correction"});
    CHECK(q.add(a) == memory_add_result::queued);
    auto b = item_for("t2");
    q.add(b);
    auto a2 = item_for("t1", {"preference"});
    a2.messages.push_back(human_message("later"));
    CHECK(q.add(a2) == memory_add_result::replaced);
    auto other_agent = item_for("t1");
    other_agent.agent_name = "coder";
    q.add(other_agent);
    CHECK(q.pending() == 3);

    // debounce: nothing before 30 s after the last add
    clock->advance(29s);
    CHECK(q.run_due() == 0);
    clock->advance(1s);
    CHECK(q.run_due() == 3);
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].thread_id == "t2"); // the replaced item moved to the back
    CHECK(seen[1].thread_id == "t1");
    CHECK(seen[1].messages.size() == 3);
    CHECK(seen[1].signals == std::vector<std::string>{"preference", "correction"});
    CHECK(seen[2].agent_name == "coder");
}

TEST_CASE("every add restarts the debounce; the immediate path is due at once", "[memory]") {
    int runs = 0;
    auto clock = std::make_shared<manual_clock>();
    memory_update_queue q(
        {.debounce = 30s, .start_worker = false}, [&](const auto&) { ++runs; }, clock);
    q.add(item_for("t1"));
    clock->advance(20s);
    q.add(item_for("t2"));
    clock->advance(20s);
    CHECK(q.run_due() == 0); // 40 s after the first add, 20 s after the second
    clock->advance(10s);
    CHECK(q.run_due() == 2);

    q.add(item_for("t1"));
    CHECK(q.add_nowait(item_for("t1")) == memory_add_result::queued); // coexists with the ordinary item
    CHECK(q.pending() == 2);
    CHECK(q.run_due() == 2); // no time passed
}

TEST_CASE("back-pressure refuses ordinary items at the depth limit", "[memory]") {
    memory_update_queue q(
        {.max_depth = 3, .start_worker = false}, [](const auto&) {}, std::make_shared<manual_clock>());
    for (int i = 0; i < 3; ++i)
        CHECK(q.add(item_for(fmt::format("t{}", i))) == memory_add_result::queued);
    CHECK(q.add(item_for("t9")) == memory_add_result::dropped);
    CHECK(q.add(item_for("t1")) == memory_add_result::replaced); // replacing does not grow the queue
    CHECK(q.add(item_for("t10", {"correction"})) == memory_add_result::queued);
    CHECK(q.add_nowait(item_for("t11")) == memory_add_result::queued);
    CHECK(q.pending() == 5);
}

TEST_CASE("the worker processes in the background and a failure does not stop it", "[memory][concurrency]") {
    std::atomic<int> done{0};
    std::atomic<bool> release{false};
    auto clock = std::make_shared<manual_clock>();
    memory_update_queue q(
        {.debounce = 30s, .between_items = 0ms, .poll = 1ms},
        [&](const memory_update_item& i) {
            while (!release)
                std::this_thread::yield();
            if (i.thread_id == "bad") throw std::runtime_error("model exploded");
            ++done;
        },
        clock);
    q.add(item_for("bad"));
    q.add(item_for("t1"));
    clock->advance(31s); // the worker notices on its next poll
    // add never waits for the worker, even while it is busy
    for (int i = 0; i < 50; ++i)
        q.add(item_for(fmt::format("more{}", i)));
    release = true;
    CHECK(q.flush(10s));
    CHECK(done == 51);
    const auto failures = q.take_failures();
    REQUIRE(failures.size() == 1);
    CHECK(failures[0] == "bad/alice/__default__: model exploded");
    CHECK(q.shutdown(1s));
}

TEST_CASE("shutdown gives up after its timeout when the model hangs", "[memory][concurrency]") {
    auto gate = std::make_shared<std::atomic<bool>>(false);
    auto q = std::make_unique<memory_update_queue>(memory_queue_options{.poll = 1ms},
                                                   [gate](const memory_update_item&) {
                                                       while (!*gate)
                                                           std::this_thread::sleep_for(1ms);
                                                   });
    q->add_nowait(item_for("t1"));
    CHECK_FALSE(q->shutdown(20ms));
    q.reset(); // the worker was left to finish on its own
    *gate = true;
    std::this_thread::sleep_for(20ms);
}

// ---------------------------------------------------------------- updater and manager

TEST_CASE("the manager extracts, stores and advances the watermark", "[memory]") {
    temp_dir dir;
    canned_model model;
    auto clock =
        std::make_shared<manual_clock>(std::chrono::sys_days(std::chrono::year(2026) / 11 / 24) + 9h);
    memory_manager manager(options_at(dir), {.model = model.fn(), .clock = clock, .start_worker = false});
    std::vector<message> conv{human_message("I prefer tabs over spaces"), ai_message("Noted.")};
    conv[0].id = "u1";
    conv[1].id = "a1";
    model.answers->push_back("```json\n" + update_json({fact_json("Prefers tabs over spaces")}) + "\n```");
    CHECK(manager.add("t1", conv, "", "alice", "run-1") == memory_add_result::queued);
    CHECK(manager.flush(1s));
    auto view = manager.read_view("alice", "");
    REQUIRE(view.at("facts").as_array().size() == 1);
    CHECK(view.at("facts").at(0).at("content") == "Prefers tabs over spaces");
    CHECK(view.at("facts").at(0).at("source") == "t1");
    CHECK(view.at("facts").at(0).at("createdAt") == "2026-11-24T09:00:00Z");
    CHECK(model.prompts->at(0).find("User: I prefer tabs over spaces") != std::string::npos);

    // the next turn feeds only what is new
    conv.push_back(human_message("My name is Ada"));
    conv.back().id = "u2";
    conv.push_back(ai_message("Hi Ada."));
    conv.back().id = "a2";
    model.answers->push_back("no json at all"); // fails: the watermark stays
    manager.add("t1", conv, "", "alice");
    manager.flush(1s);
    CHECK(manager.queue().take_failures().size() == 1);
    model.answers->push_back(update_json({fact_json("Is named Ada", 0.95, "identity")}));
    manager.add("t1", conv, "", "alice");
    manager.flush(1s);
    REQUIRE(model.prompts->size() == 3);
    CHECK(model.prompts->at(2).find("I prefer tabs") == std::string::npos);
    CHECK(model.prompts->at(2).find("User: My name is Ada") != std::string::npos);
    CHECK(manager.read_view("alice", "").at("facts").as_array().size() == 2);

    // nothing new: no model call
    manager.add("t1", conv, "", "alice");
    manager.flush(1s);
    CHECK(model.prompts->size() == 3);
    // the emergency path ignores the watermark
    model.answers->push_back(update_json({}));
    manager.add_nowait("t1", conv, "", "alice");
    manager.flush(1s);
    CHECK(model.prompts->size() == 4);
    CHECK(model.prompts->at(3).find("User: I prefer tabs") != std::string::npos);
}

TEST_CASE("the memory middleware queues a run's conversation and never fails it", "[memory]") {
    temp_dir dir;
    canned_model model;
    model.answers->push_back(update_json({fact_json("Works in Rust", 0.9, "context")}));
    auto manager = std::make_shared<memory_manager>(
        options_at(dir), memory_manager_setup{.model = model.fn(), .clock = nullptr, .start_worker = false});
    using P = pipeline<memory>;
    agent<scripted_model, P> a(scripted_model({ai_message("Rust it is."), ai_message("Again.")}), tool_set{},
                               P{memory(manager)});
    agent<scripted_model, P>::state_type state;
    run_config cfg;
    cfg.thread_id = "th-1";
    cfg.context["user_id"] = "zoe";
    cfg.context["agent_name"] = "Coder";
    auto r = a.run(state, "I write Rust every day", cfg);
    CHECK(r.reason == stop_reason::finished);
    CHECK(manager->queue().pending() == 1);
    manager->flush(1s);
    CHECK(manager->read_view("zoe", "coder").at("facts").as_array().size() == 1);
    CHECK(std::filesystem::exists(dir.path / "users/zoe/agents/coder/facts"));

    // an unsafe user id is not remembered, and the run is unaffected
    cfg.context["user_id"] = "../../x";
    CHECK(a.run(state, "again", cfg).reason == stop_reason::finished);
    CHECK(manager->queue().pending() == 0);
}

// ---------------------------------------------------------------- injection

TEST_CASE("the injected memory has DeerFlow's layout and escaping", "[memory]") {
    user_memory m;
    m.user[0].summary = "Builds <compilers> & tools";
    m.user[2].summary = "Release 2.0";
    m.history[1].summary = "Joined in 2024";
    m.facts.push_back(fact("f1", "Prefers \"tabs\"", 0.8, "preference"));
    m.facts.push_back(fact("f2", "Never use sudo", 0.95, "correction"));
    m.facts.back().source_error = "ran sudo <apt>";
    m.facts.push_back(fact("f3", "   ", 0.99));
    m.facts.push_back(fact("f4", "Odd confidence", std::nan(""), "context"));
    m.facts.push_back(fact("f5", "Too sure", 7, "context"));
    CHECK(format_memory_for_injection(m) ==
          "User Context:\n"
          "- Work: Builds &lt;compilers&gt; &amp; tools\n"
          "- Current Focus: Release 2.0\n\n"
          "History:\n"
          "- Earlier: Joined in 2024\n\n"
          "Facts:\n"
          "- [correction | 0.95] Never use sudo (avoid: ran sudo &lt;apt&gt;)\n"
          "- [context | 1.00] Too sure\n"
          "- [preference | 0.80] Prefers \"tabs\"\n"
          "- [context | 0.00] Odd confidence");
    CHECK(memory_block(format_memory_for_injection(user_memory{})).empty());
    memory_injection_options tool_mode;
    tool_mode.include_facts = false;
    CHECK(format_memory_for_injection(m, tool_mode).find("Facts:") == std::string::npos);
}

TEST_CASE("the token budget keeps corrections and stops at the first fact that does not fit", "[memory]") {
    user_memory m;
    for (int i = 0; i < 50; ++i)
        m.facts.push_back(fact(fmt::format("p{}", i), std::string(200, 'p'), 0.9, "preference"));
    m.facts.push_back(fact("c1", "Correction kept", 0.75, "correction"));
    m.facts.push_back(fact("s1", "short", 0.8, "preference")); // would fit, but greedy stops first
    memory_injection_options o;
    o.max_tokens = 200;
    const std::string out = format_memory_for_injection(m, o);
    CHECK(out.starts_with("Facts:\n- [correction | 0.75] Correction kept\n- [preference | 0.90] pppp"));
    CHECK(out.find("short") == std::string::npos);
    // estimate: (chars - cjk)/4 + cjk/2
    CHECK(memory_token_estimate("abcdefgh") == 2);
    CHECK(memory_token_estimate("中文中文") == 2);
    CHECK(memory_token_estimate("ab中文") == 1);
    CHECK(memory_token_estimate(out) <= 200 + 20);
}

// ---------------------------------------------------------------- configuration

TEST_CASE("the memory section reads from JSON and names a bad key", "[memory]") {
    auto read = [](std::string_view text) {
        return boost::json::value_to<memory_options>(boost::json::parse(text));
    };
    auto o = read(R"({"enabled": true, "injection_enabled": false,
                      "backend_config": {"debounce_seconds": 5, "max_facts": 50, "storage_path": "/tmp/m"}})");
    CHECK(!o.injection_enabled);
    CHECK(o.backend_config.debounce_seconds == 5);
    CHECK(o.backend_config.max_facts == 50);
    CHECK(read(R"({"max_facts": 20})").backend_config.max_facts == 20); // legacy top-level key
    auto error = [&](std::string_view text) {
        try {
            read(text);
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error(R"({"backend_config": {"max_facts": 5}})") ==
          "memory.backend_config.max_facts: expected a value from 10 to 500, got 5");
    CHECK(error(R"({"backend_config": {"debounce_seconds": "x"}})") ==
          "memory.backend_config.debounce_seconds: expected a number, got \"x\"");
    CHECK(error(R"({"mode": "both"})") == "memory.mode: expected \"middleware\" or \"tool\", got \"both\"");
    CHECK(
        error(R"({"backend_config": {"bogus": 1}})").starts_with("memory.backend_config.bogus: unknown key"));
    CHECK(error(R"({"injection_enabled": 3})") == "memory.injection_enabled: expected true or false, got 3");
    auto round = boost::json::value_to<memory_options>(boost::json::value_from(o));
    CHECK(round == o);
}

// ---------------------------------------------------------------- staleness and consolidation

namespace memory_review {

user_memory aged_memory() {
    user_memory m;
    auto aged = [&](std::string id, std::string created, double confidence,
                    std::string category = "context") {
        memory_fact f = fact(std::move(id), "about " + created, confidence, std::move(category));
        f.created_at = created + "T00:00:00Z";
        m.facts.push_back(std::move(f));
        return &m.facts.back();
    };
    aged("fact_a", "2026-01-01", 0.8);                                             // 327 days: due
    aged("fact_b", "2026-05-01", 0.75)->expected_valid_days = 365;                 // within its own window
    aged("fact_c", "2026-02-01", 0.9, "correction");                               // protected category
    aged("fact_d", "2026-03-01", 0.9)->last_confirmed_at = "2026-10-01T00:00:00Z"; // confirmed since
    aged("fact_e", "2026-02-10", 0.72);                                            // due
    aged("fact_f", "2026-03-10", 0.95);                                            // due
    aged("fact_g", "2026-11-01", 0.9);                                             // young
    m.facts[0].content = "Uses <Qt> & Boost";
    return m;
}

memory_clock::time_point nov24() { return std::chrono::sys_days(std::chrono::year(2026) / 11 / 24) + 10h; }

std::vector<std::string> ids(const user_memory& m) {
    std::vector<std::string> out;
    for (const auto& f : m.facts)
        out.push_back(f.id);
    return out;
}

} // namespace memory_review

TEST_CASE("the staleness review lists the facts past their window in the prompt", "[memory]") {
    using namespace memory_review;
    const user_memory m = aged_memory();
    memory_backend_options o;
    const std::vector<message> feed{human_message("hi there"), ai_message("hello")};
    const std::string p = memory_update_prompt(m, feed, {}, o, nov24());
    CHECK(p.find("</conversation>\n\n\n\nFacts Due for Review:\n") != std::string::npos);
    CHECK(p.find("<stale_facts>\n"
                 "- [fact_a | context | 0.80 | 2026-01-01 | valid:90d] \"Uses &lt;Qt&gt; &amp; Boost\"\n"
                 "- [fact_e | context | 0.72 | 2026-02-10 | valid:90d] \"about 2026-02-10\"\n"
                 "- [fact_f | context | 0.95 | 2026-03-10 | valid:90d] \"about 2026-03-10\"\n"
                 "</stale_facts>\n\n\n\nUpdate the memory") != std::string::npos);
    CHECK(p.find("Consolidation:") == std::string::npos); // off by default

    memory_backend_options more = o;
    more.staleness_min_candidates = 4; // three are due: no review
    CHECK(memory_update_prompt(m, feed, {}, more, nov24()).find("<stale_facts>") == std::string::npos);
    memory_backend_options off = o;
    off.staleness_review_enabled = false;
    CHECK(memory_update_prompt(m, feed, {}, off, nov24()).find("<stale_facts>") == std::string::npos);
    memory_backend_options shorter = o;
    shorter.staleness_age_days = 20; // fact_g (23 days) and fact_d (54 days since confirmed) join
    const std::string p2 = memory_update_prompt(m, feed, {}, shorter, nov24());
    CHECK(p2.find("[fact_d | context | 0.90 | 2026-10-01 | valid:20d]") != std::string::npos);
    CHECK(p2.find("[fact_g |") != std::string::npos);
    CHECK(p2.find("[fact_c |") == std::string::npos);
    CHECK(p2.find("[fact_b |") == std::string::npos);
}

TEST_CASE("stale removals are capped, least confident first; extensions are bounded", "[memory]") {
    using namespace memory_review;
    user_memory m = aged_memory();
    memory_backend_options o;
    o.staleness_max_removals_per_cycle = 1;
    const auto update = parse_memory_update(update_json(
        {},
        R"(, "staleFactsToRemove": [{"id": "fact_a", "reason": "old"}, "fact_e", {"id": "fact_b"}, {"id": "fact_zz"}],
               "staleFactsToExtend": [{"id": "fact_f", "extendByDays": 100}, {"id": "fact_b", "extendByDays": 30},
                                      {"id": "fact_a", "extendByDays": "soon"}])"));
    const auto report = apply_memory_update(m, update, o, "t", "2026-11-24T10:00:00Z");
    CHECK(report.stale_removed == 1);
    CHECK(report.facts_removed == 1);
    CHECK(report.stale_extended == 1);
    // fact_e (0.72) goes before fact_a (0.80); fact_b is not due and stays as it was
    CHECK(ids(m) == std::vector<std::string>{"fact_a", "fact_b", "fact_c", "fact_d", "fact_f", "fact_g"});
    CHECK(m.facts[1].expected_valid_days == 365);
    CHECK_FALSE(m.facts[0].expected_valid_days);
    // 259 days since fact_f was created, plus 100
    CHECK(m.facts[4].expected_valid_days == 359);
    CHECK(m.facts[4].updated_at == "2026-11-24T10:00:00Z");

    user_memory far = aged_memory();
    apply_memory_update(far,
                        parse_memory_update(update_json(
                            {}, R"(, "staleFactsToExtend": [{"id": "fact_a", "extendByDays": 100000}])")),
                        memory_backend_options{}, "t", "2026-11-24T10:00:00Z");
    CHECK(far.facts[0].expected_valid_days == 3650);

    // Not enough due, or the review off: the answer's stale lists are ignored.
    user_memory few = aged_memory();
    memory_backend_options strict;
    strict.staleness_min_candidates = 4;
    apply_memory_update(few, update, strict, "t", "2026-11-24T10:00:00Z");
    CHECK(few.facts.size() == 7);
    CHECK_FALSE(few.facts[5].expected_valid_days);
}

TEST_CASE("the updater reviews stale facts with its clock and stores the result", "[memory]") {
    using namespace memory_review;
    temp_dir dir;
    auto clock = std::make_shared<manual_clock>(nov24());
    auto storage = std::make_shared<memory_storage>(dir.path, clock);
    user_memory m = aged_memory();
    storage->save("alice", "", m);
    canned_model model;
    model.answers->push_back(update_json({}, R"(, "staleFactsToRemove": [{"id": "fact_a"}],
                                                 "staleFactsToExtend": [{"id": "fact_e", "extendByDays": 10}])"));
    memory_updater updater(storage, model.fn(), memory_backend_options{}, clock);
    REQUIRE(updater.update(item_for("thread-1")));
    REQUIRE(model.prompts->size() == 1);
    CHECK(model.prompts->front().find("[fact_e | context | 0.72 | 2026-02-10 | valid:90d]") !=
          std::string::npos);
    const user_memory back = storage->load("alice", ""); // oldest first
    CHECK(ids(back) == std::vector<std::string>{"fact_c", "fact_e", "fact_d", "fact_f", "fact_b", "fact_g"});
    CHECK(back.facts[1].expected_valid_days == 287 + 10);             // days since 2026-02-10, plus 10
    CHECK(back.facts[2].last_confirmed_at == "2026-10-01T00:00:00Z"); // read back from its file
}

TEST_CASE("consolidation merges groups of stored facts when it is on", "[memory]") {
    using namespace memory_review;
    user_memory m;
    for (int i = 0; i < 8; ++i)
        m.facts.push_back(fact(fmt::format("fact_{}", i), fmt::format("fact {}", i), 0.7 + i * 0.02));
    m.facts[7].source_type = "manual";
    memory_backend_options o;
    o.consolidation_enabled = true;
    o.consolidation_min_facts = 7; // the seven a consolidation may merge (one is manual)
    o.staleness_review_enabled = false;
    const std::vector<message> feed{human_message("hi there"), ai_message("hello")};
    CHECK(memory_update_prompt(m, feed, {}, o, nov24()).find("\n\nConsolidation:\n") != std::string::npos);
    memory_backend_options fewer = o;
    fewer.consolidation_min_facts = 8;
    CHECK(memory_update_prompt(m, feed, {}, fewer, nov24()).find("Consolidation:") == std::string::npos);

    const auto update = parse_memory_update(update_json({fact_json("A new one")}, R"(, "consolidations": [
        {"sourceIds": ["fact_0", "fact_1"], "content": " Prefers short answers ", "confidence": 0.99},
        {"sourceIds": ["fact_1", "fact_2"], "content": "reuses fact_1"},
        {"sourceIds": ["fact_3"], "content": "one source"},
        {"sourceIds": ["fact_4", "fact_5"], "content": "too weak", "confidence": 0.5},
        {"sourceIds": ["fact_6", "fact_7"], "content": "touches a manual fact"},
        {"sourceIds": ["fact_2", "fact_new"], "content": "touches a new fact"},
        {"sourceIds": ["fact_4", "fact_5", "fact_6"], "content": "Works late", "category": "Behavior"}])"));
    int n = 0;
    auto id_source = [&] { return ++n == 1 ? std::string("fact_new") : fmt::format("fact_m{}", n); };
    user_memory on = m;
    const auto report = apply_memory_update(on, update, o, "t", "2026-11-24T10:00:00Z", id_source);
    CHECK(report.facts_consolidated == 5);
    CHECK(ids(on) ==
          std::vector<std::string>{"fact_2", "fact_3", "fact_7", "fact_new", "fact_m2", "fact_m3"});
    const memory_fact& merged = on.facts[4];
    CHECK(merged.content == "Prefers short answers");
    CHECK(merged.confidence == Approx(0.72)); // no more than its most confident source
    CHECK(merged.category == "context");
    CHECK(merged.source == "consolidation");
    CHECK(merged.consolidated_from == std::vector<std::string>{"fact_0", "fact_1"});
    CHECK(on.facts[5].category == "behavior");
    CHECK(on.facts[5].consolidated_from == std::vector<std::string>{"fact_4", "fact_5", "fact_6"});

    user_memory off = m;
    n = 0;
    memory_backend_options disabled = o;
    disabled.consolidation_enabled = false;
    CHECK(apply_memory_update(off, update, disabled, "t", "2026-11-24T10:00:00Z", id_source)
              .facts_consolidated == 0);
    CHECK(off.facts.size() == 9);

    // The merged fact's file names its sources, and reads back.
    temp_dir dir;
    memory_storage s(dir.path);
    s.save("alice", "", on);
    const std::string md = dftest::read(s.fact_file("alice", "", "fact_m2"));
    CHECK(md.find("source: {type: consolidation}\n") != std::string::npos);
    CHECK(md.find("consolidatedFrom: [fact_0, fact_1]\n") != std::string::npos);
    const user_memory back = s.load("alice", "");
    REQUIRE(back.facts.size() == 6);
    const auto it =
        std::find_if(back.facts.begin(), back.facts.end(), [](auto& f) { return f.id == "fact_m2"; });
    REQUIRE(it != back.facts.end());
    CHECK(*it == merged);
}

TEST_CASE("in the preset, summarization hands what it replaces to memory at once", "[memory][concurrency]") {
    temp_dir dir;
    auto chain = make_deerflow_pipeline(boost::json::parse(fmt::format(
        R"({{"summarization": {{"trigger": [{{"type": "messages", "value": 6}}], "keep": {{"type": "messages", "value": 2}}}},
            "memory": {{"backend_config": {{"storage_path": {}}}}}}})",
        boost::json::serialize(boost::json::value(dir.path.string())))));
    REQUIRE(chain.get<summarization>()->before_summarization.size() == 1);
    chain.get<summarization>()->model = any_chat_model(scripted_model({ai_message("Summary.")}));
    std::shared_ptr<memory_manager> manager = chain.get<memory>()->manager();
    canned_model memory_model;
    memory_model.answers->push_back(update_json({}));
    memory_model.answers->push_back(update_json({}));
    manager->set_model(memory_model.fn());

    agent<scripted_model, deerflow_pipeline> a(scripted_model({ai_message("final")}), tool_set{},
                                               std::move(chain));
    agent<scripted_model, deerflow_pipeline>::state_type state;
    state.messages = {human_message("I prefer tabs over spaces"),
                      ai_message("Noted."),
                      human_message("second question"),
                      ai_message("second answer"),
                      human_message("third question"),
                      ai_message("third answer")};
    run_config cfg;
    cfg.thread_id = "t-flush";
    cfg.context["user_id"] = "alice";
    REQUIRE(a.run(state, "next", cfg).ok());
    CHECK(get<summary_text_field>(state) == "Summary.");
    REQUIRE(manager->flush(5s));
    REQUIRE_FALSE(memory_model.prompts->empty());
    // The first update is the immediate one, with the messages the summary replaced.
    const std::string& first = memory_model.prompts->front();
    CHECK(first.find("User: I prefer tabs over spaces\n\nAssistant: Noted.") != std::string::npos);
    CHECK(first.find("third answer") == std::string::npos); // kept, not summarised
}

// ---------------------------------------------------------------- capacity policies and confirmations

namespace memory_eviction {

memory_clock::time_point at(int y, unsigned mo, unsigned d, int h = 0) {
    return std::chrono::sys_days(std::chrono::year(y) / mo / d) + std::chrono::hours(h);
}

memory_fact dated(std::string id, double confidence, std::string created, std::string confirmed = {},
                  std::string category = "context") {
    memory_fact f = fact(id, "about " + id, confidence, std::move(category));
    f.created_at = std::move(created);
    f.last_confirmed_at = std::move(confirmed);
    return f;
}

std::vector<std::string> ids_at(const std::vector<memory_fact>& facts, const std::vector<std::size_t>& at) {
    std::vector<std::string> out;
    for (std::size_t i : at)
        out.push_back(facts[i].id);
    return out;
}

} // namespace memory_eviction

TEST_CASE("hybrid-v1 scores confidence, confirmation freshness and access heat", "[memory]") {
    using namespace memory_eviction;
    const memory_backend_options o;
    const auto now = at(2026, 11, 24);
    // Confirmed 90 days ago: freshness halves once.
    const auto confirmed =
        score_memory_fact(dated("fact_a", 0.8, "2026-01-01T00:00:00Z", "2026-08-26T00:00:00Z"),
                          memory_eviction_hybrid_v1, o, now);
    CHECK(confirmed.confidence == Approx(0.8));
    CHECK(confirmed.confirmation_freshness == Approx(0.5));
    CHECK(confirmed.access_heat == 0);
    CHECK(confirmed.value == Approx(0.65 * 0.8 + 0.25 * 0.5));
    // Never confirmed: its creation counts half.
    CHECK(score_memory_fact(dated("fact_b", 0.8, "2026-08-26T00:00:00Z"), memory_eviction_hybrid_v1, o, now)
              .confirmation_freshness == Approx(0.25));
    // Malformed dates count nothing; a confidence that is not a number counts 0.5.
    memory_fact odd = dated("fact_c", std::nan(""), "not-a-date", "also-not-a-date");
    const auto odd_score = score_memory_fact(odd, memory_eviction_hybrid_v1, o, now);
    CHECK(odd_score.confirmation_freshness == 0);
    CHECK(odd_score.confidence == Approx(0.5));
    CHECK(score_memory_fact(dated("fact_d", 1.7, "x"), memory_eviction_hybrid_v1, o, now).confidence == 1);
    // Access heat: eight fresh accesses saturate; it halves every 30 days before it is squashed.
    const memory_fact_usage hot{8, "2026-11-24T00:00:00Z"}, cooled{8, "2026-10-25T00:00:00Z"}, undated{8, ""};
    CHECK(score_memory_fact(odd, memory_eviction_hybrid_v1, o, now, &hot).access_heat == Approx(1));
    CHECK(score_memory_fact(odd, memory_eviction_hybrid_v1, o, now, &cooled).access_heat ==
          Approx(std::log(5.0) / std::log(9.0)));
    CHECK(score_memory_fact(odd, memory_eviction_hybrid_v1, o, now, &undated).access_heat == 0);
    // The confidence policy is the confidence alone.
    const auto plain = score_memory_fact(dated("fact_a", 0.8, "2026-01-01T00:00:00Z", "2026-11-24T00:00:00Z"),
                                         memory_eviction_confidence, o, now, &hot);
    CHECK(plain.value == Approx(0.8));
    CHECK(plain.confirmation_freshness == 0);
}

TEST_CASE("hybrid-v1 keeps fresh confirmations and reserves slots for corrections", "[memory]") {
    using namespace memory_eviction;
    const memory_backend_options o;
    const auto now = at(2026, 11, 24);
    const std::vector<memory_fact> facts{
        dated("fact_a", 0.95, "2025-11-24T00:00:00Z"),                         // 0.625
        dated("fact_b", 0.75, "2025-11-24T00:00:00Z", "2026-11-24T00:00:00Z"), // 0.7375: confirmed today
        dated("fact_c", 0.80, "2026-11-24T00:00:00Z"),                         // 0.645: new today
        dated("fact_d", 0.85, "2025-11-24T00:00:00Z", {}, "correction"),       // 0.56
        dated("fact_e", 0.90, "2025-11-24T00:00:00Z"),                         // 0.5925
    };
    const auto hybrid = select_facts_for_capacity(facts, 3, memory_eviction_hybrid_v1, o, now);
    CHECK(hybrid.reserved_correction_slots == 1); // min(10, ceil(3 × 0.10))
    CHECK(ids_at(facts, hybrid.kept) == std::vector<std::string>{"fact_b", "fact_c", "fact_d"});
    CHECK(ids_at(facts, hybrid.evicted) == std::vector<std::string>{"fact_e", "fact_a"});
    CHECK(hybrid.scores[1].value == Approx(0.7375));

    const auto by_confidence = select_facts_for_capacity(facts, 3, memory_eviction_confidence, o, now);
    CHECK(by_confidence.reserved_correction_slots == 0);
    CHECK(ids_at(facts, by_confidence.kept) == std::vector<std::string>{"fact_a", "fact_e", "fact_d"});
    CHECK(ids_at(facts, by_confidence.evicted) == std::vector<std::string>{"fact_b", "fact_c"});

    // Without corrections the reserved slot goes to the rest.
    std::vector<memory_fact> plain = facts;
    plain[3].category = "context";
    const auto open = select_facts_for_capacity(plain, 3, memory_eviction_hybrid_v1, o, now);
    CHECK(open.reserved_correction_slots == 0);
    CHECK(ids_at(plain, open.kept) == std::vector<std::string>{"fact_b", "fact_c", "fact_a"});

    // At most eviction_correction_reserved_max slots; never more than there are corrections.
    std::vector<memory_fact> many;
    for (int i = 0; i < 40; ++i)
        many.push_back(dated(fmt::format("fact_{:02}", i), i < 20 ? 0.7 : 0.99, "2026-11-24T00:00:00Z", {},
                             i < 20 ? "correction" : "context"));
    const auto capped = select_facts_for_capacity(many, 30, memory_eviction_hybrid_v1, o, now);
    CHECK(capped.reserved_correction_slots == 3); // ceil(30 × 0.10)
    CHECK(capped.kept.size() == 30);
    memory_backend_options wide = o;
    wide.eviction_correction_reserved_fraction = 1.0;
    wide.eviction_correction_reserved_max = 15;
    CHECK(
        select_facts_for_capacity(many, 30, memory_eviction_hybrid_v1, wide, now).reserved_correction_slots ==
        15);
    CHECK(select_facts_for_capacity(many, 0, memory_eviction_hybrid_v1, wide, now).kept.empty());
}

TEST_CASE("the update evicts by the configured policy; shadow mode reports hybrid-v1's choice", "[memory]") {
    auto stored = [] {
        user_memory m;
        for (int i = 0; i < 10; ++i)
            m.facts.push_back(fact(fmt::format("fact_{:08}", i), fmt::format("fact {}", i), 0.71 + i * 0.01));
        m.facts[0].last_confirmed_at = "2026-11-24T10:00:00Z"; // the least confident, confirmed today
        return m;
    };
    const auto update = parse_memory_update(update_json({fact_json("strong", 0.99)}));
    const std::string now = "2026-11-24T10:00:00Z";
    const std::function<std::string()> new_id = [] { return std::string("fact_new"); };

    memory_backend_options hybrid;
    hybrid.max_facts = 10;
    hybrid.fact_eviction_policy = "hybrid-v1";
    user_memory h = stored();
    const auto hr = apply_memory_update(h, update, hybrid, "t", now, new_id);
    CHECK(hr.facts_evicted == 1);
    CHECK(hr.evicted_ids == std::vector<std::string>{"fact_00000001"});
    CHECK(hr.shadow_evicted_ids.empty());
    CHECK(h.facts.front().content == "strong");
    CHECK(std::any_of(h.facts.begin(), h.facts.end(), [](auto& f) { return f.id == "fact_00000000"; }));

    memory_backend_options shadow;
    shadow.max_facts = 10;
    shadow.fact_eviction_shadow_enabled = true;
    user_memory s = stored();
    const auto sr = apply_memory_update(s, update, shadow, "t", now, new_id);
    CHECK(sr.evicted_ids == std::vector<std::string>{"fact_00000000"}); // confidence decides
    CHECK(sr.shadow_evicted_ids == std::vector<std::string>{"fact_00000001"});
    CHECK(std::none_of(s.facts.begin(), s.facts.end(), [](auto& f) { return f.id == "fact_00000000"; }));

    memory_backend_options plain;
    plain.max_facts = 10;
    user_memory p = stored();
    const auto pr = apply_memory_update(p, update, plain, "t", now, new_id);
    CHECK(pr.evicted_ids == std::vector<std::string>{"fact_00000000"});
    CHECK(pr.shadow_evicted_ids.empty());
    CHECK(p == s);
}

TEST_CASE("factsToReinforce confirms stored facts only on a reinforcement signal under hybrid or shadow",
          "[memory]") {
    using namespace memory_review;
    const auto update = parse_memory_update(update_json({}, R"(, "factsToReinforce": [
        {"id": "fact_a", "scope": "User", "reason": "said that was exactly right"},
        {"id": "fact_b", "scope": "thread", "reason": "task only"},
        {"id": "fact_b", "scope": "user", "reason": "  "},
        {"id": "fact_e", "scope": "user"},
        {"id": "fact_zz", "scope": "user", "reason": "unknown id"},
        "fact_f", 7,
        {"id": "fact_a", "scope": "user", "reason": "named twice"}],
        "staleFactsToRemove": [{"id": "fact_a"}, {"id": "fact_e"}])"));
    const std::string now = "2026-11-24T10:00:00Z";
    const std::vector<std::string> reinforced{"reinforcement"};
    memory_backend_options hybrid;
    hybrid.fact_eviction_policy = "hybrid-v1";

    user_memory m = aged_memory();
    const auto report = apply_memory_update(m, update, hybrid, "t", now, {}, reinforced);
    CHECK(report.facts_reinforced == 1);
    // fact_a was due for review, but a confirmation is evidence it still holds: only fact_e goes.
    CHECK(ids(m) == std::vector<std::string>{"fact_a", "fact_b", "fact_c", "fact_d", "fact_f", "fact_g"});
    CHECK(report.stale_removed == 1);
    CHECK(m.facts[0].last_confirmed_at == now);
    CHECK(m.facts[0].confirmation_count == 1);
    CHECK(m.facts[0].updated_at == now);
    CHECK(m.facts[1].confirmation_count == 0);
    CHECK(m.facts[1].last_confirmed_at.empty());
    // A second confirmation counts up.
    CHECK(apply_memory_update(m, update, hybrid, "t", "2026-11-25T10:00:00Z", {}, reinforced)
              .facts_reinforced == 1);
    CHECK(m.facts[0].confirmation_count == 2);
    CHECK(m.facts[0].last_confirmed_at == "2026-11-25T10:00:00Z");

    // No reinforcement signal, or no hybrid tracking: nothing is confirmed.
    user_memory quiet = aged_memory();
    CHECK(apply_memory_update(quiet, update, hybrid, "t", now, {}, {"correction"}).facts_reinforced == 0);
    CHECK(quiet.facts[0].confirmation_count == 0);
    user_memory untracked = aged_memory();
    CHECK(apply_memory_update(untracked, update, memory_backend_options{}, "t", now, {}, reinforced)
              .facts_reinforced == 0);
    CHECK(untracked.facts[0].last_confirmed_at.empty());
    memory_backend_options shadow;
    shadow.fact_eviction_shadow_enabled = true;
    user_memory shadowed = aged_memory();
    CHECK(apply_memory_update(shadowed, update, shadow, "t", now, {}, reinforced).facts_reinforced == 1);
    // A list that is not a list is ignored.
    user_memory odd = aged_memory();
    CHECK(apply_memory_update(odd, parse_memory_update(R"({"newFacts": [], "factsToReinforce": "fact_a"})"),
                              hybrid, "t", now, {}, reinforced)
              .facts_reinforced == 0);

    // The confirmation is stored in the fact's front matter and read back.
    temp_dir dir;
    memory_storage s(dir.path);
    s.save("alice", "", m);
    const std::string md = dftest::read(s.fact_file("alice", "", "fact_a"));
    CHECK(md.find("lastConfirmedAt: '2026-11-25T10:00:00Z'\nconfirmationCount: 2\n") != std::string::npos);
    CHECK(dftest::read(s.fact_file("alice", "", "fact_b")).find("confirmationCount") == std::string::npos);
    const user_memory back = s.load("alice", "");
    const auto it =
        std::find_if(back.facts.begin(), back.facts.end(), [](auto& f) { return f.id == "fact_a"; });
    REQUIRE(it != back.facts.end());
    CHECK(it->confirmation_count == 2);
    CHECK(it->last_confirmed_at == "2026-11-25T10:00:00Z");
}

TEST_CASE("the manager confirms a fact when the user reinforces it under hybrid-v1", "[memory]") {
    temp_dir dir;
    canned_model model;
    auto clock = std::make_shared<manual_clock>(memory_eviction::at(2026, 11, 24, 9));
    memory_options o = options_at(dir);
    o.backend_config.fact_eviction_policy = "hybrid-v1";
    memory_manager manager(o, {.model = model.fn(), .clock = clock, .start_worker = false});
    std::vector<memory_apply_report> reports;
    manager.updater().set_observer(
        [&](const memory_update_item&, const memory_apply_report& r) { reports.push_back(r); });
    std::vector<message> conv{human_message("I prefer short answers"), ai_message("Understood.")};
    model.answers->push_back(update_json({fact_json("Prefers short answers")}));
    manager.add("t1", conv, "", "alice");
    REQUIRE(manager.flush(1s));
    const std::string id(manager.read_view("alice", "").at("facts").at(0).at("id").as_string());

    clock->advance(std::chrono::hours(24));
    conv.push_back(human_message("Perfect! Keep doing that."));
    conv.push_back(ai_message("Will do."));
    model.answers->push_back(update_json(
        {}, fmt::format(R"(, "factsToReinforce": [{{"id": "{}", "scope": "user", "reason": "confirmed"}}])",
                        id)));
    manager.add("t1", conv, "", "alice");
    REQUIRE(manager.flush(1s));
    REQUIRE(model.prompts->size() == 2);
    CHECK(model.prompts->at(1).find("\"factsToReinforce\"") != std::string::npos); // the reinforcement hint
    const auto view = manager.read_view("alice", "");
    CHECK(view.at("facts").at(0).at("lastConfirmedAt") == "2026-11-25T09:00:00Z");
    CHECK(view.at("facts").at(0).at("confirmationCount") == 1);
    REQUIRE(reports.size() == 2);
    CHECK(reports[1].facts_reinforced == 1);
}

TEST_CASE("the eviction settings read from JSON and a bad one names its key", "[memory]") {
    auto read = [](std::string_view text) {
        return boost::json::value_to<memory_options>(boost::json::parse(text));
    };
    auto error = [&](std::string_view text) {
        try {
            read(text);
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const auto o =
        read(R"({"backend_config": {"fact_eviction_policy": "hybrid-v1", "fact_eviction_shadow_enabled": true,
        "eviction_confidence_weight": 0.5, "eviction_confirmation_weight": 0.3, "eviction_access_weight": 0.2,
        "eviction_confirmation_half_life_days": 60, "eviction_access_half_life_days": 14,
        "eviction_correction_reserved_fraction": 0.2, "eviction_correction_reserved_max": 4}})");
    const auto& b = o.backend_config;
    CHECK(b.fact_eviction_policy == "hybrid-v1");
    CHECK(b.fact_eviction_shadow_enabled);
    CHECK(b.eviction_confirmation_weight == Approx(0.3));
    CHECK(b.eviction_access_half_life_days == 14);
    CHECK(b.eviction_correction_reserved_max == 4);
    CHECK(boost::json::value_to<memory_options>(boost::json::value_from(o)) == o);
    CHECK(read(R"({"fact_eviction_policy": "hybrid-v1"})").backend_config.fact_eviction_policy ==
          "hybrid-v1"); // legacy top-level spelling
    const memory_backend_options defaults;
    CHECK(defaults.fact_eviction_policy == "confidence");
    CHECK_FALSE(defaults.fact_eviction_shadow_enabled);
    CHECK(defaults.eviction_confidence_weight + defaults.eviction_confirmation_weight +
              defaults.eviction_access_weight ==
          Approx(1.0));
    CHECK(
        error(R"({"backend_config": {"fact_eviction_policy": "lru"}})") ==
        "memory.backend_config.fact_eviction_policy: expected \"confidence\" or \"hybrid-v1\", got \"lru\"");
    CHECK(error(R"({"backend_config": {"eviction_access_weight": 1.5}})") ==
          "memory.backend_config.eviction_access_weight: expected a value from 0 to 1, got 1.5");
    CHECK(error(R"({"backend_config": {"eviction_confidence_weight": 0.7}})") ==
          "memory.backend_config.eviction_confidence_weight: the three eviction weights (confidence, "
          "confirmation, access) must add up to 1, they add up to 1.05");
    CHECK(error(R"({"backend_config": {"eviction_access_half_life_days": 0}})") ==
          "memory.backend_config.eviction_access_half_life_days: expected a value from 1 to 3650, got 0");
    CHECK(error(R"({"backend_config": {"fact_eviction_shadow_enabled": "yes"}})") ==
          "memory.backend_config.fact_eviction_shadow_enabled: expected true or false, got \"yes\"");
}

TEST_CASE("conversations queued from many threads while the worker runs are all remembered",
          "[memory][concurrency]") {
    temp_dir dir;
    memory_options o = options_at(dir);
    o.backend_config.debounce_seconds = 0.001;
    o.backend_config.between_items_seconds = 0;
    // The worker's model: one fact named after the conversation's thread.
    memory_model model = [](const chat_request& r) {
        const std::string prompt = r.messages.back().text();
        const auto at = prompt.find("User: remember ");
        const std::string what = prompt.substr(at + 15, prompt.find('\n', at) - at - 15);
        model_response out;
        out.ai = ai_message(update_json({fact_json("Thread " + what)}));
        return out;
    };
    memory_manager manager(o, {.model = model});
    std::vector<std::thread> adders;
    for (int t = 0; t < 4; ++t)
        adders.emplace_back([&manager, t] {
            for (int i = 0; i < 5; ++i) {
                const std::string thread = fmt::format("c{}-{}", t, i);
                manager.add(thread, {human_message("remember " + thread), ai_message("ok, noted")}, "",
                            "alice");
            }
        });
    for (auto& a : adders)
        a.join();
    REQUIRE(manager.flush(20s));
    CHECK(manager.queue().take_failures().empty());
    const auto facts = manager.read_view("alice", "").at("facts").as_array();
    CHECK(facts.size() == 20);
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 5; ++i) {
            const std::string want = fmt::format("Thread c{}-{}", t, i);
            CHECK(std::any_of(facts.begin(), facts.end(),
                              [&](const auto& f) { return f.at("content").as_string() == want; }));
        }
    CHECK(manager.shutdown());
}
