#ifndef AGENTWARE_CONFIG_YAML_HPP
#define AGENTWARE_CONFIG_YAML_HPP

// DeerFlow's config.yaml, read with yaml-cpp into the Boost.JSON value the
// JSON configuration uses, so every options form (their tag_invoke through
// json_reader) reads it unchanged and its errors name the same paths
// (`summarization.keep.value: expected an integer, got "x"`).
//
//  * Scalars get the type their spelling says: null (`~`, `null`, empty),
//    booleans (`true`/`false`, and YAML 1.1's `yes`/`no`/`on`/`off`, which
//    DeerFlow's PyYAML reads as booleans too), integers (decimal, 0x, 0o),
//    floats (`1.5`, `1e3`, `.inf`, `.nan`), else strings. A quoted scalar or
//    one tagged `!!str` stays a string.
//  * A string value `$NAME` is the environment variable NAME (DeerFlow's
//    rule); a missing variable is an error naming the path and the variable,
//    never a value.
//  * Malformed YAML is an error with its line and column.
//
// Needs yaml-cpp (the package's optional component `yaml`, target
// agentware::yaml); the umbrella header does not include this one.

#include <agentware/detail/format.hpp>
#include <agentware/json/reader.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// How YAML text becomes JSON.
struct yaml_read_options {
    /// The name errors give the text ("config.yaml", a file's path).
    std::string source = "config.yaml";
    /// Looks up `$NAME` values; nullopt = not set. Defaults to the process environment.
    std::function<std::optional<std::string>(const std::string&)> getenv;
    /// false: `$NAME` stays text (SKILL.md front matter, which must not pull
    /// the environment into a prompt).
    bool expand_env = true;
};

namespace detail {

inline bool yaml_is_env_name(std::string_view s) noexcept {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

inline std::optional<boost::json::value> yaml_plain_number(std::string_view s) {
    if (s.empty()) return std::nullopt;
    std::string t;
    t.reserve(s.size());
    for (char c : s)
        if (c != '_') t += c; // YAML 1.1 digit separators
    std::string_view v = t;
    bool negative = false;
    std::string_view digits = v;
    if (digits.front() == '+' || digits.front() == '-') {
        negative = digits.front() == '-';
        digits.remove_prefix(1);
    }
    if (digits.empty()) return std::nullopt;
    auto integer = [&](std::string_view d, int base) -> std::optional<boost::json::value> {
        if (d.empty()) return std::nullopt;
        std::uint64_t n = 0;
        auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), n, base);
        if (p != d.data() + d.size()) return std::nullopt;
        if (ec == std::errc::result_out_of_range) return std::nullopt; // read as a float below, or a string
        if (negative) {
            if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1)
                return std::nullopt;
            return boost::json::value(static_cast<std::int64_t>(0 - n));
        }
        if (n <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return boost::json::value(static_cast<std::int64_t>(n));
        return boost::json::value(n);
    };
    if (digits.starts_with("0x") || digits.starts_with("0X")) return integer(digits.substr(2), 16);
    if (digits.starts_with("0o") || digits.starts_with("0O")) return integer(digits.substr(2), 8);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        if (auto n = integer(digits, 10)) return n;
    std::string lower(digits);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
    if (lower == ".inf") return boost::json::value(negative ? -HUGE_VAL : HUGE_VAL);
    if (lower == ".nan" && v.size() == digits.size()) return boost::json::value(std::nan(""));
    // A float: digits with a point or an exponent (at least one digit).
    bool digit = false, point = false, exponent = false;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        const char c = digits[i];
        if (c >= '0' && c <= '9') {
            digit = true;
        } else if (c == '.' && !point && !exponent) {
            point = true;
        } else if ((c == 'e' || c == 'E') && digit && !exponent) {
            exponent = true;
            if (i + 1 < digits.size() && (digits[i + 1] == '+' || digits[i + 1] == '-')) ++i;
            if (i + 1 >= digits.size()) return std::nullopt;
        } else {
            return std::nullopt;
        }
    }
    if (!digit) return std::nullopt;
    std::string_view unsigned_text = v.front() == '+' ? v.substr(1) : v; // from_chars takes no '+'
    double d = 0;
    auto [p, ec] = std::from_chars(unsigned_text.data(), unsigned_text.data() + unsigned_text.size(), d);
    if (ec != std::errc() || p != unsigned_text.data() + unsigned_text.size()) return std::nullopt;
    return boost::json::value(d);
}

/// A plain (unquoted, untagged) scalar as YAML's resolution reads it.
inline boost::json::value yaml_plain_scalar(const std::string& s) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    for (std::string_view t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})
        if (s == t) return true;
    for (std::string_view f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})
        if (s == f) return false;
    if (auto n = yaml_plain_number(s)) return std::move(*n);
    return boost::json::value(s);
}

struct yaml_converter {
    const yaml_read_options& options;

    boost::json::value string_value(std::string s, std::string_view path) const {
        if (options.expand_env && s.size() > 1 && s[0] == '$' &&
            yaml_is_env_name(std::string_view(s).substr(1))) {
            const std::string name = s.substr(1);
            std::optional<std::string> value;
            if (options.getenv) {
                value = options.getenv(name);
            } else if (const char* e = std::getenv(name.c_str())) {
                value = std::string(e);
            }
            if (!value)
                throw json_error(std::string(path),
                                 detail::format("environment variable {} is not set", name));
            return boost::json::value(std::move(*value));
        }
        return boost::json::value(std::move(s));
    }

    boost::json::value convert(const YAML::Node& node, const std::string& path) const {
        switch (node.Type()) {
        case YAML::NodeType::Undefined:
        case YAML::NodeType::Null:
            return nullptr;
        case YAML::NodeType::Scalar: {
            const std::string& tag = node.Tag();
            if (tag == "!" || tag == "tag:yaml.org,2002:str") return string_value(node.Scalar(), path);
            boost::json::value v = yaml_plain_scalar(node.Scalar());
            if (v.is_string()) return string_value(std::string(v.get_string()), path);
            return v;
        }
        case YAML::NodeType::Sequence: {
            boost::json::array a;
            a.reserve(node.size());
            std::size_t i = 0;
            for (const auto& item : node)
                a.push_back(convert(item, json_path(path, detail::format("[{}]", i++))));
            return a;
        }
        case YAML::NodeType::Map: {
            boost::json::object o;
            for (const auto& kv : node) {
                if (!kv.first.IsScalar())
                    throw json_error(path, detail::format("{}: a key that is not a scalar", mark(kv.first)));
                const std::string& key = kv.first.Scalar();
                if (o.contains(key))
                    throw json_error(json_path(path, key),
                                     detail::format("{}: duplicate key", mark(kv.first)));
                o[key] = convert(kv.second, json_path(path, key));
            }
            return o;
        }
        }
        return nullptr;
    }

    std::string mark(const YAML::Node& n) const {
        const YAML::Mark m = n.Mark();
        if (m.is_null()) return options.source;
        return detail::format("{}:{}:{}", options.source, m.line + 1, m.column + 1);
    }
};

} // namespace detail

/// The JSON value of YAML text (its first document; empty text is null).
/// Throws json_error: malformed YAML ("config.yaml:3:7: <problem>"), a
/// duplicate or non-scalar key, a `$NAME` whose variable is not set (the
/// error names the path and the variable).
inline boost::json::value yaml_to_json(std::string_view text, const yaml_read_options& options = {}) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        throw json_error({}, e.mark.is_null() ? detail::format("{}: {}", options.source, e.msg)
                                              : detail::format("{}:{}:{}: {}", options.source,
                                                               e.mark.line + 1, e.mark.column + 1, e.msg));
    }
    return detail::yaml_converter{options}.convert(root, {});
}

/// yaml_to_json of a file's contents (errors name the file).
inline boost::json::value yaml_file_to_json(const std::filesystem::path& file,
                                            yaml_read_options options = {}) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(detail::format("cannot read {}", file.string()));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (options.source == "config.yaml") options.source = file.string();
    return yaml_to_json(ss.str(), options);
}

/// The top-level sections of DeerFlow's config.yaml that agentware reads:
/// those of make_deerflow_pipeline (presets/deerflow.hpp) and those of the
/// lead agent (`models`, `tools`, `tool_groups`, `skills`).
inline constexpr std::string_view deerflow_pipeline_config_sections[] = {"input_sanitization",
                                                                         "tool_output",
                                                                         "tool_result_sanitization",
                                                                         "pii_redaction",
                                                                         "thread_data",
                                                                         "uploads",
                                                                         "sandbox",
                                                                         "dangling_tool_call",
                                                                         "llm_call",
                                                                         "circuit_breaker",
                                                                         "verification",
                                                                         "guardrails",
                                                                         "sandbox_audit",
                                                                         "read_before_write",
                                                                         "tool_error_handling",
                                                                         "dynamic_context",
                                                                         "summarization",
                                                                         "durable_context",
                                                                         "todo",
                                                                         "token_usage",
                                                                         "title",
                                                                         "memory",
                                                                         "view_image",
                                                                         "system_message_coalescing",
                                                                         "subagents",
                                                                         "loop_detection",
                                                                         "token_budget",
                                                                         "terminal_response",
                                                                         "model_length_finish_reason",
                                                                         "safety_finish_reason",
                                                                         "todo_list",
                                                                         "pii",
                                                                         "context_editing",
                                                                         "model_call_limit",
                                                                         "tool_call_limit",
                                                                         "moderation",
                                                                         "llm_tool_selector",
                                                                         "prompt_caching",
                                                                         "tool_emulator",
                                                                         "tool_retry",
                                                                         "model_retry",
                                                                         "model_fallback",
                                                                         "human_in_the_loop",
                                                                         "clarification"};
/// The lead agent's own sections (make_lead_agent reads them; `agent` is ours:
/// the custom agent's settings, which DeerFlow keeps in agents/<name>/config.yaml),
/// and `deep_agent` (ours too: the deep agent `agentware serve` offers beside the lead).
inline constexpr std::string_view deerflow_lead_config_sections[] = {"models", "tools", "tool_groups",
                                                                     "skills", "agent", "deep_agent"};

/// The keys DeerFlow defines inside the sections agentware reads that
/// agentware has no feature for (DeerFlow's gateway, its container sandboxes,
/// its document conversion, ...). They are left out with one warning, as
/// whole sections are; any other unknown key stays an error naming its path,
/// so a misspelt setting is still caught. A test checks that agentware's
/// readers refuse each one (none is implemented).
inline constexpr std::string_view deerflow_unimplemented_keys[] = {
    // The gateway's upload limits and document conversion (uploads router).
    "uploads.max_files", "uploads.max_file_count", "uploads.max_file_size", "uploads.max_single_file_size",
    "uploads.max_total_size", "uploads.auto_convert_documents", "uploads.pdf_converter",
    // The container and remote sandbox providers' settings, and host mounts
    // (agentware's isolated sandbox is configured by its own keys).
    "sandbox.image", "sandbox.port", "sandbox.replicas", "sandbox.overflow_policy", "sandbox.acquire_timeout",
    "sandbox.burst_limit", "sandbox.container_prefix", "sandbox.idle_timeout",
    "sandbox.health_check_skip_seconds", "sandbox.ownership", "sandbox.mounts", "sandbox.thread_data_mounts",
    "sandbox.environment", "sandbox.provisioner_api_key",
    // DeerMem's storage plumbing: pluggable storage classes, user scoping,
    // the manifest, cross-process locks and the eviction audit log.
    "memory.backend_config.storage_class", "memory.backend_config.strict_user_scope",
    "memory.backend_config.manifest_filename", "memory.backend_config.file_lock_timeout_seconds",
    "memory.backend_config.eviction_audit_max_entries"};

/// A config.yaml as agentware reads it.
struct deerflow_config {
    /// The sections agentware reads (as JSON), the others left out.
    boost::json::object sections;
    /// The top-level sections left out, in file order.
    std::vector<std::string> ignored;
    /// The keys of deerflow_unimplemented_keys the file has (left out of
    /// `sections`), in the list's order, each once.
    std::vector<std::string> ignored_keys;

    /// The sections make_deerflow_pipeline takes (the lead agent's own left out).
    boost::json::object pipeline_sections() const {
        boost::json::object out;
        for (const auto& kv : sections)
            if (std::find(std::begin(deerflow_lead_config_sections), std::end(deerflow_lead_config_sections),
                          kv.key()) == std::end(deerflow_lead_config_sections))
                out[kv.key()] = kv.value();
        return out;
    }
};

namespace detail {

// Removes the key at `path` (dotted, under `v`); true when it was there.
inline bool strip_config_key(boost::json::value& v, std::string_view path) {
    auto* o = v.if_object();
    if (!o) return false;
    const auto dot = path.find('.');
    if (dot == std::string_view::npos) return o->erase(path) > 0;
    auto* child = o->if_contains(path.substr(0, dot));
    return child && strip_config_key(*child, path.substr(dot + 1));
}

} // namespace detail

/// Splits a configuration object into the sections agentware reads and the
/// rest, and leaves out the keys of deerflow_unimplemented_keys; `warn` gets
/// one line naming what was left out (nothing when there is none).
inline deerflow_config read_deerflow_config(const boost::json::value& config,
                                            const std::function<void(std::string_view)>& warn = {}) {
    deerflow_config out;
    if (config.is_null()) return out;
    const auto* o = config.if_object();
    if (!o) detail::json_type_error({}, "an object of configuration sections", config);
    auto known = [](std::string_view key) {
        auto in = [&](const auto& list) {
            return std::find(std::begin(list), std::end(list), key) != std::end(list);
        };
        return in(deerflow_pipeline_config_sections) || in(deerflow_lead_config_sections);
    };
    for (const auto& kv : *o) {
        if (known(kv.key()))
            out.sections[kv.key()] = kv.value();
        else
            out.ignored.emplace_back(kv.key());
    }
    for (std::string_view pattern : deerflow_unimplemented_keys) {
        const auto dot = pattern.find('.');
        auto* section = out.sections.if_contains(pattern.substr(0, dot));
        if (section && detail::strip_config_key(*section, pattern.substr(dot + 1)))
            out.ignored_keys.emplace_back(pattern);
    }
    if (!out.ignored.empty() || !out.ignored_keys.empty()) {
        std::string line = "agentware: ignoring configuration ";
        if (!out.ignored.empty())
            line += detail::format("sections agentware does not implement: {}", fmt::join(out.ignored, ", "));
        if (!out.ignored.empty() && !out.ignored_keys.empty()) line += "; and ";
        if (!out.ignored_keys.empty())
            line +=
                detail::format("keys agentware does not implement: {}", fmt::join(out.ignored_keys, ", "));
        if (warn)
            warn(line);
        else
            std::cerr << line << '\n';
    }
    return out;
}

/// Reads DeerFlow's config.yaml: yaml_file_to_json, then read_deerflow_config.
inline deerflow_config load_deerflow_config(const std::filesystem::path& file, yaml_read_options options = {},
                                            const std::function<void(std::string_view)>& warn = {}) {
    return read_deerflow_config(yaml_file_to_json(file, std::move(options)), warn);
}

} // namespace agentware

#endif
