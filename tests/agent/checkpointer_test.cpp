// agent/checkpointer.hpp: what a checkpointer is.
#include <agentware/agent/checkpointer.hpp>

#include <agentware/agent/file_checkpointer.hpp>
#include <agentware/agent/memory_checkpointer.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <type_traits>

using namespace agentware;

TEST_CASE("both checkpointers model the checkpointer concept", "[checkpointer]") {
    STATIC_REQUIRE(checkpointer<memory_checkpointer>);
    STATIC_REQUIRE(checkpointer<file_checkpointer>);
    STATIC_REQUIRE(!checkpointer<int>);
    STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, checkpoint_error>);
}
