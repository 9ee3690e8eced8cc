#ifndef AGENTWARE_DETAIL_WRITE_NOFOLLOW_HPP
#define AGENTWARE_DETAIL_WRITE_NOFOLLOW_HPP

// Writing a file the agent named, without following a symlink at its last
// component: the path was checked, but it could have been replaced by a link
// since. Shared by the sandbox tools and the filesystem's disk backend.

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

namespace agentware::detail {

/// Writes `content` to `p` (truncating, or appending); 0, or the errno of the failure.
inline int write_file_nofollow(const std::filesystem::path& p, std::string_view content, bool append) {
    const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    const int fd = ::open(p.c_str(), flags, 0644);
    if (fd < 0) return errno;
    std::size_t done = 0;
    int result = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            result = errno;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return result;
}

} // namespace agentware::detail

#endif
