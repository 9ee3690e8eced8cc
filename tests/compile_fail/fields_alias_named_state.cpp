// A middleware that declares its state fields under the old name `state`,
// which shadows the `state` parameter of its hooks: the message says to name
// the alias `state_fields`.
#include <agentware/core.hpp>

#include <string>

struct notes {
    static constexpr std::string_view name = "notes";
    using value_type = std::string;
};
struct keeps_notes {
    using state = agentware::fields<notes>;
    void before_model(auto&) {}
};

void use() {
    agentware::pipeline<keeps_notes> p;
    (void)p;
}
