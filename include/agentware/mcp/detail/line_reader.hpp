#ifndef AGENTWARE_MCP_DETAIL_LINE_READER_HPP
#define AGENTWARE_MCP_DETAIL_LINE_READER_HPP

// The stdio transport's framing: one JSON-RPC message per line. A server is
// untrusted, so a line is cut off at a limit rather than grown without end.
// Apart from the process code so that the fuzzer reaches it.

#include <cstddef>
#include <string>
#include <string_view>

namespace agentware::mcp::detail {

class line_reader {
public:
    explicit line_reader(std::size_t max_line_bytes) : max_(max_line_bytes) {}

    /// Calls `on_line(std::string_view)` for each line completed by `bytes`
    /// (without its `\n`, and without a `\r` before it; blank lines skipped).
    /// False once a line grows past the limit: the stream is then unusable
    /// and the reader takes nothing more.
    template <class OnLine>
    bool feed(std::string_view bytes, OnLine&& on_line) {
        if (overflowed_) return false;
        std::size_t pos = 0;
        while (pos < bytes.size()) {
            const auto nl = bytes.find('\n', pos);
            const auto piece = bytes.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
            if (partial_.size() + piece.size() > max_) {
                overflowed_ = true;
                partial_.clear();
                partial_.shrink_to_fit();
                return false;
            }
            partial_ += piece;
            if (nl == std::string_view::npos) break;
            pos = nl + 1;
            std::string_view line = partial_;
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (line.find_first_not_of(" \t") != std::string_view::npos) on_line(line);
            partial_.clear();
        }
        return true;
    }

    std::size_t max_line_bytes() const noexcept { return max_; }

private:
    std::size_t max_;
    std::string partial_;
    bool overflowed_ = false;
};

} // namespace agentware::mcp::detail

#endif
