// Reading a field that no middleware of the pipeline declares.
#include <agentware.hpp>

#include <string>
#include <vector>

struct artifacts {
    static constexpr std::string_view name = "artifacts";
    using value_type = std::vector<std::string>;
};
struct counts_rounds {
    void before_model(auto& state) { (void)agentware::get<artifacts>(state).size(); }
};

void use() {
    using chain = agentware::pipeline<counts_rounds>; // declares no state_fields
    agentware::agent_state<chain> state;
    chain p;
    int rt = 0;
    (void)p.before_model(state, rt);
}
