// Runs the real xretractor binary on a query in a fresh directory and reads
// the artifacts back (used by the engine tests).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace testing {

// Two INTEGER text sources A (a.txt) and B (b.txt) of intervals dA and dB, and
// `SELECT * STREAM out FROM <from>`, stored in the working directory.
template <class R>
std::string twoSourceQuery(const R& dA, const R& dB, const std::string& from) {
  auto rat = [](const R& x) { return std::to_string(x.num) + "/" + std::to_string(x.den); };
  return "STORAGE '.'\nDECLARE x INTEGER STREAM A, " + rat(dA) + " TEXTFILE 'a.txt'\nDECLARE y INTEGER STREAM B, " +
         rat(dB) + " TEXTFILE 'b.txt'\nSELECT * STREAM out FROM " + from + "\n";
}

struct RunDir {
  std::filesystem::path dir;
  RunDir() {
    char tmpl[] = "/tmp/rdb_engine_XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~RunDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  // Runs `xretractor query.rql ARGS` in the directory; returns the exit status.
  int run(const std::string& query, const std::string& args) const {
    write("query.rql", query);
    // Each run has its own TMPDIR, so its instance lock never meets another test's.
    std::string cmd = "cd '" + dir.string() + "' && TMPDIR='" + dir.string() + "' '" RDB_XRETRACTOR "' query.rql " +
                      args + " >run.out 2>run.err";
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir / name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<int32_t> ints(const std::string& name) const {
    std::string b = read(name);
    std::vector<int32_t> v(b.size() / 4);
    if (!v.empty()) memcpy(v.data(), b.data(), v.size() * 4);  // an empty vector's data() may be null
    return v;
  }
  // Records of `width` INTEGER fields.
  std::vector<std::vector<int32_t>> records(const std::string& name, size_t width) const {
    auto v = ints(name);
    std::vector<std::vector<int32_t>> out;
    for (size_t i = 0; i + width <= v.size(); i += width)
      out.emplace_back(v.begin() + long(i), v.begin() + long(i + width));
    return out;
  }
};

// "a b c ..." text data: values first, first+step, ...
inline std::string sequence(int first, int count, int step = 1) {
  std::string s;
  for (int i = 0; i < count; ++i) s += std::to_string(first + i * step) + "\n";
  return s;
}

}  // namespace testing
