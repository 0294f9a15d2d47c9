// perf's map of JIT code (RDB_PERF_MAP set): see perf_map.cpp.
#pragma once

namespace llvm::orc {
class LLJIT;
}

namespace jit {
void addPerfMap(llvm::orc::LLJIT& lljit);
}
