#ifndef AGENTWARE_TESTS_MODEL_SUPPORT_HPP
#define AGENTWARE_TESTS_MODEL_SUPPORT_HPP

// What several model tests share: a request of one human message.
#include <agentware/model/chat_model.hpp>

#include <string>
#include <utility>
#include <vector>

namespace model_test {

inline agentware::chat_request ask(std::string text) {
    agentware::chat_request r;
    r.messages = agentware::cow_vector<agentware::message>(
        std::vector<agentware::message>{agentware::human_message(std::move(text))});
    return r;
}

} // namespace model_test

#endif
