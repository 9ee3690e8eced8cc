#ifndef AGENTWARE_MESSAGE_JSON_HPP
#define AGENTWARE_MESSAGE_JSON_HPP
// Messages as JSON: the OpenAI chat-completions format, plus a few extra fields
// so that an agent state survives a save/load round trip unchanged.
//
// value_from(message) gives the lossless state form; to_openai_wire(message)
// gives only what the OpenAI API accepts, for requests. value_to<message>
// accepts both, and the quirks of real providers (see read_message below).

#include <agentware/detail/config.hpp>
#include <agentware/detail/format.hpp>
#include <agentware/message/detail/text.hpp>
#include <agentware/message/error.hpp>
#include <agentware/message/id.hpp>
#include <agentware/message/message.hpp>

#include <boost/json/array.hpp>
#include <boost/json/conversion.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp> // what the conversions below are for
#include <boost/json/value_to.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentware {

/// Choices for to_openai_wire.
struct wire_options {
    /// Send an assistant message's reasoning back as "reasoning_content".
    /// OpenAI rejects the field; some providers (DeepSeek, Moonshot in
    /// thinking mode with tools) require it.
    bool include_reasoning = false;
};

namespace detail {

AGENTWARE_DECL std::string_view json_kind_name(const boost::json::value& v) noexcept;

/// What an error message shows of a wrong value: strings by (short) value,
/// anything else by kind, so errors never carry large payloads.
AGENTWARE_DECL std::string describe_json(const boost::json::value& v);

/// Where in the input a reader is: the owner ("message", "messages[3]") and
/// the path of the enclosing field ("tool_calls[0].function"), for errors.
struct json_place {
    std::string_view owner;
    std::string path;

    std::string field(std::string_view key) const {
        return path.empty() ? std::string(key) : detail::format("{}.{}", path, key);
    }
    json_place member(std::string_view key) const { return {owner, field(key)}; }
    json_place element(std::string_view key, std::size_t i) const {
        return {owner, detail::format("{}[{}]", field(key), i)};
    }

    [[noreturn]] void fail(std::string_view key, std::string_view why) const {
        throw message_format_error(detail::format("{}: field \"{}\" {}", owner, field(key), why));
    }
    /// An error about the value at `path` itself.
    [[noreturn]] void fail_here(std::string_view why) const {
        if (path.empty()) throw message_format_error(detail::format("{}: {}", owner, why));
        throw message_format_error(detail::format("{}: field \"{}\" {}", owner, path, why));
    }
};

AGENTWARE_DECL const boost::json::object& expect_object(const boost::json::value& v, const json_place& at);

/// The string at `key`; "" when missing or null. Any other type is an error.
AGENTWARE_DECL std::string read_string(const boost::json::object& o, std::string_view key,
                                       const json_place& at);

/// The string at `key`, which must be present.
AGENTWARE_DECL std::string read_required_string(const boost::json::object& o, std::string_view key,
                                                const json_place& at);

AGENTWARE_DECL std::string_view role_wire_name(role r) noexcept;

/// Reads a role name. Besides the four OpenAI roles it accepts "developer"
/// (OpenAI's newer name for system) and "remove" (our marker's own form).
AGENTWARE_DECL role read_role(const boost::json::value& v, const json_place& at, std::string_view key);

AGENTWARE_DECL tool_status read_status(const boost::json::value& v, const json_place& at,
                                       std::string_view key);

AGENTWARE_DECL content_block read_content_part(const boost::json::value& v, const json_place& at);

/// Content may be a string, an array of parts, null or absent. "" means no content.
AGENTWARE_DECL std::vector<content_block> read_content(const boost::json::object& o, const json_place& at);

AGENTWARE_DECL bool is_blank(std::string_view text) noexcept;

/// Tool arguments as read from a provider: parsed, or the raw text and why not.
struct parsed_arguments {
    boost::json::object args;
    std::string raw;
    std::string error; ///< empty when args is valid
};

/// Turns "arguments" into an object. OpenAI sends a JSON text string; accepted
/// too: an object (some local servers), "" / whitespace / "null" / absent for
/// no arguments, and a doubly encoded string holding an object text.
AGENTWARE_DECL parsed_arguments read_arguments(const boost::json::value* v);

/// Reads one element of "tool_calls" into m.tool_calls or, when its arguments
/// are unusable, into m.invalid_tool_calls(). A missing or blank id stays
/// blank: the history keeps what the model sent (dangling_tool_call labels
/// such calls in the requests it builds, as DeerFlow does).
AGENTWARE_DECL void read_tool_call(const boost::json::value& v, const json_place& at, message& m);

/// Our own lossless form of an invalid tool call.
AGENTWARE_DECL invalid_tool_call read_invalid_tool_call(const boost::json::value& v, const json_place& at);

/// token_usage's JSON keys, each with the count it names.
AGENTWARE_DECL std::array<std::pair<std::string_view, std::uint64_t*>, 3>
usage_counts(token_usage& u) noexcept;

/// The usage object of the state form, when it is exactly what usage_to_json
/// writes (the three counts, not all zero), so that lifting it into the typed
/// member and writing it back gives the same JSON; anything else stays JSON.
AGENTWARE_DECL std::optional<token_usage> read_exact_usage(const boost::json::value& v);

AGENTWARE_DECL boost::json::object usage_to_json(const token_usage& u);

/// The state form's "metadata": finish_reason, model and usage go to the typed
/// message::provider (when they are of the form it writes back), the rest to
/// message::metadata. States saved before the split read the same way.
AGENTWARE_DECL void read_metadata(const boost::json::object& in, message& m);

/// The typed figures that are set, under the keys the state form has always used.
AGENTWARE_DECL void write_provider_metadata(const provider_metadata& p, boost::json::object& out);

/// The state form's "metadata": the typed provider figures first, then the
/// rest (a key of both is written once, from the typed member).
AGENTWARE_DECL boost::json::object metadata_to_json(const message& m);

/// Every field of a message but its metadata (read_message's part that does
/// not depend on how metadata is held).
AGENTWARE_DECL message read_message_fields(const boost::json::object& o, const json_place& at);

/// Reads a message from the wire or the state form. Tolerated provider
/// quirks: content null or absent (tool-call-only replies), "reasoning" as an
/// alias of "reasoning_content", tool call type or id absent, arguments in the
/// forms read_arguments lists; a non-empty "refusal" is kept in
/// metadata["refusal"] so a refused reply is not silently empty. Unknown
/// fields are ignored.
AGENTWARE_DECL message read_message(const boost::json::value& v, std::string_view owner);

AGENTWARE_DECL boost::json::object content_part_to_json(const content_block& block);

/// A single non-empty text block is written as a plain string (what every
/// provider accepts); no content as "" (or null where OpenAI itself uses null);
/// anything else as an array of parts, which keeps e.g. one empty text block
/// distinguishable from no content.
AGENTWARE_DECL boost::json::value content_to_json(const std::vector<content_block>& content,
                                                  bool null_when_empty);

AGENTWARE_DECL boost::json::object tool_call_to_json(const tool_call& call);

AGENTWARE_DECL boost::json::object invalid_tool_call_to_json(const invalid_tool_call& call);

enum class json_form { state, wire };

AGENTWARE_DECL boost::json::object message_to_json(const message& m, json_form form,
                                                   const wire_options& options);

} // namespace detail

// --- Boost.JSON conversions (found by argument-dependent lookup) -------------

/// role <-> "system", "user", "assistant", "tool" ("remove" for the marker).
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, role r);

AGENTWARE_DECL role tag_invoke(boost::json::value_to_tag<role>, const boost::json::value& jv);

/// tool_status <-> "ok", "error" ("success" is read as ok).
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, tool_status s);

AGENTWARE_DECL tool_status tag_invoke(boost::json::value_to_tag<tool_status>, const boost::json::value& jv);

/// content_block <-> an OpenAI content part.
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                               const content_block& block);

AGENTWARE_DECL content_block tag_invoke(boost::json::value_to_tag<content_block>,
                                        const boost::json::value& jv);

/// tool_call <-> an OpenAI tool call (arguments as JSON text). Reading a call
/// whose arguments are unusable throws here, since a tool_call cannot hold
/// them; inside a message such a call becomes an invalid_tool_call instead.
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const tool_call& call);

AGENTWARE_DECL tool_call tag_invoke(boost::json::value_to_tag<tool_call>, const boost::json::value& jv);

/// invalid_tool_call <-> {"id","name","raw_args","error"} (not an OpenAI type).
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                               const invalid_tool_call& call);

AGENTWARE_DECL invalid_tool_call tag_invoke(boost::json::value_to_tag<invalid_tool_call>,
                                            const boost::json::value& jv);

/// token_usage <-> {"input_tokens","output_tokens","total_tokens"}; a count
/// that is missing reads as 0.
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const token_usage& u);

AGENTWARE_DECL token_usage tag_invoke(boost::json::value_to_tag<token_usage>, const boost::json::value& jv);

/// provider_metadata <-> {"finish_reason","model","usage"}, each only when set.
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv,
                               const provider_metadata& p);

AGENTWARE_DECL provider_metadata tag_invoke(boost::json::value_to_tag<provider_metadata>,
                                            const boost::json::value& jv);

/// message <-> the lossless state form: the OpenAI message plus "id", "name",
/// "invalid_tool_calls", "tool_call_id", "status":"error" and "metadata" when set.
AGENTWARE_DECL void tag_invoke(boost::json::value_from_tag, boost::json::value& jv, const message& m);

AGENTWARE_DECL message tag_invoke(boost::json::value_to_tag<message>, const boost::json::value& jv);

// --- Helpers -------------------------------------------------------------------

/// The message as an OpenAI chat-completions request message: only fields the
/// API accepts (no id, status, metadata; invalid tool calls are dropped).
/// Throws std::invalid_argument for a remove marker.
AGENTWARE_DECL boost::json::value to_openai_wire(const message& m, const wire_options& options = {});

/// The "messages" array of a chat-completions request.
AGENTWARE_DECL boost::json::array to_openai_wire(const std::vector<message>& messages,
                                                 const wire_options& options = {});

/// Parses a JSON array of messages (either form). Invalid JSON or a malformed
/// message throws message_format_error naming the offset or the field, e.g.
/// `messages: not valid JSON: syntax error at offset 3`.
AGENTWARE_DECL std::vector<message> parse_messages(std::string_view json_text);

/// The messages as a JSON array text in the lossless state form.
AGENTWARE_DECL std::string to_json_string(const std::vector<message>& messages);

/// One message as JSON text in the lossless state form.
AGENTWARE_DECL std::string to_json_string(const message& m);

} // namespace agentware

#if defined(AGENTWARE_HEADER_ONLY)
#include <agentware/message/impl/json.ipp>
#endif

#endif
