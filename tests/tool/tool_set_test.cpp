// tool_set (tool/tool_set.hpp): the tools an agent offers, by unique name.
#include <agentware/tool/make_tool.hpp>
#include <agentware/tool/tool_set.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace agentware;

namespace {

auto tool_set_test_tool(std::string name) {
    return make_tool(std::move(name), "A tool of the tool_set tests.", R"({"type": "object"})",
                     [](const boost::json::object&) { return std::string("done"); });
}

} // namespace

TEST_CASE("a tool set finds its tools by name, keeps their order and names them", "[tool][tool_set]") {
    tool_set set(tool_set_test_tool("read"), tool_set_test_tool("write"));
    set.add(tool_set_test_tool("list"));
    REQUIRE(set.size() == 3);
    CHECK_FALSE(set.empty());
    CHECK(set.names() == "read, write, list");
    REQUIRE(set.find("write") != nullptr);
    CHECK(set.find("write")->schema().name == "write");
    CHECK(set.find("delete") == nullptr);
    REQUIRE(set.schemas().size() == 3);
    CHECK(set.schemas()[2].name == "list");
    CHECK(set.schema_index_of(set.find("read")) != nullptr);

    tool_set other;
    const auto lone = share_tool(tool_set_test_tool("read"));
    CHECK(set.schema_index_of(lone.get()) == nullptr); // not in this set
    for (const auto& t : set)                          // shared: another set holds the same tools
        other.add(t);
    CHECK(other.find("list") == set.find("list"));
}

TEST_CASE("a tool set removes a tool, and refuses an empty, a null or a second tool of one name",
          "[tool][tool_set]") {
    tool_set set(tool_set_test_tool("read"), tool_set_test_tool("write"));
    CHECK(set.remove("read"));
    CHECK_FALSE(set.remove("read"));
    CHECK(set.names() == "write");
    CHECK(set.schemas().size() == 1);

    CHECK_THROWS_WITH(set.add(tool_set_test_tool("write")),
                      "agentware::tool_set: two tools are named \"write\"");
    CHECK_THROWS_WITH(set.add(tool_set_test_tool("")), "agentware::tool_set: a tool has an empty name");
    CHECK_THROWS_WITH(set.add(std::shared_ptr<tool_interface>{}), "agentware::tool_set: null tool");
    CHECK(set.size() == 1); // nothing half-added
}
