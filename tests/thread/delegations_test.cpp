// delegations: the ledger field's merge rule, its cap, run counts and JSON form.
#include <agentware/thread/delegations.hpp>

#include "../middleware/delegations_support.hpp"

#include <agentware/json/reader.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <vector>

using namespace agentware;
using namespace delegations_test;

TEST_CASE("the delegations field folds updates in by id, terminal statuses stay, 50 kept",
          "[middleware][durable_context]") {
    std::vector<delegation_entry> ledger{entry("a", "in_progress"), entry("b", "completed")};
    auto newer = entry("a", "completed", "");
    newer.created_at = "later";
    newer.result_brief = "done";
    delegations_field::merge(ledger, {newer, entry("b", "in_progress"), entry("c", "in_progress")});
    REQUIRE(ledger.size() == 3);
    CHECK(ledger[0].status == "completed");
    CHECK(ledger[0].created_at == "2026-11-23T09:00:00Z"); // the original stamp
    CHECK(ledger[0].run_id == "r1");                       // kept when the update has none
    CHECK(ledger[1].status == "completed");                // not overwritten by in_progress
    std::vector<delegation_entry> many;
    for (int i = 0; i < 60; ++i)
        many.push_back(entry("t" + std::to_string(i), "in_progress"));
    delegations_field::merge(ledger, std::move(many));
    CHECK(ledger.size() == 50);
    CHECK(ledger.back().id == "t59");
    CHECK(count_run_delegations(ledger, "r1") == 50);
    CHECK(count_run_delegations(ledger, "r2") == 0);
    // The JSON form reads back.
    auto back = boost::json::value_to<std::vector<delegation_entry>>(boost::json::value_from(ledger));
    CHECK(back == ledger);
    CHECK_THROWS_AS(
        json_read_as<delegation_entry>(boost::json::parse(R"({"status": "x"})"), "delegations[0]"),
        json_error);
}
