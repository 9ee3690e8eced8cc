// A tool's callable must return something the model can read.
#include <agentware.hpp>

struct coordinates {
    double latitude, longitude;
};

void use() {
    auto locate = agentware::make_tool("locate", "Where a city is.", R"({"type":"object"})",
                                       [](const boost::json::object&) {
                                           return coordinates{48.9, 2.4};
                                       });
    (void)locate;
}
