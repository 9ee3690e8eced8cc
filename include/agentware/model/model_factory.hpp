#ifndef AGENTWARE_MODEL_MODEL_FACTORY_HPP
#define AGENTWARE_MODEL_MODEL_FACTORY_HPP

// Models from configuration: a JSON list of named models, each with its
// provider, id, endpoint and defaults; create_chat_model builds one by name.

#include <agentware/detail/config.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/model/anthropic_chat_model.hpp>
#include <agentware/model/any_chat_model.hpp>
#include <agentware/model/merge_settings.hpp>
#include <agentware/model/model_info.hpp>
#include <agentware/model/openai_chat_model.hpp>

#include <boost/json/value.hpp>
#include <fmt/core.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentware {

/// One configured model.
struct model_config {
    model_info info;                        ///< name, provider, model id, capabilities
    std::string base_url;                   ///< empty: the provider's default
    std::optional<std::string> api_key_env; ///< unset: the provider's default; "" for none
    model_settings defaults;
    model_settings when_thinking; ///< applied over defaults when thinking is enabled
    std::vector<std::pair<std::string, std::string>> headers;
    http_options http;
    retry_policy retry;
    bool include_reasoning = false;             ///< OpenAI-compatible: send reasoning_content back
    bool use_max_completion_tokens = false;     ///< OpenAI-compatible: max_completion_tokens
    std::int64_t thinking_budget_tokens = 4096; ///< Anthropic
};

/// The configured models.
class model_registry {
public:
    model_registry() = default;
    explicit model_registry(std::vector<model_config> models) : models_(std::move(models)) {}

    /// Reads {"models": [ {...}, ... ]}. Throws model_error (configuration)
    /// naming the model and field at fault.
    AGENTWARE_DECL static model_registry from_json(const boost::json::value& v);

    AGENTWARE_DECL static model_registry from_json_text(std::string_view text);

    AGENTWARE_DECL static model_registry from_file(const std::string& path);

    /// One OpenAI-compatible model from the environment: AGENTWARE_MODEL (the
    /// model id, required), OPENAI_BASE_URL (default OpenAI's) and
    /// OPENAI_API_KEY (sent when set; local servers need none).
    AGENTWARE_DECL static model_registry from_environment();

    /// $AGENTWARE_CONFIG when set, otherwise from_environment().
    AGENTWARE_DECL static model_registry load_default();

    const std::vector<model_config>& models() const noexcept { return models_; }

    /// The model named `name`; "" means the first one. Throws model_error
    /// (configuration) listing the names that exist.
    AGENTWARE_DECL const model_config& find(std::string_view name) const;

    /// Builds the model named `name`. With thinking_enabled the model must
    /// support thinking; its when_thinking settings then apply.
    AGENTWARE_DECL any_chat_model create_chat_model(std::string_view name = {},
                                                    bool thinking_enabled = false) const;

private:
    std::vector<model_config> models_;
};

/// Builds a model of the default configuration (model_registry::load_default).
AGENTWARE_DECL any_chat_model create_chat_model(std::string_view name = {}, bool thinking_enabled = false);

} // namespace agentware

#endif

// The definitions: in every file (header-only, the default), or only in the
// one that includes <agentware/src.hpp> with AGENTWARE_SEPARATE_COMPILATION
// (through impl/model_factory.ipp, which defines AGENTWARE_MODEL_FACTORY_SOURCE).
#if (defined(AGENTWARE_HEADER_ONLY) || defined(AGENTWARE_MODEL_FACTORY_SOURCE)) &&                           \
    !defined(AGENTWARE_MODEL_MODEL_FACTORY_DEFINITIONS)
#define AGENTWARE_MODEL_MODEL_FACTORY_DEFINITIONS

#include <boost/json/parse.hpp>

#include <fstream>
#include <sstream>

namespace agentware {

namespace detail {

/// Endpoint presets: the provider names accepted besides "openai" and
/// "anthropic" are OpenAI-compatible servers with a known URL and key variable.
struct provider_preset {
    std::string_view name;
    std::string_view protocol; ///< "openai" or "anthropic"
    std::string_view base_url;
    std::string_view api_key_env;
};

inline constexpr provider_preset provider_presets[] = {
    {"openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"},
    {"anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"},
    {"deepseek", "openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"},
    {"moonshot", "openai", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"},
    {"qwen", "openai", "https://dashscope.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY"},
    {"openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
    {"vllm", "openai", "http://localhost:8000/v1", ""},
    {"ollama", "openai", "http://localhost:11434/v1", ""},
    {"llama.cpp", "openai", "http://localhost:8080/v1", ""},
};

// The entry of a constant table whose `field` is `key` (null when none), and
// the fields of all its entries as an error lists them ("a, b, c").
template <class Entry, std::size_t N>
const Entry* find_entry(const Entry (&table)[N], std::string_view Entry::*field, std::string_view key) {
    for (const auto& e : table)
        if (e.*field == key) return &e;
    return nullptr;
}
template <class Entry, std::size_t N>
std::string entry_names(const Entry (&table)[N], std::string_view Entry::*field) {
    std::string out;
    for (const auto& e : table)
        out += (out.empty() ? "" : ", ") + std::string(e.*field);
    return out;
}

inline const provider_preset* find_preset(std::string_view name) {
    return find_entry(provider_presets, &provider_preset::name, name);
}

inline std::string preset_names() { return entry_names(provider_presets, &provider_preset::name); }

[[noreturn]] inline void config_fail(std::string_view where, std::string_view why) {
    throw model_error(model_error_kind::configuration,
                      detail::format("model configuration: {}: {}", where, why));
}

// A duration given in milliseconds (`connect_ms`, ...): a non-negative integer.
inline void read_millis(json_reader& r, std::string_view key, std::chrono::milliseconds& into) {
    if (auto ms = r.optional<std::uint64_t>(key)) into = std::chrono::milliseconds(*ms);
}

inline model_settings read_settings(const boost::json::value& v, std::string path) {
    json_reader r(v, std::move(path));
    model_settings s;
    s.temperature = r.optional<double>("temperature");
    if (auto max_tokens = r.optional<std::uint32_t>("max_tokens")) s.max_tokens = std::int64_t{*max_tokens};
    if (const auto* stop = r.find("stop")) {
        if (stop->is_string())
            s.stop.emplace_back(stop->get_string());
        else
            s.stop = json_read_as<std::vector<std::string>>(*stop, r.path_of("stop"));
    }
    r.read("tool_choice", s.tool_choice)
        .read("reasoning_effort", s.reasoning_effort)
        .read("thinking", s.thinking)
        .read("extra_body", s.extra_body);
    s.parallel_tool_calls = r.optional<bool>("parallel_tool_calls");
    r.reject_unknown_keys();
    return s;
}

/// A model class DeerFlow's configuration names by `use`, and the endpoint
/// agentware talks to for it. A class whose provider has no endpoint of its
/// own that we know needs the entry's base URL: a key is never sent to a host
/// the entry did not name.
struct deerflow_model_class {
    std::string_view use;
    std::string_view provider;   ///< one of provider_presets
    bool needs_base_url;         ///< no default endpoint: the entry must give one
    std::string_view url_suffix; ///< appended to the entry's base URL when missing (Ollama's "/v1")
};

inline constexpr deerflow_model_class deerflow_model_classes[] = {
    {"langchain_openai:ChatOpenAI", "openai", false, ""},
    {"deerflow.models.patched_openai:PatchedChatOpenAI", "openai", false, ""},
    {"langchain_anthropic:ChatAnthropic", "anthropic", false, ""},
    {"deerflow.models.claude_provider:ClaudeChatModel", "anthropic", false, ""},
    {"langchain_deepseek:ChatDeepSeek", "deepseek", false, ""},
    {"deerflow.models.patched_deepseek:PatchedChatDeepSeek", "deepseek", false, ""},
    {"langchain_ollama:ChatOllama", "ollama", false, "/v1"},
    {"deerflow.models.vllm_provider:VllmChatModel", "vllm", false, ""},
    {"deerflow.models.mindie_provider:MindIEChatModel", "openai", true, ""},
    {"deerflow.models.patched_mimo:PatchedChatMiMo", "openai", true, ""},
    {"deerflow.models.patched_minimax:PatchedChatMiniMax", "openai", true, ""},
    {"deerflow.models.patched_stepfun:PatchedChatStepFun", "openai", true, ""},
};

inline const deerflow_model_class* find_deerflow_model_class(std::string_view use) {
    return find_entry(deerflow_model_classes, &deerflow_model_class::use, use);
}

inline std::string deerflow_model_class_names() {
    return entry_names(deerflow_model_classes, &deerflow_model_class::use);
}

/// A model entry of DeerFlow's config.yaml (`use: langchain_openai:ChatOpenAI`,
/// `api_key: $OPENAI_API_KEY`, ...), as agentware's model_config. The key is
/// the value the configuration reader took from the environment; it travels
/// in the request headers, as the provider's own key header would.
inline model_config read_deerflow_model_config(const boost::json::value& v, const std::string& path) {
    json_reader r(v, path);
    model_config c;
    c.info.name = r.optional<std::string>("name").value_or("");
    if (c.info.name.empty()) throw json_error(r.path_of("name"), "missing");
    r.skip("display_name").skip("description").skip("context_window").skip("pricing");
    const std::string use = r.required<std::string>("use");
    const deerflow_model_class* cls = find_deerflow_model_class(use);
    if (cls == nullptr)
        throw json_error(r.path_of("use"), detail::format("unknown model class \"{}\" (known: {})", use,
                                                          deerflow_model_class_names()));
    c.info.provider = std::string(cls->provider);
    c.info.model = r.optional<std::string>("model").value_or("");
    if (c.info.model.empty()) throw json_error(r.path_of("model"), "missing (the provider's model id)");
    r.read("supports_vision", c.info.supports_vision).read("supports_thinking", c.info.supports_thinking);
    for (std::string_view key : {"base_url", "api_base", "openai_api_base"})
        if (auto url = r.optional<std::string>(key)) c.base_url = *url;
    if (cls->needs_base_url && c.base_url.empty())
        throw json_error(r.path_of("base_url"),
                         detail::format("missing ({} has no default endpoint; name its server)", use));
    if (!cls->url_suffix.empty() && !c.base_url.empty()) {
        while (c.base_url.ends_with('/'))
            c.base_url.pop_back();
        if (!c.base_url.ends_with(cls->url_suffix)) c.base_url += cls->url_suffix;
    }
    if (auto key = r.optional<std::string>("api_key")) {
        c.api_key_env = "";
        if (!key->empty())
            c.headers.emplace_back(c.info.provider == "anthropic" ? "x-api-key" : "Authorization",
                                   c.info.provider == "anthropic" ? *key : "Bearer " + *key);
    }
    c.defaults.temperature = r.optional<double>("temperature");
    if (auto max_tokens = r.optional<std::uint32_t>("max_tokens")) c.defaults.max_tokens = *max_tokens;
    for (std::string_view key : {"timeout", "request_timeout", "default_request_timeout"})
        if (auto seconds = r.optional<double>(key); seconds && *seconds > 0)
            c.http.total_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*seconds * 1000));
    if (auto n = r.optional<std::uint16_t>("max_retries")) c.retry.max_retries = *n;
    r.skip("supports_reasoning_effort").skip("when_thinking_disabled");
    if (auto t = r.object("when_thinking_enabled")) {
        // DeerFlow merges these into the model's constructor arguments when thinking is on.
        t->read("extra_body", c.when_thinking.extra_body);
        if (auto thinking = t->optional<boost::json::object>("thinking")) {
            c.when_thinking.extra_body["thinking"] = *thinking;
            if (const auto* budget = thinking->if_contains("budget_tokens"); budget && budget->is_int64())
                c.thinking_budget_tokens = budget->get_int64();
        }
        t->reject_unknown_keys();
    }
    r.reject_unknown_keys();
    return c;
}

inline model_config read_model_config(const boost::json::value& v, const std::string& path) {
    if (const auto* o = v.if_object(); o && o->contains("use")) return read_deerflow_model_config(v, path);
    json_reader r(v, path);
    model_config c;
    c.info.name = r.optional<std::string>("name").value_or("");
    if (c.info.name.empty()) throw json_error(r.path_of("name"), "missing");
    r.skip("display_name").skip("description"); // for people reading the file
    c.info.provider = r.optional<std::string>("provider").value_or("openai");
    if (find_preset(c.info.provider) == nullptr)
        throw json_error(r.path_of("provider"), detail::format("unknown provider \"{}\" (known: {})",
                                                               c.info.provider, preset_names()));
    c.info.model = r.optional<std::string>("model").value_or("");
    if (c.info.model.empty()) throw json_error(r.path_of("model"), "missing (the provider's model id)");
    r.read("supports_vision", c.info.supports_vision)
        .read("supports_thinking", c.info.supports_thinking)
        .read("max_input_tokens", c.info.max_input_tokens)
        .read("base_url", c.base_url)
        .read("api_key_env", c.api_key_env);
    if (const auto* d = r.find("defaults")) c.defaults = read_settings(*d, r.path_of("defaults"));
    if (const auto* t = r.find("when_thinking"))
        c.when_thinking = read_settings(*t, r.path_of("when_thinking"));
    if (auto headers = r.optional<std::map<std::string, std::string>>("headers"))
        c.headers.assign(headers->begin(), headers->end());
    if (auto t = r.object("timeouts")) {
        read_millis(*t, "connect_ms", c.http.connect_timeout);
        read_millis(*t, "first_byte_ms", c.http.first_byte_timeout);
        read_millis(*t, "total_ms", c.http.total_timeout);
        t->reject_unknown_keys();
    }
    if (auto t = r.object("retry")) {
        if (auto n = t->optional<std::uint16_t>("max_retries")) c.retry.max_retries = *n;
        read_millis(*t, "initial_backoff_ms", c.retry.initial_backoff);
        read_millis(*t, "max_backoff_ms", c.retry.max_backoff);
        read_millis(*t, "max_retry_after_ms", c.retry.max_retry_after);
        t->reject_unknown_keys();
    }
    r.read("proxy", c.http.proxy)
        .read("ca_file", c.http.ca_file)
        .read("include_reasoning", c.include_reasoning)
        .read("use_max_completion_tokens", c.use_max_completion_tokens);
    if (auto budget = r.optional<std::uint32_t>("thinking_budget_tokens")) c.thinking_budget_tokens = *budget;
    r.reject_unknown_keys();
    return c;
}

} // namespace detail

AGENTWARE_DECL model_registry model_registry::from_json(const boost::json::value& v) {
    const auto* o = v.if_object();
    const auto* list = o ? o->if_contains("models") : nullptr;
    if (list == nullptr || !list->is_array())
        detail::config_fail("top level", "expected {\"models\": [...]}");
    std::vector<model_config> models;
    for (std::size_t i = 0; i < list->get_array().size(); ++i) {
        model_config c;
        try {
            c = detail::read_model_config(list->get_array()[i], detail::format("models[{}]", i));
        } catch (const json_error& e) {
            detail::config_fail(e.path(), e.problem());
        }
        for (const auto& other : models)
            if (other.info.name == c.info.name)
                detail::config_fail(detail::format("models[{}]", i),
                                    detail::format("the name \"{}\" is used twice", c.info.name));
        models.push_back(std::move(c));
    }
    return model_registry(std::move(models));
}

AGENTWARE_DECL model_registry model_registry::from_json_text(std::string_view text) {
    boost::json::error_code ec;
    const boost::json::value v = boost::json::parse(text, ec);
    if (ec) detail::config_fail("JSON", ec.message());
    return from_json(v);
}

AGENTWARE_DECL model_registry model_registry::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw model_error(model_error_kind::configuration,
                          detail::format("cannot read the model configuration \"{}\"", path));
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return from_json_text(text.str());
    } catch (const model_error& e) {
        throw model_error(model_error_kind::configuration, detail::format("{}: {}", path, e.what()));
    }
}

AGENTWARE_DECL model_registry model_registry::from_environment() {
    const std::string model = detail::env_or_empty("AGENTWARE_MODEL");
    if (model.empty())
        throw model_error(model_error_kind::configuration, "no model configured: set AGENTWARE_MODEL (with "
                                                           "OPENAI_BASE_URL and OPENAI_API_KEY) "
                                                           "or give a configuration file");
    model_config c;
    c.info.name = model;
    c.info.provider = "openai";
    c.info.model = model;
    c.base_url = detail::env_or_empty("OPENAI_BASE_URL");
    c.api_key_env = detail::env_or_empty("OPENAI_API_KEY").empty() ? "" : "OPENAI_API_KEY";
    return model_registry({std::move(c)});
}

AGENTWARE_DECL model_registry model_registry::load_default() {
    const std::string path = detail::env_or_empty("AGENTWARE_CONFIG");
    return path.empty() ? from_environment() : from_file(path);
}

AGENTWARE_DECL const model_config& model_registry::find(std::string_view name) const {
    if (models_.empty()) throw model_error(model_error_kind::configuration, "no models are configured");
    if (name.empty()) return models_.front();
    for (const auto& m : models_)
        if (m.info.name == name) return m;
    std::string names;
    for (const auto& m : models_)
        names += (names.empty() ? "" : ", ") + m.info.name;
    throw model_error(model_error_kind::configuration,
                      detail::format("unknown model \"{}\" (configured: {})", name, names));
}

AGENTWARE_DECL any_chat_model model_registry::create_chat_model(std::string_view name,
                                                                bool thinking_enabled) const {
    const model_config& c = find(name);
    const detail::provider_preset& preset = *detail::find_preset(c.info.provider);
    if (thinking_enabled && !c.info.supports_thinking)
        throw model_error(model_error_kind::configuration,
                          detail::format("model \"{}\" does not support thinking "
                                         "(supports_thinking is false)",
                                         c.info.name));
    model_settings defaults = c.defaults;
    if (thinking_enabled) {
        defaults = merge_settings(defaults, c.when_thinking);
        defaults.thinking = true;
    }
    model_info info = c.info;
    info.thinking_enabled = thinking_enabled;
    const std::string base_url = c.base_url.empty() ? std::string(preset.base_url) : c.base_url;
    const std::string key_env = c.api_key_env.value_or(std::string(preset.api_key_env));
    const auto configure = [&](http_client_config& client) {
        client.provider = c.info.provider;
        client.base_url = base_url;
        client.model = c.info.model;
        client.api_key_env = key_env;
        client.headers = c.headers;
        client.defaults = defaults;
        client.http = c.http;
        client.retry = c.retry;
    };

    if (preset.protocol == "anthropic") {
        anthropic_config a;
        configure(a);
        a.wire.thinking_budget_tokens = c.thinking_budget_tokens;
        return any_chat_model(anthropic_chat_model(std::move(a)), std::move(info));
    }
    openai_config o;
    configure(o);
    o.wire.include_reasoning = c.include_reasoning;
    o.wire.use_max_completion_tokens = c.use_max_completion_tokens;
    return any_chat_model(openai_chat_model(std::move(o)), std::move(info));
}

AGENTWARE_DECL any_chat_model create_chat_model(std::string_view name, bool thinking_enabled) {
    return model_registry::load_default().create_chat_model(name, thinking_enabled);
}

} // namespace agentware

#endif
