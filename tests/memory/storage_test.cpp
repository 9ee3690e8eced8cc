// DeerMem v2 storage: the layout on disk, stale revisions, corrupt and v1 files,
// unsafe user ids, a writer killed mid-write.
#include <agentware/memory/storage.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

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
