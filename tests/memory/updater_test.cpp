// The memory updater: the model's answer parsed tolerantly, every gate, capacity and
// removals, the extraction prompt, stale facts reviewed, consolidation, eviction by
// policy, reinforcement.
#include <agentware/memory/updater.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace agentware;
using namespace std::chrono_literals;
using dftest::temp_dir;
using namespace memory_test;

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

TEST_CASE("stale removals are capped, least confident first, extensions are bounded", "[memory]") {
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

TEST_CASE("the update evicts by the configured policy, shadow mode reports hybrid-v1's choice", "[memory]") {
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
