// tool_receipt: a receipt for every tool call, ok or failed, in the result's
// metadata and the thread's ledger; the hidden ledger in the model's requests,
// its exact text and its 2,000-character cap; the preset's `verification`
// section.
#include "../agent/support.hpp"

#include <agentware/agent/agent.hpp>
#include <agentware/middleware/tool_error_handling.hpp>
#include <agentware/middleware/tool_receipt.hpp>
#include <agentware/model/scripted_model.hpp>
#include <agentware/presets/deerflow.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

using namespace agentware;

namespace {

const std::string header =
    "## Tool receipts (execution record)\n"
    "Cite receipt ids (e.g. [r1]) in your final report for every claim about an action you took.\n"
    "Execution evidence only \xE2\x80\x94 receipts record that a call happened and its status; they do not "
    "validate claim correctness or task acceptance.";

auto exploding() {
    return make_tool("explode", "Fails.", R"({"type":"object"})",
                     [](const boost::json::object&) -> std::string { throw std::runtime_error("boom"); });
}

tool_receipt always_rendering() {
    tool_receipt_options o;
    o.render_mode = receipt_render_mode::always;
    tool_receipt t(o);
    t.clock = [] { return std::chrono::sys_days(std::chrono::year(2026) / 11 / 23) + std::chrono::hours(9); };
    return t;
}

tool_receipt_entry entry(std::string id, std::size_t bytes = 5) {
    return tool_receipt_entry{std::move(id),      "t",   "success", "0123456789abcdef",
                              "fedcba9876543210", bytes, ""};
}

std::string json_error_of(const char* config) {
    try {
        (void)make_deerflow_pipeline(boost::json::parse(config));
    } catch (const json_error& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST_CASE("tool_receipt stamps ok and failed calls and shows the ledger to the model",
          "[middleware][tool_receipt]") {
    scripted_model model(
        {test::calls({test::call("c1", "echo", R"({"text":"hi"})"), test::call("c2", "explode")}),
         ai_message("done")});
    auto a = make_agent(model, tool_set(test::echo_tool(), exploding()), always_rendering(),
                        tool_error_handling{});
    decltype(a)::state_type state;
    auto r = a.run(state, "go");
    REQUIRE(r.ok());

    // The results carry their receipts (the failed one with tool_error_handling's status).
    const message& ok = state.messages.at(2);
    const message& failed = state.messages.at(3);
    REQUIRE(ok.tool_call_id() == "c1");
    REQUIRE(failed.tool_call_id() == "c2");
    const auto& ok_receipt = ok.metadata.at(tool_receipt::receipt_key).as_object();
    CHECK(ok_receipt.at("tool_call_id") == "c1");
    CHECK(ok_receipt.at("tool_name") == "echo");
    CHECK(ok_receipt.at("status") == "success");
    CHECK(ok_receipt.at("args_sha256") ==
          "1af583c098473ec0"); // sha256('{"text": "hi"}'), as DeerFlow dumps it
    CHECK(ok_receipt.at("output_sha256") == "8f434346648f6b96");
    CHECK(ok_receipt.at("output_bytes") == 2);
    CHECK(ok_receipt.at("created_at") == "2026-11-23T09:00:00Z");
    const auto& failed_receipt = failed.metadata.at(tool_receipt::receipt_key).as_object();
    CHECK(failed_receipt.at("status") == "error");
    CHECK(failed_receipt.at("args_sha256") == "44136fa355b3678a"); // sha256("{}")
    CHECK(failed_receipt.at("output_sha256") == "4346d8611eaa9acf");
    CHECK(failed_receipt.at("output_bytes") == 123);

    // The ledger in the state, and read as far as the history went.
    const auto& ledger = get<tool_receipts_field>(state);
    REQUIRE(ledger.receipts.size() == 2);
    CHECK(ledger.receipts[0].tool_name == "echo");
    CHECK(ledger.receipts[1].status == "error");
    CHECK(ledger.seen == 4); // read before the second model call; the answer came after

    // The second request opens with the hidden ledger; the first had none.
    auto requests = model.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].messages.size() == 1);
    const auto& second = requests[1].messages;
    REQUIRE(second.size() == 5);
    CHECK(second[0].is_human());
    CHECK(second[0].metadata_flag("hide_from_ui"));
    CHECK(second[0].metadata_flag(tool_receipt::context_key));
    CHECK(second[0].text() == header + "\n- [r1] echo status=success args_sha256=1af583c098473ec0 "
                                       "output_sha256=8f434346648f6b96 bytes=2"
                                       "\n- [r2] explode status=error args_sha256=44136fa355b3678a "
                                       "output_sha256=4346d8611eaa9acf bytes=123");
    // The stored history is unchanged.
    CHECK(state.messages.size() == 5);
    CHECK(state.messages[0].text() == "go");
}

TEST_CASE("tool_receipt's ledger keeps the newest receipts within 2,000 characters",
          "[middleware][tool_receipt]") {
    tool_receipt t;
    CHECK(t.render({}).empty());

    std::vector<tool_receipt_entry> few;
    for (int i = 0; i < 18; ++i)
        few.push_back(entry("c" + std::to_string(i)));
    std::string all = t.render(few);
    CHECK(all.starts_with(header + "\n- [r1] t status=success"));
    CHECK(all.find("omitted") == std::string::npos);
    CHECK(detail::utf8_chars(all) <= 2000);

    std::vector<tool_receipt_entry> many;
    for (int i = 0; i < 100; ++i)
        many.push_back(entry("c" + std::to_string(i)));
    std::string capped = t.render(many);
    CHECK(detail::utf8_chars(capped) == 1986);
    CHECK(capped.starts_with(header + "\n- ... older receipts omitted (context budget)"
                                      "\n- [r83] t status=success args_sha256=0123456789abcdef "
                                      "output_sha256=fedcba9876543210 bytes=5\n- [r84] "));
    CHECK(capped.ends_with("\n- [r100] t status=success args_sha256=0123456789abcdef "
                           "output_sha256=fedcba9876543210 bytes=5"));

    // A budget below the header: DeerFlow's hard cut, max - 4 characters and "\n...".
    tool_receipt_options small;
    small.max_ledger_chars = 40;
    CHECK(tool_receipt(small).render(many) == "## Tool receipts (execution record)\n\n...");
}

TEST_CASE("tool_receipt reads only the new messages and follows the turn's delegations",
          "[middleware][tool_receipt]") {
    tool_receipt t;
    auto stamped = [&](std::string id, std::string name) {
        message m = tool_message(id, name, "out");
        m.id = "m-" + id;
        m.metadata[tool_receipt::receipt_key] =
            boost::json::value_from(t.make_receipt(test::call(id, name), m));
        return m;
    };
    std::vector<message> ms;
    message user = human_message("go");
    user.id = "u1";
    ms.push_back(user);
    ms.push_back(stamped("a", "ls"));
    tool_receipts_state ledger;
    t.update_ledger(ledger, ms);
    CHECK(ledger.receipts.size() == 1);
    CHECK_FALSE(ledger.turn_has_delegation);

    message task = stamped("b", "task");
    task.metadata["subagent_status"] = "completed";
    ms.push_back(task);
    message forged = tool_message("x", "bad", "out"); // a malformed stamp is left out
    forged.id = "m-x";
    forged.metadata[tool_receipt::receipt_key] = boost::json::object{{"tool_name", 1}};
    ms.push_back(forged);
    t.update_ledger(ledger, ms);
    CHECK(ledger.receipts.size() == 2);
    CHECK(ledger.receipts[1].tool_name == "task");
    CHECK(ledger.turn_has_delegation);
    CHECK(ledger.seen == 4);

    message next = human_message("thanks");
    next.id = "u2";
    ms.push_back(next);
    t.update_ledger(ledger, ms);
    CHECK_FALSE(ledger.turn_has_delegation); // a new turn

    // A rewritten history (a summary replaced the start) is read again without doubles.
    std::vector<message> rewritten{human_message("summary"), stamped("b", "task"), stamped("c", "grep")};
    rewritten[0].id = "s";
    t.update_ledger(ledger, rewritten);
    REQUIRE(ledger.receipts.size() == 3);
    CHECK(ledger.receipts[2].tool_call_id == "c");
    CHECK(ledger.seen == 3);
}

TEST_CASE("tool_receipt hashes arguments as DeerFlow's json.dumps(sort_keys=True) writes them",
          "[middleware][tool_receipt]") {
    std::string out;
    detail::python_json_dumps_sorted(
        boost::json::parse(R"({"b":1,"a":[1.5,"\u00e9",true,null,2.0,"\ud83d\ude00",{"z":1,"y":"\n"}]})"),
        out);
    CHECK(out == R"({"a": [1.5, "\u00e9", true, null, 2.0, "\ud83d\ude00", {"y": "\n", "z": 1}], "b": 1})");
}

TEST_CASE("DeerFlow's chain: tool_receipt is on unless verification turns it off",
          "[middleware][tool_receipt][presets]") {
    auto chain = make_deerflow_pipeline(boost::json::parse("{}"));
    REQUIRE(chain.get<tool_receipt>());
    CHECK(chain.get<tool_receipt>()->options().render_mode == receipt_render_mode::delegation_only);
    CHECK(chain.get<tool_receipt>()->options().max_ledger_chars == 2000);

    auto always = make_deerflow_pipeline(boost::json::parse(
        R"({"verification": {"receipts_enabled": true, "receipts_render_mode": "always"}})"));
    REQUIRE(always.get<tool_receipt>());
    CHECK(always.get<tool_receipt>()->options().render_mode == receipt_render_mode::always);

    CHECK_FALSE(make_deerflow_pipeline(boost::json::parse(R"({"verification": {"receipts_enabled": false}})"))
                    .get<tool_receipt>());
    CHECK_FALSE(make_deerflow_pipeline(boost::json::parse(R"({"verification": false})")).get<tool_receipt>());

    CHECK(json_error_of(R"({"verification": {"receipt_enabled": false}})")
              .starts_with("verification.receipt_enabled: unknown key (known: "));
    CHECK(json_error_of(R"({"verification": {"receipts_render_mode": "sometimes"}})")
              .starts_with("verification.receipts_render_mode: "));
    CHECK(json_error_of(R"({"verification": {"receipts_enabled": "yes"}})")
              .starts_with("verification.receipts_enabled: expected "));

    // The JSON form goes both ways.
    tool_receipt_options o;
    o.render_mode = receipt_render_mode::always;
    o.max_ledger_chars = 500;
    CHECK(boost::json::value_to<tool_receipt_options>(boost::json::value_from(o)) == o);
}
