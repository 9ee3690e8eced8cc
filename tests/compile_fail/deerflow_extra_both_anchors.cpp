// An extra middleware may be placed after its anchor or before it, not both.
#include <agentware/presets/deerflow_factory.hpp>

struct two_way_extra {
    using place_after = agentware::summarization;
    using place_before = agentware::title;
    template <class S>
    void before_model(S&) {}
};

agentware::deerflow_sdk_pipeline_t<two_way_extra>* p = nullptr;
