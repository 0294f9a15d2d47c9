// Hands memory the heap holds free back to the system now (after an ad hoc
// unit is compiled or removed), instead of after mimalloc's decommit delay,
// which only runs when the heap is busy again: RSS follows the live plan.
#pragma once

#include <mimalloc.h>

namespace engine {

inline void returnFreeMemory() {
  const long delay = mi_option_get(mi_option_decommit_delay);
  mi_option_set(mi_option_decommit_delay, 0);
  mi_collect(true);
  mi_option_set(mi_option_decommit_delay, delay);
}

}  // namespace engine
