#ifndef AGENTWARE_MODEL_OPENAI_MODERATION_FORMAT_HPP
#define AGENTWARE_MODEL_OPENAI_MODERATION_FORMAT_HPP

// The wire format of an OpenAI-compatible moderation endpoint
// (POST /v1/moderations): the request body and what the answer says about
// one text. The moderation middleware's checks speak it; the HTTP client is
// openai_moderation_client.hpp.

#include <agentware/model/error.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <map>
#include <string>
#include <string_view>

namespace agentware {

/// What the endpoint said about one text.
struct moderation_result {
    bool flagged = false;
    std::map<std::string, bool> categories;
    std::map<std::string, double> category_scores;
};

/// The request body of an OpenAI-compatible POST /v1/moderations.
inline boost::json::object openai_moderation_body(std::string_view text, std::string_view model) {
    return boost::json::object{{"model", model}, {"input", text}};
}

/// Reads an OpenAI-compatible moderation response (its first result).
/// Throws model_error (invalid_response) when it has no result.
inline moderation_result parse_openai_moderation(std::string_view body) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    const boost::json::value* results = nullptr;
    if (!ec && v.is_object()) results = v.as_object().if_contains("results");
    if (!results || !results->is_array() || results->as_array().empty() ||
        !results->as_array()[0].is_object())
        throw model_error(model_error_kind::invalid_response, "moderation: the response has no results");
    const auto& r = results->as_array()[0].as_object();
    moderation_result out;
    if (const auto* f = r.if_contains("flagged"); f && f->is_bool()) out.flagged = f->as_bool();
    if (const auto* c = r.if_contains("categories"); c && c->is_object())
        for (const auto& kv : c->as_object())
            if (kv.value().is_bool()) out.categories[std::string(kv.key())] = kv.value().as_bool();
    if (const auto* s = r.if_contains("category_scores"); s && s->is_object())
        for (const auto& kv : s->as_object())
            if (kv.value().is_number())
                out.category_scores[std::string(kv.key())] = kv.value().to_number<double>();
    return out;
}

} // namespace agentware

#endif
