// Each stream's stored files: opened (or created) at set-up, flushed and
// closed at shutdown; the file names and formats are storage's.
#include <filesystem>

#include "engine/engine_impl.hpp"
#include "storage/descriptor.hpp"

namespace engine {

static std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper((unsigned char)c));
  return s;
}

void Engine::Impl::openArtifacts(Stream& s) {
  const ir::Query& q = *s.q;
  namespace fs = std::filesystem;
  storage::Descriptor d;
  for (auto& f : q.schema) {
    storage::DescEntry e;
    e.type = f.type;
    e.name = f.name;
    e.count = f.type == ir::Type::STRING ? f.rlen * f.rarray : f.rarray;
    d.entries.push_back(e);
  }
  const std::string descPath = storageDir + q.id + ".desc";
  if (s.declared) {
    storage::DescEntry ref;
    ref.kind = storage::DescEntry::Kind::REF;
    ref.name = q.filename;
    d.entries.push_back(ref);
    storage::DescEntry type;
    type.kind = storage::DescEntry::Kind::TYPE;
    type.name = q.sourceKind == ir::SourceKind::TEXTSOURCE ? "TEXTSOURCE" : "DEVICE";
    d.entries.push_back(type);
    s.outRec.assign(size_t(std::max(s.out.recordSize, 1)), 0);
    s.outNull.assign(std::max<size_t>(s.out.elems.size(), 1), 0);
    std::error_code ec;
    if (fs::exists(descPath, ec)) {
      try {
        auto stored = storage::Descriptor::load(descPath);
        if (!d.compatibleWith(stored))
          throw EngineError("storage: descriptor schema mismatch in " + descPath + " — remove data files and restart");
        // The source may have moved: the descriptor names the file this run reads.
        if (stored.ref() != d.ref() || stored.profile() != d.profile()) d.save(descPath);
      } catch (const storage::DescError& e) {
        throw EngineError(e.what());
      }
    } else {
      try {
        d.save(descPath);
      } catch (const storage::DescError& e) {
        throw EngineError(e.what());
      }
    }
    return;
  }
  if (q.retentionCapacity || q.retentionSegments) {
    storage::DescEntry r;
    r.kind = storage::DescEntry::Kind::RETENTION;
    r.capacity = q.retentionCapacity;
    r.segments = q.retentionSegments;
    d.entries.push_back(r);
  }
  std::string profile = upper(q.storageProfile);
  if (q.policyCapacity != 0) {
    storage::DescEntry rm;
    rm.kind = storage::DescEntry::Kind::RETMEMORY;
    rm.capacity = q.policyCapacity;
    d.entries.push_back(rm);
    storage::DescEntry t;
    t.kind = storage::DescEntry::Kind::TYPE;
    t.name = upper(q.policyProfile);
    if (q.storageProfile != "DEFAULT" && !q.isVolatile) t.name = profile;  // an explicit STORAGE clause wins
    d.entries.push_back(t);
    profile = t.name;
  } else if (profile != "DEFAULT") {
    storage::DescEntry t;
    t.kind = storage::DescEntry::Kind::TYPE;
    t.name = profile;
    d.entries.push_back(t);
  }
  const std::string dataName = q.filename.empty() ? q.id : q.filename;
  const std::string dataPath = storageDir + dataName;
  if (rotation < 0) {
    // A run starts every computed stream empty: remove the whole file family.
    for (const std::string& f : {dataPath, descPath, dataPath + ".meta", dataPath + ".shadow", dataPath + ".meta.shadow"})
      std::remove(f.c_str());
    std::error_code ec;
    fs::path dp(dataPath);
    fs::path dir = dp.has_parent_path() ? dp.parent_path() : fs::path(".");
    std::string prefix = dp.filename().string() + "_segment_";
    for (auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove(e.path(), ec);
  }
  try {
    d.save(descPath);
    s.store = storage::openStore(profile, dataPath, s.out.recordSize, d.retention(), d.retMemory());
    s.metaBits = int(d.entries.size());
    s.meta = std::make_unique<storage::MetaIndex>(dataPath + ".meta", s.metaBits, s.store->shadowed());
    // Data first, index never ahead: an index a crash left ahead of (or behind)
    // the data is cut back (padded) to the data's whole records.
    s.meta->align(s.store->count());
    s.bitmap.assign(size_t((s.metaBits + 7) / 8), 0);
    s.zeroBitmap = s.bitmap;
  } catch (const storage::StorageError& e) {
    throw EngineError(e.what());
  } catch (const storage::DescError& e) {
    throw EngineError(e.what());
  }
}

// Data first, then the index entries that cover it, then close. Returns the
// first failure ("stream ID: ..."), empty when all went well; never throws.
std::string Engine::Impl::closeArtifacts(Stream& s, int rotation) {
  std::string err;
  auto note = [&](const std::exception& e) {
    if (err.empty()) err = "stream " + s.q->id + ": " + e.what();
  };
  if (!s.store && s.meta) {
    try {
      s.meta->flush(durable(s));
    } catch (const std::exception& e) {
      note(e);
    }
  }
  if (s.store) {
    try {
      s.store->flush();
    } catch (const std::exception& e) {
      note(e);
    }
    try {
      if (s.meta) s.meta->flush(s.store->durable());
    } catch (const std::exception& e) {
      note(e);
    }
    try {
      s.store->close(rotation);
    } catch (const std::exception& e) {
      note(e);
    }
  }
  s.meta.reset();
  return err;
}

// Never overwrite an earlier run's archive, even if the counter file was lost.
void Engine::Impl::nextRotation() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = storageDir.empty() ? fs::path(".") : fs::path(storageDir);
  for (auto* s : computed) {
    const std::string data = s->q->filename.empty() ? s->q->id : s->q->filename;
    for (auto& e : fs::directory_iterator(dir, ec)) {
      std::string n = e.path().filename().string();
      auto at = n.rfind(".old");
      if (at == std::string::npos || n.compare(0, data.size(), data) != 0) continue;
      if (n.size() <= data.size() || (n[data.size()] != '.' && n[data.size()] != '_')) continue;
      std::string k = n.substr(at + 4);
      if (k.empty() || k.find_first_not_of("0123456789") != std::string::npos || k.size() > 9) continue;
      rotation = std::max(rotation, std::stoi(k) + 1);
    }
  }
}

}  // namespace engine
