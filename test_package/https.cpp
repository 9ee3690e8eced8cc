// An OpenAI-compatible client built against the installed package, separately
// compiled: a call to a closed local port fails as a connection error.
#include <agentware/model/openai_chat_model.hpp>

#include <cstdio>

int main() {
    agentware::openai_config config;
    config.model = "test";
    config.api_key_env = "";
    config.base_url = "http://127.0.0.1:1/v1";
    config.retry.max_retries = 0;
    agentware::openai_chat_model model(config);
    agentware::chat_request request;
    try {
        model.invoke(request);
    } catch (const agentware::model_error& e) {
        std::printf("agentware test_package (https): %s\n", e.what());
        return e.kind() == agentware::model_error_kind::connection ? 0 : 1;
    }
    return 1;
}
