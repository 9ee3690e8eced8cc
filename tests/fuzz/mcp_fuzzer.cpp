// libFuzzer target for what an MCP server sends: the stdio framing (lines,
// with a length limit), the SSE framing of Streamable HTTP, and the mapping
// of a `tools/call` result to a tool message. Both framings are checked
// against themselves: splitting the bytes anywhere must give the same
// messages. Any crash, any exception other than the documented error types,
// or a line over the limit that gets through, is a bug.

#include <agentware/mcp/detail/line_reader.hpp>
#include <agentware/mcp/tools.hpp>
#include <agentware/model/sse_parser.hpp>

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t max_message = 1u << 12; // small, so that the limit is reached often

/// A message as the client reads it: JSON, and for an answer its result
/// mapped to a tool message.
void read_message(std::string_view text) {
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(text, ec);
    if (ec) return;
    const auto map_one = [](const boost::json::value& m) {
        if (!m.is_object()) return;
        if (const auto* r = m.get_object().if_contains("result"); r && r->is_object())
            (void)agentware::mcp::to_tool_output(r->get_object());
        (void)agentware::mcp::to_tool_output(m.get_object()); // a result without its envelope
    };
    if (v.is_array())
        for (const auto& m : v.get_array())
            map_one(m);
    else
        map_one(v);
}

std::vector<std::string> lines_of(std::string_view bytes, std::size_t cut) {
    agentware::mcp::detail::line_reader reader(max_message);
    std::vector<std::string> out;
    const auto on_line = [&](std::string_view line) {
        if (line.size() > max_message) std::abort();
        out.emplace_back(line);
    };
    if (!reader.feed(bytes.substr(0, cut), on_line) || !reader.feed(bytes.substr(cut), on_line))
        out.emplace_back("<too long>");
    return out;
}

std::vector<std::string> events_of(std::string_view bytes, std::size_t cut) {
    agentware::sse_parser parser(max_message);
    std::vector<std::string> out;
    const auto sink = [&](const agentware::sse_event& e) { out.emplace_back(e.data); };
    try {
        parser.feed(bytes.substr(0, cut), sink);
        parser.feed(bytes.substr(cut), sink);
    } catch (const agentware::sse_error&) {
        out.emplace_back("<too large>");
    }
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // The first byte picks where the bytes are split in two.
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::size_t cut = bytes.empty() ? 0 : data[0] % (bytes.size() + 1);

    const auto lines = lines_of(bytes, cut);
    if (lines != lines_of(bytes, 0)) std::abort();
    for (const auto& l : lines)
        read_message(l);

    const auto events = events_of(bytes, cut);
    if (events != events_of(bytes, 0)) std::abort();
    for (const auto& e : events)
        read_message(e);

    read_message(bytes);
    return 0;
}
