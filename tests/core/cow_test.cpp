// core/cow.hpp: a value borrowed until its first edit, then owned.
#include <agentware/core/cow.hpp>

#include <agentware/message/message.hpp>

#include <catch2/catch.hpp>

using namespace agentware;

TEST_CASE("cow borrows until the first edit, then owns a copy its copies share", "[agent][requests]") {
    const tool_call stored{"c1", "echo", boost::json::object{{"text", "a"}}};
    cow<tool_call> c(stored);
    CHECK(c.borrowed());
    CHECK(&*c == &stored);
    c.edit().name = "other";
    CHECK_FALSE(c.borrowed());
    CHECK(stored.name == "echo");
    CHECK(c->name == "other");
    cow<tool_call> shared = c;
    CHECK(&*shared == &*c);
    shared.edit().name = "third"; // shared: copies again, the first keeps its value
    CHECK(c->name == "other");
    CHECK(shared->name == "third");
    cow<tool_call> empty;
    CHECK(empty->name.empty());
    cow<tool_call> owned = tool_call{"c2", "x", {}};
    CHECK_FALSE(owned.borrowed());
    CHECK(owned->id == "c2");
}
