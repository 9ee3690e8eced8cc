// The tool policy: expanded against the capability catalog, and its JSON form.
#include <agentware/presets/tool_policy.hpp>

#include "../support/json_errors.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

using namespace agentware;

TEST_CASE("a tool policy expands against the catalog", "[deep_agent][tool_policy]") {
    tool_policy p;
    // Defaults: the catalog asks for shell and execute.
    auto e = p.expand();
    CHECK(e.mode_of("shell") == tool_approval_mode::ask);
    CHECK(e.mode_of("execute") == tool_approval_mode::ask);
    CHECK(e.mode_of("read_file") == tool_approval_mode::allow);
    CHECK(e.disabled_tools.empty());

    p.disabled_middleware = {"web", "git"};
    p.disabled_tools = {"delete"};
    p.approvals = {{"write_file", tool_approval_mode::ask},
                   {"shell", tool_approval_mode::deny},
                   {"fetch", tool_approval_mode::ask}};
    e = p.expand();
    CHECK_FALSE(e.enabled("web"));
    CHECK(e.enabled("search"));
    CHECK_FALSE(e.offered("fetch"));
    CHECK_FALSE(e.offered("git_log"));
    CHECK_FALSE(e.offered("delete"));
    CHECK(e.offered("grep"));
    CHECK(e.mode_of("write_file") == tool_approval_mode::ask);
    CHECK(e.mode_of("shell") == tool_approval_mode::deny);  // the policy wins over the catalog
    CHECK(e.mode_of("fetch") == tool_approval_mode::allow); // switched off: no mode
    CHECK_FALSE(e.approvals.contains("fetch"));

    // A tool two capabilities offer stays while one of them is on.
    p = {};
    p.disabled_middleware = {"search"};
    e = p.expand();
    CHECK_FALSE(e.offered("tree"));
    CHECK(e.offered("grep")); // the filesystem offers it too

    // The container sandbox switches off what runs host commands.
    p = {};
    p.sandbox = sandbox_mode::container;
    e = p.expand();
    CHECK_FALSE(e.enabled("shell"));
    CHECK_FALSE(e.enabled("git"));
    CHECK_FALSE(e.offered("shell"));
    CHECK(e.enabled("filesystem"));

    // Extra defaults sit between the catalog's and the policy's.
    p = {};
    p.approvals = {{"deploy", tool_approval_mode::deny}};
    e = p.expand(default_capability_catalog(),
                 {{"deploy", tool_approval_mode::ask}, {"publish", tool_approval_mode::ask}});
    CHECK(e.mode_of("deploy") == tool_approval_mode::deny);
    CHECK(e.mode_of("publish") == tool_approval_mode::ask);

    // Wired to tool_approval and human_in_the_loop.
    auto handler = e.handler();
    CHECK(handler(tool_call{"1", "deploy", {}}) == tool_approval_decision::deny);
    CHECK(handler(tool_call{"2", "publish", {}}) == tool_approval_decision::ask_user);
    CHECK(handler(tool_call{"3", "read_file", {}}) == tool_approval_decision::approve);
    auto review = e.interrupt_on();
    CHECK(review.interrupt_on.contains("publish"));
    CHECK(review.interrupt_on.contains("shell"));
    CHECK_FALSE(review.interrupt_on.contains("deploy"));
}

TEST_CASE("a tool policy in JSON", "[deep_agent][tool_policy][options]") {
    auto p = boost::json::value_to<tool_policy>(boost::json::parse(
        R"({"disabled_middleware": ["web"], "disabled_tools": ["delete"], "approvals": {"write_file": "ask",
            "shell": "deny"}, "sandbox": "container", "sandbox_image": "alpine:3"})"));
    CHECK(p.disabled_middleware.contains("web"));
    CHECK(p.disabled_tools.contains("delete"));
    CHECK(p.approvals.at("write_file") == tool_approval_mode::ask);
    CHECK(p.sandbox == sandbox_mode::container);
    CHECK(p.sandbox_image == "alpine:3");
    CHECK(boost::json::value_to<tool_policy>(boost::json::value_from(p)) == p);

    CHECK_THAT(test_support::read_error<tool_policy>(R"({"approval": {}})"),
               Catch::StartsWith("policy.approval: unknown key"));
    CHECK_THAT(test_support::read_error<tool_policy>(R"({"approvals": {"shell": "maybe"}})"),
               Catch::StartsWith("policy.approvals.shell: expected \"allow\", \"ask\" or \"deny\""));
    CHECK_THAT(test_support::read_error<tool_policy>(R"({"sandbox": "docker"})"),
               Catch::StartsWith("policy.sandbox: expected \"off\" or \"container\""));
    CHECK_THAT(test_support::read_error<tool_policy>(R"({"disabled_tools": "delete"})"),
               Catch::StartsWith("policy.disabled_tools: expected an array"));
}
