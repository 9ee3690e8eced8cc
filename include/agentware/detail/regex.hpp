#ifndef AGENTWARE_DETAIL_REGEX_HPP
#define AGENTWARE_DETAIL_REGEX_HPP

// agentware matches its regular expressions through these, over const char*
// ranges only: <regex> instantiates its matchers once per iterator type, and
// a file that includes several of the headers paid for std::string's
// iterators as well as for string_view's.

#include <iterator>
#include <regex>
#include <string>
#include <string_view>

namespace agentware::detail {

inline bool regex_search(std::string_view text, const std::regex& re) {
    return std::regex_search(text.data(), text.data() + text.size(), re);
}
inline bool regex_search(std::string_view text, std::cmatch& match, const std::regex& re) {
    return std::regex_search(text.data(), text.data() + text.size(), match, re);
}
inline bool regex_match(std::string_view text, const std::regex& re) {
    return std::regex_match(text.data(), text.data() + text.size(), re);
}
inline bool regex_match(std::string_view text, std::cmatch& match, const std::regex& re) {
    return std::regex_match(text.data(), text.data() + text.size(), match, re);
}
inline std::string regex_replace(std::string_view text, const std::regex& re, const char* with) {
    std::string out;
    std::regex_replace(std::back_inserter(out), text.data(), text.data() + text.size(), re, with);
    return out;
}

} // namespace agentware::detail

#endif
