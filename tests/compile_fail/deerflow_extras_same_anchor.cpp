// Two extras placed right after the same anchor: which comes first is not said.
#include <agentware/presets/deerflow_factory.hpp>

struct first_after_title {
    using place_after = agentware::title;
    template <class S>
    void before_model(S&) {}
};
struct second_after_title {
    using place_after = agentware::title;
    template <class S>
    void before_model(S&) {}
};

agentware::deerflow_sdk_pipeline_t<first_after_title, second_after_title>* p = nullptr;
