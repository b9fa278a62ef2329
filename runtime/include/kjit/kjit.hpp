// SPDX-License-Identifier: Apache-2.0
// The C++ API of kjit: everything an application needs.
#pragma once

#include "kjit/config.hpp"
#include "kjit/error.hpp"
#include "kjit/options.hpp"
#include "kjit/runtime.hpp"
#include "kjit/tuning.hpp"
#include "kjit/types.hpp"
