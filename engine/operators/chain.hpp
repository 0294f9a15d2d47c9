// What the engine knows of a chain's members (chain_plan.cpp finds chains,
// chain.cpp runs them; jit/chain_abi.hpp is what the code shares with it).
#pragma once

#include "engine/stream.hpp"

namespace engine::ops {

using ChainKind = jit::ChainStep::Kind;

// The step a chain member takes (its stream is chainable).
ChainKind kindOf(const Stream& s);
// A@(1, w): w.
int32_t windowLength(const Stream& s);
// A run of the chain on the VM (a jit::ChainFn: ChainArgs::ctx is the
// Chain, whose vmSteps it runs).
void runChainOnVm(const jit::ChainArgs* args, int64_t count);

}  // namespace engine::ops
