// libFuzzer target for everything that reads bytes a model server sends: the
// SSE parser (checked against itself: any split must give the same events),
// the OpenAI stream assembler and response parser, and the Anthropic ones.
// Any exception other than the documented error types, or any crash, is a bug.

#include <agentware/model/anthropic_format.hpp>
#include <agentware/model/openai_format.hpp>
#include <agentware/model/sse_parser.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::vector<std::string> events_of(std::string_view bytes, std::size_t cut) {
    agentware::sse_parser parser(1u << 16);
    std::vector<std::string> out;
    auto sink = [&](const agentware::sse_event& e) {
        out.push_back(std::string(e.type) + '\x1f' + std::string(e.data) + '\x1f' + std::string(e.id));
    };
    try {
        parser.feed(bytes.substr(0, cut), sink);
        parser.feed(bytes.substr(cut), sink);
    } catch (const agentware::sse_error&) {
        out.push_back("<too large>");
    }
    return out;
}

template <class Assembler>
void run_stream(std::string_view bytes, std::size_t cut) {
    agentware::stream_handler handler{[](std::string_view) {}, [](std::string_view) {}, {}};
    Assembler assembler(&handler);
    try {
        assembler.feed(bytes.substr(0, cut));
        assembler.feed(bytes.substr(cut));
        (void)assembler.finish();
    } catch (const agentware::model_error&) {
    } catch (const agentware::sse_error&) {
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // The first byte picks where the stream is split in two.
    const std::size_t cut_seed = data[0];
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::size_t cut = bytes.empty() ? 0 : cut_seed % (bytes.size() + 1);

    // Splitting the input must never change the events.
    if (events_of(bytes, cut) != events_of(bytes, 0)) std::abort();

    run_stream<agentware::openai_stream_assembler>(bytes, cut);
    run_stream<agentware::anthropic_stream_assembler>(bytes, cut);
    try {
        (void)agentware::parse_openai_response(bytes);
    } catch (const agentware::model_error&) {
    }
    try {
        (void)agentware::parse_anthropic_response(bytes);
    } catch (const agentware::model_error&) {
    }
    return 0;
}
