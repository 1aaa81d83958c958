// Linked into every fuzz target: operator new[]/delete[] that give fast-cpp-csv-parser's
// 48 MiB line buffer fresh zero pages from mmap instead of the ASan heap.
//
// Why: each io::LineReader allocates 3 x 16 MiB, and ASan poisons the 6 MiB of shadow of
// that block at every free; recording_fuzz ran at 15 executions/s, almost all of it there.
// Fresh anonymous pages are also what glibc gives a 48 MiB allocation outside the fuzzer
// (its mmap threshold is at most 32 MiB), so the parser sees the same zeroed buffer as in
// production. A PROT_NONE guard page after the block turns an overflow into a crash.
// Every other size goes to malloc/free, which ASan checks as usual. ASan's own operators
// are weak symbols, so these replace them without a link conflict.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>

namespace {

constexpr std::size_t kCsvBufferBytes = std::size_t{3} << 24;  // io::LineReader: 3 * block_len
constexpr int kMaxLive = 16;

std::mutex live_mutex;
void* live[kMaxLive] = {};  // mapped buffers in use

std::size_t MappedBytes() {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (kCsvBufferBytes + page - 1) / page * page + page;  // block + guard page
}

void* MapBuffer() {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (void*& slot : live) {
    if (slot != nullptr) continue;
    const std::size_t bytes = MappedBytes();
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    ::mprotect(static_cast<char*>(p) + bytes - page, page, PROT_NONE);
    // The block ends right at the guard page.
    slot = static_cast<char*>(p) + (bytes - page - kCsvBufferBytes);
    return slot;
  }
  return nullptr;  // too many at once: fall back to malloc
}

bool UnmapBuffer(void* p) {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (void*& slot : live) {
    if (slot != p) continue;
    const std::size_t bytes = MappedBytes();
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    ::munmap(static_cast<char*>(p) - (bytes - page - kCsvBufferBytes), bytes);
    slot = nullptr;
    return true;
  }
  return false;
}

void* Allocate(std::size_t size) noexcept {
  if (size == kCsvBufferBytes)
    if (void* p = MapBuffer()) return p;
  return std::malloc(size == 0 ? 1 : size);
}

void Release(void* p) noexcept {
  if (p != nullptr && !UnmapBuffer(p)) std::free(p);
}

}  // namespace

void* operator new[](std::size_t size) {
  void* p = Allocate(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return Allocate(size); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }
