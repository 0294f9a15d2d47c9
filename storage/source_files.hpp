// Shared by the file sources (source.cpp, text_source.cpp).
#pragma once

#include <memory>
#include <string>

#include "source.hpp"

namespace storage {

// A regular file opened for reading (blocking); SourceError for anything else.
int openRegular(const std::string& path, const char* kind);

std::unique_ptr<Source> openTextSource(const std::string& path, const ir::Layout& layout, const SourceOptions& o);

}  // namespace storage
