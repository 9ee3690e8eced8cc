// DeerFlow's config.yaml through yaml-cpp: scalar types, $VAR values, the
// sections agentware reads (the others ignored with one warning line), and
// every kind of bad value, each an error that names where it is.
#include <agentware/config/yaml.hpp>
#include <agentware/model/model_factory.hpp>
#include <agentware/presets/deerflow.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace agentware;

namespace yamltest {

inline const std::string config_file = std::string(AGENTWARE_TEST_DATA_DIR) + "/config/config.yaml";

inline yaml_read_options env(std::map<std::string, std::string> vars) {
    yaml_read_options o;
    o.getenv = [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
        if (auto it = vars.find(name); it != vars.end()) return it->second;
        return std::nullopt;
    };
    return o;
}

// The message of the json_error that `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const json_error& e) {
        return e.what();
    }
    return {};
}

} // namespace yamltest

TEST_CASE("YAML scalars keep sensible types, quoted scalars stay strings", "[config][yaml]") {
    auto v = yaml_to_json(R"(
int: 42
negative: -7
hex: 0x1F
octal: 0o17
big: 18446744073709551615
float: 2.5
exp: 1e3
inf: .inf
yes_bool: yes
true_bool: true
off_bool: Off
nothing: ~
null_word: null
empty:
text: hello world
quoted_int: "42"
single_quoted_bool: 'true'
tagged: !!str 12
version: 1.2.3
list: [1, two, 3.0]
nested: {a: {b: [x, {c: false}]}}
)")
                 .as_object();
    CHECK(v.at("int").as_int64() == 42);
    CHECK(v.at("negative").as_int64() == -7);
    CHECK(v.at("hex").as_int64() == 31);
    CHECK(v.at("octal").as_int64() == 15);
    CHECK(v.at("big").is_uint64());
    CHECK(v.at("float").as_double() == 2.5);
    CHECK(v.at("exp").as_double() == 1000.0);
    CHECK(std::isinf(v.at("inf").as_double()));
    CHECK(v.at("yes_bool").as_bool() == true);
    CHECK(v.at("true_bool").as_bool() == true);
    CHECK(v.at("off_bool").as_bool() == false);
    CHECK(v.at("nothing").is_null());
    CHECK(v.at("null_word").is_null());
    CHECK(v.at("empty").is_null());
    CHECK(v.at("text").as_string() == "hello world");
    CHECK(v.at("quoted_int").as_string() == "42");
    CHECK(v.at("single_quoted_bool").as_string() == "true");
    CHECK(v.at("tagged").as_string() == "12");
    CHECK(v.at("version").as_string() == "1.2.3");
    CHECK(v.at("list") == boost::json::parse(R"([1, "two", 3.0])"));
    CHECK(v.at("nested") == boost::json::parse(R"({"a": {"b": ["x", {"c": false}]}})"));
    CHECK(yaml_to_json("").is_null());
}

TEST_CASE("$VAR values come from the environment, a missing one names the path and the variable only",
          "[config][yaml]") {
    auto o = yamltest::env({{"API_KEY", "sk-secret-value"}, {"PORT", "8080"}});
    auto v = yaml_to_json("models:\n  - api_key: $API_KEY\n    port: $PORT\n    price: $5 a month\n", o);
    CHECK(v.at_pointer("/models/0/api_key").as_string() == "sk-secret-value");
    CHECK(v.at_pointer("/models/0/port").as_string() == "8080"); // a string, as DeerFlow reads it
    CHECK(v.at_pointer("/models/0/price").as_string() == "$5 a month");
    const std::string e =
        yamltest::error_of([&] { yaml_to_json("models:\n  - api_key: $MISSING_KEY\n", o); });
    CHECK(e == "models[0].api_key: environment variable MISSING_KEY is not set");
    // Quoted $VAR is expanded too (DeerFlow expands after parsing); expansion can be switched off.
    CHECK(yaml_to_json("k: '$API_KEY'", o).at_pointer("/k").as_string() == "sk-secret-value");
    o.expand_env = false;
    CHECK(yaml_to_json("k: $API_KEY", o).at_pointer("/k").as_string() == "$API_KEY");
}

TEST_CASE("malformed YAML is an error with its line and column", "[config][yaml]") {
    const std::string e =
        yamltest::error_of([] { yaml_to_json("title:\n  enabled: true\n  max_words: [6\n"); });
    INFO(e);
    CHECK(e.starts_with("config.yaml:"));
    CHECK(e.find("end of sequence flow") != std::string::npos);
    const std::string tabs = yamltest::error_of([] { yaml_to_json("a: 1\n b: 2\nc: [\n"); });
    CHECK(tabs.starts_with("config.yaml:"));
    const std::string dup =
        yamltest::error_of([] { yaml_to_json("title:\n  max_words: 6\n  max_words: 7\n"); });
    CHECK(dup == "title.max_words: config.yaml:3:3: duplicate key");
    const std::string key = yamltest::error_of([] { yaml_to_json("? [a, b]\n: 1\n"); });
    CHECK(key.find("a key that is not a scalar") != std::string::npos);
}

TEST_CASE("DeerFlow's config.yaml: known sections kept, the others ignored with one warning line",
          "[config][yaml]") {
    std::vector<std::string> warnings;
    auto cfg = load_deerflow_config(yamltest::config_file, yamltest::env({{"AGENTWARE_TEST_API_KEY", "k-1"}}),
                                    [&](std::string_view line) { warnings.emplace_back(line); });
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "agentware: ignoring configuration sections agentware does not implement: "
                         "config_version, log_level, channels, checkpointer");
    CHECK(cfg.ignored == std::vector<std::string>{"config_version", "log_level", "channels", "checkpointer"});
    CHECK(cfg.sections.at("models").at_pointer("/0/api_key").as_string() == "k-1");
    CHECK(cfg.sections.at("skills").at_pointer("/container_path").as_string() == "/mnt/skills");
    // The pipeline's sections go through the existing options forms unchanged.
    const auto pipeline = cfg.pipeline_sections();
    CHECK_FALSE(pipeline.contains("models"));
    CHECK_FALSE(pipeline.contains("skills"));
    auto chain = make_deerflow_pipeline(pipeline);
    REQUIRE(chain.slot<summarization>().has_value());
    CHECK(chain.slot<summarization>()->options().keep.value == 10);
    CHECK(chain.slot<summarization>()->options().trim_tokens_to_summarize == std::size_t{15564});
    REQUIRE(chain.slot<title>().has_value());
    CHECK(chain.slot<title>()->options().max_words == 6);
    CHECK(chain.slot<loop_detection>().has_value());
    CHECK(chain.slot<sandbox>().has_value());
    CHECK_FALSE(chain.slot<memory>().has_value());

    // A missing variable in the file: the path and the variable's name.
    const std::string e =
        yamltest::error_of([] { load_deerflow_config(yamltest::config_file, yamltest::env({})); });
    CHECK(e == "models[0].api_key: environment variable AGENTWARE_TEST_API_KEY is not set");
}

TEST_CASE("every section agentware lists is one make_deerflow_pipeline reads", "[config][yaml]") {
    for (std::string_view section : deerflow_pipeline_config_sections) {
        INFO(section);
        boost::json::object config;
        config[section] = false;
        CHECK_NOTHROW(make_deerflow_pipeline(config));
    }
}

TEST_CASE("keys DeerFlow defines and agentware does not implement: left out, named once in the warning",
          "[config][yaml]") {
    std::vector<std::string> warnings;
    auto cfg = read_deerflow_config(yaml_to_json("log_level: info\n"
                                                 "uploads:\n  max_files: 10\n  max_file_size: 52428800\n"
                                                 "  max_files_per_context_section: 20\n"
                                                 "sandbox:\n  use: local\n  image: deer:1\n  mounts: []\n"
                                                 "memory:\n  enabled: false\n  backend_config:\n"
                                                 "    storage_class: file\n    max_facts: 50\n"),
                                    [&](std::string_view line) { warnings.emplace_back(line); });
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] ==
          "agentware: ignoring configuration sections agentware does not implement: log_level; "
          "and keys agentware does not implement: uploads.max_files, uploads.max_file_size, "
          "sandbox.image, sandbox.mounts, memory.backend_config.storage_class");
    CHECK(cfg.ignored_keys == std::vector<std::string>{"uploads.max_files", "uploads.max_file_size",
                                                       "sandbox.image", "sandbox.mounts",
                                                       "memory.backend_config.storage_class"});
    // What agentware implements stays, and the chain is made from it.
    CHECK(cfg.sections.at("uploads") == boost::json::parse(R"({"max_files_per_context_section": 20})"));
    CHECK(cfg.sections.at("memory").at_pointer("/backend_config/max_facts") == 50);
    CHECK_NOTHROW(make_deerflow_pipeline(cfg.pipeline_sections()));

    // Keys alone: the line names keys only; a file without any says nothing.
    warnings.clear();
    read_deerflow_config(yaml_to_json("uploads:\n  max_total_size: 1\n"),
                         [&](std::string_view line) { warnings.emplace_back(line); });
    CHECK(warnings ==
          std::vector<std::string>{"agentware: ignoring configuration keys agentware does not implement: "
                                   "uploads.max_total_size"});
    warnings.clear();
    read_deerflow_config(yaml_to_json("uploads:\n  discover_new_files: true\n"),
                         [&](std::string_view line) { warnings.emplace_back(line); });
    CHECK(warnings.empty());

    // A key neither DeerFlow nor agentware knows is still an error naming its path.
    const std::string typo = yamltest::error_of([] {
        auto c = read_deerflow_config(yaml_to_json("uploads:\n  max_filez: 10\n"), [](std::string_view) {});
        make_deerflow_pipeline(c.pipeline_sections());
    });
    CHECK(typo.starts_with("uploads.max_filez: unknown key (known: "));
}

TEST_CASE("every key agentware leaves out is one its readers would refuse", "[config][yaml]") {
    // The list names only what agentware does not implement: read without the
    // list, each key is an unknown key of its section.
    for (std::string_view key : deerflow_unimplemented_keys) {
        INFO(key);
        boost::json::value config = boost::json::object{};
        boost::json::value* at = &config;
        std::string_view rest = key;
        for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
            at = &at->as_object()[rest.substr(0, dot)];
            if (!at->is_object()) *at = boost::json::object{};
            rest.remove_prefix(dot + 1);
        }
        at->as_object()[rest] = "x";
        const std::string e = yamltest::error_of([&] { make_deerflow_pipeline(config.as_object()); });
        CHECK(e.starts_with(std::string(key) + ": unknown key"));
    }
}

TEST_CASE("bad values in config.yaml are errors naming their dotted path", "[config][yaml]") {
    auto pipeline_error = [](std::string_view yaml) {
        return yamltest::error_of([&] {
            auto cfg = read_deerflow_config(yaml_to_json(yaml), [](std::string_view) {});
            make_deerflow_pipeline(cfg.pipeline_sections());
        });
    };
    // A wrong type, deep inside a section.
    CHECK(pipeline_error("summarization:\n  enabled: true\n  keep:\n    type: messages\n    value: ten\n") ==
          "summarization.keep.value: expected a number, got \"ten\"");
    // A quoted number is a string, and so the wrong type.
    CHECK(pipeline_error("loop_detection:\n  warn_threshold: \"3\"\n") ==
          "loop_detection.warn_threshold: expected an integer, got \"3\"");
    // An unknown key inside a known section.
    const std::string unknown = pipeline_error("sandbox:\n  bash_timout: 5\n");
    CHECK(unknown.starts_with("sandbox.bash_timout: unknown key (known: "));
    // A section of the wrong shape.
    CHECK(pipeline_error("title: [6]\n") == "title: expected true, false or an object of settings, got [6]");
    // The top level must be a mapping.
    CHECK(yamltest::error_of([] { read_deerflow_config(yaml_to_json("- a\n- b\n")); }) ==
          "expected an object of configuration sections, got [\"a\",\"b\"]");
}

TEST_CASE("DeerFlow's model entries (use: a LangChain class) make agentware's models", "[config][yaml]") {
    auto cfg = load_deerflow_config(yamltest::config_file, yamltest::env({{"AGENTWARE_TEST_API_KEY", "k-1"}}),
                                    [](std::string_view) {});
    const auto registry =
        model_registry::from_json(boost::json::object{{"models", cfg.sections.at("models")}});
    const model_config& m = registry.find("gpt-4o");
    CHECK(m.info.provider == "openai");
    CHECK(m.info.model == "gpt-4o");
    CHECK(m.info.supports_vision);
    CHECK_FALSE(m.info.supports_thinking);
    CHECK(m.defaults.max_tokens == 4096);
    CHECK(m.defaults.temperature == 0.7);
    // The key the reader took from the environment travels as the provider's key header.
    CHECK(m.api_key_env == std::optional<std::string>(""));
    CHECK(m.headers == std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer k-1"}});

    const auto claude = model_registry::from_json(boost::json::parse(R"({"models": [{
        "name": "claude", "use": "langchain_anthropic:ChatAnthropic", "model": "claude-x",
        "api_base": "http://127.0.0.1:9/v1", "default_request_timeout": 30, "max_retries": 1,
        "supports_thinking": true, "display_name": "Claude", "context_window": 200000,
        "when_thinking_enabled": {"thinking": {"type": "enabled", "budget_tokens": 2048}}}]})"));
    const model_config& c = claude.find("claude");
    CHECK(c.info.provider == "anthropic");
    CHECK(c.base_url == "http://127.0.0.1:9/v1");
    CHECK(c.http.total_timeout == std::chrono::seconds(30));
    CHECK(c.retry.max_retries == 1);
    CHECK(c.thinking_budget_tokens == 2048);
    CHECK_FALSE(c.api_key_env); // no api_key: the provider's variable, read when the model is made
    // Without api_key the model is made lazily too: nothing is read here.
    const auto none = model_registry::from_json(boost::json::parse(
        R"({"models": [{"name": "d", "use": "langchain_deepseek:ChatDeepSeek", "model": "deepseek-chat"}]})"));
    CHECK(none.find("d").info.provider == "deepseek");

    auto error = [](const char* json) {
        try {
            model_registry::from_json(boost::json::parse(json));
        } catch (const model_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(
        error(
            R"({"models": [{"name": "x", "use": "langchain_openai:ChatOpenAI", "model": "m", "top_q": 1}]})")
            .find("models[0].top_q: unknown key") != std::string::npos);
    CHECK(error(R"({"models": [{"name": "x", "use": "langchain_openai:ChatOpenAI"}]})")
              .find("models[0].model: missing") != std::string::npos);
    CHECK(error(R"({"models": [{"name": "x", "use": "langchain_openai:ChatOpenAI", "model": "m",
                   "max_tokens": "many"}]})")
              .find("models[0].max_tokens: expected") != std::string::npos);
}
