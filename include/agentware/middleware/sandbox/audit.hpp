#ifndef AGENTWARE_MIDDLEWARE_SANDBOX_AUDIT_HPP
#define AGENTWARE_MIDDLEWARE_SANDBOX_AUDIT_HPP

// sandbox_audit: every `bash` command is screened before it runs and logged
// (DeerFlow's SandboxAuditMiddleware). High-risk commands (wiping the file
// system, writing to system files, piping downloads into a shell, fork
// bombs, ...) are not run: the model gets "Command blocked: ...". Medium-risk
// ones (installing packages, sudo, chmod 777, changing PATH) run, and a
// warning is appended to their result. Each call writes one JSON line
// {timestamp, thread_id, command, verdict} to the audit log.
//
// DeerFlow matches a list of regular expressions. Here the command is read
// once by a small shell lexer (quotes, pipes, separators, redirections,
// command substitutions) into simple commands, and the classes are checked on
// those: one pass over the text, and `"rm" -rf /`, `rm -r -f /` or
// `x=$(curl ...)` are recognised whatever the spacing and quoting.
//
// The lexer is in shell_lexer.hpp, the risk classes in command_risk.hpp.

#include <agentware/agent/requests.hpp>
#include <agentware/agent/wrap.hpp>
#include <agentware/json/reader.hpp>
#include <agentware/message/message.hpp>
#include <agentware/middleware/sandbox/command_risk.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_to.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

struct sandbox_audit_options {
    std::size_t max_command_chars = 10000;  ///< longer commands are blocked ("command too long")
    std::string audit_log;                  ///< a file the JSON lines are appended to; empty: none
    bool warn_medium_risk = true;           ///< append the warning to medium-risk results
    std::vector<std::string> tools{"bash"}; ///< the tools whose `command` argument is screened

    static constexpr std::string_view config_section = "sandbox_audit";
    friend bool operator==(const sandbox_audit_options&, const sandbox_audit_options&) = default;
};

inline void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const sandbox_audit_options& o) {
    boost::json::array tools;
    for (const auto& t : o.tools)
        tools.emplace_back(t);
    jv = boost::json::object{{"max_command_chars", o.max_command_chars},
                             {"audit_log", o.audit_log},
                             {"warn_medium_risk", o.warn_medium_risk},
                             {"tools", std::move(tools)}};
}
inline sandbox_audit_options tag_invoke(boost::json::value_to_tag<sandbox_audit_options>,
                                        const boost::json::value& jv) {
    json_reader r(jv, std::string(sandbox_audit_options::config_section));
    sandbox_audit_options o;
    r.read("max_command_chars", o.max_command_chars)
        .read("audit_log", o.audit_log)
        .read("warn_medium_risk", o.warn_medium_risk)
        .read("tools", o.tools)
        .reject_unknown_keys();
    return o;
}

struct sandbox_audit {
    // Text kept for parity with DeerFlow (reference §5.16h).
    static constexpr std::string_view block_format =
        "Command blocked: {}. Please use a safer alternative approach.";
    // Text kept for parity with DeerFlow (reference §5.16h).
    static constexpr std::string_view warning_format =
        "\n\n⚠️ Warning: `{}` is a medium-risk command that may modify the runtime environment.";

    /// Where audit lines go besides the file: for tests and embedding applications.
    using sink = std::function<void(std::string_view json_line)>;

    sandbox_audit() : sandbox_audit(sandbox_audit_options{}) {}
    explicit sandbox_audit(sandbox_audit_options o, sink s = {})
        : options_(std::move(o)), shared_(std::make_shared<shared>()) {
        shared_->out = std::move(s);
    }

    const sandbox_audit_options& options() const noexcept { return options_; }

    auto wrap_tool_call(auto& req, auto&& next) -> decltype(next(req)) {
        if (std::find(options_.tools.begin(), options_.tools.end(), req.call->name) == options_.tools.end())
            return next(req);
        std::string command;
        if (const auto* c = req.call->args.if_contains("command"); c && c->is_string())
            command = std::string(c->get_string());
        const command_verdict v = classify_command(command, options_.max_command_chars);
        const std::string thread = req.rt ? req.rt->thread_id : std::string();
        log(thread, command, v);
        if (v.risk == command_risk::block) {
            message m = tool_message(req.call->id, req.call->name,
                                     fmt::format(fmt::runtime(block_format), v.reason), tool_status::error);
            m.metadata["sandbox_audit"] = boost::json::object{{"verdict", "block"}, {"rule", v.rule}};
            return short_circuit(req, next, tool_response{std::move(m), {}, false});
        }
        if (v.risk == command_risk::warn && options_.warn_medium_risk)
            return map_response(req, next, [command, rule = v.rule](tool_response r) {
                std::string warning = fmt::format(fmt::runtime(warning_format), command);
                auto last = std::find_if(r.msg.content.rbegin(), r.msg.content.rend(),
                                         [](const content_block& b) { return b.is_text(); });
                if (last != r.msg.content.rend())
                    last->text += warning;
                else
                    r.msg.content.push_back(text_block(std::move(warning)));
                r.msg.metadata["sandbox_audit"] = boost::json::object{{"verdict", "warn"}, {"rule", rule}};
                return r;
            });
        return next(req);
    }

    /// The JSON line for one call (secrets in the command are masked).
    static std::string audit_line(std::string_view thread_id, std::string_view command,
                                  const command_verdict& v) {
        const auto now = std::chrono::system_clock::now();
        const std::time_t t = std::chrono::system_clock::to_time_t(now);
        std::tm tm{};
        gmtime_r(&t, &tm);
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
        char stamp[80]; // room for any int the fields could hold (g++ checks)
        std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
        boost::json::object o{{"timestamp", stamp},
                              {"thread_id", thread_id},
                              {"command", mask_secrets(command)},
                              {"verdict", v.risk == command_risk::block  ? "block"
                                          : v.risk == command_risk::warn ? "warn"
                                                                         : "pass"}};
        if (!v.rule.empty()) o["rule"] = v.rule;
        return boost::json::serialize(o);
    }

    /// Values of NAME=value words whose name looks secret, and Bearer tokens, become "***".
    static std::string mask_secrets(std::string_view command) {
        std::string out(command);
        static constexpr std::array<std::string_view, 6> secret{
            "KEY=", "TOKEN=", "SECRET=", "PASSWORD=", "PASSWD=", "Bearer "};
        for (auto marker : secret) {
            for (std::size_t p = out.find(marker); p != std::string::npos; p = out.find(marker, p + 1)) {
                const std::size_t start = p + marker.size();
                std::size_t end = start;
                while (end < out.size() && out[end] != ' ' && out[end] != '\t' && out[end] != '\n' &&
                       out[end] != '"' && out[end] != '\'' && out[end] != ';' && out[end] != '&')
                    ++end;
                if (end > start) out.replace(start, end - start, "***");
            }
        }
        return out;
    }

private:
    void log(std::string_view thread, std::string_view command, const command_verdict& v) const {
        if (options_.audit_log.empty() && !shared_->out) return;
        const std::string line = audit_line(thread, command, v);
        std::lock_guard lock(shared_->mutex);
        if (shared_->out) shared_->out(line);
        if (!options_.audit_log.empty()) {
            if (std::FILE* f = std::fopen(options_.audit_log.c_str(), "a")) {
                std::fwrite(line.data(), 1, line.size(), f);
                std::fputc('\n', f);
                std::fclose(f);
            }
        }
    }

    struct shared {
        std::mutex mutex;
        sink out;
    };
    sandbox_audit_options options_;
    std::shared_ptr<shared> shared_;
};

} // namespace agentware

#endif
