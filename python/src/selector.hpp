// The native optimum selector object (_core.Selector), shared by the binding
// files that make selectors: optimizer.cpp (time, energy, ZeusCost, ...) and
// carbon.cpp (the carbon-aware one).
#pragma once

#include "zeus/optimizer/optimum_selector.hpp"

namespace zeus::python {

struct Selector {
    optimizer::SelectorPtr ptr;
};

}  // namespace zeus::python
