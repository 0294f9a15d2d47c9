// POSIX file helpers of the stores and the meta index: whole writes, whole reads, cut-backs.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
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
// fsync of fd: 0 or the errno. syncCalls() counts these and the syncfs calls
// of FileSystemSync (the stores' and indexes' syncs: -v's close report).
int syncFile(int fd);
uint64_t syncCalls();
// fsync of the directory holding `file`: 0, or the errno of what failed.
int syncDirOf(const std::string& file);

// The file system of a storage directory, made durable as a whole by one
// syncfs(2) instead of an fsync a file. Opened at a run's start: syncfs
// reports a writeback error of any file of that file system that happened
// after the open (Linux 5.8 and later). usable() is false where syncfs does
// not report them (earlier kernels; overlayfs, FUSE, NFS): files there are
// fsynced one by one.
class FileSystemSync {
 public:
  explicit FileSystemSync(const std::string& dir);  // never throws
  ~FileSystemSync();
  FileSystemSync(const FileSystemSync&) = delete;
  FileSystemSync& operator=(const FileSystemSync&) = delete;
  bool usable() const { return fd_ >= 0 && reportsErrors_; }
  // Whether the open file fd lies on this file system.
  bool holds(int fd) const;
  // syncfs: 0 or the errno (each error is reported once).
  int sync();

 private:
  int fd_ = -1;
  dev_t dev_ = 0;
  bool reportsErrors_ = false;
};
// An ERROR line on stderr (also in release builds): what rotation could not do.
void reportError(const std::string& message);
// Renames `from` to its archive name `to`, then fsyncs the directory (both
// when they differ; not with `syncDir` false: the caller syncs the file system
// after). A missing `from` is nothing to do (false). Every failure, and an
// archive that is overwritten, is reported with reportError(); none is thrown.
// True when the file was renamed.
bool rotateStorageFile(const std::string& from, const std::string& to, bool syncDir = true);

}  // namespace storage::io
