// POSIX file helpers of the stores and the meta index: whole writes, whole reads, cut-backs.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace storage::io {

// Writes n bytes at offset off, retrying short writes and up to 5 EINTRs.
// Returns 0, or the errno of the write that failed; `done` is what was written.
int pwriteAll(int fd, const void* buf, size_t n, off_t off, size_t& done);
bool preadAll(int fd, void* buf, size_t n, off_t off);
std::string writeFailed(const std::string& what, int err);
// Cuts a file back after a failed write (shrinking needs no space).
void truncateTo(int fd, off_t size);
// Appends whole units (records, entries) at the end of fd; a failed write is
// cut back to the size before it, so the file keeps whole units only.
void appendWhole(int fd, const void* buf, size_t n, const std::string& what);
int openRW(const std::string& path);  // O_RDWR | O_CREAT; throws StorageError
off_t fileSize(int fd);
// fsync of the directory holding `file`: 0, or the errno of what failed.
int syncDirOf(const std::string& file);
// An ERROR line on stderr (also in release builds): what rotation could not do.
void reportError(const std::string& message);
// Renames `from` to its archive name `to`, then fsyncs the directory (both
// when they differ). A missing `from` is nothing to do (false). Every failure,
// and an archive that is overwritten, is reported with reportError(); none is
// thrown. True when the file was renamed.
bool rotateStorageFile(const std::string& from, const std::string& to);

}  // namespace storage::io
