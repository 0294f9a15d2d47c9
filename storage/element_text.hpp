// Element-to-text formatting of the programs: xtrdb's payload values and the IPC value texts.
#pragma once

#include <cstdint>
#include <string>

#include "descriptor.hpp"
#include "ir/ir.hpp"

namespace storage {

enum class IntBase { DEC, HEX };

// One element at `p` (`size` bytes there) as text (tools.md §2.9): BYTE as
// unsigned decimal, INTEGER/UINT decimal, FLOAT/DOUBLE %.6g (what
// `std::ostream << value` prints), RATIONAL "n/d" normalised, INTPAIR/IDXPAIR
// "a,b", STRING up to the first NUL (at most `size` bytes); empty when `size`
// is short of the type's size, and for NULLT. With IntBase::HEX (xtrdb `hex`),
// BYTE, INTEGER and UINT print their bits as lower-case hex, 2 or 8 digits.
std::string elementText(ir::Type t, const uint8_t* p, int size, IntBase base = IntBase::DEC);

// A descriptor entry's value at `p`: its elements separated by one space (a
// STRING entry is one element of `count` bytes).
std::string entryText(const DescEntry& e, const uint8_t* p, IntBase base = IntBase::DEC);

}  // namespace storage
